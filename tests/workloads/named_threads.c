// SPDX-License-Identifier: MIT
/*
 * Three threads named with pthread_setname_np, worker-alpha, -beta and
 * -gamma, burning 3:2:1 units of their own CPU time (a unit is SECONDS/3,
 * default 0.4 s) while main waits. Each writes "NAME TID" to the file
 * given as argument. usage: named_threads FILE [SECONDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static double unit = 0.4;
static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
	const char *name;
	int units;
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(double seconds)
{
	double end = cpu_now() + seconds;

	while (cpu_now() < end)
		for (uint64_t i = 0; i < 20000; i++)
			sink += i ^ (i >> 3);
}

static void *worker(void *arg)
{
	const struct worker *w = arg;

	pthread_setname_np(pthread_self(), w->name);
	pthread_mutex_lock(&lock);
	fprintf(out, "%s %ld\n", w->name, (long)syscall(SYS_gettid));
	fflush(out);
	pthread_mutex_unlock(&lock);
	burn(unit * w->units);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[3] = { { "worker-alpha", 3 },
				      { "worker-beta", 2 },
				      { "worker-gamma", 1 } };
	pthread_t t[3];

	if (argc < 2 || !(out = fopen(argv[1], "w")))
		return 2;
	if (argc > 2)
		unit = atof(argv[2]) / 3;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, &w[i]))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	fclose(out);
	return 0;
}
