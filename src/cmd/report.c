// SPDX-License-Identifier: MIT
/*
 * dcprof report: its options, the filters they set (--comm, --pid, --file,
 * --symbol), and the run that feeds the selected rows to the flat views
 * (report_flat.c) or the call trees (report_tree.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "read_opts.h"
#include "report.h"

const char *const report_key_names[NR_KEYS] = {
	"comm", "pid",	  "file", "symbol",    "process",
	"tid",	"cgroup", "unit", "container", "pod",
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
			if (!strcmp(tok, report_key_names[k]))
				break;
		/* perf's names */
		if (!strcmp(tok, "dso"))
			k = KEY_FILE;
		else if (!strcmp(tok, "sym"))
			k = KEY_SYMBOL;
		else if (!strcmp(tok, "thread"))
			k = KEY_COMM;
		if (k == NR_KEYS) {
			ret = cmd_usage_error(
				"report",
				"unknown sort key '%s' (comm or thread, pid, "
				"tid, process, file or dso, symbol or sym, "
				"cgroup, unit, container, pod)",
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

/* ---- filters ------------------------------------------------------------ */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/*
 * --comm, --pid and --tid select threads; --file and --symbol select the
 * stacks with a frame in one of the files or functions, in every view and
 * for every value (the flat view's rows are then the leaves of the stacks
 * that pass there, as in --children and the trees).
 */
static bool frame_selected(const struct report_args *a,
			   const struct profile_view *v,
			   const struct dcp_frame *f, bool files)
{
	if (files) {
		const char *name = profile_view_file_name(v, f->cookie);

		return str_list_has(&a->files, name) ||
		       str_list_has(&a->files, base_name(name));
	} else {
		struct dcp_symbol sym = { .sz = sizeof(sym) };

		return str_list_has(&a->symbols, profile_view_symbol(v, f)) ||
		       (!dcp_profile_symbol(v->profile, f->cookie, f->offset,
					    &sym) &&
			sym.name && str_list_has(&a->symbols, sym.name));
	}
}

static bool stack_selected(const struct report_args *a,
			   const struct profile_view *v,
			   const struct dcp_sample_row *row, bool files)
{
	for (uint32_t i = 0; i < row->nr_frames; i++)
		if (frame_selected(a, v, &row->frames[i], files))
			return true;
	return false;
}

static bool id_listed(const struct str_list *l, uint32_t id)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", id);
	return str_list_has(l, s);
}

/* A cgroup path in one of the list's, or below one ("/" or "" is the
 * root: every recorded cgroup). */
static bool cgroup_selected(const struct str_list *l, const char *path)
{
	if (path && path[0] == '/')
		path++;
	for (size_t i = 0; path && i < l->n; i++) {
		const char *want = l->v[i];
		size_t n;

		while (*want == '/')
			want++;
		n = strlen(want);
		while (n && want[n - 1] == '/')
			n--;
		if (!n ||
		    (!strncmp(path, want, n) && (path[n] == '/' || !path[n])))
			return true;
	}
	return false;
}

/* The filter that leaves row out (enum report_filter), or -1: none. */
static int row_rejected_by(const struct report_args *a,
			   const struct profile_view *v,
			   const struct dcp_sample_row *row)
{
	/* the thread's name, as perf, or the process's */
	if (a->comms.n &&
	    !str_list_has(&a->comms,
			  row->thread_comm ? row->thread_comm : "") &&
	    !str_list_has(&a->comms, row->comm ? row->comm : ""))
		return FILTER_COMM;
	if (a->pids.n && !id_listed(&a->pids, row->pid))
		return FILTER_PID;
	if (a->tids.n && !id_listed(&a->tids, row->tid))
		return FILTER_TID;
	if (a->files.n && !stack_selected(a, v, row, true))
		return FILTER_FILE;
	if (a->symbols.n && !stack_selected(a, v, row, false))
		return FILTER_SYMBOL;
	if (a->cgroups.n && !cgroup_selected(&a->cgroups, row->cgroup))
		return FILTER_CGROUP;
	return -1;
}

/*
 * --pid given a thread's id means its process, as record -p takes it: the
 * id becomes the process's, said in one line.
 */
static int pids_of_threads(struct report_args *a, const struct profile_view *v)
{
	for (size_t i = 0; i < a->pids.n; i++) {
		uint32_t id = (uint32_t)strtoul(a->pids.v[i], NULL, 10);
		uint32_t process = 0;
		bool is_pid = false;

		for (size_t r = 0; r < dcp_profile_nr_rows(v->profile); r++) {
			struct dcp_sample_row row = { .sz = sizeof(row) };

			if (dcp_profile_row(v->profile, r, &row))
				continue;
			is_pid |= row.pid == id;
			if (row.tid == id && row.pid != id)
				process = row.pid;
		}
		if (is_pid || !process)
			continue;
		fprintf(stderr,
			"dcprof: %u is a thread of process %u: reporting the whole process (--tid %u: the thread alone)\n",
			id, process, id);
		free(a->pids.v[i]);
		if (asprintf(&a->pids.v[i], "%u", process) < 0) {
			a->pids.v[i] = NULL;
			a->pids.n = i;
			return cmd_error("out of memory");
		}
	}
	return 0;
}

/* --pid, --tid: ids, numbers that fit a pid; one line when not. */
static int check_pids(const struct str_list *l, const char *opt)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *s = l->v[i];
		size_t len = strspn(s, "0123456789");

		if (!len || s[len] || len > 10 ||
		    strtoull(s, NULL, 10) > UINT32_MAX) {
			cmd_error("invalid %s '%s' (%s takes %s ids)", opt + 2,
				  s, opt,
				  strcmp(opt, "--tid") ? "process" : "thread");
			return 2;
		}
	}
	return 0;
}

