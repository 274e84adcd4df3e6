// SPDX-License-Identifier: MIT
/*
 * The recorder's lifecycle: setting up the pipeline (options, cookies,
 * kernel layout, call graph, the record source and the profile file, then
 * the collection walk), polling the source and flushing the file as it
 * goes, and finishing: the source stopped, the closing symbolization and
 * the compact profile. See docs/ARCHITECTURE.md for the pipeline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "api_internal.h"
#include "collect_internal.h"
#include "log_internal.h"
#include "profile_internal.h"
#include "recorder_internal.h"
#include "resolve_internal.h"
#include "symtab_internal.h"
#include "bpf/source_bpf.h"

/* What the source counted, into the stats the file carries. */
static void take_source_counts(struct dcp_recorder *r)
{
	const struct dcp_source_counts *c = &r->source->counts;
	const struct dcp_source_counts *b = &r->counts_base;

	/* the source counts from the start, a period from its own */
	r->stats.lost_records = c->lost_records - b->lost_records;
	r->stats.lost_samples = c->lost_samples - b->lost_samples;
	r->stats.throttle_events = c->throttle_events - b->throttle_events;
	r->stats.context_switches = c->context_switches - b->context_switches;
	r->stats.reorder_late = c->reorder_late - b->reorder_late;
	r->stats.off_cpu_switches = c->off_cpu_switches - b->off_cpu_switches;
	r->stats.off_cpu_short = c->off_cpu_short - b->off_cpu_short;
	r->stats.off_cpu_unfinished =
		c->off_cpu_unfinished - b->off_cpu_unfinished;
	r->stats.off_cpu_missed_switch_ins =
		c->off_cpu_missed_switch_ins - b->off_cpu_missed_switch_ins;
	r->stats.off_cpu_under_way =
		c->off_cpu_under_way - b->off_cpu_under_way;
#define SOURCE_COUNT(f) (r->stats.f = c->f - b->f)
	SOURCE_COUNT(unwind_walks);
	SOURCE_COUNT(unwind_table_frames);
	SOURCE_COUNT(unwind_fp_frames);
	SOURCE_COUNT(unwind_no_table_frames);
	SOURCE_COUNT(unwind_no_mapping_frames);
	SOURCE_COUNT(unwind_end_root);
	SOURCE_COUNT(unwind_end_fp);
	SOURCE_COUNT(unwind_end_unsupported);
	SOURCE_COUNT(unwind_end_read);
	SOURCE_COUNT(unwind_end_depth);
	SOURCE_COUNT(unwind_tables_refused);
	SOURCE_COUNT(unwind_tables_failed);
	SOURCE_COUNT(unwind_tables_evicted);
	SOURCE_COUNT(unwind_named_frames);
	SOURCE_COUNT(python_frames);
	SOURCE_COUNT(python_no_thread);
	SOURCE_COUNT(python_cut);
	SOURCE_COUNT(python_unnamed);
#undef SOURCE_COUNT
	/* what the kernel holds now, not what a period added */
	r->stats.unwind_tables = c->unwind_tables;
	r->stats.unwind_table_bytes = c->unwind_table_bytes;
}

void dcp_recorder_start_clock(struct dcp_recorder *r)
{
	r->start_mono_ns = dcp_now_ns(CLOCK_MONOTONIC);
	r->end_mono_ns = 0;
	r->meta.start_realtime_ns = dcp_now_ns(CLOCK_REALTIME);
	r->next_flush_ns =
		r->start_mono_ns + (uint64_t)r->flush_interval_ms * 1000000ull;
}

void dcp_recorder_fill_meta(struct dcp_recorder *r)
{
	r->meta.version = 1;
	r->meta.complete = false;
	r->meta.duration_ns = (r->end_mono_ns ? r->end_mono_ns :
						dcp_now_ns(CLOCK_MONOTONIC)) -
			      r->start_mono_ns;
	r->meta.sample_freq = r->sample_period ? 0 : r->sample_freq;
	r->meta.sample_period = r->sample_period;
	r->meta.nr_cpus = r->source->nr_cpus;
	r->meta.kernel_excluded = r->source->kernel_excluded;
	r->meta.callchain = r->callchain;
	r->meta.event = r->event_name;
	r->meta.cmdline = r->cmdline;
	r->meta.hostname = r->hostname;
	r->meta.kernel_release = r->kernel_release;
	r->meta.backend = r->backend;
	r->meta.off_cpu = r->off_cpu;
	take_source_counts(r);
}

