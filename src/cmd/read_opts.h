/* SPDX-License-Identifier: MIT */
/*
 * What every command that reads a profile shares: the default file name,
 * the -i/--input and --format options (their table entries, parsing and
 * help lines), and opening the profile with its errors printed.
 */
#ifndef DCPROF_READ_OPTS_H
#define DCPROF_READ_OPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "profile_view.h"

/* The profile record writes and the other commands read by default. */
#define CMD_DEFAULT_PROFILE "dcprof.data"

/*
 * Help lines of the shared options, for the command table, and their
 * entries of a getopt_long table ('i' goes in the short options too).
 * Laid out by hand: clang-format breaks such tables apart.
 */
/* clang-format off */
#define READ_HELP_INPUT \
	"  -i, --input FILE       profile to read (default " CMD_DEFAULT_PROFILE ")\n"
#define READ_HELP_RANGE \
	"      --since TIME       with -i DIR of record --continuous: the periods that\n" \
	"                         start at or after TIME (2026-12-03T16:50:00Z,\n" \
	"                         '2026-12-03 16:50', UTC unless a zone follows; or\n" \
	"                         -90s, -30m, -12h, -7d before now), read as one\n" \
	"      --until TIME       ... and before TIME (default: now and later)\n"
#define READ_HELP_FORMAT_TEXT_JSON \
	"      --format FORMAT    text (default) or json\n"

#define READ_OPTS_LONGOPTS \
	{ "input", required_argument, NULL, 'i' }, \
	{ "format", required_argument, NULL, 'f' }

/* A struct read_opts for command name, whose --format takes values. */
#define READ_OPTS_INIT(name, values) \
	{ .cmd = (name), .formats = (values), .format = -1 }
/* clang-format on */

/* The formats of the commands that print text or JSON. */
enum { READ_FORMAT_TEXT, READ_FORMAT_JSON };
extern const char *const read_formats_text_json[];

struct read_opts {
	const char *cmd; /* the command, for its usage errors */
	const char *const *formats; /* --format's values, NULL-terminated */
	const char *input; /* -i as given; NULL: not given */
	int format; /* index in formats of the last --format; -1: none */
	unsigned int formats_given; /* bit i: formats[i] was given */
	const char *since, *until; /* --since, --until: NULL when not given */
};

/* The getopt values of --since and --until. */
enum { READ_OPT_SINCE = 0x1000, READ_OPT_UNTIL };

/*
 * Take option c ('i', 'f', READ_OPT_SINCE or READ_OPT_UNTIL) with its argument: 0, else the exit status
 * of the usage error printed ("unknown format 'X' (a, b)").
 */
int read_opts_parse(struct read_opts *o, int c, const char *arg);

/* The profile to read: -i, else CMD_DEFAULT_PROFILE. */
const char *read_opts_input(const struct read_opts *o);

/*
 * Open path into v (profile_view_open), and name what a recorder killed
 * before it finished left unnamed. On failure prints one error line and
 * returns the exit code; a failure to name is a warning only.
 */
int cmd_open_profile(struct profile_view *v, const char *path,
		     bool by_function);

/*
 * cmd_open_profile() of o's input, or, when it is a directory or a range
 * is given, the period files of record --continuous in it that start in
 * [--since, --until), read as one (range.c). An empty range is an error
 * that says so.
 */
int cmd_open_input(struct profile_view *v, const struct read_opts *o,
		   bool by_function);

/*
 * --value off-cpu or wall of a profile recorded without --off-cpu: an
 * error line (an empty table with status 0 read as "no off-CPU time", CPU
 * time titled wall-clock), and the exit code; 0 for --value cpu, or a
 * profile that has off-CPU time.
 */
int cmd_check_value(const struct profile_view *v, enum view_value value);

#endif
