// SPDX-License-Identifier: MIT
/*
 * Forks COUNT children that exit at once, as fast as it can, reaping them
 * as it goes (at most 64 alive), and prints the seconds it took. Between
 * batches of STEP children it may pause: with a STEP, it writes the number
 * done so far to FILE and waits until FILE is removed, so that a test can
 * look at the recorder in between.
 * usage: fault_forks COUNT [STEP FILE]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0) {
			if (errno != EAGAIN || alive == 0) {
				perror("fork");
				return 1;
			}
		} else {
			alive++;
			done++;
		}
		while (alive >= 64 || (pid < 0 && alive > 0)) {
			if (wait(NULL) < 0)
				break;
			alive--;
			pid = 0;
		}
		if (step && done % step == 0 && done < count) {
			double t = now();

			while (alive > 0 && wait(NULL) > 0)
				alive--;
			pause_at(done, file);
			paused += now() - t;
		}
	}
	while (alive > 0 && wait(NULL) > 0)
		alive--;
	printf("%ld forks in %.2f s\n", count, now() - start - paused);
	return 0;
}
