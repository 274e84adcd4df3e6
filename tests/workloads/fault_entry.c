// SPDX-License-Identifier: MIT
/*
 * Calls code at the first byte of a mapped file, SECONDS long: the file
 * CODE holds a few instructions, mapped executable at its offset 0 and
 * called, its page then dropped from the page tables (MADV_DONTNEED),
 * again and again. Every call takes an instruction-fetch page fault whose
 * user ip is the mapping's first byte, the case where a profiler that
 * looks up the interrupted ip as a return address (ip - 1) finds no
 * mapping.
 * usage: fault_entry SECONDS CODE
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
/* mov eax, 7; ret */
static const unsigned char code[] = { 0xb8, 0x07, 0x00, 0x00, 0x00, 0xc3 };
#elif defined(__aarch64__)
/* mov w0, #7; ret */
static const unsigned char code[] = { 0xe0, 0x00, 0x80, 0x52,
				      0xc0, 0x03, 0x5f, 0xd6 };
#else
#error "fault_entry: no code for this architecture"
#endif

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct timespec start;
	unsigned long calls = 0;
	int (*entry)(void);
	void *m;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: fault_entry SECONDS CODE\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, code, sizeof(code)) != (ssize_t)sizeof(code) ||
	    ftruncate(fd, 4096) < 0) {
		perror(argv[2]);
		return 1;
	}
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	entry = (int (*)(void))(uintptr_t)m;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (seconds_since(&start) < seconds) {
		if (entry() != 7 || madvise(m, 4096, MADV_DONTNEED) < 0)
			return 1;
		calls++;
	}
	printf("%lu calls\n", calls);
	return 0;
}