static int flush_file(struct dcp_recorder *r)
{
	int ret;

	if (r->write_error)
		return r->write_error;
	if (!r->writer)
		return 0;
	if (r->periods) {
		/* the cookies of the period's new stacks, before them */
		size_t nr = dcp_aggregate_nr_stacks(r->agg);

		for (size_t id = r->period_stacks_wanted; id < nr; id++) {
			uint32_t nf;
			const struct dcp_frame *f =
				dcp_aggregate_stack(r->agg, (uint32_t)id, &nf);

			for (uint32_t i = 0; i < nf; i++)
				if (dcp_cookie_table_want(r->cookies,
							  f[i].cookie) < 0)
					return dcp_error(ENOMEM,
							 "out of memory");
		}
		r->period_stacks_wanted = nr;
	}
	dcp_recorder_fill_meta(r);
	ret = dcp_profile_writer_flush(r->writer, &r->meta, r->cookies, r->agg,
				       &r->stats);
	if (ret)
		r->write_error = ret;
	return ret;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* pinned files and per-cpu events need descriptors */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int intern_specials(struct dcp_recorder *r)
{
	static const struct {
		enum dcp_cookie_kind kind;
		const char *name;
		size_t offset;
	} specials[] = {
		{ DCP_COOKIE_KIND_VDSO, "[vdso]",
		  offsetof(struct dcp_recorder, cookie_vdso) },
		{ DCP_COOKIE_KIND_VSYSCALL, "[vsyscall]",
		  offsetof(struct dcp_recorder, cookie_vsyscall) },
		{ DCP_COOKIE_KIND_ANON, "[anon:exec]",
		  offsetof(struct dcp_recorder, cookie_anon) },
		{ DCP_COOKIE_KIND_IDLE, "[idle]",
		  offsetof(struct dcp_recorder, cookie_idle) },
	};

	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
		int64_t c = dcp_cookie_table_intern_special(
			r->cookies, specials[i].kind, specials[i].name, NULL);

		if (c < 0)
			return (int)c;
		*(uint32_t *)((char *)r + specials[i].offset) = (uint32_t)c;
	}
	return 0;
}

static int setup_call_graph(struct dcp_recorder *r,
			    const struct dcp_recorder_opts *opts)
{
	struct dcp_unwind_opts uo;

	if (opts->sz >= offsetof(struct dcp_recorder_opts, call_graph) +
				sizeof(opts->call_graph))
		r->call_graph = opts->call_graph;
	/* off-CPU time is charged to the stack a thread blocked on: a
	 * leaf alone would be the scheduler's */
	if (r->off_cpu && r->call_graph == DCP_CALL_GRAPH_NONE)
		r->call_graph = DCP_CALL_GRAPH_FP;
	if (r->call_graph > DCP_CALL_GRAPH_DEFAULT)
		return dcp_error(EINVAL, "unknown call graph mode %u",
				 (unsigned)r->call_graph);
	/* the mode asked for; the pipeline's is settled with the backend
	 * (start_source()): on the BPF backend DEFAULT and DWARF are the
	 * kernel's walk by tables, whose stacks come as FP's do */
	r->call_graph_asked = r->call_graph;
	if (r->call_graph == DCP_CALL_GRAPH_DEFAULT)
		r->call_graph = DCP_CALL_GRAPH_FP;
	if (opts->sz >= offsetof(struct dcp_recorder_opts, unwind_memory) +
				sizeof(opts->unwind_memory))
		r->unwind_memory = opts->unwind_memory;
	r->callchain = r->call_graph != DCP_CALL_GRAPH_NONE;
	r->layout.callchain = r->callchain;
	if (r->call_graph != DCP_CALL_GRAPH_DWARF)
		return 0;
	r->layout.regs_mask = DCP_UNWIND_REGS_MASK;
	r->layout.stack_user = true;
	if (opts->sz >= offsetof(struct dcp_recorder_opts, stack_user_bytes) +
				sizeof(opts->stack_user_bytes) &&
	    opts->stack_user_bytes)
		r->stack_user = opts->stack_user_bytes;
	else
		r->stack_user = DCP_UNWIND_STACK_DEFAULT;
	if (r->stack_user > DCP_UNWIND_STACK_MAX)
		return dcp_error(
			EINVAL,
			"a user stack copy of %u bytes is too large (at most %u)",
			r->stack_user, DCP_UNWIND_STACK_MAX);
	/* the kernel wants a multiple of 8 */
	r->stack_user = (r->stack_user + 7) & ~7u;
	memset(&uo, 0, sizeof(uo));
	uo.open_map = dcp_samples_open_map;
	uo.ctx = r;
	uo.vdso_cookie = r->cookie_vdso;
	uo.anon_cookie = r->cookie_anon;
	uo.vsyscall_cookie = r->cookie_vsyscall;
	r->unwinder = dcp_unwinder_new(&uo);
	if (!r->unwinder)
		return dcp_error(ENOMEM, "out of memory");
	return 0;
}

