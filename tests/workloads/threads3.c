// SPDX-License-Identifier: MIT
/*
 * Three busy threads of one process: main in main_spin(), two workers in
 * worker_spin(). Once all run it writes "tid N" for each worker, then
 * "ready", to the file given as argument, and spins until killed (or its
 * parent dies). usage: threads3 TIDS_FILE
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint64_t sink;
static pthread_barrier_t ready;
static pid_t tids[2];

__attribute__((noinline)) void worker_spin(void)
{
	for (;;)
		for (uint64_t i = 0; i < 100000; i++)
			sink += i ^ (i >> 3);
}

__attribute__((noinline)) void main_spin(void)
{
	for (;;)
		for (uint64_t i = 0; i < 100000; i++)
			sink += i ^ (i >> 5);
}

static void *worker(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&ready);
	worker_spin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: threads3 TIDS_FILE\n");
		return 2;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
	pthread_barrier_init(&ready, NULL, 3);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, &tids[i])) {
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&ready);
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f, "tid %d\ntid %d\nready\n", (int)tids[0], (int)tids[1]);
	fclose(f);
	main_spin();
	return 0;
}
