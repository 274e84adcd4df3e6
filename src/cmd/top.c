// SPDX-License-Identifier: MIT
/*
 * dcprof top: record the whole system (or some processes, or a command it
 * starts, until the command exits) and show, every interval, the functions
 * that took the CPU in the last interval and since the start (or, with
 * --off-cpu, the time threads spent off the CPU, or both), from the
 * recorder's live snapshot; --stdio prints the table as text or JSON, else
 * the full-screen view (top_tui.c) draws it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "record_opts.h"
#include "top.h"
#include "workload.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* CPU time of the calling thread: the build and draw times without the
 * time other tasks held the CPU */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool top_command_ended(struct top *t)
{
	int status;

	if (!t->command_pid || t->command_ended)
		return t->command_ended;
	if (waitpid(t->command_pid, &status, WNOHANG) != t->command_pid)
		return false;
	t->command_ended = true;
	t->command_status = workload_exit_code(status);
	t->command_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	/* its last samples: rings read, the reordering rounds let through */
	for (int i = 0; i < 3; i++)
		if (dcp_recorder_poll(t->rec, 0) && i)
			break;
	return true;
}

void top_command_state(const struct top *t, char *buf, size_t size)
{
	/* the pid tells which; the directory would crowd the header */
	const char *slash = strrchr(t->command_name, '/');
	const char *name = slash && slash[1] ? slash + 1 : t->command_name;

	if (t->command_ended && t->command_signal)
		snprintf(buf, size, "'%s' (pid %d) killed by signal %d (%s)",
			 name, (int)t->command_pid, t->command_signal,
			 strsignal(t->command_signal));
	else if (t->command_ended)
		snprintf(buf, size, "'%s' (pid %d) exited with status %d", name,
			 (int)t->command_pid, t->command_status);
	else
		snprintf(buf, size, "'%s' (pid %d) running", name,
			 (int)t->command_pid);
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

static size_t shown_rows(const struct top *t)
{
	return t->limit && t->limit < t->nr_sorted ? t->limit : t->nr_sorted;
}

static void print_text(const struct top *t)
{
	double secs = (double)t->interval_ns / 1e9;
	bool ms = t->value != VIEW_VALUE_CPU;
	int widths[TOP_MAX_KEYS];

	printf("interval %u: %.2f s, %" PRIu64 " samples (%.0f/s)", t->interval,
	       secs, t->samples_last,
	       secs > 0 ? (double)t->samples_last / secs : 0.0);
	/* the table has the command's or -p's samples only */
	if (t->other_last)
		printf(", %" PRIu64 " of other tasks", t->other_last);
	printf(", lost %" PRIu64 ", idle %.1f%%, naming %.1f ms (%" PRIu64
	       " addresses)",
	       t->lost_last, pct(t->idle_last, t->samples_last),
	       (double)t->naming_last_ns / 1e6, t->naming.addresses_named);
	if (top_behind(t))
		printf(", behind the kernel by %.1f s",
		       (double)t->naming.behind_ns / 1e9);
	if (t->off_cpu)
		printf(", off-CPU %.1f ms, value %s",
		       (double)t->off_cpu_ns_last / 1e6,
		       top_value_name(t->value));
	if (t->command_pid) {
		char state[PATH_MAX + 64];

		top_command_state(t, state, sizeof(state));
		printf(", ");
		text_print_safe(stdout, state, 0);
	}
	if (t->targets_gone)
		printf(", %zu of the %zu -p processes exited", t->targets_gone,
		       t->nr_targets);
	printf("\n");
	/* aligned columns, as perf top's: each key as wide as its longest
	 * field among the rows shown, the last one unpadded */
	top_key_widths(t, shown_rows(t), widths);
	if (ms)
		printf("%8s %8s %10s %10s", "last", "session", "ms",
		       "session_ms");
	else
		printf("%8s %8s %8s", "last", "session", "samples");
	for (size_t k = 0; k < t->nr_keys; k++)
		printf("  %-*s", k + 1 < t->nr_keys ? widths[k] : 0,
		       top_key_name(t->keys[k]));
	printf("\n");
	for (size_t i = 0; i < shown_rows(t); i++) {
		const struct top_entry *e = t->sorted[i];

		printf("%7.2f%% %7.2f%%", pct(e->last, t->total_last),
		       pct(e->session, t->total_session));
		if (ms)
			printf(" %10.1f %10.1f", (double)e->last / 1e6,
			       (double)e->session / 1e6);
		else
			printf(" %8" PRIu64, e->last);
		for (size_t k = 0; k < t->nr_keys; k++) {
			printf("  ");
			text_print_safe(stdout, top_field(t, e, k),
					k + 1 < t->nr_keys ? widths[k] : 0);
		}
		printf("\n");
	}
	printf("\n");
}

static void print_json(const struct top *t)
{
	double secs = (double)t->interval_ns / 1e9;
	bool ms = t->value != VIEW_VALUE_CPU;

	printf("{\"interval\":%u,\"end_ns\":%" PRIu64
	       ",\"seconds\":%.3f,\"samples\":%" PRIu64
	       ",\"samples_per_second\":%.1f,\"lost\":%" PRIu64
	       ",\"throttled\":%" PRIu64 ",\"idle_share\":%.2f"
	       ",\"samples_other_tasks\":%" PRIu64 ",\"%s\":%.*f"
	       ",\"naming_ms\":%.3f"
	       ",\"naming_total_ms\":%.3f,\"naming_wait_ms\":%.3f"
	       ",\"build_ms\":%.3f,\"table_ms\":%.3f,\"table_cpu_ms\":%.3f"
	       ",\"prev_draw_ms\":%.3f,\"build_cpu_ms\":%.3f"
	       ",\"prev_draw_cpu_ms\":%.3f,\"entries\":%zu"
	       ",\"off_cpu\":%s,\"off_cpu_ms\":%.3f,\"value\":\"%s\""
	       ",\"behind_ms\":%.3f",
	       t->interval, t->last_ns, secs, t->samples_last,
	       secs > 0 ? (double)t->samples_last / secs : 0.0, t->lost_last,
	       t->throttled_last, pct(t->idle_last, t->samples_last),
	       t->other_last, ms ? "session_ms" : "session_samples", ms ? 3 : 0,
	       ms ? (double)t->total_session / 1e6 : (double)t->total_session,
	       (double)t->naming_last_ns / 1e6,
	       (double)t->naming.naming_ns / 1e6,
	       (double)t->naming.wait_ns / 1e6, (double)t->build_ns / 1e6,
	       (double)t->table_ns / 1e6, (double)t->table_cpu_ns / 1e6,
	       (double)t->draw_ns / 1e6, (double)t->build_cpu_ns / 1e6,
	       (double)t->draw_cpu_ns / 1e6, t->nr_entries,
	       t->off_cpu ? "true" : "false", (double)t->off_cpu_ns_last / 1e6,
	       top_value_name(t->value), (double)t->naming.behind_ns / 1e6);
	if (t->command_pid) {
		printf(",\"command\":");
		json_print_string(stdout, t->command_name);
		printf(",\"command_pid\":%d,\"command_exited\":%s",
		       (int)t->command_pid,
		       t->command_ended ? "true" : "false");
		if (t->command_ended)
			printf(",\"command_status\":%d,\"command_signal\":%d",
			       t->command_status, t->command_signal);
	}
	if (t->nr_targets)
		printf(",\"targets\":%zu,\"targets_exited\":%zu", t->nr_targets,
		       t->targets_gone);
	printf(",\"rows\":[");
	for (size_t i = 0; i < shown_rows(t); i++) {
		const struct top_entry *e = t->sorted[i];

		printf("%s{", i ? "," : "");
		for (size_t k = 0; k < t->nr_keys; k++) {
			printf("\"%s\":", top_key_name(t->keys[k]));
			json_print_string(stdout, top_field(t, e, k));
			printf(",");
		}
		if (t->value == VIEW_VALUE_CPU)
			printf("\"samples\":%" PRIu64
			       ",\"session_samples\":%" PRIu64 ",",
			       e->last, e->session);
		else
			printf("\"ms\":%.3f,\"session_ms\":%.3f,",
			       (double)e->last / 1e6, (double)e->session / 1e6);
		printf("\"share\":%.2f,\"session_share\":%.2f}",
		       pct(e->last, t->total_last),
		       pct(e->session, t->total_session));
	}
	printf("]}\n");
}

struct top_args {
	struct dcp_recorder_opts opts;
	pid_t *targets;
	size_t nr_targets;
	const char **only, **comms;
	size_t nr_only, nr_comms;
	uint32_t *pids;
	size_t nr_pids;
	double delay;
	long iterations; /* 0: until stopped */
	bool format_given;
	bool stdio, json;
	const char *output;
	size_t limit;
	const char *sort;
	enum view_value value;
	bool value_given, off_cpu_min_given, backend_given;
	bool all_cpus; /* -a given: with a command, the whole system */
	char **command; /* top -- CMD [ARGS] */
};

enum {
	OPT_DELAY = 256,
	OPT_ITER,
	OPT_STDIO,
	OPT_FORMAT,
	OPT_ONLY,
	OPT_COMM,
	OPT_PID,
	OPT_BACKEND,
	OPT_LIMIT,
	OPT_OFF_CPU,
	OPT_OFF_CPU_MIN,
	OPT_VALUE
};

static const struct option top_options[] = {
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "no-inherit", no_argument, NULL, 'i' },
	{ "freq", required_argument, NULL, 'F' },
	{ "output", required_argument, NULL, 'o' },
	{ "sort", required_argument, NULL, 's' },
	{ "delay", required_argument, NULL, OPT_DELAY },
	{ "iterations", required_argument, NULL, OPT_ITER },
	{ "stdio", no_argument, NULL, OPT_STDIO },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "only", required_argument, NULL, OPT_ONLY },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
	{ "value", required_argument, NULL, OPT_VALUE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int push(void *arr, size_t *n, size_t elem, const void *v)
{
	void **a = arr;
	void *p = realloc(*a, (*n + 1) * elem);

	if (!p)
		return -ENOMEM;
	memcpy((char *)p + *n * elem, v, elem);
	*a = p;
	(*n)++;
	return 0;
}

static int parse_ulong(const char *arg, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 10);
	return errno || end == arg || *end || arg[0] == '-' || *out > max ?
		       -EINVAL :
		       0;
}

