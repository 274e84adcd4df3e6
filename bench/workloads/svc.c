// SPDX-License-Identifier: MIT
/*
 * A quiet service: about a millisecond of CPU in serve() every tenth of a
 * second, forever; a machine's many services in the cgroups bench.
 */
#include <time.h>

static volatile unsigned long sink;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void serve(void)
{
	double end = cpu_seconds() + 0.001;

	while (cpu_seconds() < end)
		for (unsigned long i = 0; i < 1000; i++)
			sink += i ^ (i >> 3);
}

int main(void)
{
	const struct timespec nap = { 0, 100000000 };

	for (;;) {
		serve();
		nanosleep(&nap, NULL);
	}
}
