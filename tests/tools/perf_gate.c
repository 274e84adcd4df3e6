// SPDX-License-Identifier: MIT
/*
 * What a kernel that refuses perf events to users looks like, for tests:
 *   perf_gate probe         exit 0 if this process may open a per-task
 *                           cpu-clock event on itself, 1 if the kernel
 *                           refuses it (EACCES/EPERM), 2 on other errors
 *   perf_gate deny CMD...   run CMD with perf_event_open failing with
 *                           EACCES for it and its children (a seccomp
 *                           filter), as Debian's kernels do with
 *                           perf_event_paranoid 3 for a user without
 *                           CAP_PERFMON
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int probe(void)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_freq = 99;
	attr.freq = 1;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EACCES || errno == EPERM) {
		printf("refused: %s\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, "perf_gate: perf_event_open: %s\n", strerror(errno));
	return 2;
}

static int deny(char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("perf_gate: seccomp");
		return 2;
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "probe"))
		return probe();
	if (argc > 2 && !strcmp(argv[1], "deny"))
		return deny(argv + 2);
	fprintf(stderr, "usage: perf_gate probe | perf_gate deny CMD...\n");
	return 2;
}
