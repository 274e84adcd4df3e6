// SPDX-License-Identifier: MIT
/*
 * The busy workload of the recording bench: BURNERS processes burning CPU
 * through a mix of 32 functions of their own (reached through a few levels of
 * calls, so -g sees several distinct stacks), libm and libc, plus a
 * short-lived process every CHURN_MS that execs this binary again, burns a
 * couple of milliseconds and exits, so that the recorders also see COMM,
 * FORK, MMAP2 and EXIT traffic. Runs until SIGTERM or SIGINT.
 * usage: busy [BURNERS [CHURN_MS]]
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;
static volatile double fsink;
static volatile sig_atomic_t stop;

/* Each leaf does a different amount of work, so the profile is not flat. */
#define LEAF(n)                                                         \
	static NOINLINE void leaf_##n(uint64_t seed)                    \
	{                                                               \
		uint64_t x = seed ^ (n * 0x9e3779b97f4a7c15ull);        \
		for (int i = 0; i < 2000 * ((n % 4) + 1); i++)          \
			x = x * 6364136223846793005ull + n + (x >> 17); \
		sink += x;                                              \
	}

LEAF(0)
LEAF(1)
LEAF(2)
LEAF(3)
LEAF(4)
LEAF(5)
LEAF(6)
LEAF(7)
LEAF(8)
LEAF(9)
LEAF(10)
LEAF(11)
LEAF(12)
LEAF(13)
LEAF(14)
LEAF(15)
LEAF(16)
LEAF(17)
LEAF(18)
LEAF(19)
LEAF(20)
LEAF(21)
LEAF(22)
LEAF(23)
LEAF(24)
LEAF(25)
LEAF(26)
LEAF(27)

static NOINLINE void use_libm(uint64_t seed)
{
	double acc = 0;

	for (int i = 0; i < 500; i++)
		acc += sin((double)(seed + i)) * exp(-(double)(i % 7)) +
		       log1p((double)i);
	fsink += acc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static NOINLINE void use_qsort(uint64_t seed)
{
	uint32_t v[512];

	for (int i = 0; i < 512; i++)
		v[i] = (uint32_t)((seed + i) * 2654435761u);
	qsort(v, 512, sizeof(v[0]), cmp_u32);
	sink += v[seed % 512];
}

static NOINLINE void use_memcpy(uint64_t seed)
{
	static char a[16384], b[16384];

	for (int i = 0; i < 8; i++) {
		a[(seed + i) % sizeof(a)] = (char)i;
		memcpy(b, a, sizeof(a));
		memmove(a + 1, b, sizeof(a) - 1);
	}
	sink += (uint64_t)b[seed % sizeof(b)];
}

static NOINLINE void use_snprintf(uint64_t seed)
{
	char buf[128];

	for (int i = 0; i < 50; i++)
		sink += (uint64_t)snprintf(buf, sizeof(buf), "%lu %f %s",
					   (unsigned long)(seed + i),
					   (double)i / 3.0, "bench");
}

typedef void (*work_fn)(uint64_t);

static const work_fn works[] = {
	leaf_0,	    leaf_1,	  leaf_2,  leaf_3,  leaf_4,   leaf_5,
	leaf_6,	    leaf_7,	  leaf_8,  leaf_9,  leaf_10,  leaf_11,
	leaf_12,    leaf_13,	  leaf_14, leaf_15, leaf_16,  leaf_17,
	leaf_18,    leaf_19,	  leaf_20, leaf_21, leaf_22,  leaf_23,
	leaf_24,    leaf_25,	  leaf_26, leaf_27, use_libm, use_qsort,
	use_memcpy, use_snprintf,
};

#define NR_WORKS (sizeof(works) / sizeof(works[0]))

/* Three callers of the same leaves: the same leaf under different stacks. */
static NOINLINE void mid_a(uint64_t seed)
{
	works[seed % NR_WORKS](seed);
}

static NOINLINE void mid_b(uint64_t seed)
{
	works[(seed * 7) % NR_WORKS](seed);
	mid_a(seed + 1);
}

static NOINLINE void mid_c(uint64_t seed)
{
	works[(seed * 13) % NR_WORKS](seed);
	mid_b(seed + 2);
}

static NOINLINE void burner(void)
{
	uint64_t seed = (uint64_t)getpid();

	while (!stop) {
		switch (seed % 3) {
		case 0:
			mid_a(seed);
			break;
		case 1:
			mid_b(seed);
			break;
		default:
			mid_c(seed);
			break;
		}
		seed = seed * 2862933555777941757ull + 3037000493ull;
	}
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static NOINLINE void churn_child_burn(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		mid_a(end ^ thread_cpu_ns());
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct timespec gap;
	char self[4096];
	ssize_t len;
	pid_t pids[64];
	int burners, churn;
	long churn_ms;

	if (argc == 2 && !strcmp(argv[1], "--child")) {
		churn_child_burn(2000000);
		return 0;
	}
	burners = argc > 1 ? atoi(argv[1]) : 2;
	churn_ms = argc > 2 ? atol(argv[2]) : 50;
	if (burners < 0 || burners > 64 || churn_ms < 0) {
		fprintf(stderr, "usage: busy [BURNERS (0-64) [CHURN_MS]]\n");
		return 2;
	}

	/* exec by the real path, so that the children are named like us */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		perror("busy: readlink /proc/self/exe");
		return 1;
	}
	self[len] = '\0';

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	for (int i = 0; i < burners; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("busy: fork");
			return 1;
		}
		pids[i] = pid;
		if (pid == 0) {
			/* Burners must not outlive the bench, even on kill -9. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			burner();
			_exit(0);
		}
	}

	/* Without churn, only wait for the signal. */
	churn = churn_ms > 0;
	if (!churn)
		churn_ms = 100;
	gap.tv_sec = churn_ms / 1000;
	gap.tv_nsec = (churn_ms % 1000) * 1000000L;
	while (!stop) {
		pid_t pid;

		if (churn) {
			pid = fork();
			if (pid == 0) {
				execl(self, argv[0], "--child", (char *)NULL);
				_exit(127);
			}
		}
		nanosleep(&gap, NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	for (int i = 0; i < burners; i++)
		kill(pids[i], SIGTERM);
	while (wait(NULL) > 0)
		;
	return 0;
}
