// SPDX-License-Identifier: MIT
/*
 * A known answer: three functions take 50%, 30% and 20% of this process's
 * CPU time, in 5/3/2 ms slices measured on the thread's own CPU clock.
 * usage: split SECONDS
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

/* The clock is read rarely so that its cost stays out of the split. */
#define BURN_BODY(ns)                                         \
	do {                                                  \
		uint64_t end = thread_cpu_ns() + (ns);        \
		while (thread_cpu_ns() < end)                 \
			for (uint64_t i = 0; i < 200000; i++) \
				sink += i * i;                \
	} while (0)

__attribute__((noinline)) void work_fifty(uint64_t ns)
{
	BURN_BODY(ns);
}

__attribute__((noinline)) void work_thirty(uint64_t ns)
{
	BURN_BODY(ns);
}

__attribute__((noinline)) void work_twenty(uint64_t ns)
{
	BURN_BODY(ns);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	while (thread_cpu_ns() < end) {
		work_fifty(5000000);
		work_thirty(3000000);
		work_twenty(2000000);
	}
	return 0;
}
