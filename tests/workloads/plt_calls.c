// SPDX-License-Identifier: MIT
/*
 * Calls two libc functions through the PLT in a loop for SECONDS of CPU
 * time: labs() twice as often as ffs(). Built with -fno-builtin, so that
 * both stay calls; each call runs the function's PLT stub, a jump through
 * the GOT, where a fair share of the samples lands. usage: plt_calls
 * SECONDS
 */
#include <stdlib.h>
#include <strings.h>
#include <time.h>

static volatile long sink;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = cpu_seconds() + (argc > 1 ? atof(argv[1]) : 2.0);
	long i = 0;

	while (cpu_seconds() < end)
		for (int k = 0; k < 100000; k++, i++) {
			sink += labs(i - 50000);
			sink += labs(50000 - i);
			sink += ffs((int)i);
		}
	return 0;
}
