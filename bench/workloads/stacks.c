// SPDX-License-Identifier: MIT
/*
 * Many distinct call stacks: each thread descends DEPTH levels, at every
 * level calling one of 16 functions chosen at random, and burns a little
 * at the bottom; 16^DEPTH paths (DEPTH 5: about a million) give a profile
 * with as many distinct stacks as the sampling rate and time allow.
 * usage: stacks SECONDS [THREADS] [DEPTH]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef void (*step_fn)(unsigned depth, uint64_t *rng);

static volatile uint64_t sink;
static double seconds = 5;
static unsigned max_depth = 5;
static const step_fn steps[16];

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Inlined into each function, so that only the 16 names make the stack. */
static inline __attribute__((always_inline)) void step(unsigned depth,
						       uint64_t *rng)
{
	if (!depth) {
		for (int i = 0; i < 3000; i++)
			sink += (uint64_t)i * i;
		return;
	}
	steps[next(rng) & 15](depth - 1, rng);
}

#define F(n)                                                          \
	__attribute__((noinline)) void f##n(unsigned d, uint64_t *r); \
	__attribute__((noinline)) void f##n(unsigned d, uint64_t *r)  \
	{                                                             \
		step(d, r);                                           \
		sink++; /* no tail call: keep the frame */            \
	}
/* sixteen definitions, not calls, which clang-format cannot tell */
/* clang-format off */
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)
F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)

static const step_fn steps[16] = { f0, f1, f2, f3, f4, f5, f6, f7,
				   f8, f9, f10, f11, f12, f13, f14, f15 };
/* clang-format on */

static void *run(void *arg)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uintptr_t)arg;
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 100; i++)
			step(max_depth, &rng);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) +
			 (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
		 seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t t[64];

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 3)
		max_depth = (unsigned)atoi(argv[3]);
	if (threads < 1 || threads > 64)
		threads = 2;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
