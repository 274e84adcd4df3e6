/* SPDX-License-Identifier: MIT */
/*
 * Writers of a recording in other tools' formats. Each one prints its own
 * error line (through cmd_error) and returns the exit status: 0, else 1.
 * They write to an open stream and never create files: where the output
 * goes, and what happens to it on failure, is the caller's business.
 */
#ifndef DCPROF_EXPORT_H
#define DCPROF_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../cmd/profile_view.h"

/*
 * pprof's profile.proto, gzipped: one Sample per row of the profile, with
 * comm and pid as labels, sample types samples/count and cpu/nanoseconds.
 */
int export_pprof(const struct profile_view *v, FILE *out);

/*
 * Folded stacks, one "comm;root;...;leaf count" line per distinct stack
 * (rows that differ only in pid are merged); with_comm false drops the
 * comm frame.
 */
int export_folded(const struct profile_view *v, FILE *out, bool with_comm);

/*
 * Length of the valid UTF-8 sequence at p, n bytes left (0: none starts
 * there). Names from /proc and binaries are bytes; readers want UTF-8.
 */
size_t export_utf8_len(const unsigned char *p, size_t n);

#endif
