// SPDX-License-Identifier: MIT
/*
 * dcprof report --threads: where each thread's wall-clock time went, on
 * the CPU (its samples times the sampling period) and off it (record
 * --off-cpu, by state), against its lifetime: from its fork (or the
 * recording's start) to its exit (or the recording's end), which the
 * recorder keeps for the threads of a command or of -p. Profiles without
 * lifetimes (older files, -a) compare against the recording's length:
 * a thread that lived shorter shows less.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "grow.h"
#include "intern.h"
#include "report.h"

/* One of a thread's names (an exec renames it) and the time under it. */
struct thread_name {
	uint32_t name; /* in names */
	uint64_t samples, off_cpu_ns;
};

struct thread_line {
	uint32_t pid, tid;
	/* the names its rows carry: the line is named by the one under
	 * which it spent the most time, not by the first row read (a
	 * command's main thread has a few samples under the recorder's
	 * name, from before its exec) */
	struct thread_name *names;
	size_t nr_names, cap_names;
	uint64_t samples;
	uint64_t off_cpu[DCP_OFF_CPU_NR_STATES];
	/* its lifetimes (a tid reused is another), summed; first start,
	 * last end */
	bool has_life;
	uint64_t life_ns, start_ns, end_ns;
};

struct report_threads {
	const struct report_args *a;
	struct string_table names;
	struct key_map index; /* (pid, tid) -> line */
	struct thread_line *lines;
	size_t nr_lines, cap_lines;
};

struct report_threads *report_threads_new(const struct report_args *a)
{
	struct report_threads *t = calloc(1, sizeof(*t));

	if (t)
		t->a = a;
	return t;
}

void report_threads_free(struct report_threads *t)
{
	if (!t)
		return;
	string_table_free(&t->names);
	key_map_free(&t->index);
	for (size_t i = 0; i < t->nr_lines; i++)
		free(t->lines[i].names);
	free(t->lines);
	free(t);
}

/* The time of a row of l's thread under the name it carries. */
static int add_name(struct report_threads *t, struct thread_line *l,
		    const struct dcp_sample_row *row)
{
	int64_t name = string_table_intern(
		&t->names, row->thread_comm ? row->thread_comm : "");
	struct thread_name *n = NULL;

	if (name < 0)
		return -ENOMEM;
	for (size_t i = 0; i < l->nr_names && !n; i++)
		if (l->names[i].name == (uint32_t)name)
			n = &l->names[i];
	if (!n) {
		void *p = dcp_grow(l->names, &l->cap_names, l->nr_names + 1,
				   sizeof(*l->names));

		if (!p)
			return -ENOMEM;
		l->names = p;
		n = &l->names[l->nr_names++];
		*n = (struct thread_name){ .name = (uint32_t)name };
	}
	n->samples += row->count;
	for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
		n->off_cpu_ns += row->off_cpu_ns[s];
	return 0;
}

int report_threads_add_row(struct report_threads *t,
			   const struct dcp_sample_row *row)
{
	struct thread_line *l;
	uint32_t i;

	if (key_map_find(&t->index, row->pid, row->tid, &i)) {
		void *p = dcp_grow(t->lines, &t->cap_lines, t->nr_lines + 1,
				   sizeof(*t->lines));

		if (!p)
			return -ENOMEM;
		t->lines = p;
		i = (uint32_t)t->nr_lines;
		if (key_map_add(&t->index, row->pid, row->tid, i))
			return -ENOMEM;
		l = &t->lines[t->nr_lines++];
		*l = (struct thread_line){ .pid = row->pid, .tid = row->tid };
	}
	l = &t->lines[i];
	l->samples += row->count;
	for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
		l->off_cpu[s] += row->off_cpu_ns[s];
	return add_name(t, l, row);
}

/* The name l's thread spent the most time under ("" if none). */
static const char *line_name(const struct report_threads *t,
			     const struct thread_line *l, double period_ns)
{
	const struct thread_name *best = NULL;
	double best_ns = -1;

	for (size_t i = 0; i < l->nr_names; i++) {
		const struct thread_name *n = &l->names[i];
		double ns =
			(double)n->samples * period_ns + (double)n->off_cpu_ns;

		if (ns > best_ns) {
			best = n;
			best_ns = ns;
		}
	}
	return best ? string_table_get(&t->names, best->name) : "";
}

static uint64_t off_cpu_total(const struct thread_line *l)
{
	uint64_t n = 0;

	for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
		n += l->off_cpu[s];
	return n;
}

/*
 * Each line's lifetime, from the profile's; whether there are any.
 * *idle: the threads that lived with neither a sample nor a wait charged
 * (off the CPU all along in a profile recorded before waits under way at
 * the start were charged, or whose wait no source saw), of the --pid
 * processes when given; their names are not kept, so that --comm leaves
 * them out.
 */
static bool add_lifetimes(struct report_threads *t, const struct dcp_profile *p,
			  size_t *idle)
{
	size_t n = dcp_profile_nr_thread_lifetimes(p);
	struct dcp_thread_lifetime life = { .sz = sizeof(life) };
	const struct report_args *a = t->a;
	uint32_t i;

	*idle = 0;
	for (size_t k = 0; k < n; k++) {
		struct thread_line *l;
		char pid[16], tid[16];

		if (dcp_profile_thread_lifetime(p, k, &life))
			continue;
		if (key_map_find(&t->index, life.pid, life.tid, &i)) {
			snprintf(pid, sizeof(pid), "%u", life.pid);
			snprintf(tid, sizeof(tid), "%u", life.tid);
			if (!a->comms.n && !a->files.n && !a->symbols.n &&
			    (!a->pids.n || str_list_has(&a->pids, pid)) &&
			    (!a->tids.n || str_list_has(&a->tids, tid)))
				(*idle)++;
			continue;
		}
		l = &t->lines[i];
		if (!l->has_life || life.start_ns < l->start_ns)
			l->start_ns = life.start_ns;
		if (!l->has_life || life.end_ns > l->end_ns)
			l->end_ns = life.end_ns;
		l->life_ns += life.end_ns - life.start_ns;
		l->has_life = true;
	}
	return n > 0;
}

