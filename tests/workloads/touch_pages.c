// SPDX-License-Identifier: MIT
/*
 * Touches PAGES new pages, one write each, CHUNK pages at a time (each
 * chunk mapped afresh, without huge pages), so that it takes about PAGES
 * page faults, then exits. usage: touch_pages PAGES [CHUNK]
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 100000;
	long chunk = argc > 2 ? atol(argv[2]) : 1024;
	long page = sysconf(_SC_PAGESIZE);

	while (pages > 0) {
		long n = pages < chunk ? pages : chunk;
		volatile char *p =
			mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		madvise((void *)p, (size_t)(n * page), MADV_NOHUGEPAGE);
		for (long i = 0; i < n; i++)
			p[i * page] = 1;
		munmap((void *)p, (size_t)(n * page));
		pages -= n;
	}
	return 0;
}
