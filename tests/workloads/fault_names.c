// SPDX-License-Identifier: MIT
/*
 * Runs code under hostile names for SECONDS, writing "ready" to READY
 * first. Every mode renames the process (prctl PR_SET_NAME) to 15 bytes
 * holding control characters, a quote and a backslash.
 *   file:  burns CPU in hostile_spin() of this binary, wherever it lies
 *   memfd: copies this binary into a memfd whose name holds a newline and
 *          invalid UTF-8, and runs it from there (fexecve) in "file" mode
 *   anon:  copies a counting loop into anonymous executable memory and
 *          runs it there
 * usage: fault_names MODE SECONDS READY
 */
#define _GNU_SOURCE /* memfd_create */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void ready(const char *file)
{
	FILE *f = fopen(file, "w");

	if (f) {
		fputs("ready\n", f);
		fclose(f);
	}
}

__attribute__((noinline)) void hostile_spin(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		for (uint64_t i = 0; i < 100000; i++)
			sink += i ^ (i >> 3);
}

/* dec %rdi; jnz .-3; ret */
static const unsigned char loop_code[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };

static int run_anon(double seconds)
{
	void (*loop)(uint64_t);
	double end = now() + seconds;
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(code, loop_code, sizeof(loop_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0) {
		perror("mprotect");
		return 1;
	}
	loop = (void (*)(uint64_t))(uintptr_t)code;
	while (now() < end)
		loop(10000000);
	return 0;
}

static int run_memfd(char **argv)
{
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int fd = memfd_create("hostile\n\xff\x01 mem", 0);
	struct stat st;
	char *args[] = { argv[0], "file", argv[2], argv[3], NULL };
	extern char **environ;

	if (in < 0 || fd < 0 || fstat(in, &st) < 0) {
		perror("memfd");
		return 1;
	}
	for (off_t off = 0; off < st.st_size;)
		if (sendfile(fd, in, &off, (size_t)(st.st_size - off)) <= 0) {
			perror("sendfile");
			return 1;
		}
	fexecve(fd, args, environ);
	perror("fexecve");
	return 1;
}

int main(int argc, char **argv)
{
	double seconds;

	if (argc != 4) {
		fprintf(stderr, "usage: fault_names MODE SECONDS READY\n");
		return 2;
	}
	seconds = atof(argv[2]);
	if (strcmp(argv[1], "memfd") == 0)
		return run_memfd(argv);
	prctl(PR_SET_NAME, "\x01h\tos\"ti\\le\x1b[7\x7f", 0, 0, 0);
	ready(argv[3]);
	if (strcmp(argv[1], "anon") == 0)
		return run_anon(seconds);
	hostile_spin(seconds);
	return 0;
}