static int parse_number(const char *opt, const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	/* nan passed every comparison below as false, inf emptied the table */
	if (errno || *end || end == arg || !(*out >= 0) || !isfinite(*out))
		return cmd_usage_error("report", "invalid %s '%s'", opt, arg);
	return 0;
}

enum {
	OPT_CHILDREN = 256,
	OPT_TREE,
	OPT_PERCENT_LIMIT,
	OPT_MAX_STACK,
	OPT_COMM,
	OPT_PID,
	OPT_TID,
	OPT_CGROUP,
	OPT_FILE,
	OPT_SYMBOL,
	OPT_NO_DEMANGLE,
	OPT_NO_INLINE,
	OPT_RESYMBOLIZE,
	OPT_DEBUGINFO_DIR,
	OPT_WRITE,
	OPT_STDIO,
	OPT_NO_CHILDREN,
	OPT_NO_PROCESS,
	OPT_FULL_PATH,
	OPT_VALUE,
	OPT_THREADS,
};

static int report_run(struct report_args *a, bool no_demangle)
{
	struct dcp_resymbolize_stats rst = { .sz = sizeof(rst) };
	struct report_flat *flat = NULL;
	struct report_tree *tree = NULL;
	struct report_threads *threads = NULL;
	struct profile_view v;
	uint64_t total = 0, unfiltered = 0, removed[FILTER_NR] = { 0 };
	int ret, rejected;

	cmd_setup_log(0);
	/* Without a pid to show or select, nor names to find again, the
	 * file's summary has everything the views print. */
	ret = cmd_open_input(&v, a->ro,
			     !a->pids.n && !a->tids.n &&
				     !report_has_key(a, KEY_PID) &&
				     !report_has_key(a, KEY_TID) &&
				     !a->threads && !a->resymbolize);
	if (ret)
		return ret;
	v.raw_names = no_demangle;
	/* before --resymbolize --write rewrites the file */
	ret = cmd_check_value(&v, a->value);
	if (ret)
		goto out;
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
	ret = pids_of_threads(a, &v);
	if (ret)
		goto out;
	if (a->threads)
		threads = report_threads_new(a);
	else if (a->tree)
		tree = report_tree_new(a);
	else
		flat = report_flat_new(a);
	if (!tree && !flat && !threads) {
		ret = cmd_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < dcp_profile_nr_rows(v.profile); i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		uint64_t samples;

		if (dcp_profile_row(v.profile, i, &row) || !row.nr_frames)
			continue;
		samples = row.count;
		/* --value: what each view adds up; rows of other values
		 * (off-CPU time alone, no samples) are not shown */
		row.count = profile_view_row_value(&v, &row, a->value);
		unfiltered += row.count;
		rejected = row_rejected_by(a, &v, &row);
		if (rejected >= 0) {
			removed[rejected] += row.count;
			continue;
		}
		for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
			a->off_cpu_state_ns[s] += row.off_cpu_ns[s];
		total += row.count;
		if (threads) {
			/* every row: its samples and its off-CPU time */
			row.count = samples;
			if (report_threads_add_row(threads, &row)) {
				ret = cmd_error("out of memory");
				goto out;
			}
			continue;
		}
		if (!row.count)
			continue;
		if (tree)
			ret = report_tree_add_row(tree, &v, &row);
		else
			ret = report_flat_add_row(flat, &v, &row, i);
		if (ret) {
			ret = cmd_error("out of memory");
			goto out;
		}
	}

	if (report_filtered(a) && !total)
		report_warn_empty(a, unfiltered, removed);
	report_print_header(&v, a, total, unfiltered);
	if (a->resymbolize)
		report_print_resymbolize(a, &rst);
	if (threads)
		report_threads_print(threads, &v);
	else if (tree)
		report_tree_print(tree, &v);
	else
		report_flat_print(flat, &v, total);
	ret = cmd_finish_stdout(0);
out:
	report_flat_free(flat);
	report_tree_free(tree);
	report_threads_free(threads);
	profile_view_close(&v);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		READ_OPTS_LONGOPTS,
		{ "since", required_argument, NULL, READ_OPT_SINCE },
		{ "until", required_argument, NULL, READ_OPT_UNTIL },
		{ "sort", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "tree", required_argument, NULL, OPT_TREE },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "symbol", required_argument, NULL, OPT_SYMBOL },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "resymbolize", no_argument, NULL, OPT_RESYMBOLIZE },
		{ "debuginfo-dir", required_argument, NULL, OPT_DEBUGINFO_DIR },
		{ "write", no_argument, NULL, OPT_WRITE },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "show-nr-samples", no_argument, NULL, 'n' },
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "no-process", no_argument, NULL, OPT_NO_PROCESS },
		{ "full-path", no_argument, NULL, OPT_FULL_PATH },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct read_opts ro = READ_OPTS_INIT("report", read_formats_text_json);
	struct report_args a = {
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
	       (c = getopt_long(argc, argv, "i:s:ngh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case 'f':
		case READ_OPT_SINCE:
		case READ_OPT_UNTIL:
			ret = read_opts_parse(&ro, c, optarg);
			break;
		case 's':
			ret = parse_sort(&a, optarg);
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
		case OPT_NO_CHILDREN:
			/* as perf: the last one given wins */
			a.children = c == OPT_CHILDREN;
			break;
		case OPT_STDIO:
			/* perf's text output, which is the only one */
			break;
		case 'n':
			a.show_counts = true;
			break;
		case OPT_THREADS:
			a.threads = true;
			break;
		case OPT_VALUE:
			if (view_value_parse(optarg, &a.value))
				ret = cmd_usage_error(
					"report",
					"unknown value '%s' (cpu, off-cpu, wall)",
					optarg);
			break;
		case 'g':
			/* perf report -g: the call graph, callers first */
			a.tree = TREE_CALLER;
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
		case OPT_TID:
			ret = list_add(&a.tids, optarg);
			break;
		case OPT_CGROUP:
			ret = list_add(&a.cgroups, optarg);
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
		case OPT_NO_PROCESS:
			a.no_process = true;
			break;
		case OPT_FULL_PATH:
			a.full_path = true;
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
	a.input = read_opts_input(&ro);
	a.ro = &ro;
	/* JSON once asked for: a later "--format text" does not undo it */
	a.json = ro.formats_given & (1u << READ_FORMAT_JSON);
	if (optind < argc)
		ret = cmd_usage_error("report", "unexpected argument '%s'",
				      argv[optind]);
	else if (a.children && a.tree)
		ret = cmd_usage_error(
			"report", "--children and --tree are different views: "
				  "choose one");
	else if (a.threads && (a.children || a.tree))
		ret = cmd_usage_error("report",
				      "--threads is a view of its own: not "
				      "with --children or --tree");
	else if ((a.debuginfo_dirs.n || a.write) && !a.resymbolize)
		ret = cmd_usage_error("report",
				      "--debuginfo-dir and --write go with "
				      "--resymbolize");
	else if (!(ret = check_pids(&a.pids, "--pid")) &&
		 !(ret = check_pids(&a.tids, "--tid")))
		ret = report_run(&a, no_demangle);
out:
	list_free(&a.comms);
	list_free(&a.pids);
	list_free(&a.tids);
	list_free(&a.cgroups);
	list_free(&a.files);
	list_free(&a.symbols);
	list_free(&a.debuginfo_dirs);
	return ret;
}