/*
 * What a long recording keeps to name addresses (dcp_recorder_opts'
 * memory_limit and max_open_files), shared out: the naming thread's files
 * (one for each 256 KiB, at most 64 and a quarter of the handles), the
 * names kept between periods, and the pins, which take the handles the
 * naming files leave.
 */
static int setup_bounds(struct dcp_recorder *r,
			const struct dcp_recorder_opts *opts)
{
	uint64_t limit = DCP_OPTS_GET(opts, memory_limit, 0);
	uint32_t files = DCP_OPTS_GET(opts, max_open_files, 0);

	r->memory_limit = limit ? limit : DCP_MEMORY_LIMIT_DEFAULT;
	r->max_open_files = files ? files : DCP_MAX_OPEN_FILES_DEFAULT;
	if (r->max_open_files < 2)
		return dcp_error(EINVAL,
				 "max_open_files %u: at least 2 are needed, a "
				 "pin and a file to name with",
				 r->max_open_files);
	r->naming_files = r->memory_limit / (256 * 1024);
	if (r->naming_files > 64)
		r->naming_files = 64;
	if (r->naming_files > r->max_open_files / 4)
		r->naming_files = r->max_open_files / 4;
	if (!r->naming_files)
		r->naming_files = 1;
	dcp_cookie_table_set_max_pinned(r->cookies,
					r->max_open_files - r->naming_files);
	return 0;
}

/*
 * The cgroups of samples, unless turned off. A machine without a cgroup
 * v2 hierarchy is recorded without them, said once; a filter cannot do
 * without them.
 */
static int setup_cgroups(struct dcp_recorder *r,
			 const struct dcp_recorder_opts *opts)
{
	const char *const *filter = NULL;
	size_t nr_filter = 0;

	if (DCP_OPTS_HAS(opts, nr_cgroups)) {
		filter = opts->cgroups;
		nr_filter = opts->nr_cgroups;
	}
	if (DCP_OPTS_HAS(opts, no_cgroups) && opts->no_cgroups) {
		if (nr_filter)
			return dcp_error(EINVAL,
					 "a cgroup filter needs the samples' "
					 "cgroups (no_cgroups is set)");
		return 0;
	}
	if (nr_filter && !filter)
		return dcp_error(EINVAL, "nr_cgroups without cgroups");
	r->cgroups = dcp_cgroup_table_new(filter, nr_filter);
	if (!r->cgroups) {
		if (nr_filter || errno != ENOENT)
			return -errno;
		dcp_log(DCP_LOG_WARN, "%s", dcp_last_error());
	}
	r->layout.cgroup = r->cgroups != NULL;
	return 0;
}

/*
 * --off-cpu pairs a thread's switch-out with its switch-in on any CPU, of
 * any task, and charges a stack whose leaf is the scheduler's: what would
 * filter either cannot be combined with it.
 */
