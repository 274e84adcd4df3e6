// SPDX-License-Identifier: MIT
/*
 * dcprof top's full-screen view (ncurses): a header (with -- CMD the
 * command and, once it exited, its status; samples per second, lost and
 * throttled, idle share, per-CPU busy share from /proc/stat, off-CPU time
 * with --off-cpu), the sorted table, and the keys. Only ASCII is drawn
 * (names are shown with other bytes as '?'), so that any terminal and
 * locale shows the same; the terminal is restored on q, on Ctrl-C and
 * SIGTERM (the stop flag), and on errors.
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "top.h"

#define MAX_CPUS 256
#define FILTER_MAX 64

struct cpu_times {
	uint64_t busy[MAX_CPUS], total[MAX_CPUS];
	int nr;
};

struct tui {
	struct top *t;
	struct cpu_times cpu_prev, cpu_now;
	char filter[FILTER_MAX];
	bool editing, paused, help, tree;
	size_t selected;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void read_cpus(struct cpu_times *c)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	c->nr = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && c->nr < MAX_CPUS) {
		uint64_t v[8] = { 0 };
		int cpu;

		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line + 3,
			   "%d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) < 5)
			continue;
		c->total[c->nr] =
			v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		c->busy[c->nr] = c->total[c->nr] - v[3] - v[4];
		c->nr++;
	}
	fclose(f);
}

/* One screen line: ASCII only, cut at the screen's width. */
static void put_line(int y, const char *s, int attr)
{
	char buf[1024];
	size_t n = 0;

	if (y >= LINES)
		return;
	for (; s[n] && n < sizeof(buf) - 1 && (int)n < COLS; n++) {
		unsigned char c = (unsigned char)s[n];

		buf[n] = c < 0x20 || c > 0x7e ? '?' : (char)c;
	}
	buf[n] = '\0';
	/* the last cell of the last line would scroll */
	if (y == LINES - 1 && (int)n == COLS && n)
		buf[--n] = '\0';
	if (attr)
		attron(attr);
	mvaddstr(y, 0, buf);
	if (attr)
		attroff(attr);
	clrtoeol();
}

static const char *const order_names[] = { "last", "session", "name" };

#define HEADER_FIELDS 24
#define FIELD_MAX 320

/* Header fields, apart by sep, on as many lines as the width needs. */
struct fields {
	char f[HEADER_FIELDS][FIELD_MAX];
	int n;
};

static void add_field(struct fields *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_field(struct fields *fs, const char *fmt, ...)
{
	va_list ap;

	if (fs->n >= HEADER_FIELDS)
		return;
	va_start(ap, fmt);
	vsnprintf(fs->f[fs->n], FIELD_MAX, fmt, ap);
	va_end(ap);
	if (fs->f[fs->n][0])
		fs->n++;
}

static void put_fields(int *y, const struct fields *fs, const char *sep,
		       int attr)
{
	int gap = (int)strlen(sep), len = 0;
	char line[1024];

	for (int i = 0; i < fs->n; i++) {
		int n = (int)strlen(fs->f[i]);

		if (len && len + gap + n > COLS) {
			put_line((*y)++, line, attr);
			len = 0;
		}
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%s",
				len ? sep : "", fs->f[i]);
		if (len >= (int)sizeof(line) - FIELD_MAX - 2) {
			put_line((*y)++, line, attr);
			len = 0;
		}
	}
	if (len)
		put_line((*y)++, line, attr);
}

