/*
 * One thread that sleeps in one function and burns CPU in another:
 *   nap_burn SECONDS FILE: rounds of 2 ms of CPU time in burn_cpu and a
 *     6 ms nanosleep in nap; writes to FILE a line per round, "end_ns
 *     nap_ns preempted_ns": when the round ended (CLOCK_MONOTONIC), and
 *     since the start the wall time spent in nap and the time burn_cpu
 *     waited for a CPU (preempted on a busy machine: the kernel's run
 *     delay, /proc/thread-self/schedstat; its wall time less its CPU time
 *     would count the time the hypervisor took from the VM too); the
 *     thread's off-CPU time is these two.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/* ns this thread waited on a run queue, 0 when schedstats are off */
static unsigned long long run_delay_ns(int fd)
{
	char buf[128];
	unsigned long long on, wait = 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		exit(1);
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on, &wait) != 2)
		exit(1);
	return wait;
}

/*
 * libc's nanosleep keeps no frame pointer: the chain of a thread blocked
 * in it skips its caller. This wrapper is that caller, so that nap stays
 * on the stack.
 */
__attribute__((noinline)) void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	nanosleep(&ts, NULL);
	sink++;
}

__attribute__((noinline)) void nap(long ns)
{
	sleep_ns(ns);
	sink++;
}

__attribute__((noinline)) void burn_cpu(unsigned long long ns)
{
	unsigned long long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	/* the thread's CPU clock is a system call: seldom read */
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 50000; i++)
			sink += (unsigned long)i * 7;
}

struct round {
	unsigned long long end, napped, preempted;
};

int main(int argc, char **argv)
{
	unsigned long long end, napped = 0, preempted = 0;
	struct round *r;
	size_t n = 0, cap;
	FILE *f;
	int fd;

	if (argc != 3)
		return 2;
	fd = open("/proc/thread-self/schedstat", O_RDONLY);
	if (fd < 0)
		return 1;
	/* a round lasts at least 8 ms */
	cap = (size_t)(atof(argv[1]) * 1000 / 8) + 2;
	r = malloc(cap * sizeof(*r));
	if (!r)
		return 1;
	end = clock_ns(CLOCK_MONOTONIC) +
	      (unsigned long long)(atof(argv[1]) * 1e9);
	while (clock_ns(CLOCK_MONOTONIC) < end && n < cap) {
		unsigned long long d0 = run_delay_ns(fd), w1;

		burn_cpu(2000000);
		w1 = clock_ns(CLOCK_MONOTONIC);
		preempted += run_delay_ns(fd) - d0;
		nap(6000000);
		r[n].end = clock_ns(CLOCK_MONOTONIC);
		napped += r[n].end - w1;
		r[n].napped = napped;
		r[n++].preempted = preempted;
	}
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%llu %llu %llu\n", r[i].end, r[i].napped,
			r[i].preempted);
	free(r);
	return fclose(f) ? 1 : 0;
}
