// SPDX-License-Identifier: MIT
/*
 * Off-CPU time from the perf ring (record --off-cpu): sched:sched_switch
 * (with call chains) and sched:sched_wakeup (without: the woken pid) on
 * every CPU, routed into that CPU's ring, and the tracker that pairs a
 * thread's switch-out with its next switch-in. Only the threads switched
 * out right now are kept (their time, why, wake-up and stack); a finished
 * block goes to the recorder, which adds it to the stack's row: nothing
 * is kept per switch.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "index.h"
#include "log_internal.h"
#include "off_cpu_internal.h"
#include "records_internal.h"

/* Frames kept of a switched-out stack (perf_event_max_stack is 127). */
#define SWITCH_MAX_IPS 256u

/* prev_state as the tracepoint reports it: the low byte the task state
 * (0: runnable), 0x100 preemption */
#define STATE_INTERRUPTIBLE 0x01u
#define STATE_UNINTERRUPTIBLE 0x02u
#define STATE_DEAD 0x30u /* EXIT_DEAD, EXIT_ZOMBIE: never back */

struct switched_out {
	uint32_t tid;
	uint32_t pid;
	uint64_t time;
	uint64_t woken; /* a sleep's wake-up, 0 until then */
	uint32_t state; /* enum dcp_off_cpu_state */
	/* found off the CPU when recording began (dcp_off_cpu_under_way):
	 * records older than time are of before, not of this block */
	bool under_way;
	uint64_t cgroup; /* the thread's cgroup id at the switch-out, 0 */
	uint32_t nr_ips;
	uint64_t ips[SWITCH_MAX_IPS];
};

struct dcp_off_cpu_tracker {
	struct dcp_source *source;
	uint64_t min_ns;
	bool cgroups; /* switch samples carry the cgroup id after RAW */
	uint64_t tp_id;
	uint32_t prev_pid_off, prev_state_off, next_pid_off;
	int *fds;
	uint64_t *ids;
	size_t nr_fds;
	/* sched:sched_wakeup per CPU (fds -1 when it cannot be opened: a
	 * sleep then ends at its switch-in, its wait for a CPU included) */
	uint64_t wakeup_tp_id;
	uint32_t woken_pid_off;
	int *wakeup_fds;
	uint64_t *wakeup_ids;
	/* sleeps ended with no wake-up seen: their wait for a CPU, if any,
	 * is counted as sleeping */
	uint64_t unsplit;

	/* the threads switched out now: entries found by tid through the
	 * index (index.nr of them live); freed entries form a list */
	struct dcp_index index;
	struct switched_out *entries;
	size_t nr_entries, cap_entries;
	uint32_t *free_list;
	size_t nr_free, cap_free;
};

/*
 * Tracepoint tp_id on the ring's CPU, into the ring: *fd and *id. name
 * for messages; callchain: with the stack of the task it fires in.
 */
static int open_tracepoint(const char *name, uint64_t tp_id, bool callchain,
			   bool cgroup, struct dcp_ring *ring, int *fd,
			   uint64_t *id)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = tp_id;
	attr.sample_period = 1;
	attr.sample_type = DCP_SAMPLE_ID_TYPE | PERF_SAMPLE_RAW |
			   (callchain ? PERF_SAMPLE_CALLCHAIN : 0) |
			   (cgroup ? PERF_SAMPLE_CGROUP : 0);
	attr.sample_id_all = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	*fd = dcp_perf_event_open(&attr, -1, ring->cpu);
	if (*fd < 0)
		return dcp_error(errno,
				 "cannot open %s on cpu %d for --off-cpu: %s",
				 name, ring->cpu, strerror(errno));
	if (ioctl(*fd, PERF_EVENT_IOC_ID, id) < 0 ||
	    ioctl(*fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0)
		return dcp_error(errno,
				 "cannot route %s into the ring of cpu %d: %s",
				 name, ring->cpu, strerror(errno));
	return 0;
}

static void close_wakeups(struct dcp_off_cpu_tracker *t)
{
	for (size_t i = 0; t->wakeup_fds && i < t->nr_fds; i++) {
		if (t->wakeup_fds[i] >= 0)
			close(t->wakeup_fds[i]);
		t->wakeup_fds[i] = -1;
	}
}