static int check_off_cpu(const struct dcp_recorder *r,
			 const struct dcp_recorder_opts *opts)
{
	if (!r->off_cpu)
		return 0;
	if (opts->nr_only)
		return dcp_error(EINVAL, "--off-cpu cannot be combined with "
					 "--only");
	if (opts->nr_cpus)
		return dcp_error(EINVAL, "--off-cpu cannot be combined with -C "
					 "(a thread may wake on another CPU)");
	if (opts->filter_uid)
		return dcp_error(EINVAL,
				 "--off-cpu cannot be combined with -u: "
				 "use -p or a command");
	return 0;
}

static enum dcp_backend opts_backend(const struct dcp_recorder_opts *opts)
{
	if (opts->sz >=
	    offsetof(struct dcp_recorder_opts, backend) + sizeof(opts->backend))
		return opts->backend;
	return DCP_BACKEND_PERF;
}

/* Stacks walked by the source: no registers or stack copies to unwind. */
static void call_graph_walked(struct dcp_recorder *r)
{
	r->call_graph = DCP_CALL_GRAPH_FP;
	r->layout.regs_mask = 0;
	r->layout.stack_user = false;
	r->stack_user = 0;
	dcp_unwinder_free(r->unwinder);
	r->unwinder = NULL;
}

/* The BPF source started in place of the perf one; 0, or why not. */
static int start_bpf(struct dcp_recorder *r,
		     const struct dcp_recorder_opts *opts,
		     const struct dcp_source_settings *set)
{
	struct dcp_source_settings bpf_set = *set;
	struct dcp_source *s;
	int ret;

	if (opts->sz >= offsetof(struct dcp_recorder_opts, uid) +
				sizeof(opts->uid) &&
	    (opts->nr_cpus || opts->sample_period || opts->filter_uid))
		return dcp_error(EINVAL,
				 "the BPF backend records neither -C, -c nor "
				 "-u: use --backend perf");
	s = dcp_bpf_source_new(opts, r);
	if (!s)
		return -errno;
	/* DWARF means the kernel's walk by tables here, not stack copies */
	bpf_set.unwind_tables = r->call_graph_asked == DCP_CALL_GRAPH_DEFAULT ||
				r->call_graph_asked == DCP_CALL_GRAPH_DWARF;
	if (bpf_set.unwind_tables)
		bpf_set.call_graph = DCP_CALL_GRAPH_FP;
	ret = s->ops->start(s, &bpf_set);
	if (ret) {
		char why[512];

		/* freeing may log: keep the reason */
		snprintf(why, sizeof(why), "%s", dcp_last_error());
		s->ops->free(s);
		return dcp_error(-ret, "%s", why);
	}
	r->source->ops->free(r->source);
	r->source = s;
	r->backend = "bpf";
	if (bpf_set.unwind_tables)
		call_graph_walked(r);
	return 0;
}

static int start_source(struct dcp_recorder *r,
			const struct dcp_recorder_opts *opts)
{
	struct dcp_source_settings set = {
		.sample_freq = r->sample_freq,
		.call_graph = r->call_graph,
		.layout = &r->layout,
		.stack_user = r->stack_user,
		.buffer_pages = opts->mmap_pages,
		.off_cpu = r->off_cpu,
		.off_cpu_min_ns = r->off_cpu_min_ns,
		.unwind_memory = r->unwind_memory,
		.cgroups = r->cgroups,
	};
	enum dcp_backend backend = opts_backend(opts);
	int ret;

	if (backend > DCP_BACKEND_AUTO)
		return dcp_error(EINVAL, "unknown backend %u",
				 (unsigned)backend);
	if (backend != DCP_BACKEND_PERF) {
		ret = start_bpf(r, opts, &set);
		if (!ret)
			return 0;
		if (backend == DCP_BACKEND_BPF)
			return ret;
		dcp_log(DCP_LOG_WARN, "using the perf backend: %s",
			dcp_last_error());
	}
	r->backend = "perf";
	if (r->off_cpu && r->call_graph == DCP_CALL_GRAPH_DWARF)
		return dcp_error(EINVAL,
				 "--off-cpu with --call-graph dwarf needs the "
				 "BPF backend (it unwinds each switch-out in "
				 "the kernel): the perf backend takes -g");
	return r->source->ops->start(r->source, &set);
}

