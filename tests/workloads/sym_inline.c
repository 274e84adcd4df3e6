// SPDX-License-Identifier: MIT
/*
 * One function inlined into two callers: hot() is always_inline, so its
 * loop lives inside caller_seventy() and caller_thirty(), which take 70%
 * and 30% of this process's CPU time, in 7/3 ms slices measured on the
 * thread's own CPU clock.
 * usage: sym_inline SECONDS
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

static inline __attribute__((always_inline)) void hot(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) void caller_seventy(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		hot(200000);
}

__attribute__((noinline)) void caller_thirty(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		hot(200000);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	while (thread_cpu_ns() < end) {
		caller_seventy(7000000);
		caller_thirty(3000000);
	}
	return 0;
}
