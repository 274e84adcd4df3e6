// SPDX-License-Identifier: MIT
/*
 * Reads the monotonic clock in a loop for SECONDS: the reads run in the
 * vdso (the kernel's code mapped into every process), so most samples of
 * this process are [vdso] frames. The coarse clock, read from the vdso's
 * data page by __vdso_clock_gettime itself: the fine one reads the clock
 * source, which on a kvm-clock guest is a helper the vdso has no symbol
 * for.
 * usage: vdso_clock SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct timespec ts, end;

	if (seconds <= 0) {
		fprintf(stderr, "usage: vdso_clock SECONDS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC_COARSE, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	/* as little as can be besides the read: the samples are in it */
	do {
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		sink += ts.tv_nsec & 1;
	} while (ts.tv_sec < end.tv_sec ||
		 (ts.tv_sec == end.tv_sec && ts.tv_nsec < end.tv_nsec));
	return 0;
}
