// SPDX-License-Identifier: MIT
/*
 * Starts COUNT child processes that exit at once, as fast as it can,
 * reaping them as it goes (at most 64 alive), and prints the seconds it
 * took. The children are cloned sharing the parent's memory (CLONE_VM,
 * as vfork and posix_spawn make them, but without waiting for each):
 * fork's copy of the page tables costs 750 us a child on a guest whose
 * page faults cost 10 us, such a clone 42. To a recorder each is a
 * process like any other: a FORK record with its own pid, the parent's
 * maps, an EXIT record. Between batches of STEP children it may pause:
 * with a STEP, it writes the number done so far to FILE and waits until
 * FILE is removed, so that a test can look at the recorder in between.
 * usage: fault_forks COUNT [STEP FILE]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ALIVE 64
#define CHILD_STACK 16384

/* a stack for each child alive, and the pid using it (0: free) */
static char stacks[MAX_ALIVE][CHILD_STACK] __attribute__((aligned(16)));
static pid_t stack_pid[MAX_ALIVE];

static int child(void *arg)
{
	_exit(0);
}

/* Start a child on a free stack: its pid, or -1 (errno). */
static pid_t start_child(void)
{
	for (int i = 0; i < MAX_ALIVE; i++) {
		pid_t pid;

		if (stack_pid[i])
			continue;
		pid = clone(child, stacks[i] + CHILD_STACK, CLONE_VM | SIGCHLD,
			    NULL);
		if (pid > 0)
			stack_pid[i] = pid;
		return pid;
	}
	errno = EAGAIN;
	return -1;
}

/* Reap one child and free its stack: its pid, or -1 (errno). */
static pid_t reap_child(void)
{
	pid_t pid = wait(NULL);

	for (int i = 0; pid > 0 && i < MAX_ALIVE; i++)
		if (stack_pid[i] == pid)
			stack_pid[i] = 0;
	return pid;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_at(long done, const char *file)
{
	FILE *f = fopen(file, "w");

	if (!f) {
		perror(file);
		exit(1);
	}
	fprintf(f, "%ld\n", done);
	fclose(f);
	while (access(file, F_OK) == 0)
		usleep(10000);
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 100000;
	long step = argc > 3 ? atol(argv[2]) : 0;
	const char *file = argc > 3 ? argv[3] : NULL;
	long alive = 0, done = 0;
	double start = now(), paused = 0;

	while (done < count) {
		pid_t pid = start_child();

		if (pid < 0) {
			if (errno != EAGAIN || alive == 0) {
				perror("clone");
				return 1;
			}
		} else {
			alive++;
			done++;
		}
		while (alive >= MAX_ALIVE || (pid < 0 && alive > 0)) {
			if (reap_child() < 0)
				break;
			alive--;
			pid = 0;
		}
		if (step && done % step == 0 && done < count) {
			double t = now();

			while (alive > 0 && reap_child() > 0)
				alive--;
			pause_at(done, file);
			paused += now() - t;
		}
	}
	while (alive > 0 && reap_child() > 0)
		alive--;
	printf("%ld processes in %.2f s\n", count, now() - start - paused);
	return 0;
}
