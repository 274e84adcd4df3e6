// SPDX-License-Identifier: MIT
/*
 * Reads the monotonic clock in a loop for SECONDS: the reads run in the
 * vdso (the kernel's code mapped into every process), so most samples of
 * this process are [vdso] frames.
 * usage: vdso_clock SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1, start = -1, t;
	struct timespec ts;

	if (seconds <= 0) {
		fprintf(stderr, "usage: vdso_clock SECONDS\n");
		return 2;
	}
	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		if (start < 0)
			start = t;
		sink += ts.tv_nsec & 1;
	} while (t - start < seconds);
	return 0;
}