/*
 * sched:sched_wakeup on every CPU, for where a sleep ends. Optional: when
 * it cannot be, the sleeps end at their switch-in as before, said once.
 */
static void open_wakeups(struct dcp_off_cpu_tracker *t, struct dcp_ring *rings)
{
	char format[4096];
	int ret;

	ret = dcp_tracefs_event("sched/sched_wakeup", &t->wakeup_tp_id, format,
				sizeof(format));
	if (!ret && dcp_tracefs_field_offset(format, "pid", &t->woken_pid_off))
		ret = dcp_error(
			EINVAL,
			"cannot parse the format of sched:sched_wakeup");
	for (size_t i = 0; !ret && i < t->nr_fds; i++)
		ret = open_tracepoint("sched:sched_wakeup", t->wakeup_tp_id,
				      false, false, &rings[i],
				      &t->wakeup_fds[i], &t->wakeup_ids[i]);
	if (!ret)
		return;
	dcp_log(DCP_LOG_INFO,
		"%s: a sleep's wait for a CPU after its wake-up is counted as "
		"sleeping",
		dcp_last_error());
	close_wakeups(t);
}

struct dcp_off_cpu_tracker *dcp_off_cpu_open(struct dcp_ring *rings,
					     size_t nr_rings, uint64_t min_ns,
					     bool cgroups,
					     struct dcp_source *source)
{
	struct dcp_off_cpu_tracker *t = calloc(1, sizeof(*t));
	char format[4096];
	int ret;

	if (!t)
		return dcp_error_null(ENOMEM, "out of memory");
	t->source = source;
	t->min_ns = min_ns;
	t->cgroups = cgroups;
	/* before the tracepoint, whose files such a user cannot read */
	if (rings[0].per_task) {
		ret = dcp_error(EPERM,
				"--off-cpu needs per-CPU events of every task: "
				"run as root or with CAP_PERFMON");
		goto fail;
	}
	ret = dcp_tracefs_event("sched/sched_switch", &t->tp_id, format,
				sizeof(format));
	if (ret)
		goto fail;
	if (dcp_tracefs_field_offset(format, "prev_pid", &t->prev_pid_off) ||
	    dcp_tracefs_field_offset(format, "prev_state",
				     &t->prev_state_off) ||
	    dcp_tracefs_field_offset(format, "next_pid", &t->next_pid_off)) {
		ret = dcp_error(
			EINVAL,
			"cannot parse the format of sched:sched_switch");
		goto fail;
	}
	t->fds = calloc(nr_rings, sizeof(*t->fds));
	t->ids = calloc(nr_rings, sizeof(*t->ids));
	t->wakeup_fds = calloc(nr_rings, sizeof(*t->wakeup_fds));
	t->wakeup_ids = calloc(nr_rings, sizeof(*t->wakeup_ids));
	if (!t->fds || !t->ids || !t->wakeup_fds || !t->wakeup_ids ||
	    dcp_index_init(&t->index, 1024) < 0) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nr_rings; i++)
		t->fds[i] = t->wakeup_fds[i] = -1;
	t->nr_fds = nr_rings;
	for (size_t i = 0; i < nr_rings; i++) {
		ret = open_tracepoint("sched:sched_switch", t->tp_id, true,
				      t->cgroups, &rings[i], &t->fds[i],
				      &t->ids[i]);
		if (ret)
			goto fail;
	}
	open_wakeups(t, rings);
	return t;
fail:
	dcp_off_cpu_close(t);
	errno = -ret;
	return NULL;
}

static bool is_switch(const struct dcp_off_cpu_tracker *t, uint64_t id)
{
	for (size_t i = 0; i < t->nr_fds; i++)
		if (t->ids[i] == id && t->fds[i] >= 0)
			return true;
	return false;
}

static bool is_wakeup(const struct dcp_off_cpu_tracker *t, uint64_t id)
{
	for (size_t i = 0; i < t->nr_fds; i++)
		if (t->wakeup_ids[i] == id && t->wakeup_fds[i] >= 0)
			return true;
	return false;
}

bool dcp_off_cpu_is_own(const struct dcp_off_cpu_tracker *t, uint64_t id)
{
	return t && (is_switch(t, id) || is_wakeup(t, id));
}

static uint64_t tid_hash(uint32_t tid)
{
	return dcp_hash_fmix64(tid);
}

