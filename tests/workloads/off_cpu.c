/*
 * Off-CPU workloads: where threads wait.
 *   off_cpu rounds SECONDS FILE [TIMES [CALLS]]: the main thread, in
 *     rounds of 10 ms, burns 4 ms in f1_burn, sleeps 4 ms in f2_sleep
 *     (nanosleep) and waits ~2 ms in f3_wait for a helper thread to
 *     answer through a pipe. A third thread, "latecomer", lives from a
 *     quarter of the run to three quarters, napping 5 ms and burning
 *     0.2 ms in turn. Writes to FILE "tid lifetime_ns" of the main
 *     thread, then of the latecomer (from its first step to its last);
 *     given TIMES, "f2_ns f3_ns": the time the main thread spent in
 *     f2_sleep and in f3_wait as its clock saw it (2:1 on an idle
 *     machine; other load lengthens the pipe wait, two wake-ups, more);
 *     given CALLS, those two times of every round, a line each.
 *   off_cpu mutex SECONDS: two threads take turns on one mutex, each
 *     holding it 2 ms (in hold_lock), burning 0.5 ms outside it, and
 *     waiting for it in take_lock.
 *   off_cpu busy3 SECONDS: three threads spin in spin_forever on CPUs 0
 *     and 1: they wait for a CPU, not for anything else.
 *   off_cpu pingpong SECONDS: two threads pass a byte back and forth
 *     through two pipes, as fast as they can; prints the round trips.
 *   off_cpu naps SECONDS TIMES: twice as many threads as CPUs spin
 *     ("burner") while the main thread, at nice 19, sleeps 2 ms at a time
 *     in f4_nap; a nap ends with a wait for a CPU after the wake-up.
 *     Writes to TIMES "tid requested_ns in_nap_ns": its thread id, the
 *     sleep it asked for in all, and the time its clock saw it spend in
 *     f4_nap.
 *   off_cpu stuck SECONDS: a thread named "stuck" blocks in f5_stuck
 *     reading a pipe nobody writes, until the process exits; the main
 *     thread sleeps SECONDS in f2_sleep.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double seconds;
static int request[2], answer[2];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/*
 * libc's system call wrappers keep no frame pointer: the frame-pointer
 * chain of a thread blocked in one skips the wrapper's caller. These
 * wrappers of ours are that caller, so that the functions that call them
 * are on the stack.
 */
__attribute__((noinline)) void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	nanosleep(&ts, NULL);
	sink++;
}

__attribute__((noinline)) void read_byte(int fd, char *c)
{
	if (read(fd, c, 1) != 1)
		exit(1);
	sink++;
}

__attribute__((noinline)) void lock_mutex(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	sink++;
}

__attribute__((noinline)) void f1_burn(long ns)
{
	unsigned long long end = now_ns() + (unsigned long long)ns;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i * 7;
}

__attribute__((noinline)) void f2_sleep(long ns)
{
	sleep_ns(ns);
	sink++;
}

__attribute__((noinline)) void f3_wait(void)
{
	char c = 'q';

	if (write(request[1], &c, 1) != 1)
		exit(1);
	read_byte(answer[0], &c);
	sink++;
}

static void *helper(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "helper");
	while (read(request[0], &c, 1) == 1) {
		sleep_ns(2000000);
		if (write(answer[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

struct latecomer {
	unsigned long long end, first, last;
	long tid;
};

static void *latecomer(void *arg)
{
	struct latecomer *l = arg;

	l->first = now_ns();
	l->tid = (long)syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), "latecomer");
	while (now_ns() < l->end) {
		sleep_ns(5000000);
		f1_burn(200000);
	}
	l->last = now_ns();
	return NULL;
}

static int rounds(const char *out, const char *times, const char *calls)
{
	unsigned long long start = now_ns(), end, t0, in_f2 = 0, in_f3 = 0;
	unsigned long long f2, f3, late_start;
	struct latecomer late = { 0 };
	bool late_started = false;
	FILE *f, *c = NULL;
	pthread_t t, lt;

	if (pipe(request) || pipe(answer) ||
	    pthread_create(&t, NULL, helper, NULL))
		return 1;
	if (calls && !(c = fopen(calls, "w")))
		return 1;
	end = start + (unsigned long long)(seconds * 1e9);
	late_start = start + (end - start) / 4;
	late.end = start + 3 * (end - start) / 4;
	while (now_ns() < end) {
		if (!late_started && now_ns() >= late_start) {
			if (pthread_create(&lt, NULL, latecomer, &late))
				return 1;
			late_started = true;
		}
		f1_burn(4000000);
		t0 = now_ns();
		f2_sleep(4000000);
		f2 = now_ns() - t0;
		t0 = now_ns();
		f3_wait();
		f3 = now_ns() - t0;
		in_f2 += f2;
		in_f3 += f3;
		if (c)
			fprintf(c, "%llu %llu\n", f2, f3);
	}
	if (late_started)
		pthread_join(lt, NULL);
	if (c && fclose(c))
		return 1;
	f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %llu\n%ld %llu\n", (long)syscall(SYS_gettid),
		now_ns() - start, late.tid, late.last - late.first);
	fclose(f);
	if (!times)
		return 0;
	f = fopen(times, "w");
	if (!f)
		return 1;
	fprintf(f, "%llu %llu\n", in_f2, in_f3);
	fclose(f);
	return 0;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void hold_lock(void)
{
	f1_burn(2000000);
}

__attribute__((noinline)) void take_lock(void)
{
	lock_mutex(&lock);
	hold_lock();
	pthread_mutex_unlock(&lock);
}

static void *contender(void *arg)
{
	unsigned long long end = *(unsigned long long *)arg;

	pthread_setname_np(pthread_self(), "contender");
	while (now_ns() < end) {
		take_lock();
		f1_burn(500000); /* outside the lock: the other's turn */
	}
	return NULL;
}

static int mutex(void)
{
	unsigned long long end = now_ns() + (unsigned long long)(seconds * 1e9);
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, contender, &end))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

__attribute__((noinline)) void spin_forever(unsigned long long end)
{
	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

static void *spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "spinner");
	spin_forever(*(unsigned long long *)arg);
	return NULL;
}

