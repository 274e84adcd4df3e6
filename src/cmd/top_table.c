// SPDX-License-Identifier: MIT
/*
 * dcprof top's table: each snapshot's rows grouped by the sort keys into
 * entries with the last interval's and the session's samples (or off-CPU
 * or wall-clock ns), filtered and sorted; only rows new since the last
 * interval are keyed again.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroup_label.h"
#include "cmd.h"
#include "top.h"

#define SEP '\x1f'
/* top.row_entry: the row's key was made before its name came */
#define ROW_PENDING (1u << 31)

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t top_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static const char *const key_names[TK_NR] = {
	"comm",	  "pid",    "tid",  "process",	 "file",
	"symbol", "cgroup", "unit", "container", "pod",
};

const char *top_key_name(enum top_key k)
{
	return key_names[k];
}

static const char *const value_names[] = { "cpu", "off-cpu", "wall" };

const char *top_value_name(enum view_value v)
{
	return value_names[v];
}

bool top_behind(const struct top *t)
{
	return t->naming.behind_ns >= 100 * 1000 * 1000ull;
}

static uint64_t row_off_ns(const struct dcp_sample_row *row)
{
	uint64_t ns = 0;

	for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
		ns += row->off_cpu_ns[s];
	return ns;
}

/* Samples and off-CPU ns as the table's value. */
static uint64_t value_of(const struct top *t, uint64_t count, uint64_t off)
{
	if (t->value == VIEW_VALUE_OFF_CPU)
		return off;
	if (t->value == VIEW_VALUE_WALL)
		return off + count * t->sample_ns;
	return count;
}

uint64_t top_row_session(const struct top *t, size_t i,
			 const struct dcp_sample_row *row)
{
	bool known = i < t->nr_counts;

	return value_of(t, row->count - (known ? t->base[i] : 0),
			row_off_ns(row) - (known ? t->base_off[i] : 0));
}

const char *top_field(const struct top *t, const struct top_entry *e, size_t i)
{
	static char bufs[TOP_MAX_KEYS][512];
	const char *s = string_table_get(&t->keystr, e->key);
	char *out = bufs[i % TOP_MAX_KEYS];
	size_t n;

	for (size_t k = 0; k < i && s; k++) {
		s = strchr(s, SEP);
		if (s)
			s++;
	}
	if (!s)
		return "";
	n = strcspn(s, "\x1f");
	if (n >= sizeof(bufs[0]))
		n = sizeof(bufs[0]) - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

/*
 * The C library's system-call wrappers (nanosleep, read, the futex waits)
 * say how a thread waited, not where from: they are passed over, as the
 * kernel's path to the scheduler, to find the frame a thread blocked from.
 */
static bool in_c_library(const struct top *t, const struct dcp_frame *f)
{
	static const char *const prefixes[] = { "libc.so",    "libc-",
						"libpthread", "ld-linux",
						"libc.musl",  "ld-musl" };
	const char *path = profile_view_file_name(&t->view, f->cookie);
	const char *name = strrchr(path, '/');

	name = name ? name + 1 : path;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * The frame a thread blocked from: every off-CPU stack ends in the
 * scheduler, so its leaf says nothing. The first user frame outside the C
 * library; else the first user frame (a thread that waits in the C library
 * alone, as a thread started on read()); else, for kernel threads, the
 * leaf, unless kernel frames are hidden.
 */
static const struct dcp_frame *blocked_frame(const struct top *t,
					     const struct dcp_sample_row *row)
{
	const struct dcp_frame *user = NULL;

	for (uint32_t i = 0; i < row->nr_frames; i++) {
		const struct dcp_frame *f = &row->frames[i];

		if (f->flags & DCP_FRAME_KERNEL)
			continue;
		if (!user)
			user = f;
		if (!in_c_library(t, f))
			return f;
	}
	if (user || t->hide_kernel || !row->nr_frames)
		return user;
	return &row->frames[0];
}

/* The frame a row is shown by: its leaf, or its first user frame; in the
 * off-CPU and wall views, the frame a row with off-CPU time blocked from. */
const struct dcp_frame *top_shown_frame(const struct top *t,
					const struct dcp_sample_row *row)
{
	if (t->value != VIEW_VALUE_CPU && row_off_ns(row))
		return blocked_frame(t, row);
	for (uint32_t i = 0; i < row->nr_frames; i++)
		if (!t->hide_kernel ||
		    !(row->frames[i].flags & DCP_FRAME_KERNEL))
			return &row->frames[i];
	return NULL;
}

static bool is_idle(const struct top *t, const struct dcp_frame *f)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };

	return f && !dcp_cookie_table_lookup(t->view.cookies, f->cookie, &ci) &&
	       ci.kind == DCP_COOKIE_KIND_IDLE;
}

