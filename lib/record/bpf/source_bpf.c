// SPDX-License-Identifier: MIT
/*
 * The BPF record source (see source_bpf.h): loads recorder.bpf.o
 * (profile.bpf.c's programs linked with task_iter.bpf.c's, which the
 * start-up walk borrows) through its light skeleton, attaches the sampling
 * program to a cpu-clock event per CPU, and every drain interval and flush
 * empties the count map with batch operations, turning each (pid, thread
 * name, user stack, kernel stack) into frames: (build id, file offset) user
 * frames become the cookie of that build id, the ring backend's cookie for
 * the same file; frames the kernel gave as plain addresses (no build id,
 * anonymous memory, or the mmap lock busy) are looked up in the process's
 * maps, read from /proc when first needed. Task events (fork, exec, exit)
 * arrive through a ring buffer and are replayed as perf's records.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_internal.h"
#include "recorder_internal.h"
#include "ring_internal.h"
#include "source_bpf.h"

#ifdef DCPROF_NO_BPF

struct dcp_source *dcp_bpf_source_new(const struct dcp_recorder_opts *opts,
				      struct dcp_recorder *sink)
{
	return dcp_error_null(ENOTSUP, "the BPF backend was not built: %s",
			      DCPROF_NO_BPF_REASON);
}

bool dcp_source_is_bpf(const struct dcp_source *s)
{
	return false;
}

struct dcp_collection_bpf *
dcp_bpf_source_collection_open(struct dcp_source *s,
			       enum dcp_collection_kind kind,
			       const struct dcp_collection_opts *opts)
{
	return dcp_error_null(ENOTSUP, "the BPF backend was not built: %s",
			      DCPROF_NO_BPF_REASON);
}

#else

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "api_internal.h"
#include "iter_internal.h"
#include "kallsyms_internal.h"
#include "libbpf_log.h"
#include "recorder.lskel.h"
#include "source_bpf_internal.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"
#define DRAIN_MS 250
/* the most the start waits for cached unwind tables */
#define PRELOAD_MS 2000

static struct bpf_source *bpf_source(struct dcp_source *s)
{
	return (struct bpf_source *)s;
}

/* ---- start, poll, stop --------------------------------------------------- */

/* own_user_walk: the call chain without its user part (the program walks
 * the user frames itself, profile.bpf.c's walk_user_frames()) */
static int open_cpu_clock(uint32_t freq, int cpu, bool own_user_walk)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	/* cpu-clock turns a frequency into this period anyway; in period
	 * mode PERF_EVENT_IOC_PERIOD takes ns unambiguously (the budget) */
	attr.sample_period = 1000000000ull / (freq ? freq : 1);
	/*
	 * The event walks the sample's call chain before the program runs
	 * (perf_prepare_sample()), as for perf record -g, and the program's
	 * bpf_get_stack() takes its kernel part (and with build-id frames or
	 * --only its user part) from that one walk: no second unwind inside
	 * the program. The user part the program walks itself otherwise:
	 * the kernel's walk faults on the outermost frame pointer, 0, twice
	 * a sample (docs/PERFORMANCE.md).
	 */
	attr.sample_type = PERF_SAMPLE_CALLCHAIN;
	attr.exclude_callchain_user = own_user_walk;
	attr.disabled = 1; /* until bpf_begin() */
	return dcp_perf_event_open(&attr, -1, cpu);
}

/*
 * --off-cpu: where __traceiter_sched_switch is in /proc/kallsyms (up to
 * the next symbol), for kernel_frames() in source_bpf_counts.c; left
 * unknown when the kernel hides its addresses. The symbol is early in the
 * file (line 16,000 of 120,000 on 6.18: a few ms).
 */
static void find_switch_iterator(struct bpf_source *bs)
{
	static const char name[] = "__traceiter_sched_switch";
	FILE *f = fopen("/proc/kallsyms", "re");
	struct dcp_kallsyms_line l;
	char line[512];

	bs->switch_iter_start = bs->switch_iter_end = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!dcp_kallsyms_parse_line(line, &l))
			continue;
		if (bs->switch_iter_start) {
			bs->switch_iter_end = l.addr;
			break;
		}
		if (l.addr && !l.module && l.name_len == sizeof(name) - 1 &&
		    !memcmp(l.name, name, l.name_len))
			bs->switch_iter_start = l.addr;
	}
	if (bs->switch_iter_end <= bs->switch_iter_start)
		bs->switch_iter_start = bs->switch_iter_end = 0;
	if (f)
		fclose(f);
}

