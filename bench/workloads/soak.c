// SPDX-License-Identifier: MIT
/*
 * Parts of the soak bench's churn (bench/soak.sh), each a process of its
 * own that runs until SIGTERM or SIGINT:
 *   soak threads N   a long-lived process of N threads, each waking every
 *                    few milliseconds to do a little work in a function of
 *                    its own, as a server's worker pool does
 *   soak jit         a JIT: every 50 ms it writes a new function into
 *                    anonymous executable memory (1 MiB, reused from its
 *                    start when full, as a JIT that frees and recompiles),
 *                    appends its name (jit_fn_N, N counting up for ever)
 *                    to /tmp/perf-PID.map and runs the newest functions
 * usage: soak threads N | soak jit
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#define WORK(n)                                                         \
	static NOINLINE void work_##n(uint64_t seed)                    \
	{                                                               \
		uint64_t x = seed;                                      \
		for (int i = 0; i < 20000 * (n % 3 + 1); i++)           \
			x = x * 6364136223846793005ull + n + (x >> 29); \
		sink += x;                                              \
	}
WORK(0)
WORK(1)
WORK(2)
WORK(3)

static void *worker(void *arg)
{
	static void (*const works[])(uint64_t) = { work_0, work_1, work_2,
						   work_3 };
	uintptr_t i = (uintptr_t)arg;

	while (!stop) {
		works[i % 4](i);
		nap_ms(5 + (long)(i % 7));
	}
	return NULL;
}

static int threads(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	int made = 0;

	if (!t)
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) ==
		    0)
			made++;
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	free(t);
	return made == n ? 0 : 1;
}

/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
static const unsigned char loop_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff,
					   0xc8, 0x75, 0xfb, 0xc3 };

#define JIT_BYTES (1u << 20)
#define JIT_SLOT 64u

static int jit(void)
{
	char path[64];
	unsigned char *mem;
	uint64_t n = 0;
	FILE *map;
	int fd;

	mem = mmap(NULL, JIT_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	if (unlink(path) < 0 && errno != ENOENT)
		return 1;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	map = fd < 0 ? NULL : fdopen(fd, "w");
	if (!map)
		return 1;
	while (!stop) {
		size_t at = (size_t)(n * JIT_SLOT) % JIT_BYTES;
		uint64_t (*fn)(uint64_t) = (uint64_t(*)(uint64_t))(mem + at);

		memcpy(mem + at, loop_code, sizeof(loop_code));
		fprintf(map, "%lx %zx jit_fn_%llu\n",
			(unsigned long)(uintptr_t)(mem + at), sizeof(loop_code),
			(unsigned long long)n);
		fflush(map);
		n++;
		sink += fn(2000000);
		nap_ms(50);
	}
	fclose(map);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "jit"))
		return jit();
	fprintf(stderr, "usage: soak threads N | soak jit\n");
	return 2;
}
