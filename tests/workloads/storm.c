// SPDX-License-Identifier: MIT
/*
 * A storm of short-lived processes: CHILDREN children, at most two at a
 * time, each exec'ing this binary again to burn BURN_MS of its own CPU time
 * in storm_child_burn() and exit. A fixed amount of work, so that two
 * recordings of it can be compared. The parent renames itself
 * "storm-parent"; the children keep the name exec gives them (the binary's
 * name), so that a report tells them apart.
 * At the end the parent prints its pid and the CPU time its children used
 * (getrusage), the truth that a profile of them can be checked against,
 * and the wall time the storm took (from the first fork to the last wait):
 *   storm: parent PID children_cpu_us CPU wall_us WALL
 * usage: storm CHILDREN BURN_MS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void storm_child_burn(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	/*
	 * The clock is a system call: read it rarely, so that nearly all of
	 * the child's CPU time is in this function's own code.
	 */
	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 50000; i++)
			sink += i * 7;
}

int main(int argc, char **argv)
{
	char self[4096];
	int children, running = 0;
	uint64_t start;
	long burn_ms;
	ssize_t len;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		storm_child_burn((uint64_t)atol(argv[2]) * 1000000ull);
		return 0;
	}
	/* exec by real path, not /proc/self/exe, so that comm is our name */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	self[len] = 0;
	prctl(PR_SET_NAME, "storm-parent");
	children = argc > 1 ? atoi(argv[1]) : 300;
	burn_ms = argc > 2 ? atol(argv[2]) : 5;
	start = mono_us();
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
			execl(self, argv[0], "--child", ms, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			running++;
	}
	while (running-- > 0)
		wait(NULL);
	{
		struct rusage ru;

		getrusage(RUSAGE_CHILDREN, &ru);
		printf("storm: parent %d children_cpu_us %lld wall_us %llu\n",
		       (int)getpid(),
		       (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
				       1000000 +
			       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec,
		       (unsigned long long)(mono_us() - start));
	}
	return 0;
}