static int load_error(int err, const char *what)
{
	if (err == EPERM || err == EACCES)
		return dcp_error(EPERM,
				 "the BPF backend cannot load (%s: %s): it "
				 "needs root, or CAP_BPF and CAP_PERFMON",
				 what, strerror(err));
	return dcp_error(err, "the BPF backend cannot load (%s: %s)", what,
			 strerror(err));
}

static int size_maps(struct bpf_source *bs,
		     const struct dcp_source_settings *set)
{
	uint32_t off_entries;
	uint64_t want;
	long online;

	/*
	 * Two drain intervals' samples, each a new stack: the maps hold what
	 * came since the last drain (DRAIN_MS, or the flush before it). Not
	 * the flush interval: top has none (UINT32_MAX), and its maps came
	 * to the cap, a million entries, gigabytes of kernel memory zeroed
	 * at load. Online CPUs, not possible ones: VMs often declare many
	 * more.
	 */
	online = sysconf(_SC_NPROCESSORS_ONLN);
	want = (uint64_t)set->sample_freq *
	       (uint64_t)(online > 0 ? online : 1) * DRAIN_MS * 2 / 1000;
	if (want > 1u << 20)
		want = 1u << 20;
	/*
	 * The stack maps are LRU maps, whose every entry the kernel links
	 * and touches when it creates them (16,384 stacks of 1 KiB each:
	 * 26 ms of start-up here, as long again to free; 4,096: 10 ms more
	 * than 1,024). An entry is needed only from its sample to the next
	 * drain, which copies it once into ucache, larger: a floor of 1,024,
	 * two drain intervals' samples at 999 Hz on 2 CPUs; the LRU evicts
	 * the oldest when a burst of new stacks overfills it.
	 */
	bs->stack_entries = want < 1024 ? 1024 : (uint32_t)want;
	/*
	 * The count map too: each drain's batch read visits every bucket,
	 * empty or not (16,384 four times a second: 5% of the recorder's
	 * CPU between start and end at 999 Hz); a full map is counted.
	 */
	if (want < 4096)
		want = 4096;
	if (bs->map_entries)
		want = bs->stack_entries = bs->map_entries;
	bs->count_entries = (uint32_t)want;
	/* the light skeleton's loader program creates the maps this size */
	bs->skel->maps.counts.max_entries = bs->count_entries;
	bs->skel->maps.user_stacks.max_entries =
		bs->user_build_ids ? bs->stack_entries : 1;
	bs->skel->maps.user_ips.max_entries =
		bs->user_build_ids ? 1 : bs->stack_entries;
	bs->skel->maps.kernel_stacks.max_entries = bs->stack_entries;
	bs->ucache_size = bs->stack_entries < 16384 ? 16384 : bs->stack_entries;
	bs->ucache = calloc(bs->ucache_size, sizeof(*bs->ucache));
	bs->kcache = calloc(bs->ucache_size, sizeof(*bs->kcache));
	bs->icache = calloc(bs->ucache_size, sizeof(*bs->icache));
	if (!bs->ucache || !bs->kcache || !bs->icache)
		return dcp_error(ENOMEM, "out of memory");
	bs->keys = calloc(DCP_BPF_DRAIN_BATCH, sizeof(*bs->keys));
	bs->vals = calloc(DCP_BPF_DRAIN_BATCH, sizeof(*bs->vals));
	bs->off_keys = calloc(DCP_BPF_DRAIN_BATCH, sizeof(*bs->off_keys));
	bs->off_vals = calloc(DCP_BPF_DRAIN_BATCH, sizeof(*bs->off_vals));
	if (!bs->keys || !bs->vals || !bs->off_keys || !bs->off_vals)
		return dcp_error(ENOMEM, "out of memory");
	/* without --off-cpu no switch program runs: its maps stay empty,
	 * and a preallocated map's memory is zeroed at load */
	off_entries = bs->count_entries < 16384 ? 16384 : bs->count_entries;
	bs->skel->maps.off_counts.max_entries = bs->off_cpu ? off_entries : 1;
	return 0;
}

