// SPDX-License-Identifier: MIT
/*
 * The flat views of dcprof report: samples grouped by the --sort keys,
 * self time and, with --children, inclusive time, as text or JSON.
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

/* One group of the flat views; names are numbers in report_flat.names. */
struct report_line {
	uint32_t comm; /* the thread's name */
	uint32_t process; /* the process's name */
	uint32_t pid;
	uint32_t tid;
	uint32_t cookie;
	uint32_t symbol;
	/* the cgroup keys' labels (names), their tuple, the cgroup's id */
	uint32_t cgroup[VIEW_CGROUP_NR];
	uint32_t group;
	uint64_t cgroup_id;
	bool kernel;
	uint64_t count; /* self: the frame was the leaf */
	uint64_t children; /* inclusive: the frame was anywhere */
	/* self off-CPU ns by enum dcp_off_cpu_state (JSON, --value off-cpu) */
	uint64_t off_cpu_state[DCP_OFF_CPU_NR_STATES];
	size_t last_row; /* row number + 1 that last added to children */
};

/*
 * The flat views' grouping: each distinct frame is named once (frames maps
 * (cookie, offset) to the number of its symbol's name), and each sample
 * row's frames find their line by the sort keys' values (lines_index), so
 * the work grows with the frames read, not with a sort of every one.
 */
struct report_flat {
	const struct report_args *a;
	struct string_table names;
	struct key_map frames;
	struct key_map tasks; /* (process, tid, comm, pid) of the keys */
	uint32_t nr_tasks;
	struct key_map groups; /* the cgroup keys' labels and the id */
	uint32_t nr_groups;
	/* path labels of more than one cgroup (a path made again): each
	 * printed with its id; (label, 0) -> ids seen, (label, id) -> 1 */
	struct key_map paths;
	struct key_map lines_index;
	struct report_line *lines;
	size_t nr_lines, cap_lines;
};

struct report_flat *report_flat_new(const struct report_args *a)
{
	struct report_flat *r = calloc(1, sizeof(*r));

	if (r)
		r->a = a;
	return r;
}

void report_flat_free(struct report_flat *r)
{
	if (!r)
		return;
	free(r->lines);
	key_map_free(&r->lines_index);
	key_map_free(&r->frames);
	key_map_free(&r->tasks);
	key_map_free(&r->groups);
	key_map_free(&r->paths);
	string_table_free(&r->names);
	free(r);
}

static int compare_keys(const struct report_flat *r,
			const struct report_line *x,
			const struct report_line *y)
{
	const struct string_table *names = &r->names;

	for (size_t i = 0; i < r->a->nr_keys; i++) {
		int c = 0;

		switch (r->a->keys[i]) {
		case KEY_COMM:
			c = strcmp(string_table_get(names, x->comm),
				   string_table_get(names, y->comm));
			break;
		case KEY_PID:
			c = x->pid < y->pid ? -1 : x->pid > y->pid;
			break;
		case KEY_TID:
			c = x->tid < y->tid ? -1 : x->tid > y->tid;
			break;
		case KEY_PROCESS:
			c = strcmp(string_table_get(names, x->process),
				   string_table_get(names, y->process));
			break;
		case KEY_FILE:
			c = x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
			break;
		case KEY_SYMBOL:
			c = strcmp(string_table_get(names, x->symbol),
				   string_table_get(names, y->symbol));
			break;
		default: {
			enum view_cgroup_key g = r->a->keys[i] - KEY_CGROUP;

			c = strcmp(string_table_get(names, x->cgroup[g]),
				   string_table_get(names, y->cgroup[g]));
			if (!c && g == VIEW_CGROUP_PATH)
				c = x->cgroup_id < y->cgroup_id ?
					    -1 :
					    x->cgroup_id > y->cgroup_id;
			break;
		}
		}
		if (c)
			return c;
	}
	return 0;
}

/* Largest first (by inclusive time with --children), then by the keys. */
static int compare_count(const void *a, const void *b, void *ctx)
{
	const struct report_line *x = a, *y = b;
	const struct report_flat *r = ctx;

	if (r->a->children && x->children != y->children)
		return x->children > y->children ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return compare_keys(r, x, y);
}

/* The name of a frame's symbol as a number in r->names, found once per
 * distinct frame. */
