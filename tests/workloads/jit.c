// SPDX-License-Identifier: MIT
/*
 * A tiny JIT: copies a counting loop into anonymous executable memory,
 * describes it in /tmp/perf-PID.map as "jit_hot_loop", and runs it for
 * SECONDS. With OWNER (not "-"), the map file is given to that uid (a map
 * that is not the process's own must be ignored). With LATE, the loop runs
 * that many seconds before the map file exists, as in a JIT that writes
 * its map after it began running its code. With EARLY, the process runs
 * its own code that many seconds before it maps the JIT's memory, as a
 * runtime that starts up before it compiles anything.
 * usage: jit SECONDS [OWNER|- [LATE [EARLY]]]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
static const unsigned char code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff,
				      0xc8, 0x75, 0xfb, 0xc3 };

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	double late = argc > 3 ? atof(argv[3]) : 0;
	double early = argc > 4 ? atof(argv[4]) : 0;
	uint64_t (*loop)(uint64_t);
	char path[64];
	struct timespec start;
	void *mem;
	FILE *f;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (seconds_since(&start) < early)
		;
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	loop = (uint64_t(*)(uint64_t))mem;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (seconds_since(&start) < late)
		loop(50000000);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	/* A stale map of an earlier process with this pid, maybe another
	 * user's (which the profiler would rightly refuse), or a planted
	 * link: remove it and create the file anew, never through a link. */
	if (unlink(path) < 0 && errno != ENOENT) {
		fprintf(stderr, "jit: cannot remove the stale '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "jit: cannot create '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)mem,
		sizeof(code));
	fclose(f);
	if (argc > 2 && strcmp(argv[2], "-") &&
	    chown(path, (uid_t)atoi(argv[2]), (gid_t)-1) < 0)
		return 1;
	do
		loop(50000000);
	while (seconds_since(&start) < seconds);
	unlink(path);
	return 0;
}
