// SPDX-License-Identifier: MIT
/*
 * Two functions named alike: a static work() here and another in
 * same_name_b.c, the one here doing twice the work of the other, for the
 * given seconds (default 2). usage: same_name [SECONDS]
 */
#include <stdint.h>
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2.0);

	while (now() < end) {
		run_a(200000);
		run_b(100000);
	}
	return 0;
}
