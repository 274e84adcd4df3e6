// SPDX-License-Identifier: MIT
/*
 * Replay: the sync records (MMAP2, COMM, FORK, EXIT and munmap), in time
 * order, into the process table, so that every sample finds the maps its
 * process had when it was taken. MMAP2 names its file by a cookie. FORK,
 * exec and EXIT also give the lifetimes of the recorded processes' threads.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "grow.h"

#include "collect_internal.h"
#include "log_internal.h"
#include "recorder_internal.h"

static bool is_root_target(const struct dcp_recorder *r, pid_t pid)
{
	for (size_t i = 0; i < r->nr_roots; i++)
		if (r->roots[i] == pid)
			return true;
	return false;
}

struct dcp_process *dcp_replay_process(struct dcp_recorder *r, pid_t pid)
{
	struct dcp_process *p = dcp_process_table_find(r->procs, pid);

	if (p)
		return p;
	p = dcp_process_table_get(r->procs, pid);
	if (!p)
		return NULL;
	r->stats.processes_seen++;
	p->target = is_root_target(r, pid);
	return p;
}

/*
 * Thread tid of a recorded process (-p, a command and its children) began
 * at time; before: it existed when recording began. Whole-system
 * recordings keep no lifetimes, nor continuous ones (each period's
 * profile starts anew).
 */
static int life_begin(struct dcp_recorder *r, uint32_t pid, uint32_t tid,
		      uint64_t time, bool before)
{
	const struct dcp_process *p;
	uint64_t start = 0;

	if (!r->targeted || r->periods)
		return 0;
	p = dcp_process_table_find(r->procs, (pid_t)pid);
	if (!p || !p->target)
		return 0;
	if (!before && time > r->start_mono_ns)
		start = time - r->start_mono_ns;
	if (dcp_lives_start(dcp_aggregate_lives(r->agg), pid, tid, start,
			    DCP_LIFE_RUNNING |
				    (start ? 0 : DCP_LIFE_STARTED_BEFORE)))
		return dcp_error(ENOMEM, "out of memory");
	return 0;
}

/* The Dwfl of an unwound process follows its maps through this. */
static void maps_changed(struct dcp_recorder *r, struct dcp_process *p)
{
	p->map_generation = ++r->map_generation;
}