/* The header: the fields wrap, so that a narrow screen cuts none. */
static void draw_header(struct tui *u, int *y)
{
	struct top *t = u->t;
	double secs = (double)t->interval_ns / 1e9;
	struct fields fs = { .n = 0 };
	char state[FIELD_MAX - 32] = "", line[1024];
	int len;

	add_field(&fs, "dcprof top");
	if (t->command_pid) {
		top_command_state(t, state, sizeof(state));
		add_field(&fs, "%s%s", state,
			  t->command_ended ? ", final totals (q quits)" : "");
	} else if (t->targets_gone) {
		add_field(&fs, "%zu of %zu -p exited", t->targets_gone,
			  t->nr_targets);
	}
	add_field(&fs, "%.0f samples/s",
		  secs > 0 ? (double)t->samples_last / secs : 0.0);
	add_field(&fs, "lost %" PRIu64, t->lost_last);
	if (top_behind(t))
		add_field(&fs, "behind %.1f s",
			  (double)t->naming.behind_ns / 1e9);
	add_field(&fs, "throttled %" PRIu64, t->throttled_last);
	add_field(&fs, "idle %.1f%%",
		  t->samples_last ? 100.0 * (double)t->idle_last /
					    (double)t->samples_last :
				    0.0);
	add_field(&fs, "naming %.1f ms", (double)t->naming_last_ns / 1e6);
	if (t->off_cpu)
		add_field(&fs, "off-CPU %.0f ms/s",
			  secs > 0 ? (double)t->off_cpu_ns_last / 1e6 / secs :
				     0.0);
	add_field(&fs, "%s", u->paused ? "[paused]" : "");
	add_field(&fs, "%s", t->hide_idle ? "[no idle]" : "");
	put_fields(y, &fs, "  ", A_BOLD);

	/* one line, cut at the width: many CPUs would push the table away */
	len = snprintf(line, sizeof(line), "cpu busy:");
	for (int i = 0; i < u->cpu_now.nr && i < u->cpu_prev.nr &&
			len < (int)sizeof(line) - 16;
	     i++) {
		uint64_t tot = u->cpu_now.total[i] - u->cpu_prev.total[i];
		uint64_t busy = u->cpu_now.busy[i] - u->cpu_prev.busy[i];

		len += snprintf(line + len, sizeof(line) - (size_t)len,
				" cpu%d %3.0f%%", i,
				tot ? 100.0 * (double)busy / (double)tot : 0.0);
	}
	put_line((*y)++, line, 0);

	fs.n = 0;
	add_field(&fs, "s:sort(%s)", order_names[t->order]);
	if (t->off_cpu)
		add_field(&fs, "v:value(%s)", top_value_name(t->value));
	add_field(&fs, "i:idle");
	add_field(&fs, "k:kernel%s", t->hide_kernel ? "(hidden)" : "");
	add_field(&fs, "/:filter%s%s", u->filter[0] ? "=" : "", u->filter);
	add_field(&fs, "Enter:tree");
	add_field(&fs, "z:reset");
	add_field(&fs, "space:pause");
	add_field(&fs, "?:help");
	add_field(&fs, "q:quit");
	put_fields(y, &fs, " ", 0);
}

/*
 * A row's keys after its numbers, into line from len on, each padded to
 * its column's width but the last; the file's path fitted to its column.
 * Returns the new length.
 */
static int put_keys(const struct top *t, const struct top_entry *e, char *line,
		    size_t size, int len, const int *widths)
{
	for (size_t k = 0; k < t->nr_keys && len < 900; k++) {
		const char *f =
			e ? top_field(t, e, k) : top_key_name(t->keys[k]);
		char fitted[512];
		int pad = k + 1 < t->nr_keys ? widths[k] : 0;

		if (t->keys[k] == TK_FILE)
			f = top_fit_path(f, widths[k], fitted, sizeof(fitted));
		len += snprintf(line + len, size - (size_t)len, "  %-*.*s", pad,
				k + 1 < t->nr_keys ? widths[k] : 200, f);
	}
	return len;
}

/* The narrowest file column that keeps every row's base name whole
 * behind "..." (a long one is cut all the same past 28 columns; names
 * that are no path, "[kernel.kallsyms]", are cut at their end). */
static int file_min_width(const struct top *t, size_t nr_rows, size_t k)
{
	int min = 8;

	for (size_t i = 0; i < nr_rows; i++) {
		const char *base = strrchr(top_field(t, t->sorted[i], k), '/');
		int n = base ? (int)strlen(base + 1) + 3 : 0;

		if (n > min)
			min = n < 28 ? n : 28;
	}
	return min;
}

/*
 * The key columns' widths for the rows on screen: each its longest field;
 * too wide for the screen, the file's column gives way (down to its base
 * names), not the function's (perf top shortens the same column).
 */
