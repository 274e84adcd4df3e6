// SPDX-License-Identifier: MIT
/*
 * The merged call tree behind the flame graphs and the depth-first order
 * its two renderings (flamegraph_html.c, flamegraph_svg.c) walk.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_label.h"
#include "flamegraph_internal.h"
#include "grow.h"

/* Inlined calls shown per stored frame; deeper nests are cut. */
#define FG_MAX_EXPAND 32

/* What a cookie contributes to each of its frames, looked up once. */
struct cookie_class {
	bool known;
	uint8_t type;
	uint32_t file;
};

static int64_t intern(struct fg_tree *t, const char *s)
{
	return string_table_intern(&t->strings, s);
}

/* The child of parent with this identity, created when missing. */
static int64_t child(struct fg_tree *t, uint32_t parent, uint32_t name,
		     uint32_t file, uint8_t type)
{
	uint64_t k1 = (uint64_t)parent << 32 | name;
	uint64_t k2 = (uint64_t)file << 8 | type;
	struct fg_node *n;
	uint32_t id;

	if (!key_map_find(&t->node_index, k1, k2, &id))
		return id;
	n = dcp_grow_from(t->nodes, &t->cap_nodes, t->nr_nodes + 1, sizeof(*n),
			  4096);
	if (!n)
		return -ENOMEM;
	t->nodes = n;
	if (key_map_add(&t->node_index, k1, k2, (uint32_t)t->nr_nodes) < 0)
		return -ENOMEM;
	n = &t->nodes[t->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->file = file;
	n->parent = parent;
	n->first_child = FG_NONE;
	n->type = type;
	if (parent != FG_NONE) {
		n->depth = t->nodes[parent].depth + 1;
		n->next_sibling = t->nodes[parent].first_child;
		t->nodes[parent].first_child = (uint32_t)t->nr_nodes;
	} else {
		n->next_sibling = FG_NONE;
	}
	return (int64_t)t->nr_nodes++;
}

struct fg_tree *fg_tree_new(void)
{
	struct fg_tree *t = calloc(1, sizeof(*t));

	/* String 0 is the empty name, node 0 the root "all". */
	if (t)
		t->cgroups = -1;
	if (!t || intern(t, "") != 0 || intern(t, "all") != 1 ||
	    child(t, FG_NONE, 1, 0, FG_TYPE_ROOT) != 0) {
		fg_tree_free(t);
		return NULL;
	}
	return t;
}

void fg_tree_free(struct fg_tree *t)
{
	if (!t)
		return;
	string_table_free(&t->strings);
	free(t->nodes);
	key_map_free(&t->node_index);
	free(t);
}

static uint8_t frame_type(const struct dcp_cookie_info *info, bool found)
{
	if (!found)
		return FG_TYPE_UNKNOWN;
	switch (info->kind) {
	case DCP_COOKIE_KIND_KERNEL:
	case DCP_COOKIE_KIND_MODULE:
		return FG_TYPE_KERNEL;
	case DCP_COOKIE_KIND_JIT:
		return dcp_cookie_is_python(info) ? FG_TYPE_PYTHON :
						    FG_TYPE_JIT;
	case DCP_COOKIE_KIND_ANON:
		return FG_TYPE_JIT;
	case DCP_COOKIE_KIND_IDLE:
		return FG_TYPE_IDLE;
	case DCP_COOKIE_KIND_UNKNOWN:
		return FG_TYPE_UNKNOWN;
	default:
		return FG_TYPE_USER;
	}
}

static int classify(struct fg_tree *t, const struct profile_view *v,
		    const struct dcp_frame *f, struct cookie_class *c)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	bool found = dcp_cookie_table_lookup(v->cookies, f->cookie, &info) == 0;
	const char *file = found && info.name ? info.name : "";
	const char *slash = strrchr(file, '/');
	int64_t s;

	/* The base name: what a reader recognises, and what stays the same
	 * between two builds of one program in two places (--diff). */
	s = intern(t, slash && slash[1] ? slash + 1 : file);
	if (s < 0)
		return (int)s;
	c->file = (uint32_t)s;
	c->type = frame_type(&info, found);
	c->known = true;
	return 0;
}

