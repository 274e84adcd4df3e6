// SPDX-License-Identifier: MIT
/*
 * N stopped processes with M executable maps each, for the collection's
 * tests and benchmarks: every child maps one page of its own executable
 * M times (r-x, separate maps) and stops itself. Once all are stopped their
 * pids are written, comma-separated, to PIDFILE; then the parent waits to
 * be killed, and the children die with it.
 * usage: collect_maps N M PIDFILE
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(int maps)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/exe", O_RDONLY);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 0; i < maps; i++)
		if (fd < 0 || mmap(NULL, page, PROT_READ | PROT_EXEC,
				   MAP_PRIVATE, fd, 0) == MAP_FAILED)
			_exit(3);
	raise(SIGSTOP);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int n, maps, status;
	char tmp[4096];
	pid_t *pids;
	FILE *f;

	if (argc != 4 || (n = atoi(argv[1])) <= 0 ||
	    (maps = atoi(argv[2])) < 0) {
		fprintf(stderr, "usage: collect_maps N M PIDFILE\n");
		return 2;
	}
	/* the children die with us, and we with whoever started us */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pids = calloc(n, sizeof(*pids));
	if (!pids)
		return 1;
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0)
			child(maps);
		if (waitpid(pids[i], &status, WUNTRACED) != pids[i] ||
		    !WIFSTOPPED(status)) {
			fprintf(stderr, "child %d did not stop\n", i);
			return 1;
		}
	}
	/* written aside and renamed: a reader never sees half a list */
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[3]);
	f = fopen(tmp, "w");
	if (!f)
		return 1;
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)pids[i]);
	fputc('\n', f);
	if (fclose(f) || rename(tmp, argv[3]))
		return 1;
	for (;;)
		pause();
}
