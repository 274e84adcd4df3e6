// SPDX-License-Identifier: MIT
/*
 * Three threads (main "collect-main", "collect-w1", "collect-w2") that stop
 * the whole process with SIGSTOP once all are named, so that a test can
 * collect a quiescent process. usage: collect_threads
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static pthread_barrier_t ready;

static void *worker(void *arg)
{
	prctl(PR_SET_NAME, (const char *)arg);
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	static const char *names[] = { "collect-w1", "collect-w2" };
	pthread_t t[2];

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
	prctl(PR_SET_NAME, "collect-main");
	pthread_barrier_init(&ready, NULL, 3);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)names[i])) {
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&ready);
	raise(SIGSTOP);
	for (;;)
		pause();
	return 0;
}
