// SPDX-License-Identifier: MIT
/*
 * Two functions named alike: a static work() here and another in
 * same_name_b.c, the one here doing twice the work of the other, for the
 * given seconds (default 2). With TRUTH, the CPU time each took by the
 * thread's own clock is written there ("A_NS B_NS"): what the work costs
 * depends on where each loop lies, not on its count alone.
 * usage: same_name [SECONDS [TRUTH]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void run_b(uint64_t n);

volatile uint64_t same_name_sink;

__attribute__((noinline)) static void work(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		same_name_sink += i ^ (i >> 3);
}

__attribute__((noinline)) static void run_a(uint64_t n)
{
	work(n);
}

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now(CLOCK_MONOTONIC) + (argc > 1 ? atof(argv[1]) : 2.0);
	double a = 0, b = 0;
	FILE *f;

	while (now(CLOCK_MONOTONIC) < end) {
		double t0 = now(CLOCK_THREAD_CPUTIME_ID), t1, t2;

		run_a(200000);
		t1 = now(CLOCK_THREAD_CPUTIME_ID);
		run_b(100000);
		t2 = now(CLOCK_THREAD_CPUTIME_ID);
		a += t1 - t0;
		b += t2 - t1;
	}
	if (argc > 2) {
		f = fopen(argv[2], "w");
		if (!f || fprintf(f, "%.0f %.0f\n", a * 1e9, b * 1e9) < 0 ||
		    fclose(f))
			return 1;
	}
	return 0;
}
