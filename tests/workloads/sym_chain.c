// SPDX-License-Identifier: MIT
/*
 * A three-level call chain with a known split: main calls middle(), which
 * spends 60% of the time in leaf_sixty() and 40% in leaf_forty(), in 6/4 ms
 * slices measured on the thread's own CPU clock. The busy loop is marked
 * HOT LOOP for annotate's test.
 * usage: sym_chain SECONDS
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

__attribute__((noinline)) void leaf_sixty(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 200000; i++) /* HOT LOOP */
			sink += i * i; /* HOT LOOP */
}

__attribute__((noinline)) void leaf_forty(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 200000; i++)
			sink += i * i;
}

__attribute__((noinline)) void middle(void)
{
	leaf_sixty(6000000);
	leaf_forty(4000000);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	while (thread_cpu_ns() < end)
		middle();
	return 0;
}