static bool row_wanted(const struct top *t, const struct dcp_sample_row *row,
		       const char *comm)
{
	bool ok = !t->nr_comms && !t->nr_pids;

	for (size_t i = 0; i < t->nr_comms && !ok; i++)
		ok = !strcmp(t->comms[i], comm) ||
		     !strcmp(t->comms[i], row->comm);
	for (size_t i = 0; i < t->nr_pids && !ok; i++)
		ok = t->pids[i] == row->pid || t->pids[i] == row->tid;
	return ok;
}

static int append(char *buf, size_t size, size_t *len, const char *s)
{
	int n = snprintf(buf + *len, size - *len, "%s%s", *len ? "\x1f" : "",
			 s);

	if (n < 0 || (size_t)n >= size - *len)
		return -ENAMETOOLONG;
	*len += (size_t)n;
	return 0;
}

/* The group key of a row ("comm\x1f file\x1f symbol"), into buf. */
int top_row_key(const struct top *t, const struct dcp_sample_row *row,
		const struct dcp_frame *f, char *buf, size_t size)
{
	const char *comm = row->thread_comm ? row->thread_comm : row->comm;
	size_t len = 0;
	char num[16], label[512];
	int ret = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->nr_keys && !ret; i++) {
		const char *s = "";

		switch (t->keys[i]) {
		case TK_COMM:
			s = comm;
			break;
		case TK_PROCESS:
			s = row->comm;
			break;
		case TK_PID:
		case TK_TID:
			snprintf(num, sizeof(num), "%d",
				 (int)(t->keys[i] == TK_PID ? row->pid :
							      row->tid));
			s = num;
			break;
		case TK_FILE:
			s = f ? profile_view_file_name(&t->view, f->cookie) :
				"[unknown]";
			break;
		case TK_SYMBOL:
			s = f ? profile_view_symbol(&t->view, f) : "[unknown]";
			break;
		default:
			s = view_cgroup_label(row, t->keys[i] - TK_CGROUP,
					      label, sizeof(label));
			break;
		}
		/* a name holding the separator is shown with a space */
		ret = append(buf, size, &len, s ? s : "");
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] != SEP && (unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	return ret;
}

static int grow_counts(struct top *t, size_t n)
{
	uint64_t **counts[] = { &t->prev, &t->base, &t->prev_off,
				&t->base_off };

	if (n <= t->nr_counts)
		return 0;
	if (n > t->cap_counts) {
		size_t cap = t->cap_counts ? t->cap_counts : 1024;
		uint32_t *re;

		while (cap < n)
			cap *= 2;
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]);
		     i++) {
			uint64_t *c = realloc(*counts[i], cap * sizeof(*c));

			if (!c)
				return -ENOMEM;
			*counts[i] = c;
		}
		re = realloc(t->row_entry, cap * sizeof(*re));
		if (!re)
			return -ENOMEM;
		t->row_entry = re;
		t->cap_counts = cap;
	}
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		memset(*counts[i] + t->nr_counts, 0,
		       (n - t->nr_counts) * sizeof(uint64_t));
	memset(t->row_entry + t->nr_counts, 0,
	       (n - t->nr_counts) * sizeof(*t->row_entry));
	t->nr_counts = n;
	return 0;
}

