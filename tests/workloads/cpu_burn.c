// SPDX-License-Identifier: MIT
/*
 * Burns CPU in burn() until the process has used SECONDS of CPU time
 * (CLOCK_PROCESS_CPUTIME_ID), then exits; with SYSCALLS, the loop is
 * getppid() calls instead, so that most of its time is the kernel's.
 * usage: cpu_burn SECONDS [syscalls]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn(double seconds, int syscalls)
{
	while (cpu_seconds() < seconds)
		for (uint64_t i = 0; i < 20000; i++) {
			if (syscalls)
				sink += (uint64_t)getppid();
			else
				sink += i ^ (i >> 3);
		}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;

	burn(seconds, argc > 2 && !strcmp(argv[2], "syscalls"));
	return 0;
}