static int busy3(void)
{
	unsigned long long end = now_ns() + (unsigned long long)(seconds * 1e9);
	cpu_set_t set;
	pthread_t t[3];

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, spinner, &end))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static volatile int stop;

static void *ponger(void *arg)
{
	char c;

	(void)arg;
	while (read(request[0], &c, 1) == 1 && c)
		if (write(answer[1], &c, 1) != 1)
			break;
	return NULL;
}

static int pingpong(void)
{
	unsigned long long end = now_ns() + (unsigned long long)(seconds * 1e9);
	unsigned long trips = 0;
	pthread_t t;
	char c = 1;

	if (pipe(request) || pipe(answer) ||
	    pthread_create(&t, NULL, ponger, NULL))
		return 1;
	while ((trips & 255) || now_ns() < end) {
		if (write(request[1], &c, 1) != 1 ||
		    read(answer[0], &c, 1) != 1)
			return 1;
		trips++;
	}
	c = 0;
	if (write(request[1], &c, 1) != 1)
		return 1;
	pthread_join(t, NULL);
	printf("%lu\n", trips);
	return 0;
}

__attribute__((noinline)) void f4_nap(long ns)
{
	sleep_ns(ns);
	sink++;
}

static void *burner(void *arg)
{
	pthread_setname_np(pthread_self(), "burner");
	spin_forever(*(unsigned long long *)arg);
	return NULL;
}

static int naps(const char *times)
{
	unsigned long long end = now_ns() + (unsigned long long)(seconds * 1e9);
	unsigned long long requested = 0, in_nap = 0, t0;
	long nr = 2 * sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t[64];
	FILE *f;

	if (nr > 64)
		nr = 64;
	for (long i = 0; i < nr; i++)
		if (pthread_create(&t[i], NULL, burner, &end))
			return 1;
	/* the burners keep nice 0: this thread waits for a CPU after each
	 * wake-up; its timer fires when asked (no slack) */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) ||
	    prctl(PR_SET_TIMERSLACK, 1ul, 0, 0, 0))
		return 1;
	while (now_ns() < end) {
		t0 = now_ns();
		f4_nap(2000000);
		in_nap += now_ns() - t0;
		requested += 2000000;
	}
	for (long i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	f = fopen(times, "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %llu %llu\n", (long)syscall(SYS_gettid), requested,
		in_nap);
	return fclose(f) ? 1 : 0;
}

static int stuck_pipe[2];

__attribute__((noinline)) void f5_stuck(void)
{
	char c;

	if (read(stuck_pipe[0], &c, 1) < 0)
		sink++;
}

static void *stuck_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "stuck");
	f5_stuck();
	return NULL;
}

static int stuck(void)
{
	pthread_t t;

	if (pipe(stuck_pipe) || pthread_create(&t, NULL, stuck_thread, NULL))
		return 1;
	f2_sleep((long)(seconds * 1e9));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	seconds = atof(argv[2]);
	if (!strcmp(argv[1], "rounds") && argc > 3)
		return rounds(argv[3], argc > 4 ? argv[4] : NULL,
			      argc > 5 ? argv[5] : NULL);
	if (!strcmp(argv[1], "mutex"))
		return mutex();
	if (!strcmp(argv[1], "busy3"))
		return busy3();
	if (!strcmp(argv[1], "naps") && argc > 3)
		return naps(argv[3]);
	if (!strcmp(argv[1], "pingpong"))
		return pingpong();
	if (!strcmp(argv[1], "stuck"))
		return stuck();
	return 2;
}
