// SPDX-License-Identifier: MIT
/*
 * The call trees of dcprof report (--tree caller|callee), inlined calls as
 * nodes of their own, printed largest first as text or JSON. The caller
 * tree merges every sample's stack from its outermost frame. The callee
 * tree has a root for every function on a stack: its Total the samples
 * with it on the stack, its Self those where it was sampled, as
 * --children counts them, and below it the callers it was reached
 * through, from its innermost call outward.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "grow.h"
#include "intern.h"
#include "report.h"

struct tnode {
	uint32_t name; /* in the tree's names */
	uint32_t cookie; /* of the real frame the node came from */
	bool is_inline, kernel;
	bool process; /* a process level node: its name is the process's */
	uint64_t total, self;
	uint32_t parent, first_child, next_sibling; /* 0: none */
};

/* One function of a frame's expansion: its inlined calls are items too. */
struct path_item {
	uint32_t name;
	uint32_t cookie;
	bool is_inline, kernel;
	bool process;
	uint8_t span; /* items of the frame this one came from */
};

/*
 * Nodes, node 0 the root; a child found by (parent, name, flags) in index.
 * Each distinct frame is expanded into items once (expansions maps its
 * (cookie, offset) to where its items start in the items pool).
 */
struct report_tree {
	const struct report_args *a;
	struct string_table names;
	struct tnode *n;
	size_t nr, cap;
	struct key_map index;
	struct key_map expansions;
	struct path_item *items;
	size_t nr_items, cap_items;
	struct path_item *path; /* the row being added */
	size_t path_cap;
	size_t leaf_items; /* items of the path from the sampled frame */
	uint64_t samples; /* rows added: what percentages are of */
	char label[1024]; /* process_label()'s */
	/* callee tree: the row that last started a root at a function,
	 * indexed by tree_function() */
	uint64_t *seen;
	size_t seen_cap;
	uint64_t stamp;
	/* text trees: a level of process names at the root (not in JSON,
	 * nor with --no-process) */
	bool by_process;
	uint32_t root; /* where the row being added starts */
};

struct report_tree *report_tree_new(const struct report_args *a)
{
	struct report_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->a = a;
	t->cap = 1024;
	t->n = calloc(t->cap, sizeof(*t->n));
	if (!t->n) {
		free(t);
		return NULL;
	}
	t->nr = 1; /* the root, nameless */
	t->by_process = !a->json && !a->no_process;
	return t;
}

void report_tree_free(struct report_tree *t)
{
	if (!t)
		return;
	free(t->n);
	key_map_free(&t->index);
	key_map_free(&t->expansions);
	free(t->items);
	free(t->path);
	free(t->seen);
	string_table_free(&t->names);
	free(t);
}

static uint64_t tree_key_flags(const struct path_item *it)
{
	return (uint64_t)it->is_inline | (uint64_t)it->kernel << 1 |
	       (uint64_t)it->process << 2;
}

/* The child of parent for it, created on first use; 0 when out of memory
 * (the root is never a child). */
static uint32_t tree_child(struct report_tree *t, uint32_t parent,
			   const struct path_item *it)
{
	uint64_t k1 = (uint64_t)parent << 32 | it->name;
	uint64_t k2 = tree_key_flags(it);
	struct tnode *n;
	uint32_t id;

	if (!key_map_find(&t->index, k1, k2, &id)) {
		/*
		 * Same-named functions of two files share a node (the text
		 * tree prints names): it names the first file by cookie, not
		 * the first row's, so that the whole file and its summary,
		 * whose rows come in other orders, say the same.
		 */
		if (it->cookie < t->n[id].cookie)
			t->n[id].cookie = it->cookie;
		return id;
	}
	/* node numbers are 32 bits wide */
	if (t->nr >= UINT32_MAX - 1)
		return 0;
	n = dcp_grow(t->n, &t->cap, t->nr + 1, sizeof(*n));
	if (!n)
		return 0;
	t->n = n;
	id = (uint32_t)t->nr;
	if (key_map_add(&t->index, k1, k2, id) < 0)
		return 0;
	t->nr++;
	n = &t->n[id];
	memset(n, 0, sizeof(*n));
	n->name = it->name;
	n->cookie = it->cookie;
	n->is_inline = it->is_inline;
	n->kernel = it->kernel;
	n->process = it->process;
	n->parent = parent;
	n->next_sibling = t->n[parent].first_child;
	t->n[parent].first_child = id;
	return id;
}