/* A tracepoint ("syscalls/sys_exit_mmap") as a perf event: fd or -errno. */
static int open_tracepoint(const char *event)
{
	struct perf_event_attr attr;
	char format[4096];
	uint64_t id;
	int ret = dcp_tracefs_event(event, &id, format, sizeof(format));

	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.sample_period = 1;
	ret = dcp_perf_event_open(&attr, -1, 0);
	return ret < 0 ? -errno : ret;
}

/* Run the task iterator program prog over every thread, once; what: for
 * the message. */
static int run_task_iterator(int prog, const char *what)
{
	char buf[64];
	int link, iter, err = 0;
	ssize_t n;

	link = bpf_link_create(prog, 0, BPF_TRACE_ITER, NULL);
	if (link < 0)
		return dcp_error(errno, "cannot %s: the BPF iterator: %s", what,
				 strerror(errno));
	iter = bpf_iter_create(link);
	if (iter < 0) {
		close(link);
		return dcp_error(-iter, "cannot %s: the BPF iterator: %s", what,
				 strerror(-iter));
	}
	/* the program writes nothing: reading runs it over every thread */
	while ((n = read(iter, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = errno;
	close(iter);
	close(link);
	if (err)
		return dcp_error(err, "cannot %s: %s", what, strerror(err));
	return 0;
}

/*
 * The task programs (tp_btf) and, with --off-cpu, the switch program on
 * their raw tracepoints; mmap's exit tracepoint through a perf event.
 * The light skeleton loads every program; only these run.
 */
static int attach_task_programs(struct bpf_source *bs)
{
	int progs[] = {
		bs->skel->progs.dcp_exec.prog_fd,
		bs->skel->progs.dcp_exit.prog_fd,
		bs->skel->progs.dcp_fork.prog_fd,
		bs->off_cpu ? bs->skel->progs.dcp_switch.prog_fd : -1,
	};
	int fd, link;

	/* each program's link, then mmap's event and its link */
	_Static_assert(sizeof(progs) / sizeof(progs[0]) + 2 <=
			       sizeof(bs->task_links) /
				       sizeof(bs->task_links[0]),
		       "task_links cannot hold every link");
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (progs[i] < 0)
			continue;
		link = bpf_raw_tracepoint_open(NULL, progs[i]);
		if (link < 0)
			return load_error(errno, "attach the task tracepoints");
		bs->task_links[bs->nr_task_links++] = link;
		if (i == 3)
			bs->switch_link = bs->nr_task_links;
	}
	if (!bs->mapping_events)
		return 0;
	fd = open_tracepoint("syscalls/sys_exit_mmap");
	if (fd < 0)
		return load_error(-fd, "open mmap's exit tracepoint");
	bs->task_links[bs->nr_task_links++] = fd;
	link = bpf_link_create(bs->skel->progs.dcp_mmap.prog_fd, fd,
			       BPF_PERF_EVENT, NULL);
	if (link < 0)
		return load_error(errno, "attach to mmap's exit tracepoint");
	bs->task_links[bs->nr_task_links++] = link;
	return 0;
}

static int bpf_start(struct dcp_source *s,
		     const struct dcp_source_settings *set)
{
	struct bpf_source *bs = bpf_source(s);
	const char *btf = bs->btf_path ? bs->btf_path : DEFAULT_BTF;
	uint8_t one = 1;
	int ret, ncpus;

	/*
	 * The light skeleton's loader program relocates the programs in the
	 * kernel, against the kernel's own BTF: user space never reads it
	 * (libbpf's parse of its 5 MiB was a third of the start). Its file
	 * is still what says the kernel has BTF; bpf_btf_path points the
	 * check elsewhere (the tests' kernel without BTF).
	 */
	if (access(btf, R_OK))
		return dcp_error(ENOTSUP,
				 "the BPF backend cannot load: no kernel BTF "
				 "at %s (%s)",
				 btf, strerror(errno));
	libbpf_set_print(dcp_libbpf_log);
	bs->nr_possible = libbpf_num_possible_cpus();
	if (bs->nr_possible <= 0)
		return dcp_error(EINVAL, "cannot count the possible CPUs");
	bs->skel = recorder_bpf__open();
	if (!bs->skel)
		return load_error(errno, "open");
	bs->skel->rodata->filter_marked = bs->filter;
	bs->skel->rodata->user_build_ids = bs->user_build_ids;
	/* build-id frames and --only's leaf test take the kernel's walk */
	bs->skel->rodata->own_user_walk = !bs->user_build_ids && !bs->filter;
	bs->skel->rodata->off_cpu_min_ns = set->off_cpu_min_ns;
	ret = dcp_bpf_cgroups_configure(bs, set->cgroups);
	if (ret)
		return ret;
	bs->off_cpu = set->off_cpu;
	/* found in tracefs, mounted when it is not: without the mmap
	 * events, a walk by tables knows no library of a new process */
	{
		char format[4096];
		uint64_t id;

		bs->mapping_events = !dcp_tracefs_event(
			"syscalls/sys_exit_mmap", &id, format, sizeof(format));
	}
	bs->skel->rodata->send_exec_mappings = bs->mapping_events;
	if (set->off_cpu)
		find_switch_iterator(bs);
	bs->call_graph = set->call_graph;
	ret = size_maps(bs, set);
	if (ret)
		return ret;
	dcp_bpf_unwind_size(bs, set->unwind_tables, set->unwind_memory);
	/* the Python walk goes with the walk by tables (unwind.bpf.h) */
	if (bs->unwind.on && !bs->no_python_frames) {
		bs->python = dcp_python_new(bs->r);
		if (!bs->python)
			return -ENOMEM;
	}
	ret = recorder_bpf__load(bs->skel);
	if (ret)
		return load_error(-ret, "load");
	ret = dcp_bpf_unwind_start(bs);
	if (!ret)
		ret = dcp_bpf_cgroups_start(bs, set->cgroups);
	if (ret)
		return ret;
	for (size_t i = 0; bs->filter && i < bs->nr_marks; i++)
		if (bpf_map_update_elem(bs->skel->maps.marked.map_fd,
					bs->marks[i], &one, BPF_ANY))
			return dcp_error(errno, "cannot mark a file: %s",
					 strerror(errno));
	ret = attach_task_programs(bs);
	if (ret)
		return ret;
	/* the processes that exist: their mappings, for the walk by tables
	 * (the task programs, attached, keep those of the ones to come) */
	if (bs->unwind.on) {
		ret = run_task_iterator(bs->skel->progs.dcp_ranges_seed.prog_fd,
					"read the processes' mappings");
		if (ret)
			return ret;
	}
	bs->rb = ring_buffer__new(bs->skel->maps.events.map_fd,
				  dcp_bpf_on_event, bs, NULL);
	bs->ustack = calloc(DCP_BPF_MAX_FRAMES, sizeof(*bs->ustack));
	bs->kstack = calloc(DCP_BPF_MAX_FRAMES, sizeof(*bs->kstack));
	bs->percpu = calloc((size_t)bs->nr_possible, sizeof(*bs->percpu));
	bs->frames = calloc(MAX_STACK, sizeof(*bs->frames));
	bs->links = calloc((size_t)bs->nr_possible, sizeof(*bs->links));
	bs->event_fds = calloc((size_t)bs->nr_possible, sizeof(int));
	if (!bs->rb || !bs->ustack || !bs->kstack || !bs->percpu ||
	    !bs->frames || !bs->links || !bs->event_fds)
		return dcp_error(ENOMEM, "out of memory");
	ncpus = 0;
	for (int cpu = 0; cpu < bs->nr_possible; cpu++) {
		int fd = open_cpu_clock(set->sample_freq, cpu,
					bs->skel->rodata->own_user_walk),
		    link;

		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* offline */
			return load_error(errno, "the cpu-clock event");
		}
		bs->event_fds[bs->nr_events] = fd;
		link = bpf_link_create(bs->skel->progs.dcp_sample.prog_fd, fd,
				       BPF_PERF_EVENT, NULL);
		if (link < 0) {
			int err = errno;

			bs->links[bs->nr_events++] = -1;
			return load_error(err, "attach to cpu-clock");
		}
		bs->links[bs->nr_events++] = link;
		ncpus = cpu + 1;
	}
	s->nr_cpus = (uint32_t)ncpus;
	bs->next_drain_ns = 0;
	dcp_bpf_budget_start(bs, set->sample_freq);
	return 0;
}

/*
 * The sampling events, open and attached since start, run only once the
 * walk of existing tasks is done: a sample's frames are named from the
 * maps the task events and the walk keep, so no sample is needed from
 * before; and under the program's interrupts at high rates the start
 * took seconds (1 to 3 s at 100 kHz with both CPUs busy, 0.15 s at 999
 * Hz).
 */
static int bpf_begin(struct dcp_source *s)
{
	struct bpf_source *bs = bpf_source(s);
	int ret;

	/* the processes' tables the cache holds, in before their samples */
	ret = dcp_bpf_unwind_preload(bs, dcp_now_ns(CLOCK_MONOTONIC) +
						 PRELOAD_MS * 1000000ull);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < bs->nr_events; i++)
		if (ioctl(bs->event_fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return dcp_error(
				errno, "cannot enable the cpu-clock event: %s",
				strerror(errno));
	/* the recording starts: the threads asleep already have their waits
	 * begin now, on their kernel stacks (dcp_off_cpu_seed) */
	if (bs->switch_link)
		return run_task_iterator(
			bs->skel->progs.dcp_off_cpu_seed.prog_fd,
			"find the threads asleep at the start");
	return 0;
}

static int bpf_inject(struct dcp_source *s, uint64_t time,
		      const struct perf_event_header *h)
{
	return dcp_recorder_take_record(bpf_source(s)->r, time, h, h->size);
}

static int bpf_drain(struct dcp_source *s)
{
	struct bpf_source *bs = bpf_source(s);

	return ring_buffer__consume(bs->rb) < 0 ?
		       dcp_error(EIO, "cannot read the BPF event ring") :
		       0;
}

static int bpf_poll(struct dcp_source *s, int timeout_ms)
{
	struct bpf_source *bs = bpf_source(s);
	struct dcp_recorder *r = bs->r;
	uint64_t now = dcp_now_ns(CLOCK_MONOTONIC);
	/* the caller's time: a drain stops there (dcp_poll_work_deadline) */
	uint64_t deadline = dcp_deadline_after(now, timeout_ms);
	int n;

	/* no later than the next drain, and none with a drain unfinished */
	timeout_ms =
		bs->drain_unfinished ?
			0 :
			dcp_timeout_until(timeout_ms, now, bs->next_drain_ns);
	n = ring_buffer__poll(bs->rb, timeout_ms);
	if (n < 0 && n != -EINTR)
		return dcp_error(-n, "cannot read the BPF event ring");
	/*
	 * The counts are drained before every flush of the file, and at least
	 * every DRAIN_MS: processes are then usually still alive when their
	 * first frames are named (maps, perf-map files, pins). A drain that
	 * lasts past the caller's time goes on at the next call: at high
	 * rates one could otherwise outlast a --duration by seconds.
	 */
	now = dcp_now_ns(CLOCK_MONOTONIC);
	deadline = dcp_poll_work_deadline(deadline, now);
	/*
	 * The tables the walks and the mapping events asked for, first: until
	 * a file has one, its samples are walked by frame pointers. A drain
	 * under way leaves room for one a poll, else a busy machine's drains
	 * could leave none for them.
	 */
	n = dcp_bpf_unwind_work(bs, deadline, bs->drain_unfinished ? 1 : 0);
	if (n)
		return n;
	if (bs->drain_unfinished)
		return dcp_bpf_drain_all(bs, deadline);
	if (now >= r->next_flush_ns || now >= bs->next_drain_ns) {
		bs->next_drain_ns = now + DRAIN_MS * 1000000ull;
		dcp_bpf_budget_check(bs);
		return dcp_bpf_drain_all(bs, deadline);
	}
	return 0;
}

static void detach(struct bpf_source *bs)
{
	for (uint32_t i = 0; i < bs->nr_events; i++) {
		if (bs->links && bs->links[i] >= 0)
			close(bs->links[i]);
		close(bs->event_fds[i]);
	}
	bs->nr_events = 0;
}

/* -v: how often a program ran and for how long (bpf_stats_enabled) */
static void log_program_run(int prog_fd, const char *what)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		dcp_log(DCP_LOG_INFO,
			"bpf: the %s program ran %llu times for %llu ns", what,
			(unsigned long long)info.run_cnt,
			(unsigned long long)info.run_time_ns);
}

/*
 * --off-cpu: the switch program detached, the threads still switched out
 * have their time up to now charged (dcp_off_cpu_open), before the last
 * drains read the counts.
 */
static int charge_open_blocks(struct bpf_source *bs)
{
	if (!bs->switch_link)
		return 0;
	close(bs->task_links[bs->switch_link - 1]);
	bs->task_links[bs->switch_link - 1] = -1;
	bs->switch_link = 0;
	return run_task_iterator(bs->skel->progs.dcp_off_cpu_open.prog_fd,
				 "charge the threads still switched out");
}

static int bpf_stop(struct dcp_source *s)
{
	struct bpf_source *bs = bpf_source(s);
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	bool resumed;
	int ret;

	detach(bs);
	ret = charge_open_blocks(bs);
	if (ret)
		return ret;
	/*
	 * An unfinished drain is ended, then a whole one follows: the counts
	 * added behind the first one's pass, and the exits read during it.
	 */
	resumed = bs->drain_unfinished;
	ret = dcp_bpf_drain_all(bs, 0);
	if (!ret && (resumed || bs->nr_exits))
		ret = dcp_bpf_drain_all(bs, 0);
	dcp_bpf_budget_stop(bs);
	if (!ret)
		ret = dcp_bpf_unwind_finish(bs);
	/* the threads still switched out (charged up to the end unless
	 * under the minimum): every switch-out kept, and every wait found
	 * under way at the start, ends as a block or a short one at its
	 * switch-in, or is dropped at the next switch-out when the switch-in
	 * was not traced (the waits under way left out, the ended ones
	 * outnumbered the switch-outs on an idle machine: 0 unfinished) */
	if (bs->off_cpu) {
		const uint64_t *k = bs->kernel_counts;
		uint64_t begun = k[DCP_BPF_STAT_OFF_SWITCHES] +
				 k[DCP_BPF_STAT_OFF_UNDER_WAY];
		uint64_t ended = k[DCP_BPF_STAT_OFF_SHORT] +
				 k[DCP_BPF_STAT_OFF_BLOCKS] +
				 k[DCP_BPF_STAT_OFF_MISSED];

		bs->base.counts.off_cpu_unfinished =
			begun > ended ? begun - ended : 0;
	}
	memset(&info, 0, sizeof(info));
	/* run time is counted while kernel.bpf_stats_enabled is 1 */
	if (bpf_obj_get_info_by_fd(bs->skel->progs.dcp_sample.prog_fd, &info,
				   &len))
		memset(&info, 0, sizeof(info));
	dcp_log(DCP_LOG_INFO,
		"bpf: %" PRIu64 " samples counted in the kernel, %" PRIu64
		" bytes read from it (%.1f per sample); the program ran %llu "
		"times for %llu ns",
		bs->samples_seen, bs->bytes_read,
		bs->samples_seen ?
			(double)bs->bytes_read / (double)bs->samples_seen :
			0.0,
		(unsigned long long)info.run_cnt,
		(unsigned long long)info.run_time_ns);
	dcp_log(DCP_LOG_INFO,
		"bpf: %" PRIu64 " counts read (%.1f samples each), %" PRIu64
		" stacks copied",
		bs->counts_read,
		bs->counts_read ?
			(double)bs->samples_seen / (double)bs->counts_read :
			0.0,
		bs->stacks_copied);
	dcp_log(DCP_LOG_INFO,
		"bpf: %" PRIu64 " executable mappings named from the kernel's "
		"events, %" PRIu64 " left to the maps in /proc",
		bs->mmaps_named, bs->mmaps_unnamed);
	if (bs->unwind.on)
		dcp_log(DCP_LOG_INFO,
			"bpf: %" PRIu64 " unwind tables (%" PRIu64
			" bytes in the kernel, %" PRIu64 " rows of %u; %" PRIu64
			" read from the cache), made in %.1f ms from %" PRIu64
			" bytes of CFI; %" PRIu64
			" files without room, %" PRIu64 " without CFI, %" PRIu64
			" evicted; %" PRIu64
			" mappings left out of full process ranges",
			bs->unwind.tables, bs->unwind.table_bytes,
			(uint64_t)bs->unwind.rows_used, bs->unwind.rows_cap,
			bs->unwind.from_cache,
			(double)bs->unwind.build_ns / 1e6, bs->unwind.cfi_bytes,
			bs->unwind.refused, bs->unwind.failed,
			bs->unwind.evicted,
			bs->kernel_counts[DCP_BPF_STAT_UNWIND_RANGES_FULL]);
	if (bs->off_cpu) {
		log_program_run(bs->skel->progs.dcp_switch.prog_fd, "switch");
		if (bs->kernel_counts[DCP_BPF_STAT_OFF_UNSPLIT])
			dcp_log(DCP_LOG_INFO,
				"--off-cpu: %" PRIu64 " sleeps counted as "
				"sleeping to their switch-in, any wait for a "
				"CPU after their wake-up included: this kernel "
				"keeps no sched_info",
				bs->kernel_counts[DCP_BPF_STAT_OFF_UNSPLIT]);
	}
	return ret;
}

static void bpf_free(struct dcp_source *s)
{
	struct bpf_source *bs = bpf_source(s);

	detach(bs);
	dcp_bpf_budget_stop(bs);
	ring_buffer__free(bs->rb);
	for (uint32_t i = 0; i < bs->nr_task_links; i++)
		if (bs->task_links[i] >= 0)
			close(bs->task_links[i]);
	dcp_bpf_unwind_free(bs);
	dcp_python_free(bs->python);
	recorder_bpf__destroy(bs->skel);
	free(bs->links);
	free(bs->event_fds);
	free(bs->keys);
	free(bs->off_keys);
	free(bs->off_vals);
	free(bs->vals);
	free(bs->ustack);
	free(bs->kstack);
	free(bs->percpu);
	free(bs->frames);
	free(bs->exits);
	free(bs->marks);
	free(bs->btf_path);
	for (size_t i = 0; i < bs->nr_filled; i++)
		free(*(void **)bs->filled[i]);
	free(bs->filled);
	dcp_ident_cache_free(&bs->idents);
	dcp_bpf_pre_exec_expire(bs, true);
	free(bs->icache);
	free(bs->ucache);
	free(bs->kcache);
	free(bs);
}

static const struct dcp_source_ops bpf_ops = {
	.start = bpf_start,
	.inject = bpf_inject,
	.begin = bpf_begin,
	.drain = bpf_drain,
	.poll = bpf_poll,
	.forget = dcp_bpf_forget,
	.need = dcp_bpf_need,
	.stop = bpf_stop,
	.free = bpf_free,
};

bool dcp_source_is_bpf(const struct dcp_source *s)
{
	return s && s->ops == &bpf_ops;
}

struct dcp_collection_bpf *
dcp_bpf_source_collection_open(struct dcp_source *s,
			       enum dcp_collection_kind kind,
			       const struct dcp_collection_opts *opts)
{
	struct bpf_source *bs = bpf_source(s);
	struct dcp_iter_programs progs;

	if (!dcp_source_is_bpf(s) || !bs->skel)
		return dcp_error_null(EINVAL, "the BPF source is not started");
	progs.exe = bs->skel->progs.dcp_iter_exe.prog_fd;
	progs.task = bs->skel->progs.dcp_iter_task.prog_fd;
	progs.vma = bs->skel->progs.dcp_iter_vma.prog_fd;
	return dcp_collection_bpf_open_programs(kind, opts, &progs);
}

struct dcp_source *dcp_bpf_source_new(const struct dcp_recorder_opts *opts,
				      struct dcp_recorder *sink)
{
	struct bpf_source *bs;
	const char *btf = DCP_OPTS_GET(opts, bpf_btf_path, NULL);

	if (opts->event && strcmp(opts->event, "cpu-clock"))
		return dcp_error_null(ENOTSUP,
				      "the BPF backend samples cpu-clock only, "
				      "not %s",
				      opts->event);
	bs = calloc(1, sizeof(*bs));
	if (!bs)
		return dcp_error_null(ENOMEM, "out of memory");
	bs->base.ops = &bpf_ops;
	bs->stats_fd = -1;
	/* a library kept open per entry: a bound well under RLIMIT_NOFILE */
	bs->idents.held_max = 4096;
	/*
	 * User frames as plain addresses, named from the process's maps in
	 * user space, unless bpf_build_id_frames asks the kernel to name
	 * every one (build id, file offset), which costs more a sample.
	 */
	bs->user_build_ids = DCP_OPTS_GET(opts, bpf_build_id_frames, false);
	bs->no_python_frames = DCP_OPTS_GET(opts, bpf_no_python_frames, false);
	bs->map_entries = DCP_OPTS_GET(opts, bpf_map_entries, 0);
	bs->cpu_max_percent = DCP_OPTS_GET(opts, bpf_cpu_max_percent, 0);
	if (btf && *btf && !(bs->btf_path = strdup(btf))) {
		free(bs);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	bs->base.sink = sink;
	bs->r = sink;
	if (dcp_bpf_take_marks(bs, opts)) {
		free(bs->marks);
		free(bs->btf_path);
		free(bs);
		return NULL;
	}
	return &bs->base;
}

#endif
