// SPDX-License-Identifier: MIT
/*
 * The perf ring source: one sampling event per CPU with its ring (ring.c),
 * the munmap tracepoint routed into the same ring, and the reorder window
 * (reorder.c) that turns the rings' interleaved records into one time
 * order for the pipeline. Accounting records are counted, not delivered.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log_internal.h"
#include "off_cpu_internal.h"
#include "recorder_internal.h"
#include "reorder_internal.h"
#include "ring_internal.h"
#include "source_internal.h"

/*
 * Past this much queued data the window gives way to bounded memory: the
 * oldest records go through regardless, and the rings wait (the kernel
 * counts what it cannot write as lost).
 */
#define REORDER_MAX_BYTES (256u << 20)

/* a poll's work looks at the clock once in this many records */
#define WORK_CLOCK_EVERY 64
/* what a ring reader or the window's release returns to stop early */
#define WORK_STOP 1

/* -u: owners of processes, looked up again after this long (setuid) */
#define OWNER_CACHE_SIZE 4096u
#define OWNER_CACHE_NS 1000000000ull

struct owner_entry {
	pid_t pid; /* 0: empty */
	uid_t uid; /* (uid_t)-1: the process was gone */
	uint64_t checked_ns;
};

struct perf_source {
	struct dcp_source base;
	struct dcp_event_spec event;
	struct dcp_sample_layout layout;
	struct dcp_munmap_tracepoint munmap;

	struct dcp_ring *rings;
	size_t nr_rings;
	struct pollfd *pollfds;

	struct dcp_reorder *queue;
	uint64_t round_max_time; /* newest timestamp seen in the last round */
	uint64_t this_round_max;
	uint64_t *ring_last_time; /* per ring: the newest time queued from it */
	size_t first_ring; /* where the next round begins to read */
	size_t reading; /* the ring being read */
	/* a poll's work stops at work_deadline (0: never, at stop and in
	 * the walk); work_pending: the last poll left records behind */
	uint64_t work_deadline;
	unsigned int work_since_clock;
	bool work_over;
	bool work_pending;
	uint64_t last_delivered_time;
	unsigned char *compact; /* dwarf: a sample with its stack copy cut */
	pid_t *pids; /* -p or a command: the per-task fallback's targets */
	size_t nr_pids;
	bool no_inherit;
	struct dcp_cgroup_table *cgroups; /* the recorder's, or NULL */
	int *cpus; /* -C */
	size_t nr_cpus;
	uint64_t sample_period; /* -c */
	bool filter_uid; /* -u: samples of uid's processes only */
	uid_t uid;
	struct owner_entry *owners; /* -u: a direct-mapped cache by pid */
	/* -c of a software event: samples come without PERIOD, which is
	 * put back in here (dcp_event_period_omitted) */
	unsigned char *with_period;
	struct dcp_off_cpu_tracker *off_cpu; /* --off-cpu: the switches */
	/* --off-cpu: the kernel's names, to find the stacks of the threads
	 * off the CPU at the start; freed once used */
	struct dcp_kernel_names *kernel_names;
	int *switch_fds; /* context switches counted per ring's CPU, or -1 */
};

static struct perf_source *perf_source(struct dcp_source *s)
{
	return (struct perf_source *)s;
}

/*
 * Ring pages per CPU, when not asked: enough for half a second of samples
 * at the requested rate, so that a recorder kept off the CPU that long by
 * busy CPUs loses nothing (a dwarf sample carries its stack copy, 8 KiB
 * where a frame-pointer one needs about 200 bytes). At least 128 pages
 * (perf's default), a power of two, at most 16 MiB per CPU and 256 MiB
 * for all CPUs together. Other users than root get what fits in
 * perf_event_mlock_kb per CPU (the kernel charges their ring pages, and
 * the meta page, to it; beyond it to ulimit -l): 128 pages by default.
 */
