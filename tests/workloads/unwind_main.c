// SPDX-License-Identifier: MIT
/*
 * Known stacks for the unwinding tests, usually built with
 * -fomit-frame-pointer:
 *   unwind_main cb SECONDS       main -> unwind_lib_run (shared library)
 *                                -> cb_seventy / cb_thirty, 70/30 of the
 *                                CPU time on the thread's own clock
 *   unwind_main qsort SECONDS    main -> qsort (libc) -> ... -> compare
 *   unwind_main leaf SECONDS     main -> middle -> leaf_burn (a leaf)
 *   unwind_main recurse SECONDS DEPTH
 *                                main -> recurse x DEPTH -> bottom_burn
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void unwind_lib_run(void (*a)(uint64_t), void (*b)(uint64_t), uint64_t a_ns,
		    uint64_t b_ns);

static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define BURN_BODY(ns)                                         \
	do {                                                  \
		uint64_t end = thread_cpu_ns() + (ns);        \
		while (thread_cpu_ns() < end)                 \
			for (uint64_t i = 0; i < 200000; i++) \
				sink += i * i;                \
	} while (0)

__attribute__((noinline)) void cb_seventy(uint64_t ns)
{
	BURN_BODY(ns);
}

__attribute__((noinline)) void cb_thirty(uint64_t ns)
{
	BURN_BODY(ns);
}

static int compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	/* some work, so that the comparisons dominate the profile */
	for (int i = 0; i < 50; i++)
		sink += x ^ (y + (uint64_t)i);
	return x < y ? -1 : x > y;
}

static void run_qsort(uint64_t end)
{
	enum { N = 4096 };
	static uint64_t v[N];
	uint64_t seed = 1;

	while (thread_cpu_ns() < end) {
		for (int i = 0; i < N; i++) {
			seed = seed * 6364136223846793005ull +
			       1442695040888963407ull;
			v[i] = seed >> 11;
		}
		qsort(v, N, sizeof(v[0]), compare);
	}
}

/* A leaf: no calls, so gcc gives it no frame with -momit-leaf-frame-pointer
 * (and none at all with -fomit-frame-pointer). */
__attribute__((noinline)) uint64_t leaf_burn(uint64_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += i * i ^ (s >> 3);
	return s;
}

__attribute__((noinline)) void middle(void)
{
	for (int k = 0; k < 10; k++)
		sink += leaf_burn(100000);
}

__attribute__((noinline)) void bottom_burn(void)
{
	BURN_BODY(5000000);
}

/* Each frame holds a buffer, so 200 frames need about 20 KiB of stack. */
__attribute__((noinline)) void recurse(int depth)
{
	volatile char buf[80];

	memset((char *)buf, depth, sizeof(buf));
	if (depth > 1)
		recurse(depth - 1);
	else
		bottom_burn();
	sink += buf[depth % sizeof(buf)];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "cb";
	double seconds = argc > 2 ? atof(argv[2]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	if (!strcmp(mode, "qsort")) {
		run_qsort(end);
	} else if (!strcmp(mode, "leaf")) {
		while (thread_cpu_ns() < end)
			middle();
	} else if (!strcmp(mode, "recurse")) {
		int depth = argc > 3 ? atoi(argv[3]) : 200;

		while (thread_cpu_ns() < end)
			recurse(depth);
	} else {
		while (thread_cpu_ns() < end)
			unwind_lib_run(cb_seventy, cb_thirty, 7000000, 3000000);
	}
	return 0;
}