/*
 * The caller's targets (-p, a command) and the processes they had already
 * forked, and theirs, as perf's inherited events would have followed them
 * had they been on from the start: r's roots, and opts again in *copy with
 * those pids, for the sources.
 */
static int take_targets(struct dcp_recorder *r,
			const struct dcp_recorder_opts *opts,
			struct dcp_recorder_opts *copy)
{
	pid_t *below = NULL;
	size_t nr_below = 0;
	int ret;

	memset(copy, 0, sizeof(*copy));
	memcpy(copy, opts, opts->sz < sizeof(*copy) ? opts->sz : sizeof(*copy));
	if (!opts->nr_pids)
		return 0;
	r->no_inherit = copy->no_inherit;
	ret = r->no_inherit ? 0 :
			      dcp_proc_descendants(opts->pids, opts->nr_pids,
						   &below, &nr_below);
	if (ret)
		return ret;
	r->roots = calloc(opts->nr_pids + nr_below, sizeof(*r->roots));
	if (!r->roots) {
		free(below);
		return dcp_error(ENOMEM, "out of memory");
	}
	memcpy(r->roots, opts->pids, opts->nr_pids * sizeof(pid_t));
	if (nr_below)
		memcpy(r->roots + opts->nr_pids, below,
		       nr_below * sizeof(pid_t));
	free(below);
	r->nr_listed = opts->nr_pids;
	r->nr_roots = opts->nr_pids + nr_below;
	r->targeted = true;
	if (nr_below)
		dcp_log(DCP_LOG_INFO,
			"recording %zu processes forked by the targets before "
			"the recording",
			nr_below);
	copy->pids = r->roots;
	copy->nr_pids = r->nr_roots;
	return 0;
}