static struct top_entry *entry_of(struct top *t, const char *key)
{
	int64_t id = string_table_intern(&t->keystr, key);

	if (id < 0)
		return NULL;
	if ((size_t)id >= t->nr_entries) {
		if ((size_t)id >= t->cap_entries) {
			size_t cap = t->cap_entries ? 2 * t->cap_entries : 256;
			struct top_entry *e =
				realloc(t->entries, cap * sizeof(*e));
			struct top_entry **s =
				realloc(t->sorted, cap * sizeof(*s));

			if (e)
				t->entries = e;
			if (s)
				t->sorted = s;
			if (!e || !s)
				return NULL;
			t->cap_entries = cap;
		}
		memset(&t->entries[t->nr_entries], 0,
		       ((size_t)id + 1 - t->nr_entries) * sizeof(*t->entries));
		t->nr_entries = (size_t)id + 1;
		t->entries[id].key = (uint32_t)id;
	}
	return &t->entries[id];
}

static const struct top *sort_top;

static int cmp_entries(const void *a, const void *b)
{
	const struct top_entry *x = *(struct top_entry *const *)a;
	const struct top_entry *y = *(struct top_entry *const *)b;
	int c = 0;

	if (sort_top->order == TOP_BY_NAME)
		c = strcmp(string_table_get(&sort_top->keystr, x->key),
			   string_table_get(&sort_top->keystr, y->key));
	else if (sort_top->order == TOP_BY_LAST && x->last != y->last)
		c = x->last > y->last ? -1 : 1;
	if (!c && x->session != y->session)
		c = x->session > y->session ? -1 : 1;
	if (!c && x->last != y->last)
		c = x->last > y->last ? -1 : 1;
	return c ? c : (x->key < y->key ? -1 : x->key > y->key);
}

static bool filter_match(const struct top *t, const struct top_entry *e)
{
	const char *key = string_table_get(&t->keystr, e->key);

	return !t->filter || !t->filter[0] || strstr(key, t->filter);
}

/* The heap of the best groups: its root the worst of them. */
static void sift_down(struct top_entry **h, size_t n, size_t i)
{
	for (;;) {
		size_t worst = i, l = 2 * i + 1, r = l + 1;
		struct top_entry *tmp;

		if (l < n && cmp_entries(&h[l], &h[worst]) > 0)
			worst = l;
		if (r < n && cmp_entries(&h[r], &h[worst]) > 0)
			worst = r;
		if (worst == i)
			return;
		tmp = h[i];
		h[i] = h[worst];
		h[worst] = tmp;
		i = worst;
	}
}

/*
 * Only the rows a screen or --limit shows need an order: the best k of n
 * groups are kept in a heap (n log k, and most groups are compared with
 * its root only), then sorted; a full sort of every group of a large
 * session was most of the time a screen took.
 */
void top_sort(struct top *t)
{
	size_t n = 0, k;

	for (size_t i = 0; i < t->nr_entries; i++)
		if (t->entries[i].seen && filter_match(t, &t->entries[i]))
			t->sorted[n++] = &t->entries[i];
	t->nr_matching = n;
	k = t->ordered && t->ordered < n ? t->ordered : n;
	sort_top = t;
	if (k < n) {
		for (size_t i = k / 2; i-- > 0;)
			sift_down(t->sorted, k, i);
		for (size_t i = k; i < n; i++) {
			if (cmp_entries(&t->sorted[i], &t->sorted[0]) >= 0)
				continue;
			t->sorted[0] = t->sorted[i];
			sift_down(t->sorted, k, 0);
		}
	}
	if (k)
		qsort(t->sorted, k, sizeof(*t->sorted), cmp_entries);
	t->nr_sorted = k;
}

