// SPDX-License-Identifier: MIT
/*
 * dcprof report: the flat profile grouped by the --sort keys, inclusive
 * and self time (--children), and call trees (--tree), with filters.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "intern.h"
#include "profile_view.h"

enum sort_key { KEY_COMM, KEY_PID, KEY_FILE, KEY_SYMBOL, NR_KEYS };

static const char *const key_names[NR_KEYS] = { "comm", "pid", "file",
						"symbol" };

/* One group of the flat views; names are numbers in report.names. */
struct report_line {
	uint32_t comm;
	uint32_t pid;
	uint32_t cookie;
	uint32_t symbol;
	bool kernel;
	uint64_t count; /* self: the frame was the leaf */
	uint64_t children; /* inclusive: the frame was anywhere */
	size_t last_row; /* row number + 1 that last added to children */
};

/*
 * The flat views' grouping: each distinct frame is named once (frames maps
 * (cookie, offset) to the number of its symbol's name), and each sample
 * row's frames find their line by the sort keys' values (lines_index), so
 * the work grows with the frames read, not with a sort of every one.
 */
struct report {
	struct string_table names;
	struct key_map frames;
	struct key_map lines_index;
	struct report_line *lines;
	size_t nr_lines, cap_lines;
};

enum tree_order { TREE_NONE, TREE_CALLER, TREE_CALLEE };

/* A comma-separated, repeatable option: every value it was given. */
struct str_list {
	char **v;
	size_t n;
};

struct report_args {
	const char *input;
	enum sort_key keys[NR_KEYS];
	size_t nr_keys;
	bool json;
	long limit;
	bool children;
	enum tree_order tree;
	double percent_limit;
	long max_stack; /* frames nearest the leaf; -1: all */
	bool no_inline;
	struct str_list comms, pids, files, symbols;
	bool resymbolize;
	bool write;
	struct str_list debuginfo_dirs;
};

static int list_add(struct str_list *l, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (!copy)
		return cmd_error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

		if (!v || !(v[l->n] = strdup(tok))) {
			if (v)
				l->v = v;
			free(copy);
			return cmd_error("out of memory");
		}
		l->v = v;
		l->n++;
	}
	free(copy);
	return 0;
}

