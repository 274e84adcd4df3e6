/* SPDX-License-Identifier: MIT */
/*
 * dcprof record --continuous DIR: the recorder never stops and writes one
 * profile per period into DIR, named by the period's start (UTC) and the
 * host; retention by age and size. The period files' names are also what
 * the reading commands select a time range by (range.c).
 */
#ifndef DCPROF_CONTINUOUS_H
#define DCPROF_CONTINUOUS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dcprof/dcprof.h"
#include "push.h"

#define CONTINUOUS_DEFAULT_FREQ 99
#define CONTINUOUS_DEFAULT_PERIOD 60.0
/* "20261203T165000.000Z-" and the host, then this */
#define CONTINUOUS_SUFFIX ".dcprof"

struct continuous_args {
	const char *dir;
	double period; /* seconds */
	double keep_age; /* seconds, 0: no limit */
	uint64_t keep_size; /* bytes, 0: no limit */
	double duration; /* seconds, 0: until stopped */
	/* -p: stop once none of these runs */
	const pid_t *pids;
	size_t nr_pids;
	bool (*targets_alive)(const pid_t *pids, size_t n);
	int ready_fd; /* --ready-fd, or -1 */
	struct push_opts push; /* --push: push.url set */
	const char **labels; /* --push-label, owned */
};

/* The checks made before recording starts: one error line, exit code. */
int continuous_check_dir(const char *dir);
/* "90", "90s", "30m", "12h", "7d" into seconds */
int continuous_parse_age(const char *arg, double *out);
/* "1000000", "64K", "100M", "2G" into bytes */
int continuous_parse_size(const char *opt, const char *arg, uint64_t *out);
/* the long options of no short letter */
#define CONTINUOUS_OPT_TENANT 0x101
#define CONTINUOUS_OPT_SAMPLE_LABELS 0x102
#define CONTINUOUS_OPT_MAX_SAMPLES 0x103
#define CONTINUOUS_OPT_MAX_BYTES 0x104
/* --push (W), --push-app (A), --push-label (L), --push-token-file (T),
 * --push-basic-auth-file (Q), --push-ca-file (Y), --push-spool-size (S),
 * --push-tenant, --push-sample-labels, --push-max-samples,
 * --push-max-bytes (CONTINUOUS_OPT_*) */
int continuous_parse_push(struct continuous_args *c, int opt, const char *arg);

/*
 * Record in periods until *stop (SIGTERM, SIGINT) or the duration; each
 * *cut (SIGHUP) ends the current period at once. opts->output is set
 * here. Returns the exit code.
 */
int continuous_run(struct dcp_recorder_opts *opts,
		   const struct continuous_args *c, volatile sig_atomic_t *stop,
		   volatile sig_atomic_t *cut);

/*
 * A name of a period file: its start (ns since the epoch, UTC) when name
 * is one dcprof gave, else -1.
 */
int64_t continuous_name_time(const char *name);

#endif
