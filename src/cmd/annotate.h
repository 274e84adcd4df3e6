/* SPDX-License-Identifier: MIT */
/* annotate's names: short forms of demangled names, the closest ones,
 * call targets. */
#ifndef DCPROF_ANNOTATE_H
#define DCPROF_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>

#include "profile_view.h"

/*
 * Whether name is a short form of the demangled name: the name without
 * its parameters, or a suffix of it that starts a scope ("heavy" and
 * "Calc<double>::heavy" of "ns::Calc<double>::heavy(int)").
 */
bool annotate_short_match(const char *demangled, const char *name);

/*
 * The sampled functions whose names come closest to name (containing it,
 * else a few typos from it), at most five, quoted and comma-separated in
 * buf; returns how many.
 */
size_t annotate_closest(const struct profile_view *v, const char *name,
			char *buf, size_t size);

/* The target of a direct call or jump ("call 0x1030"); false for other
 * instructions. */
bool annotate_direct_target(const cs_insn *in, uint64_t *target);

/* One function of one object that matched the name. */
struct annotate_target {
	uint32_t cookie;
	uint64_t start, size; /* file offsets */
	const char *name;
	/* a Python function (dcp_cookie_is_python()): its offsets are the
	 * code object's start plus a source line, and its samples those
	 * whose innermost Python frame it is */
	bool python;
	uint64_t samples;
	uint64_t *offsets, *counts; /* offsets in it, samples at each */
	size_t n, cap;
};

/* The source file last shown, read whole, to print lines from. */
struct annotate_source {
	char *path;
	char **lines;
	size_t nr;
};

void annotate_source_free(struct annotate_source *s);

/* Line line (from 1) of the file at path, read the first time it is
 * asked for; NULL when the file cannot be read or is shorter. */
const char *annotate_source_line(struct annotate_source *s, const char *path,
				 uint32_t line);

/* Source text to stdout, tabs expanded (to 8 columns), other controls
 * escaped. */
void annotate_print_source(const char *text);

/* A line's samples columns, n samples, pct percent of the function's
 * (blank with none), in the colour of that share on a terminal: the colour
 * to reset at the line's end, or NULL. */
const char *annotate_print_samples(uint64_t n, double pct, bool colour);

/*
 * Whether name names the Python function whose symbol is sym_name,
 * "qualname (file.py)": the whole of it or its qualname, or with
 * short_forms the qualname's last part ("run" of "Worker.run").
 */
bool annotate_python_match(const char *sym_name, const char *name,
			   bool short_forms);

/* A Python function's samples by source line, the file's text beside
 * them, as text or JSON (an element of "functions"). */
int annotate_python_one(const struct profile_view *v,
			const struct annotate_target *t, bool json, bool first,
			bool colour);

#endif