static int64_t frame_symbol(struct report_flat *r, const struct profile_view *v,
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
static struct report_line *report_line_of(struct report_flat *r,
					  const struct report_line *l)
{
	const struct report_args *a = r->a;
	uint32_t comm = report_has_key(a, KEY_COMM) ? l->comm : 0;
	uint32_t pid = report_has_key(a, KEY_PID) ? l->pid : 0;
	uint32_t process = report_has_key(a, KEY_PROCESS) ? l->process : 0;
	uint32_t tid = report_has_key(a, KEY_TID) ? l->tid : 0;
	uint32_t cookie = report_has_key(a, KEY_FILE) ? l->cookie : 0;
	uint32_t symbol = report_has_key(a, KEY_SYMBOL) ? l->symbol : 0;
	uint64_t k1 = (uint64_t)comm << 32 | pid;
	uint64_t k2 = (uint64_t)cookie << 32 | symbol;
	struct report_line *p;
	uint32_t i, task;

	/* the task keys, four numbers, as one, and the cgroup keys' */
	if (process || tid || l->group) {
		uint64_t t1 = (uint64_t)process << 32 | tid;

		if (key_map_find(&r->tasks, t1, k1, &task)) {
			task = r->nr_tasks++;
			if (key_map_add(&r->tasks, t1, k1, task) < 0)
				return NULL;
		}
		k1 = (uint64_t)1 << 63 | (uint64_t)l->group << 31 | task;
	}

	if (!key_map_find(&r->lines_index, k1, k2, &i))
		return &r->lines[i];
	p = dcp_grow_from(r->lines, &r->cap_lines, r->nr_lines + 1, sizeof(*p),
			  1024);
	if (!p)
		return NULL;
	r->lines = p;
	if (key_map_add(&r->lines_index, k1, k2, (uint32_t)r->nr_lines) < 0)
		return NULL;
	r->lines[r->nr_lines] = *l;
	return &r->lines[r->nr_lines++];
}

/*
 * The labels of the cgroup keys of a row, and the tuple of them as one
 * number (from 1; 0: no cgroup key). The path key keeps the cgroup's id
 * too: a cgroup made again under the same path is another line.
 */
static int cgroup_keys(struct report_flat *r, const struct dcp_sample_row *row,
		       struct report_line *l)
{
	uint64_t a, b;
	bool any = false;
	char buf[512];

	for (int k = KEY_CGROUP; k <= KEY_POD; k++) {
		enum view_cgroup_key g = k - KEY_CGROUP;
		int64_t s;

		if (!report_has_key(r->a, k))
			continue;
		s = string_table_intern(
			&r->names, view_cgroup_label(row, g, buf, sizeof(buf)));
		if (s < 0)
			return -ENOMEM;
		l->cgroup[g] = (uint32_t)s;
		any = true;
	}
	if (!any)
		return 0;
	a = (uint64_t)l->cgroup[VIEW_CGROUP_PATH] << 32 |
	    l->cgroup[VIEW_CGROUP_UNIT];
	b = (uint64_t)l->cgroup[VIEW_CGROUP_CONTAINER] << 32 |
	    l->cgroup[VIEW_CGROUP_POD];
	if (report_has_key(r->a, KEY_CGROUP)) {
		/* the path and the id: the key's own string */
		int64_t s;

		snprintf(buf, sizeof(buf), "%s\x1f%" PRIu64,
			 string_table_get(&r->names,
					  l->cgroup[VIEW_CGROUP_PATH]),
			 row->cgroup_id);
		s = string_table_intern(&r->names, buf);
		if (s < 0)
			return -ENOMEM;
		a = (uint64_t)s << 32 | l->cgroup[VIEW_CGROUP_UNIT];
		l->cgroup_id = row->cgroup_id;
	}
	if (key_map_find(&r->groups, a, b, &l->group)) {
		l->group = ++r->nr_groups;
		if (key_map_add(&r->groups, a, b, l->group) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A row's frames into the lines of their keys: the leaf's carries the self
 * count; every one the inclusive count, once per sample even when the
 * function recurses. */
int report_flat_add_row(struct report_flat *r, const struct profile_view *v,
			const struct dcp_sample_row *row, size_t row_nr)
{
	const struct report_args *a = r->a;
	uint32_t depth = a->children ? report_stack_depth(a, row) : 1;
	struct report_line l = { .pid = row->pid, .tid = row->tid };
	int64_t comm = 0, process = 0;

	if (!depth)
		depth = 1;
	if (report_has_key(a, KEY_COMM))
		comm = string_table_intern(
			&r->names, row->thread_comm ? row->thread_comm : "");
	if (report_has_key(a, KEY_PROCESS))
		process = string_table_intern(&r->names,
					      row->comm ? row->comm : "");
	if (comm < 0 || process < 0 || cgroup_keys(r, row, &l) < 0)
		return -ENOMEM;
	l.comm = (uint32_t)comm;
	l.process = (uint32_t)process;
	for (uint32_t i = 0; i < depth && i < row->nr_frames; i++) {
		const struct dcp_frame *f = &row->frames[i];
		struct report_line *line;
		int64_t symbol = 0;

		if (report_has_key(a, KEY_SYMBOL))
			symbol = frame_symbol(r, v, f);
		if (symbol < 0)
			return -ENOMEM;
		l.cookie = f->cookie;
		l.symbol = (uint32_t)symbol;
		l.kernel = f->flags & DCP_FRAME_KERNEL;
		line = report_line_of(r, &l);
		if (!line)
			return -ENOMEM;
		if (i == 0) {
			line->count += row->count;
			for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
				line->off_cpu_state[s] += row->off_cpu_ns[s];
		}
		if (line->last_row != row_nr + 1) {
			line->children += row->count;
			line->last_row = row_nr + 1;
		}
	}
	return 0;
}

/* Mark the path labels that stand for more than one cgroup: (label, 0)
 * holds the first line of a label, (label, 1) is there when another
 * line of it has another id. */
static int count_paths(struct report_flat *r)
{
	uint32_t first;
	int ret;

	for (size_t i = 0; i < r->nr_lines; i++) {
		const struct report_line *l = &r->lines[i];
		uint32_t label = l->cgroup[VIEW_CGROUP_PATH];

		if (key_map_find(&r->paths, label, 0, &first)) {
			if (key_map_add(&r->paths, label, 0, (uint32_t)i) < 0)
				return -ENOMEM;
			continue;
		}
		if (r->lines[first].cgroup_id == l->cgroup_id)
			continue;
		ret = key_map_add(&r->paths, label, 1, 1);
		if (ret < 0 && ret != -EEXIST)
			return ret;
	}
	return 0;
}

/* The text of a cgroup key of line l: a path that stands for more than
 * one cgroup (count_paths()) has the cgroup's id after it. */
static const char *cgroup_cell(const struct report_flat *r,
			       const struct report_line *l, enum sort_key k,
			       char *buf, size_t size)
{
	enum view_cgroup_key g = k - KEY_CGROUP;
	const char *s = string_table_get(&r->names, l->cgroup[g]);
	uint32_t n;

	if (g != VIEW_CGROUP_PATH ||
	    key_map_find(&r->paths, l->cgroup[g], 1, &n))
		return s;
	snprintf(buf, size, "%s #%" PRIu64, s, l->cgroup_id);
	return buf;
}

/* The columns text_print_safe() takes to print s. */
static int text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int n = 0;

	for (; *p; p++)
		n += *p >= 0x20 && *p != 0x7f ? 1 : 4;
	return n;
}

/* Paths longer than this are shortened in text, unless --full-path. */
#define FILE_COLUMN_MAX 40

/*
 * A file's name as the text column shows it: in full when short or with
 * --full-path, else ".../" and as many of its last components as fit (the
 * base name at least). buf holds PATH_MAX-ish names; returns buf or path.
 */
static const char *file_cell(const struct report_args *a, const char *path,
			     char *buf, size_t size)
{
	size_t len = strlen(path);
	const char *p, *best = NULL;

	if (a->full_path || len <= FILE_COLUMN_MAX || path[0] != '/')
		return path;
	for (p = path + len; p > path; p--)
		if (p[-1] == '/') {
			if (!best ||
			    len - (size_t)(p - path) + 4 <= FILE_COLUMN_MAX)
				best = p;
			else
				break;
		}
	snprintf(buf, size, ".../%s", best ? best : path);
	return buf;
}

/* A line the limits keep */
static bool line_shown(const struct report_args *a, const struct report_line *l,
		       uint64_t total, size_t shown)
{
	double pct =
		report_percent(a->children ? l->children : l->count, total);

	return pct >= a->percent_limit &&
	       (a->limit < 0 || shown < (size_t)a->limit);
}

/* pids and tids are printed signed: the kernel gives -1 for a task whose
 * pid was already released (its last steps in exit) */
static int number_width(uint32_t n)
{
	char buf[16];

	return snprintf(buf, sizeof(buf), "%d", (int)n);
}

/* The width of each key column over the lines shown, at least its name's */
static void column_widths(struct report_flat *r, const struct profile_view *v,
			  uint64_t total, int *w)
{
	const struct report_args *a = r->a;
	size_t shown = 0;
	char buf[4096];

	for (size_t k = 0; k < a->nr_keys; k++)
		w[k] = (int)strlen(report_key_names[a->keys[k]]);
	for (size_t i = 0; i < r->nr_lines; i++) {
		const struct report_line *l = &r->lines[i];

		if (!line_shown(a, l, total, shown))
			continue;
		shown++;
		for (size_t k = 0; k < a->nr_keys; k++) {
			int n = 0;

			switch (a->keys[k]) {
			case KEY_COMM:
				n = text_width(
					string_table_get(&r->names, l->comm));
				break;
			case KEY_PROCESS:
				n = text_width(string_table_get(&r->names,
								l->process));
				break;
			case KEY_PID:
				n = number_width(l->pid);
				break;
			case KEY_TID:
				n = number_width(l->tid);
				break;
			case KEY_FILE:
				n = text_width(file_cell(
					a, profile_view_file_name(v, l->cookie),
					buf, sizeof(buf)));
				break;
			case KEY_SYMBOL:
				break;
			default:
				n = text_width(cgroup_cell(r, l, a->keys[k],
							   buf, sizeof(buf)));
				break;
			}
			if (n > w[k])
				w[k] = n;
		}
	}
}

void report_flat_print(struct report_flat *r, const struct profile_view *v,
		       uint64_t total)
{
	const struct report_args *a = r->a;
	size_t shown = 0, hidden = 0;
	int w[NR_KEYS];
	char buf[4096];

	if (r->nr_lines) /* lines is NULL when nothing matched */
		qsort_r(r->lines, r->nr_lines, sizeof(*r->lines), compare_count,
			r);
	if (report_has_key(a, KEY_CGROUP) && count_paths(r) < 0)
		key_map_free(&r->paths); /* no room: paths printed alone */

	if (!a->json)
		column_widths(r, v, total, w);
	if (a->json) {
		if (report_in_ms(a))
			printf(",\"value\":\"%s\",\"total_ms\":%.3f",
			       a->value == VIEW_VALUE_WALL ? "wall" : "off-cpu",
			       (double)total / 1e6);
		printf(",\"total\":%" PRIu64 ",\"sort\":[", total);
		for (size_t i = 0; i < a->nr_keys; i++)
			printf("%s\"%s\"", i ? "," : "",
			       report_key_names[a->keys[i]]);
		printf("],\"children\":%s,\"rows\":[",
		       a->children ? "true" : "false");
	} else {
		if (a->children)
			printf(report_in_ms(a) ? "%10s %8s %10s" :
						 "%10s %8s %7s",
			       "Children", "Self", report_value_column(a));
		else
			printf("%10s %7s", report_value_column(a), "Percent");
		/* each name over its column: numbers to the right */
		for (size_t i = 0; i < a->nr_keys; i++) {
			enum sort_key k = a->keys[i];
			bool number = k == KEY_PID || k == KEY_TID;

			if (i + 1 == a->nr_keys && !number)
				printf("  %s", report_key_names[k]);
			else
				printf(number ? "  %*s" : "  %-*s", w[i],
				       report_key_names[k]);
		}
		printf("\n");
	}
	for (size_t i = 0; i < r->nr_lines; i++) {
		const struct report_line *l = &r->lines[i];
		/* names of the keys only: the others were never looked up */
		const char *comm =
			report_has_key(a, KEY_COMM) ?
				string_table_get(&r->names, l->comm) :
				NULL;
		const char *process =
			report_has_key(a, KEY_PROCESS) ?
				string_table_get(&r->names, l->process) :
				NULL;
		const char *symbol =
			report_has_key(a, KEY_SYMBOL) ?
				string_table_get(&r->names, l->symbol) :
				NULL;
		const char *file = profile_view_file_name(v, l->cookie);
		const char *file_text = file;
		double pct = report_percent(l->count, total);
		double cpct = report_percent(l->children, total);

		if ((a->children ? cpct : pct) < a->percent_limit) {
			hidden++;
			continue;
		}
		if (a->limit >= 0 && shown >= (size_t)a->limit) {
			hidden++;
			continue;
		}
		if (a->json && report_in_ms(a)) {
			printf("%s{\"ms\":%.3f,\"percent\":%.4f",
			       shown ? "," : "", (double)l->count / 1e6, pct);
			if (a->children)
				printf(",\"children_ms\":%.3f"
				       ",\"children_percent\":%.4f",
				       (double)l->children / 1e6, cpct);
			if (a->value == VIEW_VALUE_OFF_CPU)
				printf(",\"runnable_ms\":%.3f"
				       ",\"interruptible_ms\":%.3f"
				       ",\"uninterruptible_ms\":%.3f",
				       (double)l->off_cpu_state[0] / 1e6,
				       (double)l->off_cpu_state[1] / 1e6,
				       (double)l->off_cpu_state[2] / 1e6);
		} else if (a->json) {
			printf("%s{\"samples\":%" PRIu64 ",\"percent\":%.4f",
			       shown ? "," : "", l->count, pct);
			if (a->children)
				printf(",\"children\":%" PRIu64
				       ",\"children_percent\":%.4f",
				       l->children, cpct);
		}
		if (a->json) {
			if (report_has_key(a, KEY_COMM)) {
				printf(",\"comm\":");
				json_print_string(stdout, comm);
			}
			if (report_has_key(a, KEY_PID))
				printf(",\"pid\":%d", (int)l->pid);
			if (report_has_key(a, KEY_TID))
				printf(",\"tid\":%d", (int)l->tid);
			if (report_has_key(a, KEY_PROCESS)) {
				printf(",\"process\":");
				json_print_string(stdout, process);
			}
			if (report_has_key(a, KEY_FILE)) {
				printf(",\"file\":");
				json_print_string(stdout, file);
			}
			if (report_has_key(a, KEY_SYMBOL)) {
				printf(",\"symbol\":");
				json_print_string(stdout, symbol);
				printf(",\"kernel\":%s",
				       l->kernel ? "true" : "false");
			}
			for (int k = KEY_CGROUP; k <= KEY_POD; k++) {
				if (!report_has_key(a, k))
					continue;
				printf(",\"%s\":", report_key_names[k]);
				json_print_string(
					stdout,
					string_table_get(
						&r->names,
						l->cgroup[k - KEY_CGROUP]));
				if (k == KEY_CGROUP)
					printf(",\"cgroup_id\":%" PRIu64,
					       l->cgroup_id);
			}
			printf("}");
			shown++;
			continue;
		}
		shown++;
		file_text = file_cell(a, file, buf, sizeof(buf));
		if (a->children && report_in_ms(a))
			printf("%9.2f%% %7.2f%% %10.1f", cpct, pct,
			       (double)l->children / 1e6);
		else if (a->children)
			printf("%9.2f%% %7.2f%% %7" PRIu64, cpct, pct,
			       l->children);
		else if (report_in_ms(a))
			printf("%10.1f %6.2f%%", (double)l->count / 1e6, pct);
		else
			printf("%10" PRIu64 " %6.2f%%", l->count, pct);
		for (size_t k = 0; k < a->nr_keys; k++) {
			bool last = k + 1 == a->nr_keys;

			printf("  ");
			switch (a->keys[k]) {
			case KEY_COMM:
				text_print_safe(stdout, comm, last ? 0 : w[k]);
				break;
			case KEY_PID:
				printf("%*d", w[k], (int)l->pid);
				break;
			case KEY_TID:
				printf("%*d", w[k], (int)l->tid);
				break;
			case KEY_PROCESS:
				text_print_safe(stdout, process,
						last ? 0 : w[k]);
				break;
			case KEY_FILE:
				text_print_safe(stdout, file_text,
						last ? 0 : w[k]);
				break;
			case KEY_SYMBOL:
				/* perf's marks: kernel or user code */
				printf("%s", l->kernel ? "[k] " : "[.] ");
				text_print_safe(stdout, symbol, 0);
				break;
			default:
				text_print_safe(stdout,
						cgroup_cell(r, l, a->keys[k],
							    buf, sizeof(buf)),
						last ? 0 : w[k]);
				break;
			}
		}
		printf("\n");
	}
	if (a->json)
		printf("],\"left_out\":%zu}\n", hidden);
	else if (hidden)
		printf("# %zu more rows (--limit, --percent-limit)\n", hidden);
}
