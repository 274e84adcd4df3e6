/* SPDX-License-Identifier: MIT */
/* What every dcprof subcommand shares: the table entry and error output. */
#ifndef DCPROF_CMD_H
#define DCPROF_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include "dcprof/dcprof.h"

/* Flags of a command table entry. */
#define CMD_NEEDS_PERF (1u << 0) /* opens perf events: explained when refused */

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	unsigned int flags;
	const char *summary;
	const char *usage; /* the option list shown by --help */
};

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_cookies(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* The table entry of a command, for its --help. */
const struct cmd *cmd_find(const char *name);
/* Print "usage: dcprof NAME ..." and the options to out. */
void cmd_usage(const struct cmd *c, FILE *out);

/*
 * One place prints user-facing errors: "dcprof: <message>" on stderr,
 * lowercase, no full stop. Returns the exit status to use (1), or 2 for
 * usage errors with cmd_usage_error().
 */
int cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cmd_usage_error(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A warning on stderr: "dcprof: warning: <message>". */
void cmd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Route libdcprof's log to stderr (warnings always, info with verbose). */
void cmd_setup_log(int verbosity);

/* "dcprof ARGV...", the command line a profile records; NULL: no memory. */
char *cmd_join_cmdline(int argc, char **argv);

/*
 * dcp_fp_hint(), but for stacks the kernel walked by unwind tables, whose
 * frame-pointer fallbacks the report counts apart. 1 with a hint, 0
 * without (buf "").
 */
int cmd_fp_hint(const struct dcp_profile_stats *s,
		const struct dcp_cookie_table *cookies, char *buf, size_t len);

/* Flush stdout and turn a write error on it into an error exit. */
int cmd_finish_stdout(int status);

/* JSON string output with escaping of control and invalid bytes. */
void json_print_string(FILE *out, const char *s);
/* Text output of an untrusted name: control bytes shown as \xNN. */
void text_print_safe(FILE *out, const char *s, int width);

#endif