static uint32_t default_ring_pages(const struct dcp_source_settings *set)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t per_sample = set->call_graph == DCP_CALL_GRAPH_DWARF ?
				      set->stack_user + 512 :
			      set->call_graph != DCP_CALL_GRAPH_NONE ? 200 :
								       64;
	uint64_t want = (uint64_t)set->sample_freq * per_sample / 2 / page;
	uint64_t most = (256ull << 20) / page / (uint64_t)(cpus > 0 ? cpus : 1);
	uint32_t pages = 128;

	if (most > (16ull << 20) / page)
		most = (16ull << 20) / page;
	if (geteuid() != 0) {
		FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");
		long kb = 516;

		if (f) {
			if (fscanf(f, "%ld", &kb) != 1)
				kb = 516;
			fclose(f);
		}
		most = (uint64_t)(kb > 0 ? kb : 0) * 1024 / page;
		most = most > 1 ? most - 1 : 1; /* the meta page */
		if (most < 8)
			most = 8;
		while (pages > most)
			pages /= 2;
	}
	while (pages < want && (uint64_t)pages * 2 <= most)
		pages *= 2;
	return pages;
}

/* perf_event_paranoid as the kernel says it, for one line. */
static const char *paranoid_text(void)
{
	static char buf[16];
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

	snprintf(buf, sizeof(buf), "?");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			snprintf(buf, sizeof(buf), "?");
		buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

static bool is_munmap_id(const struct perf_source *ps, uint64_t id)
{
	for (size_t i = 0; i < ps->nr_rings; i++)
		if (ps->rings[i].munmap_id == id && ps->rings[i].munmap_fd >= 0)
			return true;
	return false;
}

/* A sample of a tracepoint (munmap, sched_switch), not of the sampling
 * event: no IP, no PERIOD. */
static bool is_tracepoint_sample(const struct perf_source *ps,
				 const struct perf_event_header *h)
{
	const uint64_t *u = (const uint64_t *)(h + 1);

	return h->type == PERF_RECORD_SAMPLE &&
	       (is_munmap_id(ps, u[0]) ||
		dcp_off_cpu_is_own(ps->off_cpu, u[0]));
}

static uint64_t record_time(const struct perf_source *ps,
			    const struct perf_event_header *h)
{
	if (h->type == PERF_RECORD_SAMPLE) {
		const uint64_t *u = (const uint64_t *)(h + 1);

		/* tracepoints have no IP before TID and TIME */
		return is_tracepoint_sample(ps, h) ? u[2] : u[3];
	}
	return dcp_record_sample_id(h) ? dcp_record_sample_id(h)->time : 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * -u: whether process pid belongs to the user, as /proc/PID shows its
 * owner (the effective uid, as perf -u takes it). Asked once a second per
 * process at most; a process gone before its samples are read is not.
 */
static bool owned_by_user(struct perf_source *ps, pid_t pid)
{
	struct owner_entry *e =
		&ps->owners[((uint32_t)pid * 2654435761u) % OWNER_CACHE_SIZE];
	uint64_t now = mono_ns();

	if (pid <= 0)
		return false; /* idle */
	if (e->pid != pid || now - e->checked_ns > OWNER_CACHE_NS) {
		char path[32];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		e->pid = pid;
		e->uid = stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
		e->checked_ns = now;
	}
	return e->uid == ps->uid;
}

/* -u: a process that exits or execs (setuid) is looked up again. */
static void owner_forget(struct perf_source *ps, pid_t pid)
{
	struct owner_entry *e =
		&ps->owners[((uint32_t)pid * 2654435761u) % OWNER_CACHE_SIZE];

	if (e->pid == pid)
		e->pid = 0;
}

/* Work (reading or releasing) that stops at deadline_ns; 0: never. */
static void work_begin(struct perf_source *ps, uint64_t deadline_ns)
{
	ps->work_deadline = deadline_ns;
	ps->work_over = false;
	ps->work_since_clock = 0;
}

/* Whether the poll's time for work is up (checked every few records). */
static bool work_time_up(struct perf_source *ps)
{
	if (ps->work_over)
		return true;
	if (!ps->work_deadline || ++ps->work_since_clock < WORK_CLOCK_EVERY)
		return false;
	ps->work_since_clock = 0;
	ps->work_over = dcp_now_ns(CLOCK_MONOTONIC) >= ps->work_deadline;
	return ps->work_over;
}

/*
 * Whether a poll reads no more of the rings: its time is up, or the window
 * is full (records not read are the kernel's to count as lost then). The
 * walk's drains and the last one at stop read everything.
 */
static bool reading_stops(struct perf_source *ps)
{
	return work_time_up(ps) ||
	       (ps->work_deadline &&
		dcp_reorder_bytes(ps->queue) > REORDER_MAX_BYTES);
}

static int queue_record(const struct perf_event_header *h, void *ctx);

/* A record from a ring, and whether the ring's reading stops after it. */
static int read_record(const struct perf_event_header *h, void *ctx)
{
	struct perf_source *ps = ctx;
	int ret = queue_record(h, ps);

	return ret ? ret : reading_stops(ps) ? WORK_STOP : 0;
}

/* A record from a ring: counted, or queued in the reorder window. */
static int queue_record(const struct perf_event_header *h, void *ctx)
{
	struct perf_source *ps = ctx;
	struct dcp_source_counts *c = &ps->base.counts;
	uint64_t time;

	switch (h->type) {
	case PERF_RECORD_LOST:
		/* accounting needs no ordering */
		c->lost_records += ((const struct dcp_lost_record *)h)->lost;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		c->lost_samples += ((const uint64_t *)(h + 1))[0];
		return 0;
	case PERF_RECORD_THROTTLE:
		c->throttle_events++;
		return 0;
	case PERF_RECORD_CGROUP:
		if (ps->cgroups)
			dcp_cgroup_table_learn_record(ps->cgroups, h);
		return 0;
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		break;
	default:
		return 0;
	}
	if (h->size < sizeof(*h) + sizeof(struct dcp_sample_id))
		return 0;
	if (ps->with_period && h->type == PERF_RECORD_SAMPLE &&
	    !is_tracepoint_sample(ps, h)) {
		/* IDENTIFIER, IP, TID, TIME, CPU, then PERIOD goes */
		size_t head = sizeof(*h) + 5 * sizeof(uint64_t);

		if (h->size < head || h->size + 8u > UINT16_MAX)
			return 0;
		memcpy(ps->with_period, h, head);
		memcpy(ps->with_period + head, &ps->sample_period, 8);
		memcpy(ps->with_period + head + 8,
		       (const unsigned char *)h + head, h->size - head);
		h = (const struct perf_event_header *)ps->with_period;
		((struct perf_event_header *)ps->with_period)->size += 8;
	}
	if (ps->filter_uid) {
		const uint32_t *w = (const uint32_t *)(h + 1);
		const uint64_t *u = (const uint64_t *)(h + 1);

		/* EXIT: pid, ppid, tid, ptid; COMM: pid, tid */
		if (h->type == PERF_RECORD_EXIT ||
		    (h->type == PERF_RECORD_COMM &&
		     (h->misc & PERF_RECORD_MISC_COMM_EXEC)))
			owner_forget(ps, (pid_t)w[0]);
		/* IDENTIFIER, IP, then PID and TID */
		if (h->type == PERF_RECORD_SAMPLE &&
		    !is_tracepoint_sample(ps, h) &&
		    !owned_by_user(ps, (pid_t)(uint32_t)u[2]))
			return 0; /* another user's, as -p drops others */
	}
	time = record_time(ps, h);
	if (time > ps->this_round_max)
		ps->this_round_max = time;
	ps->ring_last_time[ps->reading] = time;
	if (ps->compact && h->type == PERF_RECORD_SAMPLE &&
	    !is_tracepoint_sample(ps, h)) {
		/* the window holds the stack bytes the kernel filled only */
		size_t size = dcp_sample_compact(h, &ps->layout, ps->compact);

		if (size)
			return dcp_reorder_push(ps->queue, time, ps->compact,
						size);
	}
	return dcp_reorder_push(ps->queue, time, h, h->size);
}

/* The munmap tracepoint: IDENTIFIER, TID, TIME, CPU, RAW{u32 size, data}. */
static int deliver_munmap(struct perf_source *ps, uint64_t time,
			  const uint64_t *u, const unsigned char *end)
{
	const unsigned char *raw = (const unsigned char *)&u[4] + 4;
	uint32_t raw_size = *(const uint32_t *)&u[4];
	uint64_t addr, len;

	if (raw + raw_size > end || ps->munmap.addr_offset + 8 > raw_size ||
	    ps->munmap.len_offset + 8 > raw_size)
		return 0;
	memcpy(&addr, raw + ps->munmap.addr_offset, 8);
	memcpy(&len, raw + ps->munmap.len_offset, 8);
	return dcp_recorder_take_munmap(ps->base.sink, time, (uint32_t)u[1],
					addr, len);
}

/* Called by the window in timestamp order for every record. */
static int deliver(uint64_t time, const void *rec, size_t size, void *ctx)
{
	struct perf_source *ps = ctx;
	const struct perf_event_header *h = rec;

	if (time < ps->last_delivered_time)
		ps->base.counts.reorder_late++;
	else
		ps->last_delivered_time = ps->base.delivered_until = time;
	if (h->type == PERF_RECORD_SAMPLE) {
		const uint64_t *u = (const uint64_t *)(h + 1);

		if (is_munmap_id(ps, u[0]))
			return deliver_munmap(
				ps, time, u, (const unsigned char *)rec + size);
		if (dcp_off_cpu_is_own(ps->off_cpu, u[0]))
			return dcp_off_cpu_take(ps->off_cpu, time, h, size);
	}
	return dcp_recorder_take_record(ps->base.sink, time, h, size);
}

/* A release from the window, and whether the release stops after it. */
static int deliver_in_time(uint64_t time, const void *rec, size_t size,
			   void *ctx)
{
	int ret = deliver(time, rec, size, ctx);

	return ret ? ret : work_time_up(ctx) ? WORK_STOP : 0;
}

/*
 * Read the rings into the window, each up to its head of now, beginning
 * after the ring where the last round stopped short. Returns the time up
 * to which the rings that were not read to their head (the poll's time
 * ran out, or the window is full) can still hold nothing older: the
 * newest record read from each (a ring is in time order), UINT64_MAX when
 * every ring was read whole.
 */
static int drain_rings(struct perf_source *ps, uint64_t *unread_after)
{
	size_t n = ps->nr_rings, first = ps->first_ring;

	*unread_after = UINT64_MAX;
	for (size_t k = 0; k < n; k++) {
		size_t i = (first + k) % n;
		int ret = WORK_STOP;

		ps->reading = i;
		if (!reading_stops(ps))
			ret = dcp_ring_drain(&ps->rings[i], read_record, ps);
		if (ret < 0)
			return ret;
		if (ret != WORK_STOP)
			continue;
		/*
		 * The next round begins after the ring where this one
		 * stopped: each ring in turn is read first, or a ring that
		 * refills faster than a poll reads it would keep the others
		 * unread, and the window from releasing anything.
		 */
		if (*unread_after == UINT64_MAX)
			ps->first_ring = (i + 1) % n;
		if (ps->ring_last_time[i] < *unread_after)
			*unread_after = ps->ring_last_time[i];
	}
	return 0;
}

/*
 * Context switches, for the profile's statistics, without a record per
 * switch: a counting event per CPU gives the number. (-p's per-task
 * events have none: their count stays 0. --off-cpu's tracker counts its
 * switch samples instead.)
 */
static void open_switch_counters(struct perf_source *ps)
{
	struct perf_event_attr attr;

	ps->switch_fds = malloc(ps->nr_rings * sizeof(*ps->switch_fds));
	if (!ps->switch_fds)
		return;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	for (size_t i = 0; i < ps->nr_rings; i++)
		ps->switch_fds[i] =
			ps->rings[i].per_task ?
				-1 :
				dcp_perf_event_open(&attr, -1,
						    ps->rings[i].cpu);
}

static void read_switch_counters(struct perf_source *ps)
{
	uint64_t sum = 0, v;
	bool any = false;

	for (size_t i = 0; ps->switch_fds && i < ps->nr_rings; i++)
		if (ps->switch_fds[i] >= 0 &&
		    read(ps->switch_fds[i], &v, sizeof(v)) == sizeof(v)) {
			sum += v;
			any = true;
		}
	if (any)
		ps->base.counts.context_switches = sum;
}

/*
 * One round: drain every ring, then release what no ring can still
 * undercut: everything up to the newest time seen in the previous round
 * (the rule perf uses for its FINISHED_ROUND), and no further than where a
 * ring left unread stopped. If the window holds too much, the oldest
 * records go through regardless and stragglers are counted as late. A
 * poll's round stops at its deadline, reading or releasing, and the next
 * one goes on from there.
 */
static int drain_round(struct perf_source *ps, bool final)
{
	uint64_t end = ps->work_deadline, read_end = 0, unread_after, upto;
	int ret;

	/*
	 * Reading has half the poll's time: copying the rings is cheaper than
	 * delivering what they held, and a poll of 10 ms (top's) spent it all
	 * on 16 MiB rings at 100 kHz and delivered nothing.
	 */
	if (end) {
		uint64_t now = dcp_now_ns(CLOCK_MONOTONIC);

		read_end = now < end ? now + (end - now) / 2 : now;
	}
	work_begin(ps, read_end);
	ret = drain_rings(ps, &unread_after);
	work_begin(ps, end);
	if (ret)
		return ret;
	read_switch_counters(ps);
	if (final)
		return dcp_reorder_flush(ps->queue, UINT64_MAX, deliver, ps);
	upto = ps->round_max_time < unread_after ? ps->round_max_time :
						   unread_after;
	ret = dcp_reorder_flush(ps->queue, upto, deliver_in_time, ps);
	ps->round_max_time = ps->this_round_max;
	while (!ret && dcp_reorder_bytes(ps->queue) > REORDER_MAX_BYTES)
		ret = dcp_reorder_flush(ps->queue,
					dcp_reorder_oldest(ps->queue),
					deliver_in_time, ps);
	if (ret < 0)
		return ret;
	ps->work_pending = ret == WORK_STOP || unread_after != UINT64_MAX;
	/* what the view holds goes up to the last record delivered */
	ps->base.behind_since = 0;
	if (ps->work_pending)
		ps->base.behind_since = ps->last_delivered_time ?
						ps->last_delivered_time :
						dcp_now_ns(CLOCK_MONOTONIC);
	return 0;
}

static int perf_start(struct dcp_source *s,
		      const struct dcp_source_settings *set)
{
	struct perf_source *ps = perf_source(s);
	struct dcp_ring_opts ring_opts;
	char munmap_warning[512] = "";
	int ret;

	ps->layout = *set->layout;
	/* said once the events are on: a refusal is the only line then */
	if (dcp_munmap_tracepoint_find(&ps->munmap))
		snprintf(munmap_warning, sizeof(munmap_warning), "%s",
			 dcp_last_error());

	memset(&ring_opts, 0, sizeof(ring_opts));
	ring_opts.event = &ps->event;
	ring_opts.sample_freq = set->sample_freq;
	ring_opts.sample_period = ps->sample_period;
	ring_opts.cpus = ps->cpus;
	ring_opts.nr_cpus = ps->nr_cpus;
	ring_opts.callchain = set->call_graph == DCP_CALL_GRAPH_FP;
	ring_opts.dwarf = set->call_graph == DCP_CALL_GRAPH_DWARF;
	ring_opts.regs_user_mask = ps->layout.regs_mask;
	ring_opts.stack_user = set->stack_user;
	ring_opts.mmap_pages =
		set->buffer_pages ? set->buffer_pages : default_ring_pages(set);
	/* a switch with its stack is ~300 bytes, and busy CPUs switch tens
	 * of thousands of times a second */
	if (set->off_cpu && !set->buffer_pages && ring_opts.mmap_pages < 1024)
		ring_opts.mmap_pages = 1024;
	ring_opts.munmap = &ps->munmap;
	ring_opts.pids = ps->pids;
	ring_opts.nr_pids = ps->nr_pids;
	ring_opts.no_inherit = ps->no_inherit;
	ring_opts.cgroup = set->cgroups != NULL;
	ps->cgroups = set->cgroups;
	ret = dcp_rings_open(&ring_opts, &ps->rings, &ps->nr_rings);
	if (ret)
		return ret;
	s->nr_cpus = (uint32_t)ps->nr_rings;
	if (set->off_cpu) {
		ps->off_cpu = dcp_off_cpu_open(ps->rings, ps->nr_rings,
					       set->off_cpu_min_ns,
					       set->cgroups != NULL, s);
		if (!ps->off_cpu)
			return -errno;
		ps->kernel_names = dcp_kernel_names_load();
		if (!ps->kernel_names)
			return dcp_error(ENOMEM, "out of memory");
	}
	/* --off-cpu counts the switches from its tracepoint's samples */
	if (!set->off_cpu)
		open_switch_counters(ps);
	/* by the kernel's refusal, not by the event's ":u" */
	s->kernel_excluded =
		ps->rings[0].exclude_kernel && !ps->event.exclude_kernel;
	/* a user without per-CPU events has no tracefs either: one line
	 * says what the recording lacks, the tracepoint's details are -v's */
	if (munmap_warning[0])
		dcp_log(ps->rings[0].per_task ? DCP_LOG_INFO : DCP_LOG_WARN,
			"%s; munmap is tracked by replacing overlapped maps only",
			munmap_warning);
	if (ps->rings[0].per_task)
		dcp_log(DCP_LOG_WARN,
			"no privilege for per-CPU events (perf_event_paranoid is %s): recording the target's own tasks with inherited per-task events%s; a new task's first sample comes one period after it starts, and there is no system-wide view%s",
			paranoid_text(),
			s->kernel_excluded ? ", user frames only" : "",
			munmap_warning[0] ? " (nor munmap tracepoint)" : "");
	dcp_log(DCP_LOG_INFO,
		"ring buffers: %u pages (%u KiB) per CPU, %zu CPUs",
		ring_opts.mmap_pages,
		(unsigned)(ring_opts.mmap_pages *
			   (sysconf(_SC_PAGESIZE) / 1024)),
		ps->nr_rings);
	ps->pollfds = calloc(ps->nr_rings, sizeof(*ps->pollfds));
	ps->ring_last_time = calloc(ps->nr_rings, sizeof(*ps->ring_last_time));
	if (dcp_event_period_omitted(&ps->event, ps->sample_period)) {
		ps->with_period = malloc(1u << 16);
		if (!ps->with_period)
			return dcp_error(ENOMEM, "out of memory");
	}
	/* a sample with its stack copy is at most 64 KiB (a u16 size) */
	if (ps->layout.stack_user)
		ps->compact = malloc(1u << 16);
	if (!ps->pollfds || !ps->ring_last_time ||
	    (ps->layout.stack_user && !ps->compact))
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < ps->nr_rings; i++) {
		ps->pollfds[i].fd = ps->rings[i].fd;
		ps->pollfds[i].events = POLLIN;
	}
	return 0;
}

static int perf_inject(struct dcp_source *s, uint64_t time,
		       const struct perf_event_header *h)
{
	return dcp_reorder_push(perf_source(s)->queue, time, h, h->size);
}

static int perf_begin(struct dcp_source *s)
{
	struct perf_source *ps = perf_source(s);
	int ret = dcp_rings_enable(ps->rings, ps->nr_rings);

	/* the recording starts: the threads off the CPU already have their
	 * waits begin now */
	if (!ret && ps->off_cpu)
		ret = dcp_off_cpu_seed(ps->off_cpu, ps->kernel_names,
				       ps->nr_pids ? ps->pids : NULL,
				       ps->nr_pids);
	dcp_kernel_names_free(ps->kernel_names);
	ps->kernel_names = NULL;
	return ret;
}

static int perf_drain(struct dcp_source *s)
{
	struct perf_source *ps = perf_source(s);
	uint64_t unread_after;

	work_begin(ps, 0);
	return drain_rings(ps, &unread_after);
}

static int perf_poll(struct dcp_source *s, int timeout_ms)
{
	struct perf_source *ps = perf_source(s);
	uint64_t now = dcp_now_ns(CLOCK_MONOTONIC);
	uint64_t deadline = dcp_deadline_after(now, timeout_ms);
	/* no wait while the last poll left records behind */
	int wait_ms = ps->work_pending ? 0 : timeout_ms;
	int ret;

	if (poll(ps->pollfds, ps->nr_rings, wait_ms) < 0 && errno != EINTR)
		return dcp_error(errno, "poll failed: %s", strerror(errno));
	work_begin(ps, dcp_poll_work_deadline(deadline,
					      dcp_now_ns(CLOCK_MONOTONIC)));
	ret = drain_round(ps, false);
	work_begin(ps, 0);
	return ret;
}

static int perf_stop(struct dcp_source *s)
{
	struct perf_source *ps = perf_source(s);
	uint64_t end = dcp_now_ns(CLOCK_MONOTONIC); /* the rings' clock */
	int ret;

	dcp_rings_disable(ps->rings, ps->nr_rings);
	dcp_off_cpu_disable(ps->off_cpu);
	ret = drain_round(ps, true);
	if (!ret)
		ret = dcp_off_cpu_finish(ps->off_cpu, end);
	return ret;
}

static void perf_free(struct dcp_source *s)
{
	struct perf_source *ps = perf_source(s);

	if (!ps)
		return;
	dcp_off_cpu_close(ps->off_cpu);
	dcp_kernel_names_free(ps->kernel_names);
	for (size_t i = 0; ps->switch_fds && i < ps->nr_rings; i++)
		if (ps->switch_fds[i] >= 0)
			close(ps->switch_fds[i]);
	free(ps->switch_fds);
	dcp_rings_close(ps->rings, ps->nr_rings);
	free(ps->pollfds);
	free(ps->ring_last_time);
	dcp_reorder_free(ps->queue);
	free(ps->compact);
	free(ps->pids);
	free(ps->cpus);
	free(ps->owners);
	free(ps->with_period);
	free(ps);
}

static const struct dcp_source_ops perf_source_ops = {
	.start = perf_start,
	.inject = perf_inject,
	.begin = perf_begin,
	.drain = perf_drain,
	.poll = perf_poll,
	.stop = perf_stop,
	.free = perf_free,
};

struct dcp_source *dcp_perf_source_new(const struct dcp_recorder_opts *opts,
				       struct dcp_recorder *sink)
{
	struct perf_source *ps = calloc(1, sizeof(*ps));
	bool no_memory = false;
	int ret;

	if (!ps)
		return dcp_error_null(ENOMEM, "out of memory");
	ps->base.ops = &perf_source_ops;
	ps->base.sink = sink;
	ret = dcp_event_spec_parse(opts->event ? opts->event : "cpu-clock",
				   &ps->event);
	if (ret) {
		free(ps);
		errno = -ret;
		return NULL;
	}
	ps->queue = dcp_reorder_new();
	if (opts->sz >= offsetof(struct dcp_recorder_opts, uid) +
				sizeof(opts->uid) &&
	    dcp_event_period_omitted(&ps->event, opts->sample_period) &&
	    opts->call_graph == DCP_CALL_GRAPH_DWARF) {
		dcp_error(
			EINVAL,
			"-c with the software event '%s' cannot record --call-graph dwarf: use -g, or -F",
			ps->event.name);
		free(ps);
		errno = EINVAL;
		return NULL;
	}
	if (opts->sz >= offsetof(struct dcp_recorder_opts, no_inherit) +
				sizeof(opts->no_inherit))
		ps->no_inherit = opts->no_inherit;
	if (opts->nr_pids) {
		ps->pids = calloc(opts->nr_pids, sizeof(*ps->pids));
		if (ps->pids) {
			memcpy(ps->pids, opts->pids,
			       opts->nr_pids * sizeof(*ps->pids));
			ps->nr_pids = opts->nr_pids;
		}
	}
	if (opts->sz >=
	    offsetof(struct dcp_recorder_opts, uid) + sizeof(opts->uid)) {
		ps->sample_period = opts->sample_period;
		ps->filter_uid = opts->filter_uid;
		ps->uid = (uid_t)opts->uid;
		if (opts->nr_cpus) {
			ps->cpus = calloc(opts->nr_cpus, sizeof(*ps->cpus));
			if (ps->cpus) {
				memcpy(ps->cpus, opts->cpus,
				       opts->nr_cpus * sizeof(*ps->cpus));
				ps->nr_cpus = opts->nr_cpus;
			}
			no_memory |= !ps->cpus;
		}
		if (ps->filter_uid)
			ps->owners =
				calloc(OWNER_CACHE_SIZE, sizeof(*ps->owners));
	}
	if (!ps->queue || (opts->nr_pids && !ps->pids) ||
	    (ps->filter_uid && !ps->owners) || no_memory) {
		dcp_reorder_free(ps->queue);
		free(ps->pids);
		free(ps->cpus);
		free(ps->owners);
		free(ps);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	return &ps->base;
}
