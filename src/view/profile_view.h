/* SPDX-License-Identifier: MIT */
/*
 * Names for what a profile holds, as the reading commands print them.
 * Through the public API only; nothing here prints: failures return a
 * negative errno and leave libdcprof's message in dcp_last_error().
 */
#ifndef DCPROF_PROFILE_VIEW_H
#define DCPROF_PROFILE_VIEW_H

#include "dcprof/dcprof.h"

struct profile_view {
	const char *path;
	struct dcp_profile *profile;
	const struct dcp_cookie_table *cookies;
	bool raw_names; /* names as the binaries spell them (--no-demangle) */
	/* functions by identity (file, symbol start), for telling apart
	 * the ones that share a name; NULL: names as they are */
	struct view_functions *functions;
};

/*
 * Open path: 0, else -errno with the message in dcp_last_error().
 * by_function: the caller groups samples by process name, file and
 * function only (no pids, no addresses), so the file's summary is read
 * when it has one (dcp_profile_open_file()).
 */
int profile_view_open(struct profile_view *v, const char *path,
		      bool by_function);
/* Several profiles read as one (dcp_profile_open_files()), shown as label. */
int profile_view_open_files(struct profile_view *v, const char *label,
			    const char *const *paths, size_t n,
			    bool by_function);
/*
 * A recorder killed before it finished stored no names: find them now,
 * from the files that are still the ones sampled. 0 when there was
 * nothing to do or it worked, else -errno with the message in
 * dcp_last_error(); the view stays usable either way.
 */
int profile_view_name_unfinished(struct profile_view *v);
void profile_view_close(struct profile_view *v);

/* The display name of a cookie's object (a path, "[vdso]", ...). */
const char *profile_view_file_name(const struct profile_view *v,
				   uint32_t cookie);
/*
 * The symbol of a frame; frames without one are grouped by what they lack:
 * "[unresolved]" in a file, "[unknown]" in no mapping, "[idle]".
 */
/*
 * The name of the function of a frame. Functions are told apart by
 * identity (file, symbol start): when two of one file share a name, each
 * is named with the base name of its source file, "work (a.c)", or, when
 * that does not tell them apart, with its start, "work (0x1139)".
 */
const char *profile_view_symbol(const struct profile_view *v,
				const struct dcp_frame *f);
/* That label, NULL when the function's name is its own. */
const char *profile_view_label(const struct profile_view *v,
			       const struct dcp_frame *f);

/*
 * A frame as the functions it stands for, outermost first: the function,
 * then its inlined calls (is_inline), as dcp_profile_frame_expand(), with
 * the names profile_view_symbol() would give (demangled unless raw_names,
 * a placeholder when unresolved). Returns the count (at least 1), which
 * may exceed max; PROFILE_VIEW_EXPAND_MAX always suffices in practice.
 */
#define PROFILE_VIEW_EXPAND_MAX 64
int profile_view_expand(const struct profile_view *v, const struct dcp_frame *f,
			struct dcp_expanded_frame *out, size_t max);

/*
 * What the views count (--value): samples on the CPU; ns off the CPU
 * (record --off-cpu); or wall-clock ns, the samples times the sampling
 * period plus the time off the CPU.
 */
enum view_value { VIEW_VALUE_CPU, VIEW_VALUE_OFF_CPU, VIEW_VALUE_WALL };

/* "cpu", "off-cpu" or "wall": 0, or -EINVAL. */
int view_value_parse(const char *name, enum view_value *out);
/* The name view_value_parse() takes. */
const char *view_value_name(enum view_value value);
/* The ns one sample stands for: the period, or 1 s / the frequency. */
uint64_t profile_view_sample_ns(const struct profile_view *v);
/* A row's value: samples (VIEW_VALUE_CPU) or ns. */
uint64_t profile_view_row_value(const struct profile_view *v,
				const struct dcp_sample_row *row,
				enum view_value value);

#endif