/* path from the root: every node counts the samples, the last one adds
 * self_last to its self, every one self_each. */
static int tree_add(struct report_tree *t, const struct path_item *path,
		    size_t n, uint64_t count, uint64_t self_last,
		    uint64_t self_each)
{
	uint32_t node = t->root;

	if (!node)
		t->n[0].total += count;
	for (size_t i = 0; i < n; i++) {
		node = tree_child(t, node, &path[i]);
		if (!node)
			return -ENOMEM;
		t->n[node].total += count;
		t->n[node].self += self_each;
	}
	t->n[node].self += self_last;
	return 0;
}

/* A function as the tree tells them apart: name and flags. */
static size_t tree_function(const struct path_item *it)
{
	return (size_t)it->name << 2 | (size_t)(tree_key_flags(it) & 3);
}

/*
 * Callee tree: a root for each function of the path (callee order), at
 * its innermost call, with the callers from there outward below it: a
 * function that recurses counts once per sample. Self: the root's
 * function was in the sampled frame (itself or inlined there).
 */
static int tree_add_callee(struct report_tree *t, size_t n, uint64_t count)
{
	t->stamp++;
	for (size_t i = 0; i < n; i++) {
		size_t fn = tree_function(&t->path[i]);
		uint64_t *seen;
		int ret;

		if (fn >= t->seen_cap) {
			size_t old = t->seen_cap;

			seen = dcp_grow_from(t->seen, &t->seen_cap, fn + 1,
					     sizeof(*seen), 1024);
			if (!seen)
				return -ENOMEM;
			memset(seen + old, 0,
			       (t->seen_cap - old) * sizeof(*seen));
			t->seen = seen;
		}
		if (t->seen[fn] == t->stamp)
			continue;
		t->seen[fn] = t->stamp;
		ret = tree_add(t, t->path + i, n - i, count, 0,
			       i < t->leaf_items ? count : 0);
		if (ret)
			return ret;
	}
	return 0;
}

/* The items of a frame, outermost function first, made on first use;
 * *first indexes t->items. Returns how many, -ENOMEM. */
static int frame_items(struct report_tree *t, const struct profile_view *v,
		       const struct dcp_frame *f, uint32_t *first)
{
	struct dcp_expanded_frame ex[PROFILE_VIEW_EXPAND_MAX];
	struct path_item *items;
	int k;

	if (!key_map_find(&t->expansions, f->cookie, f->offset, first))
		return t->items[*first].span;
	k = profile_view_expand(v, f, ex, PROFILE_VIEW_EXPAND_MAX);
	if (k > PROFILE_VIEW_EXPAND_MAX)
		k = PROFILE_VIEW_EXPAND_MAX;
	items = dcp_grow_from(t->items, &t->cap_items, t->nr_items + (size_t)k,
			      sizeof(*items), 256);
	if (!items)
		return -ENOMEM;
	t->items = items;
	*first = (uint32_t)t->nr_items;
	for (int i = 0; i < k; i++) {
		struct path_item *it = &t->items[t->nr_items + (size_t)i];
		int64_t name = string_table_intern(&t->names, ex[i].name);

		if (name < 0)
			return -ENOMEM;
		it->name = (uint32_t)name;
		it->cookie = f->cookie;
		it->is_inline = ex[i].is_inline;
		it->process = false;
		it->kernel = f->flags & DCP_FRAME_KERNEL;
		it->span = (uint8_t)k;
	}
	if (key_map_add(&t->expansions, f->cookie, f->offset, *first) < 0)
		return -ENOMEM;
	t->nr_items += (size_t)k;
	return k;
}

/* The frames of a row in the tree's order into t->path, inline calls
 * expanded; returns the number of items, -ENOMEM. */
static int build_path(struct report_tree *t, const struct profile_view *v,
		      const struct dcp_sample_row *row)
{
	const struct report_args *a = t->a;
	uint32_t depth = report_stack_depth(a, row);
	size_t n = 0;

	for (uint32_t j = 0; j < depth; j++) {
		/* caller order: the outermost frame first */
		const struct dcp_frame *f =
			&row->frames[a->tree == TREE_CALLER ? depth - 1 - j :
							      j];
		struct path_item *p;
		uint32_t first;
		int k = frame_items(t, v, f, &first);

		if (k < 0)
			return k;
		if (a->no_inline)
			k = 1;
		p = dcp_grow_from(t->path, &t->path_cap, n + (size_t)k,
				  sizeof(*p), 256);
		if (!p)
			return -ENOMEM;
		t->path = p;
		if (f == row->frames)
			t->leaf_items = (size_t)k;
		/* items are outermost first: callee order walks them from
		 * the innermost */
		for (int i = 0; i < k; i++)
			t->path[n++] =
				t->items[first +
					 (uint32_t)(a->tree == TREE_CALLER ?
							    i :
							    k - 1 - i)];
	}
	return (int)n;
}