static void fit_widths(const struct top *t, size_t nr_rows, int numbers,
		       int *widths)
{
	int total = numbers;

	top_key_widths(t, nr_rows, widths);
	for (size_t k = 0; k < t->nr_keys; k++)
		total += 2 + widths[k];
	for (size_t k = 0; k < t->nr_keys; k++) {
		int min;

		if (t->keys[k] != TK_FILE || total <= COLS)
			continue;
		min = file_min_width(t, nr_rows, k);
		if (widths[k] > min)
			widths[k] = widths[k] - (total - COLS) > min ?
					    widths[k] - (total - COLS) :
					    min;
	}
}

static void draw_table(struct tui *u, int y)
{
	struct top *t = u->t;
	char line[1024];
	int len;

	bool ms = t->value != VIEW_VALUE_CPU;
	int widths[TOP_MAX_KEYS];
	size_t rows = LINES - 1 > y + 1 ? (size_t)(LINES - 2 - y) : 0;

	/* off-CPU: the session's ms beside the interval's, which are all 0
	 * once a command has exited */
	if (ms)
		len = snprintf(line, sizeof(line), "%7s %8s %9s %9s", "last",
			       "session", "ms", "total ms");
	else
		len = snprintf(line, sizeof(line), "%7s %8s %7s", "last",
			       "session", "samples");
	fit_widths(t, rows < t->nr_sorted ? rows : t->nr_sorted, len, widths);
	len = put_keys(t, NULL, line, sizeof(line), len, widths);
	put_line(y++, line, A_REVERSE);
	if (u->selected >= t->nr_sorted)
		u->selected = t->nr_sorted ? t->nr_sorted - 1 : 0;
	for (size_t i = 0; i < t->nr_sorted && y < LINES - 1; i++, y++) {
		const struct top_entry *e = t->sorted[i];

		double last = t->total_last ? 100.0 * (double)e->last /
						      (double)t->total_last :
					      0.0;
		double session = t->total_session ?
					 100.0 * (double)e->session /
						 (double)t->total_session :
					 0.0;

		if (ms)
			len = snprintf(line, sizeof(line),
				       "%6.2f%% %7.2f%% %9.1f %9.1f", last,
				       session, (double)e->last / 1e6,
				       (double)e->session / 1e6);
		else
			len = snprintf(line, sizeof(line),
				       "%6.2f%% %7.2f%% %7" PRIu64, last,
				       session, e->last);
		put_keys(t, e, line, sizeof(line), len, widths);
		put_line(y, line, i == u->selected ? A_REVERSE : 0);
	}
	for (; y < LINES - 1; y++)
		put_line(y, "", 0);
	if (u->editing) {
		snprintf(line, sizeof(line), "filter (comm or symbol): %s_",
			 u->filter);
		put_line(LINES - 1, line, A_BOLD);
	} else {
		put_line(LINES - 1, "", 0);
	}
}

static void draw_help(void)
{
	static const char *const lines[] = {
		"dcprof top: keys",
		"",
		"  s        sort by the last interval, the session, the name",
		"  i        hide or show the idle task",
		"  k        hide or show kernel frames (rows by user frame)",
		"  v        the value, with --off-cpu: CPU samples, off-CPU ms,",
		"           wall ms (off-CPU time by the frame it blocked from)",
		"  /        filter by comm or symbol (Enter keeps, Esc clears)",
		"  Up/Down  select a row (j: down)",
		"  Enter    the call tree of the selected row (needs -g)",
		"  z        reset the session totals",
		"  space    pause or resume the display (recording goes on)",
		"  q        quit",
		"",
		"any key closes this help",
	};

	erase();
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		put_line((int)i, lines[i], i ? 0 : A_BOLD);
}

/* One stack of the selected group: from its shown frame outwards. */
struct tree_path {
	const struct dcp_frame *f;
	uint32_t nr;
	uint64_t count;
};

#define TREE_MAX 256

static int cmp_paths(const void *a, const void *b)
{
	const struct tree_path *x = a, *y = b;

	return x->count > y->count ? -1 : x->count < y->count;
}

