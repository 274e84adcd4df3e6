// SPDX-License-Identifier: MIT
/*
 * Recursion and an inlined function, for the call trees against
 * --children: main calls descend(4), which calls itself down to depth 0
 * and there calls leaf_spin(); every level of descend() also spins a
 * little itself after its call returns (so descend has self time with
 * itself on the stack several times), and both spin in burn(), which is
 * always_inline. Slices are measured on the thread's own CPU clock.
 * usage: recurse_inline SECONDS
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) void burn(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 20000; i++)
			sink += i * i;
}

__attribute__((noinline)) void leaf_spin(uint64_t ns)
{
	burn(ns);
}

__attribute__((noinline)) void descend(int depth, uint64_t ns)
{
	if (depth > 0)
		descend(depth - 1, ns);
	else
		leaf_spin(ns);
	/* after the call: no tail call, and self time at every depth */
	burn(ns / 8);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	while (thread_cpu_ns() < end)
		descend(4, 4000000);
	return 0;
}