static uint64_t entry_hash_of(const void *ctx, uint32_t index)
{
	const struct dcp_off_cpu_tracker *t = ctx;

	return tid_hash(t->entries[index].tid);
}

/* The slot holding tid, or the free slot where it would go. */
static size_t find_slot(const struct dcp_off_cpu_tracker *t, uint32_t tid)
{
	size_t pos;
	uint32_t index;

	dcp_index_for_each(&t->index, tid_hash(tid), pos, index) {
		if (t->entries[index].tid == tid)
			break;
	}
	return pos;
}

/* Remove slot i, its entry going to the free list. */
static void remove_slot(struct dcp_off_cpu_tracker *t, size_t i)
{
	t->free_list[t->nr_free++] = t->index.slots[i] - 1;
	dcp_index_remove(&t->index, i, entry_hash_of, t);
}

/* A free entry for a new thread switched out; NULL when out of memory. */
static struct switched_out *new_entry(struct dcp_off_cpu_tracker *t,
				      uint32_t *index)
{
	void *p;

	if (t->nr_free) {
		*index = t->free_list[--t->nr_free];
		return &t->entries[*index];
	}
	p = dcp_grow(t->entries, &t->cap_entries, t->nr_entries + 1,
		     sizeof(*t->entries));
	if (!p)
		return NULL;
	t->entries = p;
	p = dcp_grow(t->free_list, &t->cap_free, t->nr_entries + 1,
		     sizeof(*t->free_list));
	if (!p)
		return NULL;
	t->free_list = p;
	*index = (uint32_t)t->nr_entries++;
	return &t->entries[*index];
}

static uint32_t state_of(uint64_t prev_state)
{
	if (!(prev_state & 0xff))
		return DCP_OFF_CPU_RUNNABLE;
	if (prev_state & STATE_UNINTERRUPTIBLE)
		return DCP_OFF_CPU_UNINTERRUPTIBLE;
	return DCP_OFF_CPU_INTERRUPTIBLE;
}

/* The entry of tid, new when it has none; NULL when out of memory. */
static struct switched_out *entry_of(struct dcp_off_cpu_tracker *t,
				     uint32_t tid)
{
	size_t i = find_slot(t, tid);
	uint32_t index;
	struct switched_out *e;

	if (t->index.slots[i])
		return &t->entries[t->index.slots[i] - 1];
	e = new_entry(t, &index);
	if (!e)
		return NULL;
	/* the caller sets e->tid, which growing the index does not read */
	if (dcp_index_add(&t->index, i, tid_hash(tid), index, entry_hash_of,
			  t) < 0) {
		t->free_list[t->nr_free++] = index;
		return NULL;
	}
	return e;
}

static void set_stack(struct switched_out *e, const uint64_t *chain,
		      uint64_t nr_chain)
{
	e->nr_ips =
		nr_chain < SWITCH_MAX_IPS ? (uint32_t)nr_chain : SWITCH_MAX_IPS;
	memcpy(e->ips, chain, e->nr_ips * sizeof(*e->ips));
}

/* tid off the CPU since time, in state, on the stack chain. */
static int keep_out(struct dcp_off_cpu_tracker *t, uint32_t pid, uint32_t tid,
		    uint64_t time, uint32_t state, bool under_way,
		    uint64_t cgroup, const uint64_t *chain, uint64_t nr_chain)
{
	struct switched_out *e = entry_of(t, tid);

	if (!e)
		return dcp_error(ENOMEM, "out of memory");
	e->tid = tid;
	e->pid = pid;
	e->time = time;
	e->woken = 0;
	e->state = state;
	e->under_way = under_way;
	e->cgroup = cgroup;
	set_stack(e, chain, nr_chain);
	return 0;
}

