// SPDX-License-Identifier: MIT
/*
 * A hot function that moves, for dcprof diff's test: in slices measured on
 * the thread's own CPU clock, hot_left() takes 80% and hot_right() 20% of
 * the time, or the other way round with "right".
 * usage: moved SECONDS [left|right]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline __attribute__((always_inline)) void spin(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 200000; i++)
			sink += i * i;
}

__attribute__((noinline)) void hot_left(uint64_t ns)
{
	spin(ns);
}

__attribute__((noinline)) void hot_right(uint64_t ns)
{
	spin(ns);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	int right = argc > 2 && !strcmp(argv[2], "right");
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	while (thread_cpu_ns() < end) {
		hot_left(right ? 2000000 : 8000000);
		hot_right(right ? 8000000 : 2000000);
	}
	return 0;
}
