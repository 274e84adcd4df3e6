// SPDX-License-Identifier: MIT
/* dcprof record: the whole system, some process trees, or a command. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "continuous.h"
#include "read_opts.h"
#include "record_opts.h"
#include "workload.h"

static volatile sig_atomic_t stop_requested, cut_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_child_signal(int sig)
{
	(void)sig;
}

/* --continuous: SIGHUP ends the current period, recording goes on */
static void on_cut_signal(int sig)
{
	(void)sig;
	cut_requested = 1;
}

struct record_args {
	struct dcp_recorder_opts opts;
	bool all_cpus;
	pid_t *pids;
	size_t nr_pids;
	const char **only;
	size_t nr_only;
	const char **cgroups; /* -G */
	size_t nr_cgroups;
	double duration; /* seconds, 0: none */
	bool kill_at_end; /* the command goes when recording stops */
	bool freq_given;
	int *cpus; /* -C */
	size_t nr_cpus;
	int verbose;
	int ready_fd; /* --ready-fd: told "recording" once recording, or -1 */
	bool off_cpu_min_given;
	bool backend_given;
	char **command;
	struct continuous_args cont; /* --continuous: cont.dir set */
	bool period_given, keep_given;
};

static int parse_seconds(const char *name, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || !isfinite(v) || v > 1e7)
		return cmd_usage_error(
			"record",
			"invalid %s '%s': expected a positive number of seconds",
			name, arg);
	*out = v;
	return 0;
}

static int parse_uint(const char *name, const char *arg, unsigned long max,
		      unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v == 0 || v > max || arg[0] == '-')
		return cmd_usage_error("record", "invalid %s '%s'", name, arg);
	*out = v;
	return 0;
}

static int parse_pids(struct record_args *a, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return cmd_error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long id;
		pid_t pid = 0, *grown;
		bool seen = false;

		ret = parse_uint("pid", tok, INT_MAX, &id);
		if (ret)
			break;
		ret = record_resolve_target(id, &pid);
		if (ret)
			break;
		for (size_t i = 0; i < a->nr_pids; i++)
			seen |= a->pids[i] == pid;
		if (seen)
			continue; /* two threads of one process */
		grown = realloc(a->pids, (a->nr_pids + 1) * sizeof(*grown));
		if (!grown) {
			ret = cmd_error("out of memory");
			break;
		}
		a->pids = grown;
		a->pids[a->nr_pids++] = pid;
	}
	free(copy);
	if (!ret && !a->nr_pids)
		ret = cmd_usage_error("record", "-p needs at least one pid");
	return ret;
}

