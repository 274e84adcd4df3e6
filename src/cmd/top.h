/* SPDX-License-Identifier: MIT */
/*
 * dcprof top: the live table over the recorder's snapshot (top.c), shared
 * with the full-screen view (top_tui.c).
 */
#ifndef DCPROF_TOP_H
#define DCPROF_TOP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dcprof/dcprof.h"
#include "intern.h"
#include "profile_view.h"

#define TOP_MAX_KEYS 10

/* from TK_CGROUP on: enum view_cgroup_key in its order */
enum top_key {
	TK_COMM,
	TK_PID,
	TK_TID,
	TK_PROCESS,
	TK_FILE,
	TK_SYMBOL,
	TK_CGROUP,
	TK_UNIT,
	TK_CONTAINER,
	TK_POD,
	TK_NR
};
enum top_order { TOP_BY_LAST, TOP_BY_SESSION, TOP_BY_NAME, TOP_NR_ORDERS };

/* One line of the table: a group of the --sort keys. */
struct top_entry {
	uint32_t key; /* in top.keys */
	uint64_t last, session; /* of top.value: samples, or ns */
	uint32_t agg_row; /* a row of the group (its stack, for the tree) */
	bool seen;
};

struct top {
	/* options */
	enum top_key keys[TOP_MAX_KEYS];
	size_t nr_keys;
	const char *const *comms; /* --comm */
	size_t nr_comms;
	const uint32_t *pids; /* --pid */
	size_t nr_pids;
	bool hide_idle, hide_kernel;
	const char *filter; /* the view's "/": comm or symbol contains */
	enum top_order order;
	size_t limit;
	/* recorded with --off-cpu; what the table adds up (v cycles it) */
	bool off_cpu;
	enum view_value value;

	struct dcp_recorder *rec;
	struct profile_view view;
	struct dcp_snapshot_info naming;
	/* per aggregate row: the count and the off-CPU ns at the last
	 * interval and at z */
	uint64_t *prev, *base, *prev_off, *base_off;
	/* per aggregate row: its entry + 1, 0 not known yet, bit 31 while
	 * its name is still being looked up (keys are stable; hide_idle,
	 * hide_kernel and the value are the settings that change which rows
	 * count, and by which frame) */
	uint32_t *row_entry;
	bool row_entry_hide_idle, row_entry_hide_kernel;
	enum view_value row_entry_value;
	size_t nr_counts, cap_counts;
	/* the groups */
	struct string_table keystr;
	struct top_entry *entries;
	size_t nr_entries, cap_entries;
	/* the first nr_sorted groups in order: only the rows that can be
	 * shown are ordered (ordered, 0: all), out of nr_matching */
	struct top_entry **sorted;
	size_t nr_sorted, nr_matching, ordered;
	uint64_t total_last, total_session;
	/* the interval */
	struct dcp_profile_stats stats, prev_stats;
	uint64_t interval_ns, last_ns;
	/* the snapshot's delivered_ns at the last interval's end */
	uint64_t last_delivered_ns;
	/* the naming's time in the last interval, and its total then */
	uint64_t naming_last_ns, naming_total_ns;
	/* time to build this interval's table, and to print the last one */
	uint64_t build_ns, draw_ns;
	uint64_t build_cpu_ns, draw_cpu_ns; /* the same, CPU time */
	/* of the build, the table alone (after the snapshot and its names) */
	uint64_t table_ns, table_cpu_ns;
	/* of the last interval: every sample read, lost, the machine's idle
	 * ones (a command's or -p's idle CPUs are among other tasks'), those
	 * of tasks other than -p's or the command's, throttling */
	uint64_t samples_last, lost_last, idle_last, other_last, throttled_last;
	uint64_t off_cpu_ns_last, sample_ns;
	unsigned int interval;
	/* top -- CMD: the command (pid 0: none), and once it has exited,
	 * its wait status; the last table is then the final one */
	pid_t command_pid;
	const char *command_name;
	bool command_ended;
	int command_status;
	int command_signal; /* the signal that ended it, 0: it exited */
	/* -p: the processes watched, and how many of them have exited */
	const pid_t *targets;
	size_t nr_targets, targets_gone;
};

/*
 * Take a snapshot and rebuild the table: 0 or a negative errno. advance
 * ends the interval. Given the delay (0: never), an interval in which no
 * sample came while the kernel still holds unread ones (the recorder
 * behind, as under a storm of sampling interrupts at start) does not end
 * before three delays, nor after the command's exit: TOP_NOTHING_YET,
 * nothing changed, and the caller polls on.
 */
#define TOP_NOTHING_YET 1
int top_update(struct top *t, bool advance, uint64_t delay_ns);
/* Re-sort and filter the groups (a key pressed between intervals): the
 * first top.ordered in order, the rest left out. */
void top_sort(struct top *t);
/* z: the session starts again now. */
void top_reset(struct top *t);
/* The key's fields, split: value i of the group e (static buffer). */
const char *top_field(const struct top *t, const struct top_entry *e, size_t i);
const char *top_key_name(enum top_key k);
/*
 * A file's path in width columns, one rule for every row: whole if it
 * fits, else its base name whole behind the end of its directory, cut
 * from the left at a '/' and marked "..." (".../x86_64-linux-gnu/libc.so.6",
 * or "...libc.so.6" when no directory fits); a base name too long for
 * that, its start and "...". Returns path or buf.
 */
const char *top_fit_path(const char *path, int width, char *buf, size_t size);
/* The widths of the key columns over the first nr_rows sorted groups:
 * each its longest field, at least its name. */
void top_key_widths(const struct top *t, size_t nr_rows, int *widths);
const char *top_value_name(enum view_value v);
/* The row i's value (of top.value) since z: samples, or ns. */
uint64_t top_row_session(const struct top *t, size_t i,
			 const struct dcp_sample_row *row);
/* The frame a row is shown by (NULL: kernel frames only, hidden); in the
 * off-CPU and wall views, a row with off-CPU time is shown by the frame
 * its thread blocked from. */
const struct dcp_frame *top_shown_frame(const struct top *t,
					const struct dcp_sample_row *row);
/* The group key of a row into buf: 0 or a negative errno. */
int top_row_key(const struct top *t, const struct dcp_sample_row *row,
		const struct dcp_frame *f, char *buf, size_t size);

/*
 * top -- CMD: whether the command has exited (reaped here, once). When it
 * has, what the recorder still holds of it is read, so that the next
 * top_update() is the final table.
 */
bool top_command_ended(struct top *t);
/* "'CMD' (pid N) exited with status S" or "... running", into buf. */
void top_command_state(const struct top *t, char *buf, size_t size);
/*
 * Whether the header says how far the table is behind the kernel (the
 * recorder cannot keep up): from a tenth of a second, less being the
 * ordinary delay of a poll.
 */
bool top_behind(const struct top *t);

/* The full-screen view (top_tui.c): the exit status. */
int top_tui(struct top *t, double delay, volatile sig_atomic_t *stop);

/* CLOCK_MONOTONIC, in ns */
uint64_t top_now_ns(void);

#endif
