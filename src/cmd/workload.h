/* SPDX-License-Identifier: MIT */
/*
 * A command run under the recorder (record -- CMD, top -- CMD): forked
 * first and held on a pipe, so that the recorder knows its pid and has
 * its events on before the command's first instruction.
 */
#ifndef DCPROF_WORKLOAD_H
#define DCPROF_WORKLOAD_H

#include <stdbool.h>
#include <sys/types.h>

struct workload {
	pid_t pid; /* -1: none */
	int go_fd; /* closing it lets the child exec */
	int err_fd; /* the child reports a failed exec here */
};

#define WORKLOAD_INIT                                \
	{                                            \
		.pid = -1, .go_fd = -1, .err_fd = -1 \
	}

/*
 * Whether execvp would find command: 0, or 1 with the reason said;
 * checked before the recorder starts, so that a mistyped command leaves
 * an earlier profile where it is.
 */
int workload_check(const char *command);
/*
 * Fork the child, held until workload_start(). With detached, its input
 * is /dev/null and its output is discarded (the terminal is another's,
 * the full-screen view's). 0 or 1 with the message said.
 */
int workload_prepare(char **command, bool detached, struct workload *w);
/* Let the child exec: 0, or 1 with its exec error said. */
int workload_start(struct workload *w, const char *name);
/* The child never runs (the recorder did not start): killed and reaped. */
void workload_cancel(struct workload *w);
/*
 * Stop a child still running: SIGTERM, and SIGKILL after grace_ms (0:
 * wait for as long as it takes). Its wait status into *status.
 */
void workload_stop(struct workload *w, int grace_ms, int *status);
/* A wait status as a shell's $?: the code, or 128 + the signal. */
int workload_exit_code(int status);

#endif