/* Whether any map of p overlaps [start, start + len). */
static bool maps_overlap(const struct dcp_process *p, uint64_t start,
			 uint64_t len)
{
	size_t lo = 0, hi = p->nr_maps;

	/* the first map that ends after start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nr_maps && p->maps[lo].start < start + len;
}

/*
 * A Python interpreter mapped in a recording whose stacks cannot have
 * Python frames (the ring: the kernel's walk knows no interpreter): said
 * once, its stacks keep their native frames.
 */
static void python_without_frames(struct dcp_recorder *r, pid_t pid,
				  const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	if (r->python_said || !r->callchain || !r->backend ||
	    !strcmp(r->backend, "bpf") || !base)
		return;
	base++;
	if (strncmp(base, "python", 6) && strncmp(base, "libpython", 9))
		return;
	r->python_said = true;
	dcp_log(DCP_LOG_WARN,
		"process %d runs Python (%s): Python frames need the BPF "
		"backend (--backend bpf); its stacks keep native frames only",
		(int)pid, base);
}

static int replay_mmap2(struct dcp_recorder *r,
			const struct dcp_mmap2_record *m)
{
	struct dcp_process *p = dcp_replay_process(r, (pid_t)m->pid);
	struct dcp_record_view v;
	uint64_t pgoff = m->pgoff;
	int64_t cookie;

	if (!p)
		return dcp_error(ENOMEM, "out of memory");
	/* outside the recorded trees, maps are never looked up */
	if (r->targeted && !p->target)
		return 0;
	if (m->header.misc & DCP_RECORD_MISC_INJECTED)
		p->injected = true;
	else
		p->live = true;

	/* the collection's decoder: live and injected maps classify alike */
	if (dcp_record_decode(&m->header, m->header.size, &v))
		return 0; /* malformed: cannot happen */
	switch (v.region) {
	case DCP_COOKIE_KIND_VDSO:
		cookie = r->cookie_vdso;
		pgoff = 0;
		break;
	case DCP_COOKIE_KIND_VSYSCALL:
		cookie = r->cookie_vsyscall;
		pgoff = 0;
		break;
	case DCP_COOKIE_KIND_ANON:
		/* every nameless region is one "[anon:exec]", addressed
		 * absolutely, as JIT maps address it */
		cookie = r->cookie_anon;
		pgoff = m->addr;
		break;
	default:
		cookie = dcp_record_intern(r->cookies, &v);
		if (cookie < 0)
			return (int)cookie;
		if (m->prot & PROT_EXEC)
			python_without_frames(r, (pid_t)m->pid, v.filename);
	}
	/* JIT code mapped again and again needs no new Dwfl */
	if (r->unwinder &&
	    (cookie != r->cookie_anon || maps_overlap(p, m->addr, m->len)))
		maps_changed(r, p);
	return dcp_process_map_insert(p, m->addr, m->len, pgoff,
				      (uint32_t)cookie, m->prot);
}

static int replay_comm(struct dcp_recorder *r, const struct dcp_comm_record *c)
{
	struct dcp_process *p;

	/* a thread's own name does not rename its process: it is the
	 * thread's, which its samples are counted under */
	if (c->pid != c->tid &&
	    !(c->header.misc & PERF_RECORD_MISC_COMM_EXEC)) {
		char comm[sizeof(p->comm)];

		p = dcp_replay_process(r, (pid_t)c->pid);
		if (!p)
			return dcp_error(ENOMEM, "out of memory");
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(comm) - 1,
			 c->comm);
		return dcp_process_thread_set(p, (pid_t)c->tid, comm);
	}
	p = dcp_replay_process(r, (pid_t)c->pid);
	if (!p)
		return dcp_error(ENOMEM, "out of memory");
	if (c->header.misc & DCP_RECORD_MISC_INJECTED) {
		p->injected = true;
	} else {
		p->live = true;
		if (c->header.misc & PERF_RECORD_MISC_COMM_EXEC) {
			dcp_process_exec(p);
			p->exec_time = dcp_record_sample_id(&c->header)->time;
			maps_changed(r, p);
			p->user_id = 0; /* a new program may JIT anew */
			/* a command started by the recorder is first seen
			 * here, before its fork was recorded: it began then */
			if (life_begin(r, c->pid, c->tid, p->exec_time, false))
				return -ENOMEM;
		}
	}
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)sizeof(p->comm) - 1,
		 c->comm);
	return 0;
}

static int replay_fork(struct dcp_recorder *r, const struct dcp_task_record *t)
{
	struct dcp_process *p;

	if (t->header.misc & DCP_RECORD_MISC_INJECTED) {
		/*
		 * The walk describes a task that live records may already
		 * have described (it forked after the events were enabled):
		 * the live state wins, so a task seen both ways is one task.
		 */
		if (t->pid != t->tid)
			return life_begin(r, t->pid, t->tid, t->time, true);
		p = dcp_process_table_find(r->procs, (pid_t)t->pid);
		if (p && p->live)
			return 0;
		p = dcp_replay_process(r, (pid_t)t->pid);
		if (!p)
			return dcp_error(ENOMEM, "out of memory");
		p->injected = true;
		p->ppid = (pid_t)t->ppid;
		p->start_time = t->time;
		r->stats.tasks_injected++;
		return life_begin(r, t->pid, t->tid, t->time, true);
	}
	if (t->pid == t->ppid) /* a new thread shares its process's maps */
		return life_begin(r, t->pid, t->tid, t->time, false);
	/* the pid of a process that exited within the grace, reused */
	p = dcp_process_table_find(r->procs, (pid_t)t->pid);
	if (p && r->unwinder)
		dcp_unwinder_forget(r->unwinder, (pid_t)t->pid);
	p = dcp_process_table_fork(r->procs, (pid_t)t->ppid, (pid_t)t->pid);
	if (!p)
		return dcp_error(ENOMEM, "out of memory");
	r->stats.processes_seen++;
	p->live = true;
	p->born_live = true;
	p->start_time = t->time;
	maps_changed(r, p);
	if (is_root_target(r, p->pid))
		p->target = true;
	else if (r->no_inherit)
		p->target = false; /* a child of a target, left out */
	return life_begin(r, t->pid, t->tid, t->time, false);
}