void top_reset(struct top *t)
{
	struct dcp_sample_row row = { .sz = sizeof(row) };

	for (size_t i = 0; i < t->nr_counts; i++) {
		if (dcp_profile_row(t->view.profile, i, &row))
			continue;
		t->base[i] = row.count;
		t->base_off[i] = row_off_ns(&row);
	}
	for (size_t i = 0; i < t->nr_entries; i++) {
		t->entries[i].session = 0;
		t->entries[i].seen = false;
	}
	t->nr_sorted = t->nr_matching = 0;
	t->total_session = 0;
}

/*
 * Whether the row's symbol is still being named (the snapshot's naming
 * thread has not answered for its address): its key is made again at the
 * next update instead of being kept.
 */
static bool name_pending(const struct top *t, const struct dcp_frame *f)
{
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	bool by_symbol = false;

	for (size_t i = 0; i < t->nr_keys; i++)
		by_symbol |= t->keys[i] == TK_SYMBOL;
	return by_symbol && f && !(f->flags & DCP_FRAME_TRUNCATED) &&
	       dcp_profile_symbol(t->view.profile, f->cookie, f->offset,
				  &sym) == -ENOENT;
}

int top_update(struct top *t, bool advance, uint64_t delay_ns)
{
	struct dcp_profile *p = dcp_recorder_snapshot(t->rec, &t->naming);
	uint64_t t0 = top_now_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	size_t nr;
	char key[2048];
	int ret;

	if (!p)
		return -errno;
	if (advance && !t->command_ended && t->naming.behind_ns &&
	    t0 - t->last_ns < 3 * delay_ns &&
	    dcp_profile_get_stats(p)->samples == t->prev_stats.samples)
		return TOP_NOTHING_YET;
	t->view.profile = p;
	t->view.cookies = dcp_profile_cookies(p);
	nr = dcp_profile_nr_rows(p);
	ret = grow_counts(t, nr);
	if (ret)
		return ret;
	t->sample_ns = profile_view_sample_ns(&t->view);
	if (t->row_entry_hide_idle != t->hide_idle ||
	    t->row_entry_hide_kernel != t->hide_kernel ||
	    t->row_entry_value != t->value) {
		memset(t->row_entry, 0, t->nr_counts * sizeof(*t->row_entry));
		t->row_entry_hide_idle = t->hide_idle;
		t->row_entry_hide_kernel = t->hide_kernel;
		t->row_entry_value = t->value;
	}
	for (size_t i = 0; i < t->nr_entries; i++) {
		t->entries[i].last = 0;
		t->entries[i].session = 0;
		t->entries[i].seen = false;
	}
	t->total_last = t->total_session = 0;
	for (size_t i = 0; i < nr; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		const struct dcp_frame *f;
		struct top_entry *e;
		uint64_t last, session, off;

		if (dcp_profile_row(p, i, &row))
			continue;
		off = row_off_ns(&row);
		last = value_of(t, row.count - t->prev[i],
				off - t->prev_off[i]);
		session = value_of(t, row.count - t->base[i],
				   off - t->base_off[i]);
		if (advance) {
			t->prev[i] = row.count;
			t->prev_off[i] = off;
		}
		if (!session)
			continue;
		if (t->row_entry[i] & ROW_PENDING) {
			/* its key again once its name came, not before */
			e = &t->entries[(t->row_entry[i] & ~ROW_PENDING) - 1];
			if (name_pending(t, top_shown_frame(t, &row)))
				goto count;
			t->row_entry[i] = 0;
		}
		if (t->row_entry[i]) {
			e = &t->entries[t->row_entry[i] - 1];
			goto count;
		}
		if (!row_wanted(t, &row,
				row.thread_comm ? row.thread_comm : row.comm))
			continue;
		f = top_shown_frame(t, &row);
		if (!f && row.nr_frames)
			continue; /* kernel frames only, hidden */
		if (t->hide_idle && is_idle(t, f))
			continue;
		if (top_row_key(t, &row, f, key, sizeof(key)))
			continue;
		e = entry_of(t, key);
		if (!e)
			return -ENOMEM;
		t->row_entry[i] = (uint32_t)(e - t->entries) + 1;
		if (name_pending(t, f))
			t->row_entry[i] |= ROW_PENDING;
count:
		if (!e->seen || last > 0)
			e->agg_row = (uint32_t)i;
		e->seen = true;
		e->last += last;
		e->session += session;
		t->total_last += last;
		t->total_session += session;
	}
	t->stats = *dcp_profile_get_stats(p);
	if (advance) {
		/* the interval's seconds are those its samples were taken
		 * in: the span of what the snapshots delivered, not the time
		 * between them (samples held in the kernel or the reorder
		 * window at one snapshot came in the next, and gave a rate
		 * above CPUs times the frequency) */
		uint64_t until = t->naming.delivered_ns;

		t->interval_ns = until > t->last_delivered_ns ?
					 until - t->last_delivered_ns :
					 t0 - t->last_ns;
		if (until > t->last_delivered_ns)
			t->last_delivered_ns = until;
		t->last_ns = t0;
		/* -p: a process that exited shows no more; said */
		t->targets_gone = 0;
		for (size_t k = 0; k < t->nr_targets; k++)
			t->targets_gone +=
				kill(t->targets[k], 0) < 0 && errno == ESRCH;
		/* an interval that named nothing new took no naming time
		 * (the last batch's was shown again) */
		t->naming_last_ns = t->naming.naming_ns - t->naming_total_ns;
		t->naming_total_ns = t->naming.naming_ns;
		t->samples_last = t->stats.samples - t->prev_stats.samples;
		t->lost_last =
			t->stats.lost_samples - t->prev_stats.lost_samples;
		t->idle_last = t->stats.samples_idle +
			       t->stats.samples_other_idle -
			       t->prev_stats.samples_idle -
			       t->prev_stats.samples_other_idle;
		t->other_last = t->stats.samples_other_tasks -
				t->prev_stats.samples_other_tasks;
		t->throttled_last = t->stats.throttle_events -
				    t->prev_stats.throttle_events;
		t->off_cpu_ns_last =
			t->stats.off_cpu_ns - t->prev_stats.off_cpu_ns;
		t->prev_stats = t->stats;
		t->interval++;
	}
	top_sort(t);
	t->table_ns = top_now_ns() - t0;
	t->table_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return 0;
}

