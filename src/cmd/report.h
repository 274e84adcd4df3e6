/* SPDX-License-Identifier: MIT */
/*
 * dcprof report's parts: the options every part reads, the flat views
 * (report_flat.c), the call trees (report_tree.c) and the header
 * (report_header.c), driven by report.c.
 */
#ifndef DCPROF_REPORT_H
#define DCPROF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cgroup_label.h"
#include "profile_view.h"

/* comm is the thread's name (as perf's), process the process's */
enum sort_key {
	KEY_COMM,
	KEY_PID,
	KEY_FILE,
	KEY_SYMBOL,
	KEY_PROCESS,
	KEY_TID,
	/* the cgroup's path, unit, container and pod: enum view_cgroup_key
	 * in this order from KEY_CGROUP */
	KEY_CGROUP,
	KEY_UNIT,
	KEY_CONTAINER,
	KEY_POD,
	NR_KEYS
};

static inline bool report_key_is_cgroup(enum sort_key k)
{
	return k >= KEY_CGROUP && k <= KEY_POD;
}

extern const char *const report_key_names[NR_KEYS];

enum tree_order { TREE_NONE, TREE_CALLER, TREE_CALLEE };

/* A comma-separated, repeatable option: every value it was given. */
struct str_list {
	char **v;
	size_t n;
};

static inline bool str_list_has(const struct str_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

struct read_opts;

struct report_args {
	const char *input;
	const struct read_opts *ro; /* -i and the range to read */
	enum sort_key keys[NR_KEYS];
	size_t nr_keys;
	bool json;
	long limit;
	bool children;
	bool show_counts; /* -n: sample counts in the text trees too */
	enum tree_order tree;
	double percent_limit;
	long max_stack; /* frames nearest the leaf; -1: all */
	bool no_inline;
	bool no_process; /* text trees: no process level at the root */
	bool full_path; /* text: file paths not shortened */
	struct str_list comms, pids, tids, files, symbols, cgroups;
	bool resymbolize;
	bool write;
	struct str_list debuginfo_dirs;
	enum view_value value; /* --value: samples, or ns shown as ms */
	bool threads; /* --threads: each thread's time on and off the CPU */
	/* the shown rows' off-CPU ns by enum dcp_off_cpu_state (header) */
	uint64_t off_cpu_state_ns[DCP_OFF_CPU_NR_STATES];
};

/* The values are ns (off-CPU or wall time), printed in ms. */
static inline bool report_in_ms(const struct report_args *a)
{
	return a->value != VIEW_VALUE_CPU;
}

/* The text column of the value. */
static inline const char *report_value_column(const struct report_args *a)
{
	return a->value == VIEW_VALUE_OFF_CPU ? "Off-CPU ms" :
	       a->value == VIEW_VALUE_WALL    ? "Wall ms" :
						"Samples";
}

static inline bool report_has_key(const struct report_args *a, enum sort_key k)
{
	for (size_t i = 0; i < a->nr_keys; i++)
		if (a->keys[i] == k)
			return true;
	return false;
}

/* --comm, --pid, --tid, --file or --symbol given */
static inline bool report_filtered(const struct report_args *a)
{
	return a->comms.n || a->pids.n || a->tids.n || a->files.n ||
	       a->symbols.n || a->cgroups.n;
}

/* The filters, in the order a row is tried against them. */
enum report_filter {
	FILTER_COMM,
	FILTER_PID,
	FILTER_TID,
	FILTER_FILE,
	FILTER_SYMBOL,
	FILTER_CGROUP,
	FILTER_NR
};

static inline double report_percent(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0;
}

/* The frames of a row the views use: --max-stack nearest the leaf. */
static inline uint32_t report_stack_depth(const struct report_args *a,
					  const struct dcp_sample_row *row)
{
	if (a->max_stack >= 0 && (uint64_t)a->max_stack < row->nr_frames)
		return (uint32_t)a->max_stack;
	return row->nr_frames;
}

/*
 * The flat views: one line per distinct value of the sort keys, with the
 * samples that ended there (self) and, with --children, those that had it
 * anywhere on the stack. Adding returns 0 or -ENOMEM.
 */
struct report_flat;

struct report_flat *report_flat_new(const struct report_args *a);
int report_flat_add_row(struct report_flat *r, const struct profile_view *v,
			const struct dcp_sample_row *row, size_t row_nr);
/* Sort the lines and print them, total samples being 100%. */
void report_flat_print(struct report_flat *r, const struct profile_view *v,
		       uint64_t total);
void report_flat_free(struct report_flat *r);

/* The call tree of --tree caller|callee. Adding returns 0 or -ENOMEM. */
struct report_tree;

struct report_tree *report_tree_new(const struct report_args *a);
int report_tree_add_row(struct report_tree *t, const struct profile_view *v,
			const struct dcp_sample_row *row);
void report_tree_print(const struct report_tree *t,
		       const struct profile_view *v);
void report_tree_free(struct report_tree *t);

/* report_threads.c: --threads, one line per (pid, tid). */
struct report_threads;
struct report_threads *report_threads_new(const struct report_args *a);
/* A row (its count in samples): 0 or -ENOMEM. */
int report_threads_add_row(struct report_threads *t,
			   const struct dcp_sample_row *row);
void report_threads_print(struct report_threads *t,
			  const struct profile_view *v);
void report_threads_free(struct report_threads *t);

/*
 * What opens the report: the recording's meta data and statistics and,
 * with filters, the samples they kept (total, what percentages are of)
 * of the samples there were (unfiltered).
 */
void report_print_header(const struct profile_view *v,
			 const struct report_args *a, uint64_t total,
			 uint64_t unfiltered);
/*
 * The filters left nothing: one line on stderr saying, of the unfiltered
 * samples (or ms), how many each filter removed (removed[enum
 * report_filter]), the first that refused a row counting it.
 */
void report_warn_empty(const struct report_args *a, uint64_t unfiltered,
		       const uint64_t *removed);
/* "--comm, --pid" for the filters given. */
const char *report_filter_names(const struct report_args *a);
/* dcprof diff OLD NEW (diff.c), in the table of src/dcprof.c */
int cmd_diff(int argc, char **argv);

/* What --resymbolize found. */
void report_print_resymbolize(const struct report_args *a,
			      const struct dcp_resymbolize_stats *st);

#endif
