// SPDX-License-Identifier: MIT
/*
 * Keeps THREADS threads busy for SECONDS (0: until killed), walking a
 * binary tree of calls so that the sampled call stacks are many and
 * distinct: each descent picks busy_left() or busy_right() by one bit of
 * a counter, so DEPTH levels give 2^DEPTH different stacks.
 * READY, when given, is a file written ("running") once the threads run,
 * for a test to wait on instead of sleeping.
 * usage: fault_busy THREADS SECONDS [DEPTH [READY]]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static int depth = 14;
static double seconds;

__attribute__((noinline)) void busy_leaf(uint64_t x);
__attribute__((noinline)) void busy_left(int level, uint64_t x);
__attribute__((noinline)) void busy_right(int level, uint64_t x);

void busy_leaf(uint64_t x)
{
	for (uint64_t i = 0; i < 2000; i++)
		sink += (i ^ x) * 7;
}

static void descend(int level, uint64_t x)
{
	if (level >= depth)
		busy_leaf(x);
	else if (x >> level & 1)
		busy_right(level + 1, x);
	else
		busy_left(level + 1, x);
}

void busy_left(int level, uint64_t x)
{
	descend(level, x);
	sink++; /* not a tail call: keep the frame */
}

void busy_right(int level, uint64_t x)
{
	descend(level, x);
	sink++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull;
	double end = now() + seconds;

	for (;;) {
		for (int i = 0; i < 64; i++)
			descend(0, x++ * 0x2545f4914f6cdd1dull >> 17);
		if (seconds > 0 && now() >= end)
			return NULL;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];

	seconds = argc > 2 ? atof(argv[2]) : 0;
	if (argc > 3)
		depth = atoi(argv[3]);
	if (n < 1 || n > 64 || depth < 0 || depth > 60) {
		fprintf(stderr,
			"usage: fault_busy THREADS SECONDS [DEPTH [READY]]\n");
		return 2;
	}
	for (int i = 1; i < n; i++)
		pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i);
	if (argc > 4) {
		FILE *f = fopen(argv[4], "w");

		if (!f || fputs("running\n", f) < 0 || fclose(f)) {
			perror(argv[4]);
			return 1;
		}
	}
	run(NULL);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