/* "fp", "dwarf" or "dwarf,STACK_BYTES", as perf spells them */
static int parse_call_graph(struct record_args *a, const char *arg)
{
	unsigned long v;
	int ret;

	if (!strcmp(arg, "fp")) {
		a->opts.call_graph = DCP_CALL_GRAPH_FP;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return cmd_usage_error(
			"record",
			"invalid call graph mode '%s': expected fp or dwarf[,STACK_BYTES]",
			arg);
	a->opts.call_graph = DCP_CALL_GRAPH_DWARF;
	if (arg[5] == ',') {
		ret = parse_uint("user stack size", arg + 6, 65528, &v);
		if (ret)
			return ret;
		a->opts.stack_user_bytes = (uint32_t)v;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option longopts[] = {
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "no-inherit", no_argument, NULL, 'i' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "uid", required_argument, NULL, 'u' },
		{ "event", required_argument, NULL, 'e' },
		{ "call-graph", required_argument, NULL,
		  RECORD_OPT_CALL_GRAPH },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "no-cgroups", no_argument, NULL, RECORD_OPT_NO_CGROUPS },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "kill-at-end", no_argument, NULL, 'K' },
		{ "only", required_argument, NULL, 'O' },
		{ "flush-interval", required_argument, NULL, 'f' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'B' },
		{ "off-cpu", no_argument, NULL, 'W' },
		{ "off-cpu-min", required_argument, NULL, 'M' },
		{ "unwind-memory", required_argument, NULL, 'X' },
		{ "memory-limit", required_argument, NULL,
		  RECORD_OPT_MEMORY_LIMIT },
		{ "max-open-files", required_argument, NULL,
		  RECORD_OPT_MAX_OPEN_FILES },
		{ "ready-fd", required_argument, NULL, 'R' },
		{ "continuous", required_argument, NULL, 'N' },
		{ "period", required_argument, NULL, 'P' },
		{ "keep", required_argument, NULL, 'k' },
		{ "keep-size", required_argument, NULL, 'z' },
		{ "push", required_argument, NULL, 'U' },
		{ "push-app", required_argument, NULL, 'A' },
		{ "push-label", required_argument, NULL, 'L' },
		{ "push-token-file", required_argument, NULL, 'T' },
		{ "push-basic-auth-file", required_argument, NULL, 'Q' },
		{ "push-spool-size", required_argument, NULL, 'S' },
		{ "push-ca-file", required_argument, NULL, 'Y' },
		{ "push-tenant", required_argument, NULL,
		  CONTINUOUS_OPT_TENANT },
		{ "push-sample-labels", required_argument, NULL,
		  CONTINUOUS_OPT_SAMPLE_LABELS },
		{ "push-max-samples", required_argument, NULL,
		  CONTINUOUS_OPT_MAX_SAMPLES },
		{ "push-max-bytes", required_argument, NULL,
		  CONTINUOUS_OPT_MAX_BYTES },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned long v;
	double secs;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+ap:t:iF:c:C:u:e:gG:o:vh",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			a->all_cpus = true;
			break;
		case 'i':
			a->opts.no_inherit = true;
			break;
		case 'p':
		case 't': /* perf's: a thread's process, as -p of it */
			ret = parse_pids(a, optarg);
			if (ret)
				return ret;
			break;
		case 'F':
			ret = parse_uint("frequency", optarg, INT_MAX, &v);
			if (ret)
				return ret;
			a->opts.sample_freq = (uint32_t)v;
			a->freq_given = true;
			break;
		case 'c':
			ret = parse_uint("period", optarg, ULONG_MAX, &v);
			if (ret)
				return ret;
			a->opts.sample_period = v;
			break;
		case 'C':
			ret = record_parse_cpus(optarg, &a->cpus, &a->nr_cpus);
			if (ret)
				return ret;
			break;
		case 'u':
			ret = record_parse_user(optarg, &a->opts.uid);
			if (ret)
				return ret;
			a->opts.filter_uid = true;
			break;
		case 'e':
			a->opts.event = optarg;
			break;
		case 'g':
			a->opts.call_graph = DCP_CALL_GRAPH_DEFAULT;
			break;
		case 'X':
			ret = continuous_parse_size("--unwind-memory", optarg,
						    &a->opts.unwind_memory);
			if (ret)
				return ret;
			break;
		case RECORD_OPT_MEMORY_LIMIT:
		case RECORD_OPT_MAX_OPEN_FILES:
			ret = record_parse_bound(c, optarg, &a->opts);
			if (ret)
				return ret;
			break;
		case RECORD_OPT_CALL_GRAPH:
			ret = parse_call_graph(a, optarg);
			if (ret)
				return ret;
			break;
		case 'G':
			ret = record_parse_cgroups(optarg, &a->cgroups,
						   &a->nr_cgroups);
			if (ret)
				return ret;
			break;
		case RECORD_OPT_NO_CGROUPS:
			a->opts.no_cgroups = true;
			break;
		case 'o':
			a->opts.output = optarg;
			break;
		case 'd':
			ret = parse_seconds("duration", optarg, &a->duration);
			if (ret)
				return ret;
			break;
		case 'K':
			a->kill_at_end = true;
			break;
		case 'O': {
			const char **grown;

			ret = record_check_only(optarg);
			if (ret)
				return ret;
			grown = realloc(a->only,
					(a->nr_only + 1) * sizeof(*grown));
			if (!grown)
				return cmd_error("out of memory");
			a->only = grown;
			a->only[a->nr_only++] = optarg;
			break;
		}
		case 'f':
			ret = parse_seconds("flush interval", optarg, &secs);
			if (ret)
				return ret;
			a->opts.flush_interval_ms =
				secs * 1000 < 1 ? 1 : (uint32_t)(secs * 1000);
			break;
		case 'm':
			ret = parse_uint("mmap pages", optarg, 1u << 20, &v);
			if (ret)
				return ret;
			a->opts.mmap_pages = (uint32_t)v;
			break;
		case 'B':
			ret = record_parse_backend("record", optarg,
						   &a->opts.backend);
			if (ret)
				return ret;
			a->backend_given = true;
			break;
		case 'W':
			a->opts.off_cpu = true;
			break;
		case 'M':
			ret = record_parse_off_cpu_min("record", optarg,
						       &a->opts.off_cpu_min_ns);
			if (ret)
				return ret;
			a->off_cpu_min_given = true;
			break;
		case 'R': /* not inherited by the command: it tells of us */
			ret = parse_uint("ready fd", optarg, INT_MAX, &v);
			if (ret)
				return ret;
			if (fcntl((int)v, F_SETFD, FD_CLOEXEC) < 0)
				return cmd_usage_error(
					"record",
					"--ready-fd %lu is not an open file descriptor",
					v);
			a->ready_fd = (int)v;
			break;
		case 'N':
			a->cont.dir = optarg;
			break;
		case 'P':
			ret = parse_seconds("period", optarg, &a->cont.period);
			if (ret)
				return ret;
			a->period_given = true;
			break;
		case 'k':
			ret = continuous_parse_age(optarg, &a->cont.keep_age);
			if (ret)
				return ret;
			a->keep_given = true;
			break;
		case 'z':
			ret = continuous_parse_size("--keep-size", optarg,
						    &a->cont.keep_size);
			if (ret)
				return ret;
			a->keep_given = true;
			break;
		case 'U':
		case 'A':
		case 'L':
		case 'T':
		case 'Q':
		case 'Y':
		case 'S':
		case CONTINUOUS_OPT_TENANT:
		case CONTINUOUS_OPT_SAMPLE_LABELS:
		case CONTINUOUS_OPT_MAX_SAMPLES:
		case CONTINUOUS_OPT_MAX_BYTES:
			ret = continuous_parse_push(&a->cont, c, optarg);
			if (ret)
				return ret;
			break;
		case 'v':
			a->verbose++;
			break;
		case 'h':
			cmd_usage(cmd_find("record"), stdout);
			exit(cmd_finish_stdout(0));
		case '?':
		default:
			if (optopt)
				return cmd_usage_error(
					"record",
					"unknown or incomplete option '-%c'",
					optopt);
			return cmd_usage_error("record", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		a->command = &argv[optind];
	if (a->all_cpus && a->nr_pids)
		return cmd_usage_error("record",
				       "-a and -p exclude each other");
	if (a->command && a->nr_pids)
		return cmd_usage_error("record",
				       "-p and a command exclude each other");
	if (a->freq_given && a->opts.sample_period)
		return cmd_usage_error("record",
				       "-F and -c exclude each other");
	if (a->opts.filter_uid && (a->nr_pids || a->command))
		return cmd_usage_error("record",
				       "-u excludes -p and a command");
	if (a->kill_at_end && !a->command)
		return cmd_usage_error("record",
				       "--kill-at-end needs a command");
	if (a->opts.no_inherit && (a->all_cpus || (!a->nr_pids && !a->command)))
		return cmd_usage_error(
			"record", "-i (--no-inherit) needs -p or a command");
	if ((a->period_given || a->keep_given || a->cont.push.url) &&
	    !a->cont.dir)
		return cmd_usage_error(
			"record",
			"--period, --keep, --keep-size and --push need --continuous");
	if (!a->cont.push.url &&
	    (a->cont.push.app || a->cont.push.nr_labels ||
	     a->cont.push.token_file || a->cont.push.basic_auth_file ||
	     a->cont.push.ca_file || a->cont.push.spool_max ||
	     a->cont.push.tenant || a->cont.push.sample_labels ||
	     a->cont.push.max_samples || a->cont.push.max_bytes))
		return cmd_usage_error("record",
				       "the --push-* options need --push");
	if (a->cont.dir && (a->command || a->opts.output))
		return cmd_usage_error(
			"record",
			"--continuous records the system or -p processes into its directory: no -o, no command");
	if (!a->backend_given)
		a->opts.backend = record_default_backend(&a->opts, a->nr_cpus);
	if (a->opts.backend == DCP_BACKEND_BPF &&
	    (a->nr_cpus || a->opts.sample_period || a->opts.filter_uid))
		return cmd_usage_error(
			"record",
			"--backend bpf records neither -C, -c nor -u: use --backend perf");
	ret = record_check_off_cpu(&a->opts, a->off_cpu_min_given, a->nr_only,
				   a->nr_cpus);
	if (ret)
		return ret;
	if (a->freq_given)
		return record_check_frequency(a->opts.sample_freq);
	return 0;
}

/*
 * Whether a -p target still runs (a zombie does not). Children they forked
 * are not waited for: the recording follows them only while a target lives.
 */
static bool any_alive(const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!record_process_gone(pids[i]))
			return true;
	return false;
}