static int compare_nodes(const void *a, const void *b, void *ctx)
{
	const struct report_tree *t = ctx;
	const struct tnode *x = &t->n[*(const uint32_t *)a];
	const struct tnode *y = &t->n[*(const uint32_t *)b];

	int c;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	c = strcmp(string_table_get(&t->names, x->name),
		   string_table_get(&t->names, y->name));
	if (c)
		return c;
	/* same-named siblings (strlen of the loader and of libc): by file,
	 * so that the order never follows the order of the rows read */
	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return (x->is_inline - y->is_inline) * 2 + (x->kernel - y->kernel);
}

/* --limit counts the functions at the top: the root's children, or a
 * process's under a process level. */
static bool tree_limited(const struct report_tree *t, uint32_t node)
{
	return node == 0 ? !t->by_process : t->n[node].process;
}

/* The children of node worth showing, largest first, into *out; *left_out
 * (when not NULL) the ones --limit and --percent-limit hide. */
static size_t tree_children(const struct report_tree *t, uint32_t node,
			    uint32_t **out, size_t *left_out)
{
	const struct report_args *a = t->a;
	size_t n = 0, i = 0;

	for (uint32_t c = t->n[node].first_child; c; c = t->n[c].next_sibling)
		n++;
	*out = malloc((n ? n : 1) * sizeof(**out));
	if (!*out)
		return 0;
	for (uint32_t c = t->n[node].first_child; c; c = t->n[c].next_sibling)
		if (report_percent(t->n[c].total, t->samples) >=
		    a->percent_limit)
			(*out)[i++] = c;
	qsort_r(*out, i, sizeof(**out), compare_nodes, (void *)t);
	if (tree_limited(t, node) && a->limit >= 0 && i > (size_t)a->limit)
		i = (size_t)a->limit;
	if (left_out)
		*left_out = n - i;
	return i;
}

static void print_tree_node(const struct report_tree *t,
			    const struct profile_view *v, uint32_t node,
			    unsigned int depth)
{
	const struct report_args *a = t->a;
	const struct tnode *n = &t->n[node];
	uint64_t total = t->samples;
	uint32_t *kids;
	size_t nr;

	if (a->json && report_in_ms(a)) {
		printf("{\"name\":");
		json_print_string(stdout, string_table_get(&t->names, n->name));
		printf(",\"file\":");
		json_print_string(stdout, profile_view_file_name(v, n->cookie));
		printf(",\"inline\":%s,\"kernel\":%s,\"ms\":%.3f"
		       ",\"self_ms\":%.3f,\"percent\":%.4f,\"children\":[",
		       n->is_inline ? "true" : "false",
		       n->kernel ? "true" : "false", (double)n->total / 1e6,
		       (double)n->self / 1e6, report_percent(n->total, total));
	} else if (a->json) {
		printf("{\"name\":");
		json_print_string(stdout, string_table_get(&t->names, n->name));
		printf(",\"file\":");
		json_print_string(stdout, profile_view_file_name(v, n->cookie));
		printf(",\"inline\":%s,\"kernel\":%s,\"samples\":%" PRIu64
		       ",\"self\":%" PRIu64 ",\"percent\":%.4f,\"children\":[",
		       n->is_inline ? "true" : "false",
		       n->kernel ? "true" : "false", n->total, n->self,
		       report_percent(n->total, total));
	} else {
		printf("%9.2f%% %7.2f%%", report_percent(n->total, total),
		       report_percent(n->self, total));
		if (a->show_counts && report_in_ms(a))
			printf(" %10.1f", (double)n->total / 1e6);
		else if (a->show_counts)
			printf(" %9" PRIu64, n->total);
		printf("  %*s%s", (int)(2 * depth), "",
		       n->kernel ? "[k] " : "");
		text_print_safe(stdout, string_table_get(&t->names, n->name),
				0);
		printf("%s\n", n->is_inline ? " (inlined)" :
			       n->process   ? " (process)" :
					      "");
	}
	nr = tree_children(t, node, &kids, NULL);
	for (size_t i = 0; i < nr; i++) {
		if (a->json && i)
			printf(",");
		print_tree_node(t, v, kids[i], depth + 1);
	}
	free(kids);
	if (a->json)
		printf("]}");
}