/* samples to value[side]; off-CPU ns (fg_tree_keep_off_cpu()) apart */
static void add_value(struct fg_tree *t, uint32_t node, enum fg_side side,
		      uint64_t samples, uint64_t off_cpu_ns)
{
	t->nodes[node].value[side] += samples;
	t->nodes[node].off_cpu_ns += off_cpu_ns;
}

static int add_profile(struct fg_tree *t, const struct profile_view *v,
		       enum fg_side side)
{
	size_t nr_cookies = dcp_cookie_table_size(v->cookies);
	struct cookie_class *classes = calloc(nr_cookies + 1, sizeof(*classes));
	size_t nr_rows = dcp_profile_nr_rows(v->profile);
	int ret = 0;

	if (!classes)
		return -ENOMEM;
	if (t->off_cpu)
		t->sample_ns = profile_view_sample_ns(v);
	for (size_t r = 0; r < nr_rows && !ret; r++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		uint64_t off;
		int64_t node, s;

		if (dcp_profile_row(v->profile, r, &row) || !row.nr_frames)
			continue;
		if (t->off_cpu) {
			off = profile_view_row_value(v, &row,
						     VIEW_VALUE_OFF_CPU);
		} else {
			row.count = profile_view_row_value(v, &row, t->value);
			off = 0;
		}
		if (!row.count && !off)
			continue;
		add_value(t, 0, side, row.count, off);
		node = 0;
		if (t->cgroups >= 0) {
			char label[512];

			s = intern(t, view_cgroup_label(&row, t->cgroups, label,
							sizeof(label)));
			node = s < 0 ? s :
				       child(t, 0, (uint32_t)s, 0,
					     FG_TYPE_COMM);
			if (node < 0) {
				ret = (int)node;
				break;
			}
			add_value(t, (uint32_t)node, side, row.count, off);
		}
		s = intern(t, row.comm ? row.comm : "");
		node = s < 0 ? s :
			       child(t, (uint32_t)node, (uint32_t)s, 0,
				     FG_TYPE_COMM);
		if (node < 0) {
			ret = (int)node;
			break;
		}
		add_value(t, (uint32_t)node, side, row.count, off);
		if (t->threads) {
			s = intern(t, row.thread_comm ? row.thread_comm : "");
			node = s < 0 ? s :
				       child(t, (uint32_t)node, (uint32_t)s, 0,
					     FG_TYPE_COMM);
			if (node < 0) {
				ret = (int)node;
				break;
			}
			add_value(t, (uint32_t)node, side, row.count, off);
		}
		for (uint32_t i = row.nr_frames; i-- > 0;) {
			const struct dcp_frame *f = &row.frames[i];
			struct cookie_class one = { 0 }, *c = &one;
			struct dcp_expanded_frame ex[FG_MAX_EXPAND];
			uint8_t type;
			int nr;

			if (f->cookie < nr_cookies)
				c = &classes[f->cookie];
			if (!c->known) {
				ret = classify(t, v, f, c);
				if (ret)
					break;
			}
			/* The recorder's kernel flag wins over the cookie: an
			 * address it saw in kernel mode is kernel code. */
			type = f->flags & DCP_FRAME_KERNEL ? FG_TYPE_KERNEL :
							     c->type;
			ex[0].sz = sizeof(ex[0]);
			nr = dcp_profile_frame_expand(v->profile, f, ex,
						      FG_MAX_EXPAND);
			if (nr < 1)
				nr = 1, ex[0].name = NULL;
			/* a function that shares its name says which */
			if (ex[0].name && !ex[0].is_inline) {
				const char *label = profile_view_label(v, f);

				if (label)
					ex[0].name = label;
			}
			if (nr > FG_MAX_EXPAND)
				nr = FG_MAX_EXPAND;
			/* The function, then its inlined calls inside out. */
			for (int k = 0; k < nr && node >= 0; k++) {
				if (k)
					add_value(t, (uint32_t)node, side,
						  row.count, off);
				s = intern(t, ex[k].name ? ex[k].name :
							   profile_view_symbol(
								   v, f));
				node = s < 0 ? s :
					       child(t, (uint32_t)node,
						     (uint32_t)s, c->file,
						     ex[k].is_inline ?
							     FG_TYPE_INLINE :
							     type);
			}
			if (node < 0) {
				ret = (int)node;
				break;
			}
			add_value(t, (uint32_t)node, side, row.count, off);
		}
	}
	free(classes);
	return ret;
}

