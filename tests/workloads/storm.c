// SPDX-License-Identifier: MIT
/*
 * A storm of short-lived processes: CHILDREN children, at most two at a
 * time, each exec'ing this binary again to burn BURN_MS of its own CPU time
 * in storm_child_burn() and exit. A fixed amount of work, so that two
 * recordings of it can be compared.
 * usage: storm CHILDREN BURN_MS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void storm_child_burn(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 5000; i++)
			sink += i * 7;
}

int main(int argc, char **argv)
{
	int children, running = 0;
	long burn_ms;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		storm_child_burn((uint64_t)atol(argv[2]) * 1000000ull);
		return 0;
	}
	children = argc > 1 ? atoi(argv[1]) : 300;
	burn_ms = argc > 2 ? atol(argv[2]) : 5;
	for (int i = 0; i < children; i++) {
		char ms[32];
		pid_t pid;

		if (running == 2) {
			wait(NULL);
			running--;
		}
		snprintf(ms, sizeof(ms), "%ld", burn_ms);
		pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "--child", ms,
			      (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			running++;
	}
	while (running-- > 0)
		wait(NULL);
	return 0;
}
