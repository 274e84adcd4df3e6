/* SPDX-License-Identifier: MIT */
/*
 * Writers of a recording in other tools' formats. They never print: each
 * returns 0, else a negative errno and leaves a message for the user in
 * *err (lowercase, no full stop), which the command prints. They write to
 * an open stream and never create files: where the output goes, and what
 * happens to it on failure, is the caller's business.
 */
#ifndef DCPROF_EXPORT_H
#define DCPROF_EXPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile_view.h"

/* What went wrong, in words: room for a path and a sentence. */
struct export_error {
	char msg[PATH_MAX + 256];
};

/*
 * pprof's profile.proto, gzipped: one Sample per row of the profile, with
 * comm and pid as labels, sample types samples/count and cpu/nanoseconds.
 */
int export_pprof(const struct profile_view *v, FILE *out,
		 struct export_error *err);

/*
 * Folded stacks, one "comm;root;...;leaf count" line per distinct stack
 * (rows that differ only in pid are merged); with_comm false drops the
 * comm frame. value: what each line counts, samples or ns (--value).
 */
int export_folded(const struct profile_view *v, FILE *out, bool with_comm,
		  enum view_value value, struct export_error *err);

/*
 * Length of the valid UTF-8 sequence at p, n bytes left (0: none starts
 * there). Names from /proc and binaries are bytes; readers want UTF-8.
 */
size_t export_utf8_len(const unsigned char *p, size_t n);

/* Leave the message in err (when not NULL) and return -errnum. */
int export_fail(struct export_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