void fg_tree_set_value(struct fg_tree *t, enum view_value value)
{
	t->value = value;
}

void fg_tree_keep_off_cpu(struct fg_tree *t, bool off_cpu)
{
	t->off_cpu = off_cpu;
}

void fg_tree_group_threads(struct fg_tree *t, bool threads)
{
	t->threads = threads;
}

void fg_tree_group_cgroups(struct fg_tree *t, int key)
{
	t->cgroups = key;
}

int fg_tree_add_profile(struct fg_tree *t, const struct profile_view *v,
			enum fg_side side, struct export_error *err)
{
	int ret = add_profile(t, v, side);

	return ret < 0 ? export_fail(err, -ret, "out of memory") : 0;
}

/* ---- the tree in output order ------------------------------------------ */

static int compare_siblings(const void *a, const void *b, void *ctx)
{
	const struct fg_tree *sort_tree = ctx;
	const struct fg_node *x = &sort_tree->nodes[*(const uint32_t *)a];
	const struct fg_node *y = &sort_tree->nodes[*(const uint32_t *)b];
	int c = strcmp(string_table_get(&sort_tree->strings, x->name),
		       string_table_get(&sort_tree->strings, y->name));

	if (c)
		return c;
	c = strcmp(string_table_get(&sort_tree->strings, x->file),
		   string_table_get(&sort_tree->strings, y->file));
	if (c)
		return c;
	return (int)x->type - (int)y->type;
}

int fg_order_build(const struct fg_tree *t, struct fg_order *o)
{
	uint32_t *stack = malloc(t->nr_nodes * sizeof(*stack));
	uint32_t *kids = malloc(t->nr_nodes * sizeof(*kids));
	uint32_t *pos_stack = malloc(t->nr_nodes * sizeof(*pos_stack));
	size_t sp = 0;

	o->nodes = malloc(t->nr_nodes * sizeof(*o->nodes));
	o->end = malloc(t->nr_nodes * sizeof(*o->end));
	o->n = 0;
	o->max_depth = 0;
	if (!stack || !kids || !pos_stack || !o->nodes || !o->end) {
		free(stack);
		free(kids);
		free(pos_stack);
		free(o->nodes);
		free(o->end);
		return -ENOMEM;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp], nk = 0;
		const struct fg_node *n = &t->nodes[i];

		o->nodes[o->n++] = i;
		if (n->depth > o->max_depth)
			o->max_depth = n->depth;
		for (uint32_t c = n->first_child; c != FG_NONE;
		     c = t->nodes[c].next_sibling)
			if (t->nodes[c].value[FG_AFTER] ||
			    t->nodes[c].off_cpu_ns)
				kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), compare_siblings, (void *)t);
		/* Reversed onto the stack, so that the first comes out first. */
		while (nk)
			stack[sp++] = kids[--nk];
	}
	/* A position's subtree ends where the next node no deeper starts. */
	sp = 0;
	for (size_t k = 0; k < o->n; k++) {
		uint32_t d = t->nodes[o->nodes[k]].depth;

		while (sp && t->nodes[o->nodes[pos_stack[sp - 1]]].depth >= d)
			o->end[pos_stack[--sp]] = (uint32_t)k;
		pos_stack[sp++] = (uint32_t)k;
	}
	while (sp)
		o->end[pos_stack[--sp]] = (uint32_t)o->n;
	free(stack);
	free(kids);
	free(pos_stack);
	return 0;
}

void fg_order_free(struct fg_order *o)
{
	free(o->nodes);
	free(o->end);
}

int fg_write(const struct fg_tree *t, const struct fg_output_opts *o, FILE *out,
	     struct export_error *err)
{
	int ret = o->svg ? fg_write_svg(t, o, out) : fg_write_html(t, o, out);

	return ret < 0 ? export_fail(err, -ret, "out of memory") : 0;
}