static int switch_out(struct dcp_off_cpu_tracker *t, uint64_t time,
		      uint32_t pid, uint32_t tid, uint64_t prev_state,
		      uint64_t cgroup, const uint64_t *chain, uint64_t nr_chain)
{
	struct switched_out *e;
	size_t i;

	t->source->counts.off_cpu_switches++;
	i = find_slot(t, tid);
	if (t->index.slots[i] && t->entries[t->index.slots[i] - 1].under_way &&
	    time <= t->entries[t->index.slots[i] - 1].time) {
		/* the switch-out that began a wait found under way: its
		 * stack is the whole one */
		e = &t->entries[t->index.slots[i] - 1];
		set_stack(e, chain, nr_chain);
		e->under_way = false;
		e->cgroup = cgroup;
		return 0;
	}
	/* still out: it ran again, but its switch-in never came (some
	 * switches do not reach the tracepoint), and the block it ended has
	 * no end to charge */
	if (t->index.slots[i])
		t->source->counts.off_cpu_missed_switch_ins++;
	if (prev_state & STATE_DEAD) {
		if (t->index.slots[i])
			remove_slot(t, i);
		return 0;
	}
	return keep_out(t, pid, tid, time, state_of(prev_state), false, cgroup,
			chain, nr_chain);
}

int dcp_off_cpu_under_way(struct dcp_off_cpu_tracker *t, uint64_t time,
			  uint32_t pid, uint32_t tid, uint32_t state,
			  const uint64_t *chain, uint64_t nr_chain)
{
	int ret;

	if (t->index.slots[find_slot(t, tid)])
		return 0; /* its switch-out is known */
	ret = keep_out(t, pid, tid, time, state, true, 0, chain, nr_chain);
	if (!ret)
		t->source->counts.off_cpu_under_way++;
	return ret;
}

/* e's block up to time to the recorder, split at its wake-up; ended: at
 * its switch-in (else it is still out, and a sleep may not be woken yet). */
static int charge(struct dcp_off_cpu_tracker *t, const struct switched_out *e,
		  uint64_t time, bool ended)
{
	struct dcp_off_cpu_block b = { 0 };

	b.pid = e->pid;
	b.tid = e->tid;
	b.ips = e->ips;
	b.nr_ips = e->nr_ips;
	b.cgroup_id = e->cgroup;
	if (e->state != DCP_OFF_CPU_RUNNABLE && e->woken > e->time &&
	    e->woken < time) {
		/* the wait for a CPU after the wake-up is CPU contention */
		b.ns[e->state] = e->woken - e->time;
		b.ns[DCP_OFF_CPU_RUNNABLE] = time - e->woken;
	} else {
		if (ended && e->state != DCP_OFF_CPU_RUNNABLE && !e->woken)
			t->unsplit++;
		b.ns[e->state] = time - e->time;
	}
	return dcp_recorder_take_off_cpu(t->source->sink, time, &b);
}

static int switch_in(struct dcp_off_cpu_tracker *t, uint64_t time, uint32_t tid)
{
	size_t i = find_slot(t, tid);
	struct switched_out *e;
	uint64_t ns;

	if (!t->index.slots[i])
		return 0; /* switched out before recording began, or taken */
	e = &t->entries[t->index.slots[i] - 1];
	if (e->under_way && time <= e->time)
		return 0; /* of before the wait found under way */
	ns = time > e->time ? time - e->time : 0;
	remove_slot(t, i);
	if (ns < t->min_ns || !ns) {
		t->source->counts.off_cpu_short++;
		return 0;
	}
	/* the entry stays intact until the next switch-out reuses it */
	return charge(t, e, time, true);
}

/*
 * A wake-up: IDENTIFIER, TID (the waker's), TIME, CPU, RAW (u32 size, the
 * tracepoint's record with the woken pid). Only a sleep's first counts.
 */
static void take_wakeup(struct dcp_off_cpu_tracker *t, uint64_t time,
			const unsigned char *p, const unsigned char *end)
{
	const unsigned char *raw = p + 36;
	uint32_t raw_size;
	int32_t pid;
	size_t i;

	if (end - p < 36)
		return;
	memcpy(&raw_size, p + 32, 4);
	if (raw_size > (size_t)(end - raw) || t->woken_pid_off + 4 > raw_size)
		return;
	memcpy(&pid, raw + t->woken_pid_off, 4);
	if (pid <= 0)
		return;
	i = find_slot(t, (uint32_t)pid);
	if (t->index.slots[i]) {
		struct switched_out *e = &t->entries[t->index.slots[i] - 1];

		if (e->state != DCP_OFF_CPU_RUNNABLE && !e->woken)
			e->woken = time;
	}
}

