/* SPDX-License-Identifier: MIT */
/*
 * The flame graph tree as its writers see it: the tree built by
 * flamegraph.c, the depth-first order the writers walk, and the text
 * escaping the HTML page and the SVG share. Not for use outside
 * src/export/flamegraph*.c.
 */
#ifndef DCPROF_EXPORT_FLAMEGRAPH_INTERNAL_H
#define DCPROF_EXPORT_FLAMEGRAPH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flamegraph.h"
#include "intern.h"

#define FG_NONE UINT32_MAX

struct fg_node {
	uint32_t name, file; /* indexes into the string table */
	uint32_t parent;
	uint32_t first_child, next_sibling;
	uint32_t depth;
	uint8_t type;
	uint64_t value[2]; /* samples, by enum fg_side */
	uint64_t off_cpu_ns; /* with fg_tree_keep_off_cpu(), AFTER only */
};

struct fg_tree {
	bool threads; /* a level of thread names under the processes */
	/* a level above the processes: a label of their cgroup
	 * (enum view_cgroup_key), or -1: none */
	int cgroups;
	/* value[] holds samples and off_cpu_ns the time off the CPU, apart,
	 * and value says which of them (or both: wall) the page shows first */
	bool off_cpu;
	uint64_t sample_ns; /* what one sample stands for, with off_cpu */
	enum view_value value; /* what a frame's width counts */
	struct fg_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct key_map node_index; /* (parent, name, file, type) -> node */
	struct string_table strings;
};

/*
 * Nodes in depth-first order, children sorted by name as flamegraph.pl
 * sorts them, so that a frame's children follow it and siblings run left to
 * right; only nodes with AFTER samples (a diff draws the AFTER tree) or,
 * with off_cpu, with AFTER samples or time off the CPU.
 */
struct fg_order {
	uint32_t *nodes;
	uint32_t *end; /* position after the last descendant of each position */
	size_t n;
	uint32_t max_depth;
};

/* 0, else -ENOMEM. */
int fg_order_build(const struct fg_tree *t, struct fg_order *o);
void fg_order_free(struct fg_order *o);

/* XML text of at most max_chars characters (0: all), ".." when cut. */
void fg_xml_text(FILE *out, const char *s, size_t max_chars);

/* The two renderings: 0, else -ENOMEM. */
int fg_write_html(const struct fg_tree *t, const struct fg_output_opts *o,
		  FILE *out);
int fg_write_svg(const struct fg_tree *t, const struct fg_output_opts *o,
		 FILE *out);

#endif
