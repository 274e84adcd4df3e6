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
 *   unwind_main memcpy SECONDS   main -> copy_burn -> memcpy (libc), most
 *                                of the time in memcpy
 *   unwind_main clock SECONDS    main -> clock_burn -> clock_gettime
 *                                (libc) -> the vdso, most of the time in
 *                                the vdso
 *   unwind_main signal SECONDS   main -> interrupted, and a SIGPROF every
 *                                5 ms of CPU time whose handler (on_prof ->
 *                                handler_burn) burns 2 ms
 *   unwind_main exec SECONDS MODE ARGS...
 *                                main -> middle for SECONDS, then execs
 *                                itself as "unwind_main MODE ARGS..."
 *   unwind_main then SECONDS PAUSE PROGRAM ARGS...
 *                                main -> middle for SECONDS, then sleeps
 *                                PAUSE seconds and execs PROGRAM ARGS...
 *   unwind_main dlopen SECONDS LIB
 *                                main -> middle for 0.3 s, then dlopens LIB
 *                                (unwind_lib.c built with unwind_lib_run
 *                                named plugin_run) and runs main ->
 *                                plugin_run -> cb_seventy / cb_thirty
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

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

/* Through a pointer, so that the copy is libc's memcpy and not inlined. */
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

__attribute__((noinline)) void copy_burn(void)
{
	static char a[1 << 20], b[1 << 20];

	for (int i = 0; i < 16; i++) {
		copy(a, b, sizeof(a));
		sink += (uint64_t)a[i];
	}
}

/* CLOCK_MONOTONIC is read in the vdso, without entering the kernel */
__attribute__((noinline)) void clock_burn(void)
{
	struct timespec ts;

	for (int i = 0; i < 100000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (uint64_t)ts.tv_nsec;
	}
}

__attribute__((noinline)) void handler_burn(void)
{
	BURN_BODY(2000000);
}

static void on_prof(int sig)
{
	(void)sig;
	handler_burn();
}

__attribute__((noinline)) void interrupted(uint64_t end)
{
	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 200000; i++)
			sink += i * i;
}

static void run_signal(uint64_t end)
{
	struct itimerval every = { .it_interval = { .tv_usec = 5000 },
				   .it_value = { .tv_usec = 5000 } };
	struct sigaction sa = { .sa_handler = on_prof };

	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &every, NULL);
	interrupted(end);
	every = (struct itimerval){ 0 };
	setitimer(ITIMER_PROF, &every, NULL);
}

static int run_dlopen(const char *lib, uint64_t end)
{
	uint64_t warm = thread_cpu_ns() + 300000000ull;
	void (*plugin_run)(void (*)(uint64_t), void (*)(uint64_t), uint64_t,
			   uint64_t);
	void *h;

	while (thread_cpu_ns() < warm)
		middle();
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "unwind_main: %s\n", dlerror());
		return 1;
	}
	*(void **)&plugin_run = dlsym(h, "plugin_run");
	if (!plugin_run) {
		fprintf(stderr, "unwind_main: %s\n", dlerror());
		return 1;
	}
	while (thread_cpu_ns() < end)
		plugin_run(cb_seventy, cb_thirty, 7000000, 3000000);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "cb";
	double seconds = argc > 2 ? atof(argv[2]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);

	if (!strcmp(mode, "exec") && argc > 3) {
		while (thread_cpu_ns() < end)
			middle();
		argv[2] = argv[0];
		execv("/proc/self/exe", argv + 2);
		perror("unwind_main: exec");
		return 1;
	}
	if (!strcmp(mode, "then") && argc > 4) {
		double pause = atof(argv[3]);
		struct timespec nap = {
			.tv_sec = (time_t)pause,
			.tv_nsec = (long)((pause - (time_t)pause) * 1e9)
		};

		while (thread_cpu_ns() < end)
			middle();
		nanosleep(&nap, NULL);
		execv(argv[4], argv + 4);
		perror("unwind_main: exec");
		return 1;
	}
	if (!strcmp(mode, "dlopen") && argc > 3)
		return run_dlopen(argv[3], end);
	if (!strcmp(mode, "memcpy")) {
		while (thread_cpu_ns() < end)
			copy_burn();
	} else if (!strcmp(mode, "clock")) {
		while (thread_cpu_ns() < end)
			clock_burn();
	} else if (!strcmp(mode, "signal")) {
		run_signal(end);
	} else if (!strcmp(mode, "qsort")) {
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