static double elapsed_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/*
 * Why a recording of some processes kept nothing, in one line: an empty
 * report alone reads as a broken recorder.
 */
static void print_empty_hint(const struct record_args *a,
			     const struct dcp_profile_stats *s)
{
	char who[64];

	if (s->samples_kept || s->off_cpu_blocks || a->all_cpus ||
	    (!a->nr_pids && !a->command))
		return;
	if (a->command)
		snprintf(who, sizeof(who), "the command");
	else if (a->nr_pids == 1)
		snprintf(who, sizeof(who), "process %d", (int)a->pids[0]);
	else
		snprintf(who, sizeof(who), "the %zu processes", a->nr_pids);
	if (s->samples_filtered) {
		fprintf(stderr,
			"dcprof: nothing kept: --only left out all %llu samples of %s and its descendants\n",
			(unsigned long long)s->samples_filtered, who);
		return;
	}
	fprintf(stderr,
		"dcprof: no samples of %s%s: %s on %s while recording (%llu samples were of other tasks)\n",
		who, a->opts.no_inherit ? "" : " or its descendants",
		a->opts.no_inherit ?
			"it did not run (-i: its children are left out)" :
			"none of them ran",
		a->nr_cpus ? "the CPUs of -C" : "a CPU",
		(unsigned long long)s->samples_other_tasks);
}

