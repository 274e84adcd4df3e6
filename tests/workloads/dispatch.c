// SPDX-License-Identifier: MIT
/*
 * A known answer through one call site: via_ptr_a and via_ptr_b take 70%
 * and 30% of this process's CPU time, in 7/3 ms slices on the thread's own
 * CPU clock, both called from the same instruction through a table of
 * function pointers. Their samples have the same callers and differ only
 * in the innermost frame, so a profiler that keeps a stack's callers apart
 * from its leaf must put the leaf back right. With --truth, the thread CPU
 * time each took and the thread's whole CPU time are printed at exit:
 *   dispatch: total_ns T via_ptr_a_ns A via_ptr_b_ns B
 * usage: dispatch SECONDS [--truth]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;
static uint64_t took[2];

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the loop inline in each: their samples' leaves are in them */
__attribute__((noinline)) void via_ptr_a(uint64_t ns)
{
	uint64_t start = thread_cpu_ns(), now = start;

	while (now < start + ns) {
		for (uint64_t i = 0; i < 200000; i++)
			sink += i * i;
		now = thread_cpu_ns();
	}
	took[0] += now - start;
}

__attribute__((noinline)) void via_ptr_b(uint64_t ns)
{
	uint64_t start = thread_cpu_ns(), now = start;

	while (now < start + ns) {
		for (uint64_t i = 0; i < 200000; i++)
			sink += i * 3 + i;
		now = thread_cpu_ns();
	}
	took[1] += now - start;
}

/* volatile: the compiler cannot turn the pointer call into two calls */
static void (*volatile const table[2])(uint64_t) = { via_ptr_a, via_ptr_b };
static const uint64_t slice_ns[2] = { 7000000, 3000000 };

__attribute__((noinline)) void dispatch(int i)
{
	table[i](slice_ns[i]); /* the one call site */
	/* not a tail call: dispatch stays the callers' first frame */
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	static volatile int which;

	/* one call of dispatch too, so that both have the same callers */
	while (thread_cpu_ns() < end) {
		dispatch(which);
		which ^= 1;
	}
	if (argc > 2 && strcmp(argv[2], "--truth") == 0)
		printf("dispatch: total_ns %llu via_ptr_a_ns %llu via_ptr_b_ns "
		       "%llu\n",
		       (unsigned long long)thread_cpu_ns(),
		       (unsigned long long)took[0],
		       (unsigned long long)took[1]);
	return 0;
}
