/* SPDX-License-Identifier: MIT */
/*
 * Flame graphs: the merged call tree of one profile (or of two, for a
 * differential graph) and its HTML and SVG renderings.
 */
#ifndef DCPROF_EXPORT_FLAMEGRAPH_H
#define DCPROF_EXPORT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "export.h"
#include "profile_view.h"

/* What a frame is: the HTML page colours by it; values are its contract. */
enum fg_type {
	FG_TYPE_ROOT = 0,
	FG_TYPE_COMM = 1, /* the process name under the root */
	FG_TYPE_USER = 2,
	FG_TYPE_KERNEL = 3,
	FG_TYPE_JIT = 4, /* JIT code and anonymous executable memory */
	FG_TYPE_INLINE =
		5, /* reserved: inlined frames, once symbols have them */
	FG_TYPE_UNKNOWN = 6, /* no mapping covered the address */
	FG_TYPE_IDLE = 7,
	/* a Python call (dcp_cookie_is_python()): interpreted code */
	FG_TYPE_PYTHON = 8,
};

/* Which profile a tree's values come from. */
enum fg_side { FG_AFTER = 0, FG_BEFORE = 1 };

struct fg_tree;

struct fg_tree *fg_tree_new(void);
void fg_tree_free(struct fg_tree *t);

/*
 * Merge every row of v into the tree on one side: root, then the process
 * name, then the frames from the outermost caller to the leaf. Rows without
 * frames are left out, as the report leaves them out. Returns 0, else
 * -ENOMEM with the message in *err.
 */
int fg_tree_add_profile(struct fg_tree *t, const struct profile_view *v,
			enum fg_side side, struct export_error *err);
/* Before adding: a level of threads (their names) under each process. */
void fg_tree_group_threads(struct fg_tree *t, bool threads);
/* Before adding: a level above the processes, a label of their cgroup
 * (enum view_cgroup_key; -1: none, the default). */
void fg_tree_group_cgroups(struct fg_tree *t, int key);
/* Before adding: what frames are as wide as (default: samples). */
void fg_tree_set_value(struct fg_tree *t, enum view_value value);
/*
 * Before adding, for the HTML page of one profile recorded with --off-cpu:
 * keep each frame's samples and its time off the CPU apart, so that the
 * page can switch between CPU, off-CPU and wall-clock time; the value set
 * above is the one it shows first. Not for a diff; the SVG draws samples.
 */
void fg_tree_keep_off_cpu(struct fg_tree *t, bool off_cpu);

struct fg_output_opts {
	const char *title;
	/* Shown in the header, one per line; the input files and their meta. */
	const char *const *notes;
	size_t nr_notes;
	/* The tree holds BEFORE values: colour by the change of share. */
	bool diff;
	/* A static SVG picture instead of the interactive HTML page. */
	bool svg;
};

/*
 * Write the page or picture to out: 0, else -ENOMEM with the message in
 * *err. The caller checks out for write errors.
 */
int fg_write(const struct fg_tree *t, const struct fg_output_opts *o, FILE *out,
	     struct export_error *err);

/* The page's assets, embedded at build time by scripts/embed.sh. */
extern const unsigned char fg_asset_html[], fg_asset_js[], fg_asset_css[];
extern const unsigned long fg_asset_html_len, fg_asset_js_len, fg_asset_css_len;

#endif