/*
 * A switch: IDENTIFIER, TID (pid, tid), TIME, CPU, CALLCHAIN (nr, ips),
 * RAW (u32 size, the tracepoint's record).
 */
int dcp_off_cpu_take(struct dcp_off_cpu_tracker *t, uint64_t time,
		     const struct perf_event_header *h, size_t size)
{
	const unsigned char *p = (const unsigned char *)(h + 1);
	const unsigned char *end = (const unsigned char *)h + size;
	const unsigned char *raw;
	uint64_t nr_chain, prev_state = 0, id, cgroup = 0;
	uint32_t pid, tid, raw_size;
	int32_t prev_pid, next_pid;
	const uint64_t *chain;
	int ret = 0;

	if (end - p < 8)
		return 0;
	memcpy(&id, p, 8);
	if (is_wakeup(t, id)) {
		take_wakeup(t, time, p, end);
		return 0;
	}
	if (end - p < 40)
		return 0;
	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	memcpy(&nr_chain, p + 32, 8);
	chain = (const uint64_t *)(p + 40);
	if (nr_chain > (uint64_t)(end - p - 40) / 8 ||
	    nr_chain * 8 + 4 > (uint64_t)(end - p - 40))
		return 0;
	raw = p + 40 + nr_chain * 8;
	memcpy(&raw_size, raw, 4);
	raw += 4;
	if (raw_size > (size_t)(end - raw) ||
	    t->prev_state_off + 8 > raw_size ||
	    t->prev_pid_off + 4 > raw_size || t->next_pid_off + 4 > raw_size)
		return 0;
	/* RAW's u32 size and data end 8-byte aligned; CGROUP follows */
	if (t->cgroups) {
		const unsigned char *c = raw + raw_size;

		if (end - c < 8)
			return 0;
		memcpy(&cgroup, c, 8);
	}
	memcpy(&prev_pid, raw + t->prev_pid_off, 4);
	memcpy(&prev_state, raw + t->prev_state_off, 8);
	memcpy(&next_pid, raw + t->next_pid_off, 4);
	/* in place of the source's counting event, which --off-cpu leaves
	 * out (a second event in every switch) */
	t->source->counts.context_switches++;
	/* idle is no thread's waiting */
	if (prev_pid > 0 && (uint32_t)prev_pid == tid)
		ret = switch_out(t, time, pid, tid, prev_state, cgroup, chain,
				 nr_chain);
	if (!ret && next_pid > 0)
		ret = switch_in(t, time, (uint32_t)next_pid);
	return ret;
}

void dcp_off_cpu_disable(struct dcp_off_cpu_tracker *t)
{
	for (size_t i = 0; t && i < t->nr_fds; i++) {
		if (t->fds[i] >= 0)
			ioctl(t->fds[i], PERF_EVENT_IOC_DISABLE, 0);
		if (t->wakeup_fds[i] >= 0)
			ioctl(t->wakeup_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	}
}

int dcp_off_cpu_finish(struct dcp_off_cpu_tracker *t, uint64_t end)
{
	int ret = 0;

	if (!t)
		return 0;
	t->source->counts.off_cpu_unfinished += t->index.nr;
	/* a thread still out (a hung one, a daemon's idle worker) has its
	 * time up to the end charged: the question off-CPU time answers
	 * most is where a thread is stuck now */
	for (size_t i = 0; i <= t->index.mask && !ret; i++) {
		const struct switched_out *e;

		if (!t->index.slots[i])
			continue;
		e = &t->entries[t->index.slots[i] - 1];
		if (end > e->time && end - e->time >= t->min_ns)
			ret = charge(t, e, end, false);
	}
	if (t->unsplit)
		dcp_log(DCP_LOG_INFO,
			"--off-cpu: %" PRIu64 " sleeps ended with no wake-up "
			"seen: any wait for a CPU after it is counted as "
			"sleeping",
			t->unsplit);
	return ret;
}

void dcp_off_cpu_close(struct dcp_off_cpu_tracker *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->fds && i < t->nr_fds; i++)
		if (t->fds[i] >= 0)
			close(t->fds[i]);
	close_wakeups(t);
	free(t->fds);
	free(t->ids);
	free(t->wakeup_fds);
	free(t->wakeup_ids);
	dcp_index_free(&t->index);
	free(t->entries);
	free(t->free_list);
	free(t);
}
