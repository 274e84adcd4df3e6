// SPDX-License-Identifier: MIT
/*
 * A known answer: three functions take 50%, 30% and 20% of this process's
 * CPU time, in 5/3/2 ms slices measured on the thread's own CPU clock.
 * A slice ends at the first clock read past its end, so the real split is
 * off the nominal one by a few tenths of a point; with --truth, the thread
 * CPU time each function really took and the thread's whole CPU time are
 * printed at exit, for checks finer than that (bench/proof.sh):
 *   split: total_ns T work_fifty_ns A work_thirty_ns B work_twenty_ns C
 * usage: split SECONDS [--truth]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;
static uint64_t took[3];

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The clock is read rarely so that its cost (a system call) stays out of
 * the split; the first and last reads bound the time the slice took.
 */
#define BURN_BODY(ns, slot)                                    \
	do {                                                   \
		uint64_t start = thread_cpu_ns(), now = start; \
		while (now < start + (ns)) {                   \
			for (uint64_t i = 0; i < 200000; i++)  \
				sink += i * i;                 \
			now = thread_cpu_ns();                 \
		}                                              \
		took[slot] += now - start;                     \
	} while (0)

__attribute__((noinline)) void work_fifty(uint64_t ns)
{
	BURN_BODY(ns, 0);
}

__attribute__((noinline)) void work_thirty(uint64_t ns)
{
	BURN_BODY(ns, 1);
}

__attribute__((noinline)) void work_twenty(uint64_t ns)
{
	BURN_BODY(ns, 2);
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
	if (argc > 2 && strcmp(argv[2], "--truth") == 0)
		printf("split: total_ns %llu work_fifty_ns %llu work_thirty_ns %llu "
		       "work_twenty_ns %llu\n",
		       (unsigned long long)thread_cpu_ns(),
		       (unsigned long long)took[0], (unsigned long long)took[1],
		       (unsigned long long)took[2]);
	return 0;
}
