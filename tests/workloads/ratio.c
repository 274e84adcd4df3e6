// SPDX-License-Identifier: MIT
/*
 * A chosen split: work_a and work_b alternate in A_MS and B_MS slices of
 * this thread's CPU time, so work_a takes A/(A+B) of it; two runs with
 * different slices make a profile pair whose difference is known.
 * usage: ratio A_MS B_MS SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Inlined, so that the samples land in work_a and work_b themselves; the
 * clock is read rarely so that its cost stays out of the split. */
static inline __attribute__((always_inline)) void burn(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 200000; i++)
			sink += i * i;
}

__attribute__((noinline)) void work_a(uint64_t ns)
{
	burn(ns);
}

__attribute__((noinline)) void work_b(uint64_t ns)
{
	burn(ns);
}

int main(int argc, char **argv)
{
	uint64_t a_ns, b_ns, end;

	if (argc != 4) {
		fprintf(stderr, "usage: ratio A_MS B_MS SECONDS\n");
		return 2;
	}
	a_ns = (uint64_t)(atof(argv[1]) * 1e6);
	b_ns = (uint64_t)(atof(argv[2]) * 1e6);
	end = thread_cpu_ns() + (uint64_t)(atof(argv[3]) * 1e9);
	while (thread_cpu_ns() < end) {
		work_a(a_ns);
		work_b(b_ns);
	}
	return 0;
}