/* "1,2,3" into 32-bit numbers (pids); 0 or -EINVAL. */
static int parse_list(char *arg, void *arr, size_t *n, bool as_pid_t)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		unsigned long v;
		int ret;

		if (parse_ulong(tok, INT_MAX, &v) || !v)
			return -EINVAL;
		if (as_pid_t) {
			pid_t p = (pid_t)v;

			ret = push(arr, n, sizeof(p), &p);
		} else {
			uint32_t p = (uint32_t)v;

			ret = push(arr, n, sizeof(p), &p);
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_sort(struct top *t, const char *arg)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", arg);
	t->nr_keys = 0;
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		size_t k;

		if (!strcmp(tok, "dso"))
			tok = "file";
		if (!strcmp(tok, "sym"))
			tok = "symbol";
		for (k = 0; k < TK_NR; k++)
			if (!strcmp(tok, top_key_name((enum top_key)k)))
				break;
		if (k == TK_NR || t->nr_keys == TOP_MAX_KEYS)
			return cmd_usage_error(
				"top",
				"unknown sort key '%s' (comm, pid, tid, "
				"process, file, symbol, cgroup, unit, "
				"container, pod)",
				tok);
		for (size_t j = 0; j < t->nr_keys; j++)
			if (t->keys[j] == (enum top_key)k)
				return cmd_usage_error(
					"top", "--sort names '%s' twice", tok);
		t->keys[t->nr_keys++] = (enum top_key)k;
	}
	if (!t->nr_keys)
		return cmd_usage_error("top", "--sort needs at least one key");
	return 0;
}