/* By pid, then tid. */
static int compare_threads(const void *a, const void *b)
{
	const struct thread_line *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* off: the profile has off-CPU time (else its fields are null) */
static void print_json_line(const struct thread_line *l, const char *name,
			    double on, double total, double share, bool off,
			    bool first)
{
	/* signed: the kernel gives -1 for a task whose pid was released */
	printf("%s{\"pid\":%d,\"tid\":%d,\"thread\":", first ? "" : ",",
	       (int)l->pid, (int)l->tid);
	json_print_string(stdout, name);
	printf(",\"samples\":%" PRIu64 ",\"on_cpu_ms\":%.3f", l->samples, on);
	if (off)
		printf(",\"runnable_ms\":%.3f,\"interruptible_ms\":%.3f"
		       ",\"uninterruptible_ms\":%.3f",
		       (double)l->off_cpu[0] / 1e6, (double)l->off_cpu[1] / 1e6,
		       (double)l->off_cpu[2] / 1e6);
	else
		printf(",\"runnable_ms\":null,\"interruptible_ms\":null"
		       ",\"uninterruptible_ms\":null");
	printf(",\"total_ms\":%.3f,\"percent_of_recording\":%.4f", total,
	       share);
	if (l->has_life)
		printf(",\"start_ms\":%.3f,\"end_ms\":%.3f,\"lifetime_ms\":%.3f"
		       ",\"percent_of_lifetime\":%.4f",
		       (double)l->start_ns / 1e6, (double)l->end_ns / 1e6,
		       (double)l->life_ns / 1e6,
		       l->life_ns ? 100 * total * 1e6 / (double)l->life_ns : 0);
	printf("}");
}

void report_threads_print(struct report_threads *t,
			  const struct profile_view *v)
{
	const struct report_args *a = t->a;
	const struct dcp_profile_meta *m = dcp_profile_get_meta(v->profile);
	double period_ms = (double)profile_view_sample_ns(v) / 1e6;
	double length_ms = (double)m->duration_ns / 1e6;
	size_t shown = 0, idle;
	bool lives = add_lifetimes(t, v->profile, &idle);
	char cell[3][16];

	if (t->nr_lines)
		qsort(t->lines, t->nr_lines, sizeof(*t->lines),
		      compare_threads);
	if (!a->json && !m->off_cpu)
		printf("# recorded without --off-cpu: the time off the CPU is "
		       "not known, the totals are the time on it\n");
	if (a->json)
		printf(",\"length_ms\":%.3f,\"threads\":[", length_ms);
	else if (lives)
		printf("# each thread's time on the CPU (samples x %.3f ms) and "
		       "off it, against its lifetime (from its start, or the "
		       "recording's, to its exit, or the recording's end at "
		       "%.1f ms)\n"
		       "%8s %8s %10s %10s %10s %10s %10s %10s %7s  %s\n",
		       period_ms, length_ms, "pid", "tid", "on-CPU ms",
		       "preempted", "sleeping", "blocked", "total ms",
		       "life ms", "of life", "thread");
	else
		printf("# each thread's time on the CPU (samples x %.3f ms) and "
		       "off it, against the recording's %.1f ms\n"
		       "%8s %8s %10s %10s %10s %10s %10s %7s  %s\n",
		       period_ms, length_ms, "pid", "tid", "on-CPU ms",
		       "preempted", "sleeping", "blocked", "total ms",
		       "of rec.", "thread");
	for (size_t i = 0; i < t->nr_lines; i++) {
		const struct thread_line *l = &t->lines[i];
		double on = (double)l->samples * period_ms;
		double total = on + (double)off_cpu_total(l) / 1e6;
		double share = length_ms > 0 ? 100 * total / length_ms : 0;
		const char *name = line_name(t, l, period_ms * 1e6);

		if (a->limit >= 0 && shown >= (size_t)a->limit)
			break;
		if (a->json) {
			print_json_line(l, name, on, total, share, m->off_cpu,
					!shown);
			shown++;
			continue;
		}
		for (int k = 0; k < 3; k++)
			if (m->off_cpu)
				snprintf(cell[k], sizeof(cell[k]), "%.1f",
					 (double)l->off_cpu[k] / 1e6);
			else
				snprintf(cell[k], sizeof(cell[k]), "-");
		printf("%8d %8d %10.1f %10s %10s %10s %10.1f ", (int)l->pid,
		       (int)l->tid, on, cell[0], cell[1], cell[2], total);
		if (!lives)
			printf("%6.1f%%  ", share);
		else if (l->has_life && l->life_ns)
			printf("%10.1f %6.1f%%  ", (double)l->life_ns / 1e6,
			       100 * total * 1e6 / (double)l->life_ns);
		else
			printf("%10s %7s  ", "-", "-");
		text_print_safe(stdout, name, 0);
		printf("\n");
		shown++;
	}
	if (a->json) {
		printf("],\"left_out\":%zu,\"threads_without_time\":%zu}\n",
		       t->nr_lines - shown, idle);
		return;
	}
	if (shown < t->nr_lines)
		printf("# %zu more threads (--limit)\n", t->nr_lines - shown);
	if (idle)
		printf("# %zu more threads lived with neither a sample nor a "
		       "wait charged (off the CPU all along, their waits not "
		       "seen)\n",
		       idle);
}