const char *top_fit_path(const char *path, int width, char *buf, size_t size)
{
	size_t n = strlen(path), w = width > 0 ? (size_t)width : 0;
	const char *base = strrchr(path, '/'), *cut;

	if (n <= w || size == 0)
		return path;
	if (w >= size)
		w = size - 1;
	if (w < 4) {
		snprintf(buf, size, "%.*s", (int)w, path);
		return buf;
	}
	/* the base name whole, behind as many of its directories as fit */
	if (base && strlen(base + 1) + 3 <= w) {
		cut = base + 1;
		for (const char *p = base; p > path; p--)
			if (p[-1] == '/' && n - (size_t)(p - 1 - path) + 3 <= w)
				cut = p - 1;
		snprintf(buf, size, "...%s", cut);
		return buf;
	}
	/* a base name longer than the column: its start */
	snprintf(buf, size, "%.*s...", (int)w - 3, base ? base + 1 : path);
	return buf;
}

void top_key_widths(const struct top *t, size_t nr_rows, int *widths)
{
	for (size_t k = 0; k < t->nr_keys; k++) {
		widths[k] = (int)strlen(top_key_name(t->keys[k]));
		for (size_t i = 0; i < nr_rows; i++) {
			int n = (int)strlen(top_field(t, t->sorted[i], k));

			if (n > widths[k])
				widths[k] = n;
		}
	}
}