/* What --off-cpu needs and cannot be combined with, as record says it. */
static int check_off_cpu(const struct top_args *a)
{
	if (a->off_cpu_min_given && !a->opts.off_cpu)
		return cmd_usage_error("top", "--off-cpu-min needs --off-cpu");
	if (a->value_given && a->value != VIEW_VALUE_CPU && !a->opts.off_cpu)
		return cmd_usage_error("top", "--value %s needs --off-cpu",
				       a->value == VIEW_VALUE_WALL ? "wall" :
								     "off-cpu");
	if (a->opts.off_cpu && a->nr_only)
		return cmd_usage_error(
			"top", "--off-cpu cannot be combined with --only");
	return 0;
}

static int parse_args(int argc, char **argv, struct top_args *a)
{
	unsigned long v;
	char *end;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:aiF:gp:o:s:h", top_options,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			a->all_cpus = true;
			break;
		case 'i':
			a->opts.no_inherit = true;
			break;
		case 'F':
			if (parse_ulong(optarg, 1000000, &v) || !v)
				return cmd_usage_error(
					"top", "-F wants a frequency in Hz");
			a->opts.sample_freq = (uint32_t)v;
			break;
		case 'g':
			a->opts.call_graph = DCP_CALL_GRAPH_DEFAULT;
			break;
		case 'p':
			if (parse_list(optarg, &a->targets, &a->nr_targets,
				       true))
				return cmd_usage_error(
					"top", "-p wants process ids: '%s'",
					optarg);
			break;
		case 'o':
			a->output = optarg;
			break;
		case 's':
			a->sort = optarg;
			break;
		case OPT_DELAY:
			errno = 0;
			a->delay = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(a->delay > 0) ||
			    a->delay > 3600)
				return cmd_usage_error(
					"top",
					"--delay wants a number of seconds "
					"above 0 (at most 3600): '%s'",
					optarg);
			break;
		case OPT_ITER:
			if (parse_ulong(optarg, LONG_MAX, &v) || !v)
				return cmd_usage_error(
					"top",
					"--iterations wants a count above 0: "
					"'%s'",
					optarg);
			a->iterations = (long)v;
			break;
		case OPT_STDIO:
			a->stdio = true;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return cmd_usage_error(
					"top", "--format is text or json");
			a->json = !strcmp(optarg, "json");
			a->format_given = true;
			break;
		case OPT_ONLY:
			if (push(&a->only, &a->nr_only, sizeof(char *),
				 &optarg))
				return cmd_error("out of memory");
			break;
		case OPT_COMM:
			for (char *tok = strtok(optarg, ","); tok;
			     tok = strtok(NULL, ","))
				if (push(&a->comms, &a->nr_comms,
					 sizeof(char *), &tok))
					return cmd_error("out of memory");
			break;
		case OPT_PID:
			if (parse_list(optarg, &a->pids, &a->nr_pids, false))
				return cmd_usage_error(
					"top", "--pid wants process ids: '%s'",
					optarg);
			break;
		case OPT_BACKEND:
			c = record_parse_backend("top", optarg,
						 &a->opts.backend);
			if (c)
				return c;
			a->backend_given = true;
			break;
		case OPT_LIMIT:
			if (parse_ulong(optarg, 1000000, &v))
				return cmd_usage_error("top",
						       "--limit wants a count");
			a->limit = v;
			break;
		case OPT_OFF_CPU:
			a->opts.off_cpu = true;
			break;
		case OPT_OFF_CPU_MIN:
			c = record_parse_off_cpu_min("top", optarg,
						     &a->opts.off_cpu_min_ns);
			if (c)
				return c;
			a->off_cpu_min_given = true;
			break;
		case OPT_VALUE:
			if (view_value_parse(optarg, &a->value))
				return cmd_usage_error(
					"top",
					"unknown value '%s' (cpu, off-cpu, wall)",
					optarg);
			a->value_given = true;
			break;
		case 'h':
			cmd_usage(cmd_find("top"), stdout);
			return cmd_finish_stdout(0) ? 1 : -1;
		case ':':
			return cmd_usage_error("top", "%s needs a value",
					       argv[optind - 1]);
		default:
			return cmd_usage_error("top", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		a->command = &argv[optind];
	if (a->command && a->nr_targets)
		return cmd_usage_error("top",
				       "-p and a command exclude each other");
	if (a->all_cpus && a->nr_targets)
		return cmd_usage_error("top", "-a and -p exclude each other");
	if (a->opts.no_inherit &&
	    (a->all_cpus || (!a->nr_targets && !a->command)))
		return cmd_usage_error(
			"top", "-i (--no-inherit) needs -p or a command");
	/* said, not ignored: the full-screen view runs until q */
	if (!a->stdio && (a->iterations || a->format_given))
		return cmd_usage_error("top", "%s applies to --stdio only",
				       a->iterations ? "--iterations" :
						       "--format");
	return check_off_cpu(a);
}