void report_tree_print(const struct report_tree *t,
		       const struct profile_view *v)
{
	const struct report_args *a = t->a;
	const char *order = a->tree == TREE_CALLER ? "caller" : "callee";
	uint32_t *roots;
	size_t left_out = 0, nr = tree_children(t, 0, &roots, &left_out);

	/* one process: its name is no level (the header's filters say it) */
	if (t->by_process && nr == 1 && !left_out) {
		uint32_t only = roots[0];

		free(roots);
		nr = tree_children(t, only, &roots, &left_out);
	}

	if (a->json) {
		if (report_in_ms(a))
			printf(",\"value\":\"%s\",\"total_ms\":%.3f",
			       a->value == VIEW_VALUE_WALL ? "wall" : "off-cpu",
			       (double)t->samples / 1e6);
		printf(",\"total\":%" PRIu64 ",\"tree\":{\"order\":\"%s\","
		       "\"roots\":[",
		       t->samples, order);
	} else if (report_in_ms(a)) {
		printf("# call tree, %s first: percent of all %.1f ms of %s "
		       "time with the function on the stack (Total), and as "
		       "the leaf (Self)\n",
		       a->tree == TREE_CALLER ? "callers" : "callees",
		       (double)t->samples / 1e6,
		       a->value == VIEW_VALUE_WALL ? "wall-clock" : "off-CPU");
		if (a->show_counts)
			printf("%10s %8s %10s  %s\n", "Total", "Self",
			       report_value_column(a), "Function");
		else
			printf("%10s %8s  %s\n", "Total", "Self", "Function");
	} else {
		if (a->tree == TREE_CALLER)
			printf("# call tree, callers first (top-down): percent "
			       "of all %" PRIu64 " samples with the function "
			       "on the stack, and as the leaf\n",
			       t->samples);
		else
			printf("# call tree, callees first (bottom-up): each "
			       "function on a stack, over the callers it was "
			       "reached through;\n# percent of all %" PRIu64
			       " samples with that function on the stack "
			       "(Total), and as the leaf (Self)\n",
			       t->samples);
		if (a->show_counts)
			printf(report_in_ms(a) ? "%10s %8s %10s  %s\n" :
						 "%10s %8s %9s  %s\n",
			       "Total", "Self", report_value_column(a),
			       "Function");
		else
			printf("%10s %8s  %s\n", "Total", "Self", "Function");
	}
	for (size_t i = 0; i < nr; i++) {
		if (a->json && i)
			printf(",");
		print_tree_node(t, v, roots[i], 0);
	}
	free(roots);
	if (a->json)
		printf("],\"left_out\":%zu}}\n", left_out);
}

/* The process level's name: the process's, and with a cgroup key in
 * --sort, the first one's label of its cgroup where it has one,
 * "nginx (nginx.service)". */
static const char *process_label(struct report_tree *t,
				 const struct dcp_sample_row *row)
{
	const char *comm = row->comm ? row->comm : "";

	for (size_t i = 0; i < t->a->nr_keys; i++) {
		enum sort_key k = t->a->keys[i];
		const char *l;
		char label[512];

		if (!report_key_is_cgroup(k))
			continue;
		l = view_cgroup_label(row, k - KEY_CGROUP, label,
				      sizeof(label));
		if (!strcmp(l, VIEW_CGROUP_NONE))
			return comm;
		snprintf(t->label, sizeof(t->label), "%s (%s)", comm, l);
		return t->label;
	}
	return comm;
}

int report_tree_add_row(struct report_tree *t, const struct profile_view *v,
			const struct dcp_sample_row *row)
{
	int k = build_path(t, v, row);

	if (k < 0)
		return k;
	t->samples += row->count;
	t->root = 0;
	if (t->by_process) {
		struct path_item it = { .process = true };
		int64_t name =
			string_table_intern(&t->names, process_label(t, row));

		if (name < 0)
			return -ENOMEM;
		it.name = (uint32_t)name;
		t->root = tree_child(t, 0, &it);
		if (!t->root)
			return -ENOMEM;
		t->n[0].total += row->count;
		t->n[t->root].total += row->count;
	}
	if (t->a->tree == TREE_CALLEE)
		return tree_add_callee(t, (size_t)k, row->count);
	return tree_add(t, t->path, (size_t)k, row->count, row->count, 0);
}