static void list_free(struct str_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static bool list_has(const struct str_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static int parse_sort(struct report_args *a, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return cmd_error("out of memory");
	a->nr_keys = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t k;

		for (k = 0; k < NR_KEYS; k++)
			if (!strcmp(tok, key_names[k]))
				break;
		if (k == NR_KEYS) {
			ret = cmd_usage_error(
				"report",
				"unknown sort key '%s' (comm, pid, file, symbol)",
				tok);
			break;
		}
		for (size_t i = 0; i < a->nr_keys; i++)
			if (a->keys[i] == k)
				k = NR_KEYS;
		if (k != NR_KEYS)
			a->keys[a->nr_keys++] = (enum sort_key)k;
	}
	free(copy);
	if (!ret && !a->nr_keys)
		ret = cmd_usage_error("report",
				      "--sort needs at least one key");
	return ret;
}

static const struct report_args *sort_args;
static const struct string_table *sort_names;

static int compare_keys(const struct report_line *x,
			const struct report_line *y)
{
	for (size_t i = 0; i < sort_args->nr_keys; i++) {
		int c = 0;

		switch (sort_args->keys[i]) {
		case KEY_COMM:
			c = strcmp(string_table_get(sort_names, x->comm),
				   string_table_get(sort_names, y->comm));
			break;
		case KEY_PID:
			c = x->pid < y->pid ? -1 : x->pid > y->pid;
			break;
		case KEY_FILE:
			c = x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
			break;
		case KEY_SYMBOL:
			c = strcmp(string_table_get(sort_names, x->symbol),
				   string_table_get(sort_names, y->symbol));
			break;
		default:
			break;
		}
		if (c)
			return c;
	}
	return 0;
}

static int compare_count(const void *a, const void *b)
{
	const struct report_line *x = a, *y = b;

	if (sort_args->children && x->children != y->children)
		return x->children > y->children ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return compare_keys(x, y);
}

static void print_header_text(const struct profile_view *v)
{
	const struct dcp_profile_meta *m = dcp_profile_meta(v->profile);
	const struct dcp_profile_stats *s = dcp_profile_stats(v->profile);
	char when[64] = "?";
	time_t t = (time_t)(m->start_realtime_ns / 1000000000ull);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("# dcprof report of '%s'\n", v->path);
	printf("# recorded %s on ", when);
	text_print_safe(stdout, m->hostname, 0);
	printf(" (%s), %.1f s, %u cpus, event %s at %u Hz%s\n",
	       m->kernel_release ? m->kernel_release : "?",
	       (double)m->duration_ns / 1e9, m->nr_cpus,
	       m->event ? m->event : "?", m->sample_freq,
	       m->callchain ? ", call graphs" : "");
	printf("# command: ");
	text_print_safe(stdout, m->cmdline, 0);
	printf("\n");
	printf("# samples: %" PRIu64 " read, %" PRIu64 " kept (%" PRIu64
	       " idle), %" PRIu64 " filtered by --only, %" PRIu64
	       " of other tasks\n",
	       s->samples, s->samples_kept, s->samples_idle,
	       s->samples_filtered, s->samples_other_tasks);
	printf("# lost: %" PRIu64 " records, %" PRIu64
	       " samples; unattributed: %" PRIu64 " samples, %" PRIu64
	       " frames; unresolved symbols: %" PRIu64 "\n",
	       s->lost_records, s->lost_samples, s->samples_unattributed,
	       s->frames_unattributed, s->symbols_unresolved);
	if (s->unwind_truncated_stack_end || s->unwind_truncated_no_cfi ||
	    s->unwind_truncated_other)
		printf("# truncated stacks: %" PRIu64
		       " at the end of the stack copy, %" PRIu64
		       " at frames without CFI, %" PRIu64 " other\n",
		       s->unwind_truncated_stack_end,
		       s->unwind_truncated_no_cfi, s->unwind_truncated_other);
	if (!m->complete)
		printf("# INCOMPLETE: the recorder did not finish; this is the data up to its last flush\n");
	printf("#\n");
}

static void print_json_meta(const struct profile_view *v)
{
	const struct dcp_profile_meta *m = dcp_profile_meta(v->profile);
	const struct dcp_profile_stats *s = dcp_profile_stats(v->profile);

	printf("{\"file\":");
	json_print_string(stdout, v->path);
	/* summary: read from the file's summary (docs/FORMAT.md) */
	printf(",\"meta\":{\"complete\":%s,\"summary\":%s,"
	       "\"start_realtime_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
	       ",\"sample_freq\":%u,\"nr_cpus\":%u"
	       ",\"callchain\":%s,\"event\":",
	       m->complete ? "true" : "false",
	       dcp_profile_is_summary(v->profile) ? "true" : "false",
	       m->start_realtime_ns, m->duration_ns, m->sample_freq, m->nr_cpus,
	       m->callchain ? "true" : "false");
	json_print_string(stdout, m->event);
	printf(",\"cmdline\":");
	json_print_string(stdout, m->cmdline);
	printf(",\"hostname\":");
	json_print_string(stdout, m->hostname);
	printf(",\"kernel_release\":");
	json_print_string(stdout, m->kernel_release);
	printf("},\"stats\":{\"samples\":%" PRIu64 ",\"samples_kept\":%" PRIu64
	       ",\"samples_idle\":%" PRIu64 ",\"samples_filtered\":%" PRIu64
	       ",\"samples_other_tasks\":%" PRIu64
	       ",\"samples_unattributed\":%" PRIu64
	       ",\"frames_unattributed\":%" PRIu64 ",\"lost_records\":%" PRIu64
	       ",\"lost_samples\":%" PRIu64 ",\"throttle_events\":%" PRIu64
	       ",\"symbols_unresolved\":%" PRIu64 ",\"tasks_injected\":%" PRIu64
	       ",\"tasks_vanished\":%" PRIu64
	       ",\"unwind_truncated_stack_end\":%" PRIu64
	       ",\"unwind_truncated_no_cfi\":%" PRIu64
	       ",\"unwind_truncated_other\":%" PRIu64 "}",
	       s->samples, s->samples_kept, s->samples_idle,
	       s->samples_filtered, s->samples_other_tasks,
	       s->samples_unattributed, s->frames_unattributed, s->lost_records,
	       s->lost_samples, s->throttle_events, s->symbols_unresolved,
	       s->tasks_injected, s->tasks_vanished,
	       s->unwind_truncated_stack_end, s->unwind_truncated_no_cfi,
	       s->unwind_truncated_other);
}

static bool has_key(const struct report_args *a, enum sort_key k)
{
	for (size_t i = 0; i < a->nr_keys; i++)
		if (a->keys[i] == k)
			return true;
	return false;
}

static double percent(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0;
}

static void print_lines(const struct report_args *a,
			const struct profile_view *v, const struct report *r,
			uint64_t total)
{
	size_t shown = 0, hidden = 0;

	if (a->json) {
		printf(",\"total\":%" PRIu64 ",\"sort\":[", total);
		for (size_t i = 0; i < a->nr_keys; i++)
			printf("%s\"%s\"", i ? "," : "", key_names[a->keys[i]]);
		printf("],\"children\":%s,\"rows\":[",
		       a->children ? "true" : "false");
	} else {
		if (a->children)
			printf("%10s %8s %7s", "Children", "Self", "Samples");
		else
			printf("%10s %7s", "Samples", "Percent");
		for (size_t i = 0; i < a->nr_keys; i++)
			printf("  %s", key_names[a->keys[i]]);
		printf("\n");
	}
	for (size_t i = 0; i < r->nr_lines; i++) {
		const struct report_line *l = &r->lines[i];
		/* names of the keys only: the others were never looked up */
		const char *comm =
			has_key(a, KEY_COMM) ?
				string_table_get(&r->names, l->comm) :
				NULL;
		const char *symbol =
			has_key(a, KEY_SYMBOL) ?
				string_table_get(&r->names, l->symbol) :
				NULL;
		const char *file = profile_view_file_name(v, l->cookie);
		double pct = percent(l->count, total);
		double cpct = percent(l->children, total);

		if ((a->children ? cpct : pct) < a->percent_limit) {
			hidden++;
			continue;
		}
		if (a->limit >= 0 && shown >= (size_t)a->limit) {
			hidden++;
			continue;
		}
		if (a->json) {
			printf("%s{\"samples\":%" PRIu64 ",\"percent\":%.4f",
			       shown ? "," : "", l->count, pct);
			if (a->children)
				printf(",\"children\":%" PRIu64
				       ",\"children_percent\":%.4f",
				       l->children, cpct);
			if (has_key(a, KEY_COMM)) {
				printf(",\"comm\":");
				json_print_string(stdout, comm);
			}
			if (has_key(a, KEY_PID))
				printf(",\"pid\":%u", l->pid);
			if (has_key(a, KEY_FILE)) {
				printf(",\"file\":");
				json_print_string(stdout, file);
			}
			if (has_key(a, KEY_SYMBOL)) {
				printf(",\"symbol\":");
				json_print_string(stdout, symbol);
				printf(",\"kernel\":%s",
				       l->kernel ? "true" : "false");
			}
			printf("}");
			shown++;
			continue;
		}
		shown++;
		if (a->children)
			printf("%9.2f%% %7.2f%% %7" PRIu64, cpct, pct,
			       l->children);
		else
			printf("%10" PRIu64 " %6.2f%%", l->count, pct);
		for (size_t k = 0; k < a->nr_keys; k++) {
			bool last = k + 1 == a->nr_keys;

			printf("  ");
			switch (a->keys[k]) {
			case KEY_COMM:
				text_print_safe(stdout, comm, last ? 0 : 16);
				break;
			case KEY_PID:
				printf(last ? "%u" : "%7u", l->pid);
				break;
			case KEY_FILE:
				text_print_safe(stdout, file, last ? 0 : 28);
				break;
			case KEY_SYMBOL:
				/* perf's marks: kernel or user code */
				printf("%s", l->kernel ? "[k] " : "[.] ");
				text_print_safe(stdout, symbol, 0);
				break;
			default:
				break;
			}
		}
		printf("\n");
	}
	if (a->json)
		printf("]}\n");
	else if (hidden)
		printf("# %zu more rows (--limit, --percent-limit)\n", hidden);
}

/* ---- filters ------------------------------------------------------------ */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* --comm and --pid select processes; --file and --symbol select samples
 * by their leaf frame, as perf's --dsos and --symbols do. */
static bool row_selected(const struct report_args *a,
			 const struct profile_view *v,
			 const struct dcp_sample_row *row)
{
	const struct dcp_frame *leaf;

	if (a->comms.n && !list_has(&a->comms, row->comm ? row->comm : ""))
		return false;
	if (a->pids.n) {
		char pid[16];

		snprintf(pid, sizeof(pid), "%u", row->pid);
		if (!list_has(&a->pids, pid))
			return false;
	}
	if (!a->files.n && !a->symbols.n)
		return true;
	if (!row->nr_frames)
		return false;
	leaf = &row->frames[0];
	if (a->files.n) {
		const char *f = profile_view_file_name(v, leaf->cookie);

		if (!list_has(&a->files, f) &&
		    !list_has(&a->files, base_name(f)))
			return false;
	}
	if (a->symbols.n) {
		struct dcp_symbol sym;

		if (!list_has(&a->symbols, profile_view_symbol(v, leaf)) &&
		    (dcp_profile_symbol(v->profile, leaf->cookie, leaf->offset,
					&sym) ||
		     !sym.name || !list_has(&a->symbols, sym.name)))
			return false;
	}
	return true;
}

static uint32_t stack_depth(const struct report_args *a,
			    const struct dcp_sample_row *row)
{
	if (a->max_stack >= 0 && (uint64_t)a->max_stack < row->nr_frames)
		return (uint32_t)a->max_stack;
	return row->nr_frames;
}

/* ---- call trees ------------------------------------------------------------ */

struct tnode {
	uint32_t name; /* in the report's names */
	uint32_t cookie; /* of the real frame the node came from */
	bool is_inline, kernel;
	uint64_t total, self;
	uint32_t parent, first_child, next_sibling; /* 0: none */
};

/* One function of a frame's expansion: its inlined calls are items too. */
struct path_item {
	uint32_t name;
	uint32_t cookie;
	bool is_inline, kernel;
	uint8_t span; /* items of the frame this one came from */
};

/*
 * Nodes, node 0 the root; a child found by (parent, name, flags) in index.
 * Each distinct frame is expanded into items once (expansions maps its
 * (cookie, offset) to where its items start in the items pool).
 */
struct tree {
	struct string_table *names; /* the report's */
	struct tnode *n;
	size_t nr, cap;
	struct key_map index;
	struct key_map expansions;
	struct path_item *items;
	size_t nr_items, cap_items;
	struct path_item *path; /* the row being added */
	size_t path_cap;
};

static int tree_init(struct tree *t, struct string_table *names)
{
	memset(t, 0, sizeof(*t));
	t->names = names;
	t->cap = 1024;
	t->n = calloc(t->cap, sizeof(*t->n));
	if (!t->n)
		return -ENOMEM;
	t->nr = 1; /* the root, nameless */
	return 0;
}

static void tree_free(struct tree *t)
{
	free(t->n);
	key_map_free(&t->index);
	key_map_free(&t->expansions);
	free(t->items);
	free(t->path);
}

static uint64_t tree_key_flags(const struct path_item *it)
{
	return (uint64_t)it->is_inline | (uint64_t)it->kernel << 1;
}

/* The child of parent for it, created on first use; 0 when out of memory
 * (the root is never a child). */
static uint32_t tree_child(struct tree *t, uint32_t parent,
			   const struct path_item *it)
{
	uint64_t k1 = (uint64_t)parent << 32 | it->name;
	uint64_t k2 = tree_key_flags(it);
	struct tnode *n;
	uint32_t id;

	if (!key_map_find(&t->index, k1, k2, &id))
		return id;
	if (t->nr == t->cap) {
		size_t cap = 2 * t->cap;

		n = cap < UINT32_MAX ? realloc(t->n, cap * sizeof(*n)) : NULL;
		if (!n)
			return 0;
		t->n = n;
		t->cap = cap;
	}
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
	n->parent = parent;
	n->next_sibling = t->n[parent].first_child;
	t->n[parent].first_child = id;
	return id;
}

static int tree_add(struct tree *t, const struct path_item *path, size_t n,
		    uint64_t count)
{
	uint32_t node = 0;

	t->n[0].total += count;
	for (size_t i = 0; i < n; i++) {
		node = tree_child(t, node, &path[i]);
		if (!node)
			return -ENOMEM;
		t->n[node].total += count;
	}
	t->n[node].self += count;
	return 0;
}

/* The items of a frame, outermost function first, made on first use;
 * *first indexes t->items. Returns how many, -ENOMEM. */
static int frame_items(struct tree *t, const struct profile_view *v,
		       const struct dcp_frame *f, uint32_t *first)
{
	struct dcp_expanded_frame ex[PROFILE_VIEW_EXPAND_MAX];
	int k;

	if (!key_map_find(&t->expansions, f->cookie, f->offset, first))
		return t->items[*first].span;
	k = profile_view_expand(v, f, ex, PROFILE_VIEW_EXPAND_MAX);
	if (k > PROFILE_VIEW_EXPAND_MAX)
		k = PROFILE_VIEW_EXPAND_MAX;
	if (t->nr_items + (size_t)k > t->cap_items) {
		size_t cap = 2 * t->cap_items + (size_t)k + 256;
		struct path_item *p = realloc(t->items, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->items = p;
		t->cap_items = cap;
	}
	*first = (uint32_t)t->nr_items;
	for (int i = 0; i < k; i++) {
		struct path_item *it = &t->items[t->nr_items + (size_t)i];
		int64_t name = string_table_intern(t->names, ex[i].name);

		if (name < 0)
			return -ENOMEM;
		it->name = (uint32_t)name;
		it->cookie = f->cookie;
		it->is_inline = ex[i].is_inline;
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
static int build_path(struct tree *t, const struct report_args *a,
		      const struct profile_view *v,
		      const struct dcp_sample_row *row)
{
	uint32_t depth = stack_depth(a, row);
	size_t n = 0;

	for (uint32_t j = 0; j < depth; j++) {
		/* caller order: the outermost frame first */
		const struct dcp_frame *f =
			&row->frames[a->tree == TREE_CALLER ? depth - 1 - j :
							      j];
		uint32_t first;
		int k = frame_items(t, v, f, &first);

		if (k < 0)
			return k;
		if (a->no_inline)
			k = 1;
		if (n + (size_t)k > t->path_cap) {
			size_t c = 2 * t->path_cap + (size_t)k + 256;
			struct path_item *p = realloc(t->path, c * sizeof(*p));

			if (!p)
				return -ENOMEM;
			t->path = p;
			t->path_cap = c;
		}
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

static const struct tree *sort_tree;

static int compare_nodes(const void *a, const void *b)
{
	const struct tnode *x = &sort_tree->n[*(const uint32_t *)a];
	const struct tnode *y = &sort_tree->n[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(string_table_get(sort_tree->names, x->name),
		      string_table_get(sort_tree->names, y->name));
}

/* The children of node worth showing, largest first, into *out. */
static size_t tree_children(const struct tree *t, uint32_t node,
			    const struct report_args *a, uint32_t **out)
{
	size_t n = 0, i = 0;

	for (uint32_t c = t->n[node].first_child; c; c = t->n[c].next_sibling)
		n++;
	*out = malloc((n ? n : 1) * sizeof(**out));
	if (!*out)
		return 0;
	for (uint32_t c = t->n[node].first_child; c; c = t->n[c].next_sibling)
		if (percent(t->n[c].total, t->n[0].total) >= a->percent_limit)
			(*out)[i++] = c;
	sort_tree = t;
	qsort(*out, i, sizeof(**out), compare_nodes);
	if (node == 0 && a->limit >= 0 && i > (size_t)a->limit)
		i = (size_t)a->limit;
	return i;
}

static void print_tree_node(const struct tree *t, const struct profile_view *v,
			    const struct report_args *a, uint32_t node,
			    unsigned int depth)
{
	const struct tnode *n = &t->n[node];
	uint64_t total = t->n[0].total;
	uint32_t *kids;
	size_t nr;

	if (a->json) {
		printf("{\"name\":");
		json_print_string(stdout, string_table_get(t->names, n->name));
		printf(",\"file\":");
		json_print_string(stdout, profile_view_file_name(v, n->cookie));
		printf(",\"inline\":%s,\"kernel\":%s,\"samples\":%" PRIu64
		       ",\"self\":%" PRIu64 ",\"percent\":%.4f,\"children\":[",
		       n->is_inline ? "true" : "false",
		       n->kernel ? "true" : "false", n->total, n->self,
		       percent(n->total, total));
	} else {
		printf("%9.2f%% %7.2f%%  %*s%s", percent(n->total, total),
		       percent(n->self, total), (int)(2 * depth), "",
		       n->kernel ? "[k] " : "");
		text_print_safe(stdout, string_table_get(t->names, n->name), 0);
		printf("%s\n", n->is_inline ? " (inlined)" : "");
	}
	nr = tree_children(t, node, a, &kids);
	for (size_t i = 0; i < nr; i++) {
		if (a->json && i)
			printf(",");
		print_tree_node(t, v, a, kids[i], depth + 1);
	}
	free(kids);
	if (a->json)
		printf("]}");
}

static void print_tree(const struct tree *t, const struct profile_view *v,
		       const struct report_args *a)
{
	const char *order = a->tree == TREE_CALLER ? "caller" : "callee";
	uint32_t *roots;
	size_t nr = tree_children(t, 0, a, &roots);

	if (a->json) {
		printf(",\"total\":%" PRIu64 ",\"tree\":{\"order\":\"%s\","
		       "\"roots\":[",
		       t->n[0].total, order);
	} else {
		printf("# call tree, %s: percent of all %" PRIu64
		       " samples with the function on the stack, and as "
		       "the leaf\n",
		       a->tree == TREE_CALLER ? "callers first (top-down)" :
						"callees first (bottom-up)",
		       t->n[0].total);
		printf("%10s %8s  %s\n", "Total", "Self", "Function");
	}
	for (size_t i = 0; i < nr; i++) {
		if (a->json && i)
			printf(",");
		print_tree_node(t, v, a, roots[i], 0);
	}
	free(roots);
	if (a->json)
		printf("]}}\n");
}

/* ---- the command ------------------------------------------------------------ */

/* The name of a frame's symbol as a number in r->names, found once per
 * distinct frame. */
static int64_t frame_symbol(struct report *r, const struct profile_view *v,
			    const struct dcp_frame *f)
{
	uint32_t id;
	int64_t name;

	if (!key_map_find(&r->frames, f->cookie, f->offset, &id))
		return id;
	name = string_table_intern(&r->names, profile_view_symbol(v, f));
	if (name >= 0 &&
	    key_map_add(&r->frames, f->cookie, f->offset, (uint32_t)name) < 0)
		return -ENOMEM;
	return name;
}

/* The line of the sort keys' values in l, added when new. */
static struct report_line *report_line_of(struct report *r,
					  const struct report_args *a,
					  const struct report_line *l)
{
	uint64_t k1 = (uint64_t)(has_key(a, KEY_COMM) ? l->comm : 0) << 32 |
		      (has_key(a, KEY_PID) ? l->pid : 0);
	uint64_t k2 = (uint64_t)(has_key(a, KEY_FILE) ? l->cookie : 0) << 32 |
		      (has_key(a, KEY_SYMBOL) ? l->symbol : 0);
	uint32_t i;

	if (!key_map_find(&r->lines_index, k1, k2, &i))
		return &r->lines[i];
	if (r->nr_lines == r->cap_lines) {
		size_t cap = r->cap_lines ? 2 * r->cap_lines : 1024;
		struct report_line *p = realloc(r->lines, cap * sizeof(*p));

		if (!p)
			return NULL;
		r->lines = p;
		r->cap_lines = cap;
	}
	if (key_map_add(&r->lines_index, k1, k2, (uint32_t)r->nr_lines) < 0)
		return NULL;
	r->lines[r->nr_lines] = *l;
	return &r->lines[r->nr_lines++];
}

/* A row's frames into the lines of their keys: the leaf's carries the self
 * count; every one the inclusive count, once per sample even when the
 * function recurses. */
static int row_lines(struct report *r, const struct report_args *a,
		     const struct profile_view *v,
		     const struct dcp_sample_row *row, size_t row_nr)
{
	uint32_t depth = a->children ? stack_depth(a, row) : 1;
	struct report_line l = { .pid = row->pid };
	int64_t comm = 0;

	if (!depth)
		depth = 1;
	if (has_key(a, KEY_COMM))
		comm = string_table_intern(&r->names,
					   row->comm ? row->comm : "");
	if (comm < 0)
		return -ENOMEM;
	l.comm = (uint32_t)comm;
	for (uint32_t i = 0; i < depth && i < row->nr_frames; i++) {
		const struct dcp_frame *f = &row->frames[i];
		struct report_line *line;
		int64_t symbol = 0;

		if (has_key(a, KEY_SYMBOL))
			symbol = frame_symbol(r, v, f);
		if (symbol < 0)
			return -ENOMEM;
		l.cookie = f->cookie;
		l.symbol = (uint32_t)symbol;
		l.kernel = f->flags & DCP_FRAME_KERNEL;
		line = report_line_of(r, a, &l);
		if (!line)
			return -ENOMEM;
		if (i == 0)
			line->count += row->count;
		if (line->last_row != row_nr + 1) {
			line->children += row->count;
			line->last_row = row_nr + 1;
		}
	}
	return 0;
}

static int parse_number(const char *opt, const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || *end || end == arg || *out < 0)
		return cmd_usage_error("report", "invalid %s '%s'", opt, arg);
	return 0;
}

static void print_resymbolize(const struct report_args *a,
			      const struct dcp_resymbolize_stats *st)
{
	if (a->json) {
		printf(",\"resymbolize\":{\"objects\":%" PRIu64
		       ",\"objects_missing\":%" PRIu64
		       ",\"objects_mismatched\":%" PRIu64
		       ",\"resolved_before\":%" PRIu64
		       ",\"resolved_after\":%" PRIu64 "}",
		       st->objects, st->objects_missing, st->objects_mismatched,
		       st->resolved_before, st->resolved_after);
		return;
	}
	printf("# resymbolized %" PRIu64 " files (%" PRIu64 " missing, %" PRIu64
	       " replaced by other builds): %" PRIu64
	       " named addresses, %" PRIu64 " before\n",
	       st->objects, st->objects_missing, st->objects_mismatched,
	       st->resolved_after, st->resolved_before);
}

enum {
	OPT_CHILDREN = 256,
	OPT_TREE,
	OPT_PERCENT_LIMIT,
	OPT_MAX_STACK,
	OPT_COMM,
	OPT_PID,
	OPT_FILE,
	OPT_SYMBOL,
	OPT_NO_DEMANGLE,
	OPT_NO_INLINE,
	OPT_RESYMBOLIZE,
	OPT_DEBUGINFO_DIR,
	OPT_WRITE,
};

static int report_run(struct report_args *a, bool no_demangle)
{
	struct dcp_resymbolize_stats rst;
	struct report r = { 0 };
	struct profile_view v;
	struct tree t = { 0 };
	uint64_t total = 0;
	int ret;

	cmd_setup_log(0);
	/* Without a pid to show or select, nor names to find again, the
	 * file's summary has everything the views print. */
	ret = profile_view_open(&v, a->input,
				!a->pids.n && !has_key(a, KEY_PID) &&
					!a->resymbolize);
	if (ret)
		return ret;
	v.raw_names = no_demangle;
	if (a->resymbolize) {
		struct dcp_resymbolize_opts o = {
			.sz = sizeof(o),
			.debuginfo_dirs =
				(const char *const *)a->debuginfo_dirs.v,
			.nr_debuginfo_dirs = a->debuginfo_dirs.n,
		};

		if (dcp_profile_resymbolize(v.profile, &o, &rst) < 0) {
			ret = cmd_error("%s", dcp_last_error());
			goto out;
		}
		if (a->write && dcp_profile_save(v.profile, a->input) < 0) {
			ret = cmd_error("%s", dcp_last_error());
			goto out;
		}
	}
	if (a->tree && tree_init(&t, &r.names) < 0) {
		ret = cmd_error("out of memory");
		goto out;
	}
	sort_args = a;
	sort_names = &r.names;
	for (size_t i = 0; i < dcp_profile_nr_rows(v.profile); i++) {
		struct dcp_sample_row row;

		if (dcp_profile_row(v.profile, i, &row) || !row.nr_frames ||
		    !row_selected(a, &v, &row))
			continue;
		total += row.count;
		if (a->tree) {
			int k = build_path(&t, a, &v, &row);

			if (k < 0 ||
			    tree_add(&t, t.path, (size_t)k, row.count) < 0)
				ret = -ENOMEM;
		} else if (row_lines(&r, a, &v, &row, i) < 0) {
			ret = -ENOMEM;
		}
		if (ret) {
			ret = cmd_error("out of memory");
			goto out;
		}
	}
	if (r.nr_lines) /* lines is NULL when nothing matched */
		qsort(r.lines, r.nr_lines, sizeof(*r.lines), compare_count);

	if (a->json)
		print_json_meta(&v);
	else
		print_header_text(&v);
	if (a->resymbolize)
		print_resymbolize(a, &rst);
	if (a->tree)
		print_tree(&t, &v, a);
	else
		print_lines(a, &v, &r, total);
	ret = cmd_finish_stdout(0);
out:
	free(r.lines);
	key_map_free(&r.lines_index);
	key_map_free(&r.frames);
	string_table_free(&r.names);
	if (a->tree)
		tree_free(&t);
	profile_view_close(&v);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'l' },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "symbol", required_argument, NULL, OPT_SYMBOL },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "resymbolize", no_argument, NULL, OPT_RESYMBOLIZE },
		{ "debuginfo-dir", required_argument, NULL, OPT_DEBUGINFO_DIR },
		{ "write", no_argument, NULL, OPT_WRITE },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_args a = {
		.input = "dcprof.data",
		.keys = { KEY_COMM, KEY_FILE, KEY_SYMBOL },
		.nr_keys = 3,
		.limit = -1,
		.max_stack = -1,
	};
	bool no_demangle = false;
	double d;
	int c, ret = 0;

	opterr = 0;
	while (!ret &&
	       (c = getopt_long(argc, argv, "i:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			a.input = optarg;
			break;
		case 's':
			ret = parse_sort(&a, optarg);
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				a.json = true;
			else if (strcmp(optarg, "text"))
				ret = cmd_usage_error(
					"report",
					"unknown format '%s' (text, json)",
					optarg);
			break;
		case 'l':
		case OPT_MAX_STACK:
			ret = parse_number(c == 'l' ? "limit" : "stack depth",
					   optarg, &d);
			if (!ret && (d != (long)d || (c != 'l' && d < 1)))
				ret = cmd_usage_error(
					"report", "invalid %s '%s'",
					c == 'l' ? "limit" : "stack depth",
					optarg);
			if (!ret && c == 'l')
				a.limit = (long)d;
			else if (!ret)
				a.max_stack = (long)d;
			break;
		case OPT_PERCENT_LIMIT:
			ret = parse_number("percent limit", optarg,
					   &a.percent_limit);
			break;
		case OPT_CHILDREN:
			a.children = true;
			break;
		case OPT_TREE:
			if (!strcmp(optarg, "caller"))
				a.tree = TREE_CALLER;
			else if (!strcmp(optarg, "callee"))
				a.tree = TREE_CALLEE;
			else
				ret = cmd_usage_error(
					"report",
					"unknown tree order '%s' (caller, callee)",
					optarg);
			break;
		case OPT_COMM:
			ret = list_add(&a.comms, optarg);
			break;
		case OPT_PID:
			ret = list_add(&a.pids, optarg);
			break;
		case OPT_FILE:
			ret = list_add(&a.files, optarg);
			break;
		case OPT_SYMBOL:
			ret = list_add(&a.symbols, optarg);
			break;
		case OPT_NO_DEMANGLE:
			no_demangle = true;
			break;
		case OPT_NO_INLINE:
			a.no_inline = true;
			break;
		case OPT_RESYMBOLIZE:
			a.resymbolize = true;
			break;
		case OPT_DEBUGINFO_DIR:
			ret = list_add(&a.debuginfo_dirs, optarg);
			break;
		case OPT_WRITE:
			a.write = true;
			break;
		case 'h':
			cmd_usage(cmd_find("report"), stdout);
			ret = cmd_finish_stdout(0);
			goto out;
		default:
			ret = cmd_usage_error("report", "unknown option '%s'",
					      argv[optind - 1]);
		}
	}
	if (ret)
		goto out;
	if (optind < argc)
		ret = cmd_usage_error("report", "unexpected argument '%s'",
				      argv[optind]);
	else if (a.children && a.tree)
		ret = cmd_usage_error(
			"report", "--children and --tree are different views: "
				  "choose one");
	else if ((a.debuginfo_dirs.n || a.write) && !a.resymbolize)
		ret = cmd_usage_error("report",
				      "--debuginfo-dir and --write go with "
				      "--resymbolize");
	else
		ret = report_run(&a, no_demangle);
out:
	list_free(&a.comms);
	list_free(&a.pids);
	list_free(&a.files);
	list_free(&a.symbols);
	list_free(&a.debuginfo_dirs);
	return ret;
}