DCPROF_API struct dcp_recorder *
dcp_recorder_new(const struct dcp_recorder_opts *opts)
{
	struct dcp_recorder_opts targeted;
	struct dcp_recorder *r;
	struct utsname uts;
	char kernel_warning[512] = "";
	int ret;

	if (!opts || opts->sz < offsetof(struct dcp_recorder_opts, mmap_pages))
		return dcp_error_null(EINVAL, "invalid recorder options");
	r = calloc(1, sizeof(*r));
	if (!r)
		return dcp_error_null(ENOMEM, "out of memory");
	/* the sources open their per-task events for the whole trees */
	ret = take_targets(r, opts, &targeted);
	if (ret)
		goto fail;
	opts = &targeted;
	r->stats.sz = sizeof(r->stats);
	r->output = strdup(opts->output ? opts->output : "dcprof.data");
	r->event_name = strdup(opts->event ? opts->event : "cpu-clock");
	r->cmdline = strdup(opts->cmdline ? opts->cmdline : "");
	r->sample_freq = opts->sample_freq ? opts->sample_freq : 999;
	r->flush_interval_ms =
		opts->flush_interval_ms ? opts->flush_interval_ms : 2000;
	if (opts->sz >= offsetof(struct dcp_recorder_opts, sample_period) +
				sizeof(opts->sample_period))
		r->sample_period = opts->sample_period;
	if (opts->sz >= offsetof(struct dcp_recorder_opts, off_cpu_min_ns) +
				sizeof(opts->off_cpu_min_ns)) {
		r->off_cpu = opts->off_cpu;
		r->off_cpu_min_ns = opts->off_cpu_min_ns;
	}
	if (opts->sz >=
	    offsetof(struct dcp_recorder_opts, periods) + sizeof(opts->periods))
		r->periods = opts->periods;
	if (!r->output || !r->event_name || !r->cmdline) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	/* checks the event: nothing is opened yet */
	r->source = dcp_perf_source_new(opts, r);
	if (!r->source) {
		ret = -errno;
		goto fail;
	}
	if (uname(&uts) == 0) {
		snprintf(r->hostname, sizeof(r->hostname), "%s", uts.nodename);
		snprintf(r->kernel_release, sizeof(r->kernel_release), "%s",
			 uts.release);
	}
	raise_fd_limit();

	r->cookies = dcp_cookie_table_new();
	r->procs = dcp_process_table_new();
	r->agg = dcp_aggregate_new();
	if (!r->cookies || !r->procs || !r->agg) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	ret = intern_specials(r);
	if (!ret)
		ret = setup_bounds(r, opts);
	if (!ret)
		ret = setup_cgroups(r, opts);
	if (!ret)
		ret = check_off_cpu(r, opts);
	if (!ret)
		ret = setup_call_graph(r, opts);
	if (ret)
		goto fail;
	for (size_t i = 0; i < opts->nr_only; i++) {
		ret = dcp_cookie_table_mark_arg(r->cookies, opts->only[i]);
		if (ret)
			goto fail;
	}
	/* without kernel addresses, kernel frames still get the kernel's
	 * cookie: a warning (once the events are on, and only if kernel
	 * frames are allowed), not a reason to refuse to record */
	if (dcp_kernel_layout_load(&r->kernel, r->cookies))
		snprintf(kernel_warning, sizeof(kernel_warning), "%s",
			 dcp_last_error());

	ret = start_source(r, opts);
	if (ret)
		goto fail;
	if (kernel_warning[0] && !r->source->kernel_excluded)
		dcp_log(DCP_LOG_WARN, "%s", kernel_warning);
	/*
	 * Only now that the kernel accepted the events is an earlier
	 * profile at the output path moved aside.
	 */
	r->writer = dcp_profile_writer_open(r->output);
	if (!r->writer) {
		ret = -errno;
		goto fail;
	}
	dcp_recorder_start_clock(r);

	/* a file that reads (empty) from the start, whatever the walk costs */
	ret = flush_file(r);
	if (ret)
		goto fail;
	/* Live events are on: now describe what already existed. */
	ret = dcp_walk_inject(r);
	if (ret)
		goto fail;
	ret = flush_file(r);
	if (ret)
		goto fail;
	/* sampling begins as the caller gets the recorder: its clock for
	 * --duration and the recording's are one */
	if (r->source->ops->begin) {
		ret = r->source->ops->begin(r->source);
		if (ret)
			goto fail;
		dcp_recorder_start_clock(r);
	}
	return r;

fail:
	/* the message of the failing step stays in dcp_last_error() */
	dcp_recorder_free(r);
	errno = ret < 0 ? -ret : EINVAL;
	return NULL;
}

DCPROF_API int dcp_recorder_add_pid(struct dcp_recorder *r, pid_t pid)
{
	pid_t *roots = realloc(r->roots, (r->nr_roots + 1) * sizeof(*roots));
	struct dcp_process *p;

	if (!roots)
		return dcp_error(ENOMEM, "out of memory");
	r->roots = roots;
	r->roots[r->nr_roots++] = pid;
	r->targeted = true;
	p = dcp_process_table_find(r->procs, pid);
	if (p)
		p->target = true;
	return 0;
}

DCPROF_API int dcp_recorder_poll(struct dcp_recorder *r, int timeout_ms)
{
	uint64_t now = dcp_now_ns(CLOCK_MONOTONIC);
	uint64_t until = dcp_deadline_after(now, timeout_ms);
	int ret;

	/* no wait past the next flush: SIGKILL loses at most an interval */
	timeout_ms = r->flush_deferred ? 0 :
					 dcp_timeout_until(timeout_ms, now,
							   r->next_flush_ns);
	ret = r->source->ops->poll(r->source, timeout_ms);
	if (ret)
		return dcp_api_ret(ret);
	now = dcp_now_ns(CLOCK_MONOTONIC);
	/*
	 * A flush due that could end past the caller's time waits for the
	 * next call, once: a caller at its --duration finishes instead, and
	 * the final file has it all (under a storm of sampling interrupts a
	 * flush took a quarter of a second, recorded past the duration
	 * asked). Could: twice the longest so far, as a flush grows with the
	 * profile (one after a shorter one overran a --duration by 0.5 s).
	 */
	if (now >= r->next_flush_ns && now + 2 * r->flush_max_ns > until &&
	    !r->flush_deferred) {
		r->flush_deferred = true;
		return 0;
	}
	if (now >= r->next_flush_ns || r->flush_deferred) {
		uint64_t took;

		r->flush_deferred = false;
		ret = flush_file(r);
		took = dcp_now_ns(CLOCK_MONOTONIC) - now;
		if (took > r->flush_max_ns)
			r->flush_max_ns = took;
		r->next_flush_ns =
			now + (uint64_t)r->flush_interval_ms * 1000000ull;
		/* periods: the cut that ends this one reports it */
		return r->periods ? 0 : dcp_api_ret(ret);
	}
	return 0;
}