/*
 * The kernel writes a task's EXIT record before the task has finished
 * exiting: samples of its last steps (freeing its memory and files, the
 * final switch away) carry later times, measured up to ~120 us after the
 * record in a fork storm. A task stays findable this long after its exit,
 * so that those samples keep its name instead of a bare pid.
 */
#define EXIT_GRACE_NS (100ull * 1000 * 1000)

static void retire(struct dcp_recorder *r, const struct dcp_exit_pending *e)
{
	struct dcp_process *p = dcp_process_table_find(r->procs, e->pid);

	if (!p)
		return;
	if (e->pid != e->tid) {
		dcp_process_thread_remove(p, e->tid);
		return;
	}
	/* a new process that reuses the pid is not this exit's */
	if (!p->exited || p->exit_time != e->time)
		return;
	dcp_process_table_remove(r->procs, e->pid);
	if (r->unwinder)
		dcp_unwinder_forget(r->unwinder, e->pid);
}

void dcp_replay_retire(struct dcp_recorder *r, uint64_t time)
{
	while (r->exits_first < r->nr_exits &&
	       r->exits[r->exits_first].time + EXIT_GRACE_NS <= time)
		retire(r, &r->exits[r->exits_first++]);
	if (r->exits_first == r->nr_exits)
		r->exits_first = r->nr_exits = 0;
}

static int replay_exit(struct dcp_recorder *r, const struct dcp_task_record *t)
{
	struct dcp_exit_pending *exits = r->exits;
	struct dcp_process *p;

	/* keep the queue compact: it holds one grace period of exits */
	if (r->exits_first && r->exits_first >= r->nr_exits / 2) {
		r->nr_exits -= r->exits_first;
		memmove(exits, exits + r->exits_first,
			r->nr_exits * sizeof(*exits));
		r->exits_first = 0;
	}
	exits = dcp_grow(exits, &r->cap_exits, r->nr_exits + 1, sizeof(*exits));
	if (!exits)
		return dcp_error(ENOMEM, "out of memory");
	r->exits = exits;
	exits[r->nr_exits++] = (struct dcp_exit_pending){
		.time = t->time, .pid = (pid_t)t->pid, .tid = (pid_t)t->tid
	};
	p = dcp_process_table_find(r->procs, (pid_t)t->pid);
	if (p && t->pid == t->tid) {
		p->exited = true;
		p->exit_time = t->time;
	}
	if (r->targeted)
		dcp_lives_end(dcp_aggregate_lives(r->agg), t->tid,
			      t->time > r->start_mono_ns ?
				      t->time - r->start_mono_ns :
				      0);
	return 0;
}

int dcp_replay_record(struct dcp_recorder *r, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return replay_mmap2(r, (const void *)h);
	case PERF_RECORD_COMM:
		return replay_comm(r, (const void *)h);
	case PERF_RECORD_FORK:
		return replay_fork(r, (const void *)h);
	case PERF_RECORD_EXIT:
		return replay_exit(r, (const void *)h);
	default:
		return 0;
	}
}

int dcp_replay_munmap(struct dcp_recorder *r, uint32_t pid, uint64_t addr,
		      uint64_t len)
{
	struct dcp_process *p = dcp_process_table_find(r->procs, (pid_t)pid);

	if (!p)
		return 0;
	/* most munmaps free data, which no map here describes */
	if (r->unwinder && maps_overlap(p, addr, len))
		maps_changed(r, p);
	return dcp_process_map_remove(p, addr, len);
}