static void print_summary(const struct dcp_profile_stats *s, const char *path)
{
	struct stat st;
	char other_idle[48] = "";

	/* the idle task is another task of a -p or command recording */
	if (s->samples_other_idle)
		snprintf(other_idle, sizeof(other_idle), " (%llu idle)",
			 (unsigned long long)s->samples_other_idle);
	fprintf(stderr,
		"dcprof: %llu samples: %llu kept (%llu idle), %llu filtered, %llu of other tasks%s, %llu unattributed\n",
		(unsigned long long)s->samples,
		(unsigned long long)s->samples_kept,
		(unsigned long long)s->samples_idle,
		(unsigned long long)s->samples_filtered,
		(unsigned long long)s->samples_other_tasks, other_idle,
		(unsigned long long)s->samples_unattributed);
	fprintf(stderr,
		"dcprof: lost %llu records and %llu samples, %llu throttle events; %llu tasks injected (%llu vanished)\n",
		(unsigned long long)s->lost_records,
		(unsigned long long)s->lost_samples,
		(unsigned long long)s->throttle_events,
		(unsigned long long)s->tasks_injected,
		(unsigned long long)s->tasks_vanished);
	if (s->fp_broken_stacks * 10 > s->fp_user_stacks) {
		/* the files are named by the profile just written */
		struct dcp_profile *p = dcp_profile_open(path);
		char hint[512];

		if (cmd_fp_hint(s, p ? dcp_profile_cookies(p) : NULL, hint,
				sizeof(hint)))
			fprintf(stderr, "dcprof: %s\n", hint);
		dcp_profile_close(p);
	}
	if (stat(path, &st) == 0)
		fprintf(stderr, "dcprof: wrote '%s' (%lld bytes)\n", path,
			(long long)st.st_size);
}

