// SPDX-License-Identifier: MIT
/*
 * The slowdown workload of the proof bench: THREADS threads each doing
 * fixed chunks of CPU-bound work (hashing a 32 KiB table that stays in the
 * L1/L2 caches, so that a profiler's interrupts also cost cache refills)
 * for SECONDS of wall time, then it prints the chunks done per second, all
 * threads together: the figure a profiler running beside it lowers.
 * usage: units SECONDS [THREADS]   (THREADS: default one per online CPU)
 * prints: units: THREADS threads SECONDS s CHUNKS chunks CHUNKS_PER_S chunks/s
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TABLE 4096 /* uint64_t: 32 KiB */

static double seconds;
static struct timespec start;
static volatile uint64_t sink;

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start.tv_sec) +
	       (double)(now.tv_nsec - start.tv_nsec) / 1e9;
}

/* One chunk: a fixed amount of work (tens of microseconds). */
__attribute__((noinline)) static uint64_t units_chunk(uint64_t *t, uint64_t x)
{
	for (int i = 0; i < 8192; i++) {
		uint64_t *p = &t[(x >> 20) % TABLE];

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		*p += x ^ (*p >> 7);
		x ^= *p;
	}
	return x;
}

static void *worker(void *arg)
{
	uint64_t *count = arg, *t, x = (uint64_t)(uintptr_t)arg, n = 0;

	t = calloc(TABLE, sizeof(*t));
	if (!t)
		abort();
	while (elapsed() < seconds) {
		x = units_chunk(t, x);
		n++;
	}
	sink += x;
	free(t);
	*count = n;
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t tid[256];
	uint64_t counts[256], total = 0;
	double took;

	seconds = argc > 1 ? atof(argv[1]) : 5;
	if (seconds <= 0 || threads < 1 || threads > 256) {
		fprintf(stderr, "usage: units SECONDS [THREADS (1-256)]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, &counts[i])) {
			perror("pthread_create");
			return 1;
		}
	for (long i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		total += counts[i];
	}
	took = elapsed();
	printf("units: %ld threads %.3f s %llu chunks %.1f chunks/s\n", threads,
	       took, (unsigned long long)total, (double)total / took);
	return 0;
}
