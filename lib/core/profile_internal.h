/* SPDX-License-Identifier: MIT */
/*
 * The profile file (docs/FORMAT.md): a header, then self-describing,
 * checksummed chunks. While recording, each flush appends the deltas since
 * the previous one, so a killed recorder leaves a file that still reads up
 * to its last flush. When recording ends, a compact file holding the whole
 * profile once is written beside it and renamed over it.
 */
#ifndef DCPROF_PROFILE_INTERNAL_H
#define DCPROF_PROFILE_INTERNAL_H

#include "dcprof/dcprof.h"
#include "aggregate_internal.h"
#include "cookie_internal.h"
#include "symtab_internal.h"

struct dcp_profile {
	struct dcp_profile_meta meta;
	char *meta_strings[5]; /* owned: event, cmdline, hostname, release,
				* backend */
	struct dcp_profile_stats stats;
	struct dcp_cookie_table *cookies;
	struct dcp_aggregate *agg; /* rows summed across flushes */
	struct dcp_symtab *symbols;
	uint64_t created_ns; /* of the file header, kept by dcp_profile_save */
	bool summary; /* agg and symbols hold the file's summary */
};

/* A demangler (C++, Rust): a new string, or NULL when name is not mangled. */
typedef char *(*dcp_demangle_fn)(const char *name);

/*
 * Read the profile at path (its summary alone when want_summary and the
 * file has one). Names stored by builds older than the SYMBOL_DETAILS
 * chunk are demangled with demangle (may be NULL). NULL with errno set and
 * a message on error.
 */
struct dcp_profile *dcp_profile_read(const char *path, bool want_summary,
				     dcp_demangle_fn demangle);

/*
 * Merging profiles (profile_merge.c): an empty profile, then each one
 * added to it (closed by the caller right after if it likes). Negative
 * errno with a message; the merged profile is then unusable.
 */
struct dcp_profile *dcp_profile_merge_new(void);
int dcp_profile_merge_add(struct dcp_profile *acc, const struct dcp_profile *p);

struct dcp_profile_writer;

/*
 * Start a profile at path: an existing file is first renamed to
 * "<path>.old"; the new one is created 0600 with O_EXCL|O_NOFOLLOW, so a
 * symlink planted at the path is never followed.
 */
struct dcp_profile_writer *dcp_profile_writer_open(const char *path);

/*
 * Append what changed since the last flush (new cookies and paths, new
 * strings and stacks, count deltas) and the current meta and stats, then
 * fdatasync. On a write error (disk full) returns the negative errno; the
 * chunks already written stay valid.
 */
int dcp_profile_writer_flush(struct dcp_profile_writer *w,
			     const struct dcp_profile_meta *meta,
			     struct dcp_cookie_table *cookies,
			     struct dcp_aggregate *agg,
			     const struct dcp_profile_stats *stats);

/*
 * Write the final, compact profile (everything once, plus symbols) to a
 * temporary file beside path and rename it over the working file. On
 * failure the working file is left as it was.
 */
int dcp_profile_writer_finish(struct dcp_profile_writer *w,
			      const struct dcp_profile_meta *meta,
			      struct dcp_cookie_table *cookies,
			      struct dcp_aggregate *agg,
			      const struct dcp_symtab *symbols,
			      const struct dcp_profile_stats *stats);

void dcp_profile_writer_free(struct dcp_profile_writer *w);

#endif