/*
 * A recording that failed (a full disk, mostly) says so once, with what
 * becomes of the command it started: the command is not the recording's
 * to end, so it runs to its end (dcprof waits, or, with --duration, leaves
 * it running), unless --kill-at-end.
 */
static int say_poll_error(const struct record_args *a, const struct workload *w,
			  bool child_done)
{
	const char *why = dcp_last_error();

	if (w->pid <= 0 || child_done || a->kill_at_end)
		return cmd_error("%s; recording stopped", why);
	if (a->duration)
		return cmd_error(
			"%s; recording stopped, '%s' (pid %d) keeps running",
			why, a->command[0], (int)w->pid);
	return cmd_error(
		"%s; recording stopped, waiting for '%s' (pid %d) to exit", why,
		a->command[0], (int)w->pid);
}

/* The recording could not be finished: what the file holds instead. */
static int say_finish_error(const struct record_args *a)
{
	const char *path =
		a->opts.output ? a->opts.output : CMD_DEFAULT_PROFILE;
	char why[512];
	struct dcp_profile *p;
	const struct dcp_profile_meta *m;
	int ret;

	snprintf(why, sizeof(why), "%s", dcp_last_error());
	p = dcp_profile_open(path);
	m = p ? dcp_profile_get_meta(p) : NULL;
	if (m && m->disk_full)
		ret = cmd_error(
			"%s (the disk is full); '%s' keeps the first %.1f s of the recording",
			why, path, (double)m->duration_ns / 1e9);
	else
		ret = cmd_error("%s", why);
	dcp_profile_close(p);
	return ret;
}