int dcp_recorder_flush(struct dcp_recorder *r)
{
	return flush_file(r);
}

/* The closing symbolization's account of each object. */
static int count_unresolved(void *ctx, const struct dcp_cookie_info *ci,
			    const uint64_t *offsets, size_t n, int resolved)
{
	struct dcp_recorder *r = ctx;

	if (resolved < 0) {
		dcp_log(DCP_LOG_INFO, "no symbols for '%s': %s", ci->name,
			dcp_last_error());
		resolved = 0;
	}
	if (ci->kind != DCP_COOKIE_KIND_IDLE)
		r->stats.symbols_unresolved += n - (size_t)resolved;
	return 0;
}

DCPROF_API int dcp_recorder_finish(struct dcp_recorder *r,
				   struct dcp_profile_stats *stats)
{
	/* every sampled address, named from the files the recorder pinned */
	struct dcp_resolve_opts ro = { .pinned = true,
				       .done = count_unresolved };
	struct dcp_symtab *symtab;
	int ret;

	if (stats && !dcp_sz_ok(stats, DCP_PROFILE_STATS_FIRST_SZ))
		return DCP_SZ_ERROR(dcp_profile_stats, stats);
	if (!r)
		return dcp_api_ret(dcp_error(EINVAL, "no recorder"));
	ro.kernel = &r->kernel;
	ro.ctx = r;
	if (r->finished)
		return dcp_error(EINVAL, "the recording is already finished");
	r->finished = true;
	r->end_mono_ns = dcp_now_ns(CLOCK_MONOTONIC);
	ret = r->source->ops->stop(r->source);
	if (!ret && r->hold_until)
		ret = dcp_walk_release(r);
	if (ret)
		return dcp_api_ret(ret);
	if (r->periods) {
		ret = dcp_recorder_write_period(r);
		if (stats)
			dcp_sz_copy(stats, &r->stats, sizeof(r->stats));
		return dcp_api_ret(ret);
	}
	dcp_recorder_fill_meta(r);
	/* a recording ends with its events: what follows is bookkeeping */
	symtab = dcp_symtab_new();
	if (!symtab)
		return dcp_api_ret(-errno);
	ret = dcp_resolve_sampled(r->cookies, r->agg, symtab, &ro);
	if (!ret && r->write_error)
		ret = r->write_error;
	if (!ret) {
		r->meta.complete = true;
		ret = dcp_profile_writer_finish(r->writer, &r->meta, r->cookies,
						r->agg, symtab, &r->stats);
	}
	dcp_symtab_free(symtab);
	if (stats)
		dcp_sz_copy(stats, &r->stats, sizeof(r->stats));
	return dcp_api_ret(ret);
}

DCPROF_API void dcp_recorder_free(struct dcp_recorder *r)
{
	if (!r)
		return;
	if (r->source)
		r->source->ops->free(r->source);
	dcp_snapshot_free(r);
	dcp_profile_writer_free(r->writer);
	dcp_aggregate_free(r->agg);
	dcp_cgroup_table_free(r->cgroups);
	dcp_process_table_free(r->procs);
	dcp_kernel_layout_free(&r->kernel);
	dcp_cookie_table_free(r->cookies);
	dcp_unwinder_free(r->unwinder);
	free(r->held);
	free(r->exits);
	free(r->roots);
	free(r->output);
	free(r->event_name);
	free(r->cmdline);
	free(r);
}