/* Without -o the working profile goes to a private directory, removed. */
static char *scratch_output(char *dir, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char *path;

	snprintf(dir, size, "%s/dcprof-top.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return NULL;
	if (asprintf(&path, "%s/top.data", dir) < 0)
		return NULL;
	return path;
}

static int run_stdio(struct top *t, struct top_args *a)
{
	uint64_t delay_ns = (uint64_t)(a->delay * 1e9);
	uint64_t next = top_now_ns() + delay_ns;
	long done = 0;

	while (!stop_requested) {
		uint64_t now = top_now_ns();
		int wait_ms = now >= next ? 0 : (int)((next - now) / 1000000);
		uint64_t t0, t1, c0, c1;
		bool ended;
		int ret;

		if (wait_ms > 100)
			wait_ms = 100;
		ret = dcp_recorder_poll(t->rec, wait_ms);
		if (ret && ret != -EINTR)
			return cmd_error("%s", dcp_last_error());
		/* the command's end cuts the interval short: a last table */
		ended = top_command_ended(t);
		if (!ended && top_now_ns() < next)
			continue;
		t0 = top_now_ns();
		c0 = cpu_ns();
		ret = top_update(t, true, delay_ns);
		if (ret == TOP_NOTHING_YET) {
			next = top_now_ns() + delay_ns / 4;
			continue;
		}
		if (ret)
			return cmd_error("%s", dcp_last_error());
		next += delay_ns;
		t1 = top_now_ns();
		c1 = cpu_ns();
		t->build_ns = t1 - t0;
		t->build_cpu_ns = c1 - c0;
		if (a->json)
			print_json(t);
		else
			print_text(t);
		if (fflush(stdout) == EOF)
			return cmd_error("cannot write the output: %s",
					 strerror(errno));
		t->draw_ns = top_now_ns() - t1;
		t->draw_cpu_ns = cpu_ns() - c1;
		if (ended || (a->iterations && ++done >= a->iterations))
			break;
		/* a table that took longer than the delay: the next interval
		 * is a whole one, not a poll squeezed between two tables (at
		 * high rates that left the source seconds behind) */
		if (next <= top_now_ns())
			next = top_now_ns() + delay_ns;
	}
	return 0;
}

static void top_free(struct top *t)
{
	string_table_free(&t->keystr);
	free(t->entries);
	free(t->sorted);
	free(t->prev);
	free(t->base);
	free(t->prev_off);
	free(t->base_off);
	free(t->row_entry);
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = { .opts = { .sz = sizeof(a.opts) }, .delay = 1.0 };
	struct top t = { .keys = { TK_COMM, TK_FILE, TK_SYMBOL },
			 .nr_keys = 3 };
	struct workload w = WORKLOAD_INIT;
	char dir[PATH_MAX] = "", *scratch = NULL;
	char *cmdline = cmd_join_cmdline(argc, argv);
	struct sigaction sa;
	int ret, status = 0, wstatus;

	ret = parse_args(argc, argv, &a);
	if (!ret)
		ret = record_opts_from_env(&a.opts);
	if (ret)
		goto out;
	if (a.sort && (ret = parse_sort(&t, a.sort)))
		goto out;
	if (!a.stdio && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))) {
		ret = cmd_error("the full-screen view needs a terminal "
				"(standard input and output): use --stdio "
				"for text");
		goto out;
	}
	if (a.command && (ret = workload_check(a.command[0])))
		goto out;
	cmd_setup_log(0);
	t.comms = a.comms;
	t.nr_comms = a.nr_comms;
	t.pids = a.pids;
	t.nr_pids = a.nr_pids;
	t.limit = a.stdio ? (a.limit ? a.limit : 20) : a.limit;
	t.ordered = t.limit;
	t.off_cpu = a.opts.off_cpu;
	t.value = a.value;
	t.row_entry_value = a.value;
	a.opts.pids = a.targets;
	a.opts.nr_pids = a.nr_targets;
	t.targets = a.targets;
	t.nr_targets = a.nr_targets;
	a.opts.only = a.only;
	a.opts.nr_only = a.nr_only;
	a.opts.cmdline = cmdline ? cmdline : "dcprof top";
	if (!a.backend_given)
		a.opts.backend = record_default_backend(&a.opts, false);
	if (a.output) {
		a.opts.output = a.output;
	} else {
		scratch = scratch_output(dir, sizeof(dir));
		if (!scratch) {
			ret = cmd_error("cannot make a scratch directory: %s",
					strerror(errno));
			goto out;
		}
		a.opts.output = scratch;
		/* nothing to keep: the file is written once, at the start */
		a.opts.flush_interval_ms = UINT32_MAX;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (a.command) {
		/* the full-screen view owns the terminal: the command gets
		 * none of it */
		ret = workload_prepare(a.command, !a.stdio, &w);
		if (ret)
			goto out;
		/* -a -- CMD: the whole system, for as long as CMD runs */
		if (!a.all_cpus) {
			a.opts.pids = &w.pid;
			a.opts.nr_pids = 1;
		}
		t.command_pid = w.pid;
		t.command_name = a.command[0];
	}
	t.rec = dcp_recorder_new(&a.opts);
	if (!t.rec) {
		ret = cmd_error("%s", dcp_last_error());
		goto out;
	}
	if (a.command) {
		ret = workload_start(&w, a.command[0]);
		if (ret) {
			waitpid(w.pid, &wstatus, 0);
			w.pid = -1;
			goto out;
		}
	}
	t.naming.sz = sizeof(t.naming);
	t.last_ns = t.last_delivered_ns = top_now_ns();
	if (a.stdio)
		status = run_stdio(&t, &a);
	else
		status = top_tui(&t, a.delay, &stop_requested);
	/* stopped first (q, Ctrl-C, --iterations): the command goes too,
	 * as with record stopped by a signal */
	if (w.pid > 0 && !top_command_ended(&t))
		workload_stop(&w, 2000, &wstatus);
	w.pid = -1;
	if (a.output) {
		if (dcp_recorder_finish(t.rec, NULL) && !status)
			status = cmd_error("%s", dcp_last_error());
	}
	ret = status;
out:
	workload_cancel(&w); /* the recorder never started */
	dcp_recorder_free(t.rec);
	if (scratch) {
		char old[PATH_MAX];

		unlink(scratch);
		snprintf(old, sizeof(old), "%s.old", scratch);
		unlink(old);
		rmdir(dir);
	}
	free(scratch);
	free(cmdline);
	top_free(&t);
	free(a.targets);
	free(a.only);
	free(a.comms);
	free(a.pids);
	if (ret < 0)
		return 0; /* --help */
	return a.stdio && !ret ? cmd_finish_stdout(0) : ret;
}