/* The command's exit code, once it exits; a stop signal ends it first. */
static int wait_command(const struct record_args *a, const struct workload *w)
{
	bool stopping = false;
	int status = 0;

	while (waitpid(w->pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 1;
		if (stop_requested && !stopping) {
			fprintf(stderr, "dcprof: stopping '%s' (pid %d)\n",
				a->command[0], (int)w->pid);
			kill(w->pid, SIGTERM);
			stopping = true;
		}
	}
	return workload_exit_code(status);
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { .opts = { .sz = sizeof(a.opts) },
				 .ready_fd = -1 };
	struct workload w = WORKLOAD_INIT;
	struct dcp_profile_stats stats = { .sz = sizeof(stats) };
	struct dcp_recorder *r = NULL;
	struct sigaction sa;
	struct timespec start;
	char *cmdline = cmd_join_cmdline(argc, argv);
	int status = 0, ret, exit_code = 0;
	bool child_done = false, timed_out = false, write_failed = false;

	ret = parse_args(argc, argv, &a);
	if (!ret)
		ret = record_opts_from_env(&a.opts);
	if (ret)
		goto out;
	cmd_setup_log(a.verbose);
	a.opts.only = a.only;
	a.opts.nr_only = a.nr_only;
	a.opts.cgroups = a.cgroups;
	a.opts.nr_cgroups = a.nr_cgroups;
	a.opts.cmdline = cmdline;
	a.opts.cpus = a.cpus;
	a.opts.nr_cpus = a.nr_cpus;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (a.cont.dir) {
		sa.sa_handler = on_cut_signal;
		sigaction(SIGHUP, &sa, NULL);
		ret = continuous_check_dir(a.cont.dir);
		if (ret)
			goto out;
		if (!a.cont.period)
			a.cont.period = CONTINUOUS_DEFAULT_PERIOD;
		if (!a.freq_given && !a.opts.sample_period)
			a.opts.sample_freq = CONTINUOUS_DEFAULT_FREQ;
		a.cont.duration = a.duration;
		a.cont.pids = a.pids;
		a.cont.nr_pids = a.nr_pids;
		a.cont.targets_alive = any_alive;
		a.cont.ready_fd = a.ready_fd;
		a.ready_fd = -1;
		a.opts.pids = a.pids;
		a.opts.nr_pids = a.nr_pids;
		ret = continuous_run(&a.opts, &a.cont, &stop_requested,
				     &cut_requested);
		goto out;
	}
	sigaction(SIGHUP, &sa, NULL);
	/* a command's exit interrupts the poll (no SA_RESTART) */
	sa.sa_handler = on_child_signal;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_flags = 0;

	if (a.command) {
		ret = workload_check(a.command[0]);
		if (ret)
			goto out;
		ret = workload_prepare(a.command, false, &w);
		if (ret)
			goto out;
		/* -a -- CMD: the whole system, for as long as CMD runs */
		if (!a.all_cpus) {
			a.opts.pids = &w.pid;
			a.opts.nr_pids = 1;
		}
	} else {
		a.opts.pids = a.pids;
		a.opts.nr_pids = a.nr_pids;
	}

	r = dcp_recorder_new(&a.opts);
	if (!r) {
		ret = cmd_error("%s", dcp_last_error());
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (a.command) {
		ret = workload_start(&w, a.command[0]);
		if (ret) {
			waitpid(w.pid, &status, 0);
			child_done = true;
			dcp_recorder_finish(r, NULL);
			goto out;
		}
	}
	if (a.ready_fd >= 0) {
		/* the events are on and the walk is done (and a command runs) */
		if (write(a.ready_fd, "recording\n", 10) != 10)
			fprintf(stderr,
				"dcprof: cannot write to --ready-fd %d: %s\n",
				a.ready_fd, strerror(errno));
		close(a.ready_fd);
		a.ready_fd = -1;
	}

	while (!stop_requested) {
		/*
		 * -p: whether the targets live is asked every 100 ms; a
		 * command's end interrupts the wait (SIGCHLD). Every wake-up
		 * costs a few tens of microseconds on a VM: no more of them
		 * than the sources need (they drain at their own pace, the
		 * BPF source every 250 ms).
		 */
		double step = a.nr_pids ? 0.1 : 0.25;
		double left =
			a.duration ? a.duration - elapsed_since(&start) : step;
		int timeout = left <= 0	  ? 0 :
			      left > step ? (int)(step * 1000) :
					    (int)(left * 1000);

		if (a.duration && left <= 0) {
			timed_out = true;
			break;
		}
		ret = dcp_recorder_poll(r, timeout);
		if (ret) {
			ret = say_poll_error(&a, &w, child_done);
			write_failed = true;
			break;
		}
		if (w.pid > 0 && !child_done &&
		    waitpid(w.pid, &status, WNOHANG) == w.pid) {
			child_done = true;
			exit_code = workload_exit_code(status);
			break;
		}
		if (a.nr_pids && !any_alive(a.pids, a.nr_pids))
			break; /* -p: nothing left to record, as perf does */
	}

	if (dcp_recorder_finish(r, &stats)) {
		/* a failed poll already said why (a write error, mostly) */
		if (!ret)
			ret = say_finish_error(&a);
	} else {
		print_summary(&stats, a.opts.output ? a.opts.output :
						      CMD_DEFAULT_PROFILE);
		print_empty_hint(&a, &stats);
	}
	if (w.pid > 0 && !child_done && timed_out && !a.kill_at_end) {
		/* --duration: the command runs on, without the recorder */
		fprintf(stderr,
			"dcprof: recorded %g s; '%s' (pid %d) keeps running\n",
			a.duration, a.command[0], (int)w.pid);
	} else if (w.pid > 0 && !child_done && write_failed && !a.kill_at_end) {
		/* said by say_poll_error(): not the command's fault */
		if (!a.duration)
			exit_code = wait_command(&a, &w);
	} else if (w.pid > 0 && !child_done) {
		if (write_failed)
			fprintf(stderr, "dcprof: stopping '%s' (pid %d)\n",
				a.command[0], (int)w.pid);
		/* stopped by a signal, or --kill-at-end: the command goes
		 * with us and its status becomes ours */
		kill(w.pid, SIGTERM);
		waitpid(w.pid, &status, 0);
		exit_code = workload_exit_code(status);
	}
	if (!ret)
		ret = exit_code;
out:
	if (w.pid > 0 && !child_done && !r)
		workload_cancel(&w); /* the recorder never started */
	dcp_recorder_free(r);
	free(a.pids);
	free(a.cpus);
	free(a.only);
	free(a.cgroups);
	free(a.cont.labels);
	free(cmdline);
	return ret;
}