/* Whether two stacks show the same: the same functions of the same files,
 * wherever in them the samples fell. */
static bool same_path(const struct profile_view *v, const struct dcp_frame *a,
		      const struct dcp_frame *b, uint32_t nr)
{
	for (uint32_t k = 0; k < nr; k++) {
		if (a[k].cookie != b[k].cookie || a[k].flags != b[k].flags)
			return false;
		if (a[k].offset != b[k].offset &&
		    strcmp(profile_view_symbol(v, &a[k]),
			   profile_view_symbol(v, &b[k])))
			return false;
	}
	return true;
}

/* The group's rows, stacks that show the same merged (other pids,
 * threads, other addresses in the same functions). */
static size_t tree_paths(struct top *t, const struct top_entry *e,
			 struct tree_path *paths)
{
	struct dcp_profile *p = t->view.profile;
	size_t nr = dcp_profile_nr_rows(p), n = 0;
	char key[2048];

	for (size_t i = 0; i < nr; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		const struct dcp_frame *f;
		uint64_t session;
		uint32_t depth;
		size_t j;

		if (dcp_profile_row(p, i, &row))
			continue;
		session = top_row_session(t, i, &row);
		f = top_shown_frame(t, &row);
		if (!session || !f ||
		    top_row_key(t, &row, f, key, sizeof(key)) ||
		    strcmp(key, string_table_get(&t->keystr, e->key)))
			continue;
		depth = (uint32_t)(row.frames + row.nr_frames - f);
		for (j = 0; j < n; j++)
			if (paths[j].nr == depth &&
			    same_path(&t->view, paths[j].f, f, depth))
				break;
		if (j < n) {
			paths[j].count += session;
		} else if (n < TREE_MAX) {
			paths[n++] = (struct tree_path){ f, depth, session };
		}
	}
	qsort(paths, n, sizeof(*paths), cmp_paths);
	return n;
}

/* The stacks of the selected group, heaviest first, leaf at the top. */
static void draw_tree(struct tui *u)
{
	static struct tree_path paths[TREE_MAX];
	struct top *t = u->t;
	const struct top_entry *e;
	char line[1024];
	size_t n;
	int y = 0;

	erase();
	if (!t->nr_sorted) {
		put_line(0, "no row selected (any key goes back)", 0);
		return;
	}
	if (u->selected >= t->nr_sorted)
		u->selected = t->nr_sorted - 1;
	e = t->sorted[u->selected];
	snprintf(line, sizeof(line),
		 "call tree of %s %s %s (any key goes back)",
		 top_field(t, e, 0), t->nr_keys > 1 ? top_field(t, e, 1) : "",
		 t->nr_keys > 2 ? top_field(t, e, 2) : "");
	put_line(y++, line, A_BOLD);
	if (!dcp_profile_get_meta(t->view.profile)->callchain) {
		put_line(y++, "no call chains: start dcprof top with -g", 0);
		return;
	}
	n = tree_paths(t, e, paths);
	for (size_t i = 0; i < n && y < LINES; i++) {
		snprintf(line, sizeof(line), "%6.2f%%  %s",
			 t->total_session ? 100.0 * (double)paths[i].count /
						    (double)t->total_session :
					    0.0,
			 profile_view_symbol(&t->view, paths[i].f));
		put_line(y++, line, A_BOLD);
		for (uint32_t k = 1; k < paths[i].nr && y < LINES; k++) {
			snprintf(line, sizeof(line), "          <- %s",
				 profile_view_symbol(&t->view, &paths[i].f[k]));
			put_line(y++, line, 0);
		}
	}
}

static void draw(struct tui *u)
{
	int y = 0;

	if (u->help) {
		draw_help();
	} else if (u->tree) {
		draw_tree(u);
	} else {
		erase();
		draw_header(u, &y);
		draw_table(u, y);
	}
	refresh();
}

static void edit_filter(struct tui *u, int ch)
{
	size_t n = strlen(u->filter);

	if (ch == '\n' || ch == KEY_ENTER || ch == '\r') {
		u->editing = false;
	} else if (ch == 27) {
		u->editing = false;
		u->filter[0] = '\0';
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (n)
			u->filter[n - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x7f && n < FILTER_MAX - 1) {
		u->filter[n] = (char)ch;
		u->filter[n + 1] = '\0';
	}
	u->t->filter = u->filter;
	top_sort(u->t);
}

/* A key: false when it asks to quit. */
static bool on_key(struct tui *u, int ch, bool *refill)
{
	struct top *t = u->t;

	if (u->editing) {
		edit_filter(u, ch);
		return true;
	}
	if (u->help || u->tree) {
		u->help = u->tree = false;
		return ch != 'q';
	}
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 's':
		t->order = (enum top_order)((t->order + 1) % TOP_NR_ORDERS);
		top_sort(t);
		break;
	case 'i':
		t->hide_idle = !t->hide_idle;
		*refill = true;
		break;
	case 'k':
		t->hide_kernel = !t->hide_kernel;
		*refill = true;
		break;
	case 'v':
		if (!t->off_cpu)
			break; /* no off-CPU time without --off-cpu */
		t->value = (enum view_value)((t->value + 1) % 3);
		*refill = true;
		break;
	case '/':
		u->editing = true;
		break;
	case 'z':
		top_reset(t);
		*refill = true;
		break;
	case ' ':
		u->paused = !u->paused;
		break;
	case '?':
	case 'h':
		u->help = true;
		break;
	case KEY_UP:
		if (u->selected)
			u->selected--;
		break;
	case KEY_DOWN:
	case 'j':
		if (u->selected + 1 < t->nr_sorted)
			u->selected++;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		u->tree = true;
		break;
	default:
		break; /* unknown keys are ignored */
	}
	return true;
}

int top_tui(struct top *t, double delay, volatile sig_atomic_t *stop)
{
	struct tui u = { .t = t };
	uint64_t delay_ns = (uint64_t)(delay * 1e9);
	uint64_t next = mono_ns() + delay_ns;
	int ret = 0;

	setlocale(LC_ALL, "");
	if (!initscr())
		return cmd_error("cannot start the full-screen view");
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	/* keys are read every 50 ms: 40 of them the recorder's (its poll
	 * waits for records, or drains while behind), 10 the keyboard's; a
	 * poll of no time left it draining a sixth of the time */
	timeout(10);
	set_escdelay(25);
	t->ordered = (size_t)LINES;
	read_cpus(&u.cpu_prev);
	u.cpu_now = u.cpu_prev;
	draw(&u);
	while (!*stop) {
		bool refill = false, redraw = false;
		int ch;

		ret = dcp_recorder_poll(t->rec, 40);
		if (ret && ret != -EINTR)
			break;
		ret = 0;
		ch = getch();
		/* the rows a screen can show are the ones put in order */
		t->ordered = t->limit && t->limit < (size_t)LINES ?
				     t->limit :
				     (size_t)LINES;
		if (ch == KEY_RESIZE) {
			top_sort(t);
			redraw = true;
		} else if (ch != ERR) {
			if (!on_key(&u, ch == '\r' ? '\n' : ch, &refill))
				break;
			redraw = true;
		}
		/* the command's end: one last, short interval, then the
		 * final totals stay until q */
		if (!t->command_ended && top_command_ended(t)) {
			next = 0;
			u.paused = false;
		} else if (t->command_ended) {
			next = UINT64_MAX;
		}
		if (mono_ns() >= next) {
			ret = top_update(t, true, delay_ns);
			if (ret < 0)
				break;
			if (ret == TOP_NOTHING_YET) {
				next = mono_ns() + delay_ns / 4;
			} else {
				u.cpu_prev = u.cpu_now;
				read_cpus(&u.cpu_now);
				/* from the table's end: a whole interval of
				 * draining however long the table took */
				if (next != UINT64_MAX)
					next = mono_ns() + delay_ns;
				redraw = !u.paused || redraw;
			}
			ret = 0;
		} else if (refill) {
			ret = top_update(t, false, 0);
			if (ret)
				break;
		}
		if (redraw)
			draw(&u);
	}
	endwin();
	if (ret)
		return cmd_error("%s", dcp_last_error());
	return 0;
}
