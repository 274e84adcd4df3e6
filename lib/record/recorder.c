// SPDX-License-Identifier: MIT
/*
 * The recorder: drains the per-CPU rings into the reorder window, replays
 * records in timestamp order against the process table, turns every
 * sampled ip into (cookie, offset), aggregates, and keeps the profile file
 * up to date. See docs/ARCHITECTURE.md for the pipeline.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "aggregate_internal.h"
#include "collect_internal.h"
#include "cookie_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "perfmap_internal.h"
#include "process_internal.h"
#include "profile_internal.h"
#include "records_internal.h"
#include "reorder_internal.h"
#include "ring_internal.h"
#include "symbolize_internal.h"
#include "symtab_internal.h"
#include "unwind_internal.h"

#define MAX_STACK 512
/* Past this much queued data the window gives way to bounded memory. */
#define REORDER_MAX_BYTES (256u << 20)

struct dcp_recorder {
	char *output;
	char *event_name;
	char *cmdline;
	struct dcp_event_spec event;
	uint32_t sample_freq;
	bool callchain; /* any call graph: the profile's meta flag */
	enum dcp_call_graph call_graph;
	uint32_t stack_user; /* dwarf: bytes of user stack per sample */
	uint32_t flush_interval_ms;

	struct dcp_ring *rings;
	size_t nr_rings;
	struct pollfd *pollfds;
	struct dcp_munmap_tracepoint munmap;

	struct dcp_reorder *queue;
	uint64_t round_max_time; /* newest timestamp seen in the last round */
	uint64_t this_round_max;
	uint64_t last_processed_time;

	/* samples held until the collection walk is replayed (hold_sample) */
	unsigned char *held;
	size_t held_len, held_cap;
	uint64_t hold_until; /* when the walk ended; 0: nothing is held */
	uint64_t samples_held;

	struct dcp_cookie_table *cookies;
	struct dcp_process_table *procs;
	struct dcp_aggregate *agg;
	struct dcp_kernel_layout kernel;
	uint32_t cookie_vdso, cookie_vsyscall, cookie_anon, cookie_idle;

	/* -p / command mode: only these trees are kept */
	bool targeted;
	pid_t *roots;
	size_t nr_roots;

	struct dcp_profile_writer *writer;
	struct dcp_profile_meta meta;
	struct dcp_profile_stats stats;
	char hostname[65];
	char kernel_release[65];
	uint64_t start_mono_ns;
	uint64_t next_flush_ns;
	int write_error;
	bool finished;

	struct dcp_frame frames[MAX_STACK];

	/* --call-graph dwarf */
	struct dcp_sample_layout layout;
	struct dcp_unwinder *unwinder;
	uint64_t map_generation; /* the last one given to a process */
	unsigned char *compact; /* a sample with its stack copy cut */
	struct dcp_unwind_frame uframes[MAX_STACK];
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool is_root_target(const struct dcp_recorder *r, pid_t pid)
{
	for (size_t i = 0; i < r->nr_roots; i++)
		if (r->roots[i] == pid)
			return true;
	return false;
}

/* The process for a record, created on first sight (marked if a root). */
static struct dcp_process *process_get(struct dcp_recorder *r, pid_t pid)
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

static int64_t comm_id_of(struct dcp_recorder *r, pid_t pid, const char *comm)
{
	char name[32];

	if (comm[0])
		return dcp_aggregate_intern_string(r->agg, comm);
	snprintf(name, sizeof(name), ":%d", pid);
	return dcp_aggregate_intern_string(r->agg, name);
}

/* ---- sync records -------------------------------------------------------- */

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

static int handle_mmap2(struct dcp_recorder *r,
			const struct dcp_mmap2_record *m)
{
	struct dcp_process *p = process_get(r, (pid_t)m->pid);
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
	}
	/* JIT code mapped again and again needs no new Dwfl */
	if (r->unwinder &&
	    (cookie != r->cookie_anon || maps_overlap(p, m->addr, m->len)))
		maps_changed(r, p);
	return dcp_process_map_insert(p, m->addr, m->len, pgoff,
				      (uint32_t)cookie, m->prot);
}

static int handle_comm(struct dcp_recorder *r, const struct dcp_comm_record *c)
{
	struct dcp_process *p;

	/* a thread's own name does not rename its process */
	if (c->pid != c->tid && !(c->header.misc & PERF_RECORD_MISC_COMM_EXEC))
		return 0;
	p = process_get(r, (pid_t)c->pid);
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
		}
	}
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)sizeof(p->comm) - 1,
		 c->comm);
	return 0;
}

static int handle_fork(struct dcp_recorder *r, const struct dcp_task_record *t)
{
	struct dcp_process *p;

	if (t->header.misc & DCP_RECORD_MISC_INJECTED) {
		/*
		 * The walk describes a task that live records may already
		 * have described (it forked after the events were enabled):
		 * the live state wins, so a task seen both ways is one task.
		 */
		if (t->pid != t->tid)
			return 0;
		p = dcp_process_table_find(r->procs, (pid_t)t->pid);
		if (p && p->live)
			return 0;
		p = process_get(r, (pid_t)t->pid);
		if (!p)
			return dcp_error(ENOMEM, "out of memory");
		p->injected = true;
		p->ppid = (pid_t)t->ppid;
		p->start_time = t->time;
		r->stats.tasks_injected++;
		return 0;
	}
	if (t->pid == t->ppid)
		return 0; /* a new thread shares its process's maps */
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
	return 0;
}

static int handle_exit(struct dcp_recorder *r, const struct dcp_task_record *t)
{
	/*
	 * Records arrive in time order, so every sample of this process that
	 * is older than its exit has been consumed: retire it now.
	 */
	if (t->pid == t->tid) {
		dcp_process_table_remove(r->procs, (pid_t)t->pid);
		if (r->unwinder)
			dcp_unwinder_forget(r->unwinder, (pid_t)t->pid);
	}
	return 0;
}

/* ---- samples -------------------------------------------------------------- */

static void pin_file(struct dcp_recorder *r, const struct dcp_process *p,
		     const struct dcp_map *map)
{
	char path[96];
	int fd;

	dcp_cookie_table_set_pin_tried(r->cookies, map->cookie);
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 p->pid, map->start, map->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* the process is gone already: symbols come from the path,
		 * if its identity still matches */
		r->stats.files_unpinned++;
		return;
	}
	dcp_cookie_table_pin(r->cookies, map->cookie, fd);
	r->stats.files_pinned++;
}

static bool is_kernel_ip(uint64_t ip)
{
	return ip >= 0xffff800000000000ull;
}

/* One ip into a frame; caller frames are looked up at ip - 1, inside the
 * call instruction, so that a call at the very end of a function is not
 * attributed to the next one. */
/* The real uid of a process, from /proc/PID/status; -1 when it is gone. */
static int64_t process_uid(pid_t pid)
{
	char path[64], line[256];
	int64_t uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Uid:", 4)) {
			uid = strtoll(line + 4, NULL, 10);
			break;
		}
	fclose(f);
	return uid;
}

/*
 * A process that describes its JIT code in /tmp/perf-PID.map gets a JIT
 * cookie of its own, holding the map file open like any sampled file, so
 * its anonymous executable memory is named at the end even if the file
 * goes away. Looked for once, at its first sample in anonymous memory; a
 * map owned by another user than the process's is ignored.
 */
#define JIT_NONE UINT32_MAX

static uint32_t jit_cookie_of(struct dcp_recorder *r,
			      const struct dcp_process *cp)
{
	/* the process table hands out mutable entries; only this cache
	 * field is written here */
	struct dcp_process *p = (struct dcp_process *)cp;
	char name[32];
	int64_t uid, cookie;
	int fd;

	if (!p)
		return 0;
	if (p->user_id)
		return p->user_id == JIT_NONE ? 0 : p->user_id;
	p->user_id = JIT_NONE;
	uid = process_uid(p->pid);
	if (uid < 0)
		return 0;
	fd = dcp_perfmap_open_for(p->pid, (uid_t)uid);
	if (fd < 0) {
		if (fd == -EPERM)
			dcp_log(DCP_LOG_INFO, "%s", dcp_last_error());
		return 0;
	}
	snprintf(name, sizeof(name), "[jit:%d]", p->pid);
	cookie = dcp_cookie_table_intern_special(
		r->cookies, DCP_COOKIE_KIND_JIT, name, NULL);
	if (cookie <= 0 ||
	    dcp_cookie_table_pin(r->cookies, (uint32_t)cookie, fd) < 0) {
		if (cookie <= 0)
			close(fd);
		return 0;
	}
	p->user_id = (uint32_t)cookie;
	return p->user_id;
}

static void resolve_frame(struct dcp_recorder *r, const struct dcp_process *p,
			  uint64_t ip, bool kernel, bool leaf,
			  struct dcp_frame *f)
{
	uint64_t addr = leaf ? ip : ip - 1;
	const struct dcp_map *map;

	f->flags = 0;
	if (kernel) {
		f->flags = DCP_FRAME_KERNEL;
		f->cookie =
			dcp_kernel_layout_resolve(&r->kernel, addr, &f->offset);
		return;
	}
	map = p ? dcp_process_map_find(p, addr) : NULL;
	if (!map) {
		f->cookie = DCP_COOKIE_UNKNOWN;
		f->offset = addr;
		r->stats.frames_unattributed++;
		return;
	}
	f->cookie = map->cookie;
	f->offset = addr - map->start + map->pgoff;
	if (map->cookie == r->cookie_anon) {
		uint32_t jit = jit_cookie_of(r, p);

		if (jit)
			f->cookie = jit; /* offsets stay absolute addresses */
		return;
	}
	if (!dcp_cookie_table_pin_tried(r->cookies, map->cookie) &&
	    map->cookie != r->cookie_anon && map->cookie != r->cookie_vdso &&
	    map->cookie != r->cookie_vsyscall)
		pin_file(r, p, map);
}

static uint32_t build_stack(struct dcp_recorder *r, const struct dcp_process *p,
			    uint64_t ip, const uint64_t *chain, uint64_t nr)
{
	uint32_t n = 0;
	bool kernel = is_kernel_ip(ip);

	if (!chain) {
		resolve_frame(r, p, ip, kernel, true, &r->frames[n++]);
		return n;
	}
	for (uint64_t i = 0; i < nr && n < MAX_STACK; i++) {
		uint64_t v = chain[i];

		if (v >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = v == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		resolve_frame(r, p, v, kernel, n == 0, &r->frames[n]);
		n++;
	}
	if (n == 0)
		resolve_frame(r, p, ip, is_kernel_ip(ip), true,
			      &r->frames[n++]);
	return n;
}

/*
 * --call-graph dwarf: the kernel's chain holds the kernel frames only
 * (exclude_callchain_user); the user frames are unwound from the sampled
 * registers and stack copy, and stored exactly as frame-pointer ones.
 */
static uint32_t build_dwarf_stack(struct dcp_recorder *r, struct dcp_process *p,
				  const struct dcp_sample *s)
{
	enum dcp_unwind_end end;
	bool kernel = is_kernel_ip(s->ip);
	uint32_t n = 0, nu;

	for (uint64_t i = 0; i < s->nr_chain && n < MAX_STACK; i++) {
		uint64_t v = s->chain[i];

		if (v >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = v == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		resolve_frame(r, p, v, kernel, n == 0, &r->frames[n]);
		n++;
	}
	if (!s->regs || !p) {
		/* a kernel thread, no user state to unwind, or a program
		 * that is no longer the process's (handle_sample) */
		if (n == 0)
			resolve_frame(r, p, s->ip, is_kernel_ip(s->ip), true,
				      &r->frames[n++]);
		return n;
	}
	nu = dcp_unwinder_unwind(r->unwinder, p, s, r->uframes, MAX_STACK - n,
				 &end);
	for (uint32_t i = 0; i < nu; i++, n++)
		resolve_frame(r, p, r->uframes[i].pc, false,
			      r->uframes[i].activation, &r->frames[n]);
	switch (end) {
	case DCP_UNWIND_COMPLETE:
		break;
	case DCP_UNWIND_STACK_END:
		r->stats.unwind_truncated_stack_end++;
		break;
	case DCP_UNWIND_NO_CFI:
		r->stats.unwind_truncated_no_cfi++;
		break;
	default:
		r->stats.unwind_truncated_other++;
		break;
	}
	if (n == 0)
		resolve_frame(r, p, s->ip, is_kernel_ip(s->ip), true,
			      &r->frames[n++]);
	return n;
}

/*
 * One sample into the aggregate. before_exec: the sample ran a program
 * its process has since replaced by exec (a held sample, see
 * hold_sample()), whose maps are gone: only its kernel frames can be
 * named, and its name is not known.
 */
static int handle_sample(struct dcp_recorder *r,
			 const struct perf_event_header *h, bool before_exec)
{
	struct dcp_sample s;
	uint64_t ip;
	uint32_t pid, tid;
	const uint64_t *chain = NULL;
	uint64_t nr = 0;
	struct dcp_process *p;
	struct dcp_row_key key;
	int64_t comm, stack;
	uint32_t n;

	r->stats.samples++;
	if (dcp_sample_parse(h, &r->layout, &s))
		return 0; /* malformed: cannot happen */
	ip = s.ip;
	pid = s.pid;
	tid = s.tid;
	if (r->call_graph == DCP_CALL_GRAPH_FP) {
		nr = s.nr_chain;
		chain = s.chain;
	}

	if (pid == 0 && tid == 0) {
		if (r->targeted) {
			r->stats.samples_other_tasks++;
			return 0;
		}
		/* idle is in no marked file: --only drops it like the rest */
		if (dcp_cookie_table_has_marks(r->cookies)) {
			r->stats.samples_filtered++;
			return 0;
		}
		/* idle is one line of the report, not its kernel functions */
		r->frames[0] = (struct dcp_frame){ .cookie = r->cookie_idle };
		n = 1;
		r->stats.samples_idle++;
		comm = dcp_aggregate_intern_string(r->agg, "[idle]");
		p = NULL;
	} else {
		p = dcp_process_table_find(r->procs, (pid_t)pid);
		if (r->targeted && !(p && p->target)) {
			r->stats.samples_other_tasks++;
			return 0;
		}
		if (!p) {
			p = process_get(r, (pid_t)pid);
			if (!p)
				return dcp_error(ENOMEM, "out of memory");
		}
		if (r->call_graph == DCP_CALL_GRAPH_DWARF)
			n = build_dwarf_stack(r, before_exec ? NULL : p, &s);
		else
			n = build_stack(r, before_exec ? NULL : p, ip, chain,
					nr);
		if (r->frames[0].cookie == DCP_COOKIE_UNKNOWN)
			r->stats.samples_unattributed++;
		if (dcp_cookie_table_has_marks(r->cookies) &&
		    !dcp_cookie_table_is_marked(r->cookies,
						r->frames[0].cookie)) {
			r->stats.samples_filtered++;
			return 0;
		}
		comm = comm_id_of(r, p->pid, before_exec ? "" : p->comm);
	}
	if (comm < 0)
		return (int)comm;
	stack = dcp_aggregate_intern_stack(r->agg, r->frames, n);
	if (stack < 0)
		return (int)stack;
	key.comm_id = (uint32_t)comm;
	key.pid = p ? (uint32_t)p->pid : 0;
	key.stack_id = (uint32_t)stack;
	dcp_cookie_table_add_samples(r->cookies, r->frames[0].cookie, 1);
	r->stats.samples_kept++;
	return dcp_aggregate_add(r->agg, &key, 1);
}

static int handle_munmap(struct dcp_recorder *r, const uint64_t *u,
			 const unsigned char *end)
{
	/* IDENTIFIER, TID, TIME, CPU, RAW{u32 size, data} */
	uint32_t pid = (uint32_t)u[1];
	const unsigned char *raw = (const unsigned char *)&u[4] + 4;
	uint32_t raw_size = *(const uint32_t *)&u[4];
	uint64_t addr, len;
	struct dcp_process *p;

	if (raw + raw_size > end || r->munmap.addr_offset + 8 > raw_size ||
	    r->munmap.len_offset + 8 > raw_size)
		return 0;
	memcpy(&addr, raw + r->munmap.addr_offset, 8);
	memcpy(&len, raw + r->munmap.len_offset, 8);
	p = dcp_process_table_find(r->procs, (pid_t)pid);
	if (!p)
		return 0;
	/* most munmaps free data, which no map here describes */
	if (r->unwinder && maps_overlap(p, addr, len))
		maps_changed(r, p);
	return dcp_process_map_remove(p, addr, len);
}

static bool is_munmap_id(const struct dcp_recorder *r, uint64_t id)
{
	for (size_t i = 0; i < r->nr_rings; i++)
		if (r->rings[i].munmap_id == id && r->rings[i].munmap_fd >= 0)
			return true;
	return false;
}

/*
 * The collection walk describes the processes that existed before
 * recording with records stamped when it read them, after the events were
 * enabled: a sample taken in between would find its process without maps
 * and count as unattributed. So until the walk's last record is replayed,
 * the samples of every process not born from a live FORK are held, and
 * then resolved against what the walk (and the live records up to its
 * end) described. A held sample older than its process's live exec ran a
 * program whose maps are gone: it keeps only its kernel frames, as
 * before. A map changed between the sample and the walk's end is the race
 * this accepts. Held samples are bounded; past the bound they are
 * resolved at once, as if nothing were held.
 */
#define HELD_MAX_BYTES (64u << 20)

struct held_sample {
	uint64_t time;
	uint32_t size;
	uint32_t pid;
};

static bool hold_sample(struct dcp_recorder *r, uint64_t time, const void *rec,
			size_t size)
{
	struct held_sample hs = { .time = time, .size = (uint32_t)size };
	size_t need = sizeof(hs) + ((size + 7) & ~(size_t)7);
	const struct dcp_process *p;
	struct dcp_sample s;
	unsigned char *held;

	if (dcp_sample_parse(rec, &r->layout, &s) || (s.pid == 0 && s.tid == 0))
		return false;
	hs.pid = s.pid;
	p = dcp_process_table_find(r->procs, (pid_t)s.pid);
	/* with -p or a command, only the targets are worth holding */
	if ((p && p->born_live) || (r->targeted && !(p && p->target)) ||
	    r->held_len + need > HELD_MAX_BYTES)
		return false;
	held = dcp_grow(r->held, &r->held_cap, r->held_len + need, 1);
	if (!held)
		return false;
	r->held = held;
	memcpy(held + r->held_len, &hs, sizeof(hs));
	memcpy(held + r->held_len + sizeof(hs), rec, size);
	r->held_len += need;
	r->samples_held++;
	return true;
}

static int release_held(struct dcp_recorder *r)
{
	int ret = 0;

	r->hold_until = 0;
	for (size_t off = 0; off < r->held_len && !ret;) {
		struct held_sample hs;
		const struct perf_event_header *h;
		const struct dcp_process *p;

		memcpy(&hs, r->held + off, sizeof(hs));
		h = (const void *)(r->held + off + sizeof(hs));
		off += sizeof(hs) + ((hs.size + 7) & ~(size_t)7);
		p = dcp_process_table_find(r->procs, (pid_t)hs.pid);
		ret = handle_sample(r, h, p && p->exec_time > hs.time);
	}
	if (r->samples_held)
		dcp_log(DCP_LOG_DEBUG,
			"%" PRIu64 " samples held until the collection walk "
			"described their processes",
			r->samples_held);
	free(r->held);
	r->held = NULL;
	r->held_len = r->held_cap = 0;
	return ret;
}

/* Called in timestamp order for every record. */
static int process_record(uint64_t time, const void *rec, size_t size,
			  void *ctx)
{
	struct dcp_recorder *r = ctx;
	const struct perf_event_header *h = rec;
	int ret;

	if (time < r->last_processed_time)
		r->stats.reorder_late++;
	else
		r->last_processed_time = time;
	if (r->hold_until && time >= r->hold_until) {
		ret = release_held(r);
		if (ret)
			return ret;
	}

	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		const uint64_t *u = (const uint64_t *)(h + 1);
		const unsigned char *end = (const unsigned char *)rec + size;

		if (is_munmap_id(r, u[0]))
			return handle_munmap(r, u, end);
		if (r->hold_until && hold_sample(r, time, rec, size))
			return 0;
		return handle_sample(r, h, false);
	}
	case PERF_RECORD_MMAP2:
		return handle_mmap2(r, rec);
	case PERF_RECORD_COMM:
		return handle_comm(r, rec);
	case PERF_RECORD_FORK:
		return handle_fork(r, rec);
	case PERF_RECORD_EXIT:
		return handle_exit(r, rec);
	default:
		return 0;
	}
}

/* ---- draining -------------------------------------------------------------- */

static uint64_t record_time(const struct dcp_recorder *r,
			    const struct perf_event_header *h)
{
	if (h->type == PERF_RECORD_SAMPLE) {
		const uint64_t *u = (const uint64_t *)(h + 1);

		/* the munmap tracepoint has no IP before TID and TIME */
		return is_munmap_id(r, u[0]) ? u[2] : u[3];
	}
	return dcp_record_sample_id(h) ? dcp_record_sample_id(h)->time : 0;
}

static int queue_record(const struct perf_event_header *h, void *ctx)
{
	struct dcp_recorder *r = ctx;
	uint64_t time;

	switch (h->type) {
	case PERF_RECORD_LOST:
		/* accounting needs no ordering */
		r->stats.lost_records +=
			((const struct dcp_lost_record *)h)->lost;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		r->stats.lost_samples += ((const uint64_t *)(h + 1))[0];
		return 0;
	case PERF_RECORD_THROTTLE:
		r->stats.throttle_events++;
		return 0;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (h->misc & PERF_RECORD_MISC_SWITCH_OUT)
			r->stats.context_switches++;
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
	time = record_time(r, h);
	if (time > r->this_round_max)
		r->this_round_max = time;
	if (r->compact && h->type == PERF_RECORD_SAMPLE &&
	    !is_munmap_id(r, ((const uint64_t *)(h + 1))[0])) {
		/* the window holds the stack bytes the kernel filled only */
		size_t size = dcp_sample_compact(h, &r->layout, r->compact);

		if (size)
			return dcp_reorder_push(r->queue, time, r->compact,
						size);
	}
	return dcp_reorder_push(r->queue, time, h, h->size);
}

/*
 * One round: drain every ring, then release what no ring can still
 * undercut: everything up to the newest time seen in the previous round
 * (the rule perf uses for its FINISHED_ROUND). If the window holds too
 * much, the oldest half goes through regardless and stragglers are
 * counted as late.
 */
static int drain_round(struct dcp_recorder *r, bool final)
{
	int ret;

	for (size_t i = 0; i < r->nr_rings; i++) {
		ret = dcp_ring_drain(&r->rings[i], queue_record, r);
		if (ret < 0)
			return ret;
	}
	if (final) {
		ret = dcp_reorder_flush(r->queue, UINT64_MAX, process_record,
					r);
		if (!ret && r->hold_until)
			ret = release_held(r);
		return ret;
	}
	ret = dcp_reorder_flush(r->queue, r->round_max_time, process_record, r);
	if (ret)
		return ret;
	r->round_max_time = r->this_round_max;
	while (!ret && dcp_reorder_bytes(r->queue) > REORDER_MAX_BYTES)
		ret = dcp_reorder_flush(r->queue, dcp_reorder_oldest(r->queue),
					process_record, r);
	return ret;
}

/* ---- the collection ----------------------------------------------------------- */

static int inject_kind(struct dcp_recorder *r, enum dcp_collection_kind kind,
		       const pid_t *pids, size_t nr_pids)
{
	struct dcp_collection_opts copts = {
		.sz = sizeof(copts),
		.pids = pids,
		.nr_pids = nr_pids,
		.cookies = r->cookies,
		.only_marked = false,
	};
	size_t size = 256 * 1024;
	unsigned char *buf = malloc(size);
	struct dcp_collection *c;
	ssize_t n;
	int ret = 0;

	if (!buf)
		return dcp_error(ENOMEM, "out of memory");
	c = dcp_collection_open(kind, &copts);
	if (!c) {
		free(buf);
		return -errno;
	}
	while ((n = dcp_collection_read(c, buf, size, NULL)) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct perf_event_header *h =
				(const void *)(buf + off);
			const struct dcp_sample_id *sid =
				dcp_record_sample_id(h);

			ret = dcp_reorder_push(r->queue, sid ? sid->time : 0, h,
					       h->size);
			if (ret)
				goto out;
			if (h->type == PERF_RECORD_MMAP2)
				r->stats.maps_injected++;
			off += h->size;
		}
		/*
		 * The walk can take seconds on a busy machine: empty the rings
		 * between its reads, as the resumable iterator allows, so the
		 * kernel does not drop live records meanwhile.
		 */
		for (size_t i = 0; i < r->nr_rings && !ret; i++) {
			int drained =
				dcp_ring_drain(&r->rings[i], queue_record, r);

			if (drained < 0)
				ret = drained;
		}
		if (ret)
			goto out;
	}
	if (n < 0)
		ret = (int)n;
	r->stats.tasks_vanished += dcp_collection_stats(c)->tasks_vanished;
out:
	dcp_collection_close(c);
	free(buf);
	return ret;
}

/* ---- the public interface ----------------------------------------------------- */

/*
 * Ring pages per CPU, when not asked: enough for half a second of samples
 * at the requested rate, so that a recorder kept off the CPU that long by
 * busy CPUs loses nothing (a dwarf sample carries its stack copy, 8 KiB
 * where a frame-pointer one needs about 200 bytes). At least 128 pages
 * (perf's default), a power of two, at most 16 MiB per CPU and 256 MiB
 * for all CPUs together. Other users than root keep the smaller rings of
 * before: the kernel charges their ring pages to perf_event_mlock_kb.
 */
static uint32_t default_ring_pages(const struct dcp_recorder *r)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t per_sample = r->call_graph == DCP_CALL_GRAPH_DWARF ?
				      r->stack_user + 512 :
			      r->callchain ? 200 :
					     64;
	uint64_t want = (uint64_t)r->sample_freq * per_sample / 2 / page;
	uint64_t most = (256ull << 20) / page / (uint64_t)(cpus > 0 ? cpus : 1);
	uint32_t pages = 128;

	if (most > (16ull << 20) / page)
		most = (16ull << 20) / page;
	if (geteuid() != 0)
		most = r->call_graph == DCP_CALL_GRAPH_DWARF ? 1024 : 128;
	while (pages < want && (uint64_t)pages * 2 <= most)
		pages *= 2;
	return pages;
}

static void fill_meta(struct dcp_recorder *r)
{
	r->meta.version = 1;
	r->meta.complete = false;
	r->meta.duration_ns = now_ns(CLOCK_MONOTONIC) - r->start_mono_ns;
	r->meta.sample_freq = r->sample_freq;
	r->meta.nr_cpus = (uint32_t)r->nr_rings;
	r->meta.callchain = r->callchain;
	r->meta.event = r->event_name;
	r->meta.cmdline = r->cmdline;
	r->meta.hostname = r->hostname;
	r->meta.kernel_release = r->kernel_release;
}

static int flush_file(struct dcp_recorder *r)
{
	int ret;

	if (r->write_error)
		return r->write_error;
	fill_meta(r);
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

/*
 * The unwinder's files: the pinned handle when there is one, else the
 * process's own mapping, which is what it executes even when the path
 * now names another file.
 */
static int open_map_for_unwind(void *ctx, const struct dcp_process *p,
			       const struct dcp_map *map)
{
	struct dcp_recorder *r = ctx;
	int fd = dcp_cookie_table_pinned_fd(r->cookies, map->cookie);
	char path[96];

	if (fd >= 0)
		return fcntl(fd, F_DUPFD_CLOEXEC, 0);
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 p->pid, map->start, map->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/*
	 * Pin it now: the next process to map this file may be gone before
	 * its first sample is unwound (a short-lived child), and then only a
	 * held handle still reads the file.
	 */
	if (fd >= 0 && !dcp_cookie_table_pin_tried(r->cookies, map->cookie)) {
		int keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);

		dcp_cookie_table_set_pin_tried(r->cookies, map->cookie);
		if (keep >= 0 &&
		    dcp_cookie_table_pin(r->cookies, map->cookie, keep) == 0)
			r->stats.files_pinned++;
	}
	return fd;
}

static int setup_call_graph(struct dcp_recorder *r,
			    const struct dcp_recorder_opts *opts)
{
	struct dcp_unwind_opts uo;

	if (opts->sz >= offsetof(struct dcp_recorder_opts, call_graph) +
				sizeof(opts->call_graph))
		r->call_graph = opts->call_graph;
	if (r->call_graph == DCP_CALL_GRAPH_NONE && opts->callchain)
		r->call_graph = DCP_CALL_GRAPH_FP;
	if (r->call_graph > DCP_CALL_GRAPH_DWARF)
		return dcp_error(EINVAL, "unknown call graph mode %u",
				 (unsigned)r->call_graph);
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
	uo.open_map = open_map_for_unwind;
	uo.ctx = r;
	uo.vdso_cookie = r->cookie_vdso;
	uo.anon_cookie = r->cookie_anon;
	uo.vsyscall_cookie = r->cookie_vsyscall;
	r->unwinder = dcp_unwinder_new(&uo);
	r->compact = malloc(1u << 16);
	if (!r->unwinder || !r->compact)
		return dcp_error(ENOMEM, "out of memory");
	return 0;
}

struct dcp_recorder *dcp_recorder_new(const struct dcp_recorder_opts *opts)
{
	struct dcp_ring_opts ring_opts;
	struct dcp_recorder *r;
	struct utsname uts;
	int ret;

	if (!opts || opts->sz < offsetof(struct dcp_recorder_opts, mmap_pages))
		return dcp_error_null(EINVAL, "invalid recorder options");
	r = calloc(1, sizeof(*r));
	if (!r)
		return dcp_error_null(ENOMEM, "out of memory");
	r->output = strdup(opts->output ? opts->output : "dcprof.data");
	r->event_name = strdup(opts->event ? opts->event : "cpu-clock");
	r->cmdline = strdup(opts->cmdline ? opts->cmdline : "");
	r->sample_freq = opts->sample_freq ? opts->sample_freq : 999;
	r->flush_interval_ms =
		opts->flush_interval_ms ? opts->flush_interval_ms : 2000;
	if (!r->output || !r->event_name || !r->cmdline) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	ret = dcp_event_spec_parse(r->event_name, &r->event);
	if (ret)
		goto fail;
	if (uname(&uts) == 0) {
		snprintf(r->hostname, sizeof(r->hostname), "%s", uts.nodename);
		snprintf(r->kernel_release, sizeof(r->kernel_release), "%s",
			 uts.release);
	}
	raise_fd_limit();

	r->queue = dcp_reorder_new();
	r->cookies = dcp_cookie_table_new();
	r->procs = dcp_process_table_new();
	r->agg = dcp_aggregate_new();
	if (!r->queue || !r->cookies || !r->procs || !r->agg) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	ret = intern_specials(r);
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
	 * cookie: a warning, not a reason to refuse to record */
	if (dcp_kernel_layout_load(&r->kernel, r->cookies))
		dcp_log(DCP_LOG_WARN, "%s", dcp_last_error());
	if (opts->nr_pids) {
		r->targeted = true;
		r->roots = calloc(opts->nr_pids, sizeof(*r->roots));
		if (!r->roots) {
			ret = dcp_error(ENOMEM, "out of memory");
			goto fail;
		}
		memcpy(r->roots, opts->pids, opts->nr_pids * sizeof(pid_t));
		r->nr_roots = opts->nr_pids;
	}

	if (dcp_munmap_tracepoint_find(&r->munmap))
		dcp_log(DCP_LOG_WARN,
			"%s; munmap is tracked by replacing overlapped maps only",
			dcp_last_error());

	memset(&ring_opts, 0, sizeof(ring_opts));
	ring_opts.event = &r->event;
	ring_opts.sample_freq = r->sample_freq;
	ring_opts.callchain = r->call_graph == DCP_CALL_GRAPH_FP;
	ring_opts.dwarf = r->call_graph == DCP_CALL_GRAPH_DWARF;
	ring_opts.regs_user_mask = r->layout.regs_mask;
	ring_opts.stack_user = r->stack_user;
	ring_opts.mmap_pages =
		opts->mmap_pages ? opts->mmap_pages : default_ring_pages(r);
	ring_opts.munmap = &r->munmap;
	ret = dcp_rings_open(&ring_opts, &r->rings, &r->nr_rings);
	if (ret)
		goto fail;
	dcp_log(DCP_LOG_INFO,
		"ring buffers: %u pages (%u KiB) per CPU, %zu CPUs",
		ring_opts.mmap_pages,
		(unsigned)(ring_opts.mmap_pages *
			   (sysconf(_SC_PAGESIZE) / 1024)),
		r->nr_rings);
	r->pollfds = calloc(r->nr_rings, sizeof(*r->pollfds));
	if (!r->pollfds) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < r->nr_rings; i++) {
		r->pollfds[i].fd = r->rings[i].fd;
		r->pollfds[i].events = POLLIN;
	}
	/*
	 * Only now that the kernel accepted the events is an earlier
	 * profile at the output path moved aside.
	 */
	r->writer = dcp_profile_writer_open(r->output);
	if (!r->writer) {
		ret = -errno;
		goto fail;
	}
	r->start_mono_ns = now_ns(CLOCK_MONOTONIC);
	r->meta.start_realtime_ns = now_ns(CLOCK_REALTIME);
	r->next_flush_ns =
		r->start_mono_ns + (uint64_t)r->flush_interval_ms * 1000000ull;

	/* a file that reads (empty) from the start, whatever the walk costs */
	ret = flush_file(r);
	if (ret)
		goto fail;
	/* Live events are on: now describe what already existed. */
	ret = inject_kind(r, DCP_COLLECTION_TASKS, r->roots, r->nr_roots);
	if (!ret)
		ret = inject_kind(r, DCP_COLLECTION_MAPS, r->roots,
				  r->nr_roots);
	if (ret)
		goto fail;
	/* every record of the walk is stamped before this */
	r->hold_until = now_ns(CLOCK_MONOTONIC);
	ret = flush_file(r);
	if (ret)
		goto fail;
	return r;

fail:
	/* the message of the failing step stays in dcp_last_error() */
	dcp_recorder_free(r);
	errno = ret < 0 ? -ret : EINVAL;
	return NULL;
}

int dcp_recorder_add_pid(struct dcp_recorder *r, pid_t pid)
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

int dcp_recorder_poll(struct dcp_recorder *r, int timeout_ms)
{
	uint64_t now;
	int ret;

	if (poll(r->pollfds, r->nr_rings, timeout_ms) < 0 && errno != EINTR)
		return dcp_error(errno, "poll failed: %s", strerror(errno));
	ret = drain_round(r, false);
	if (ret)
		return ret;
	now = now_ns(CLOCK_MONOTONIC);
	if (now >= r->next_flush_ns) {
		r->next_flush_ns =
			now + (uint64_t)r->flush_interval_ms * 1000000ull;
		return flush_file(r);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct cookie_offsets {
	uint64_t *offsets;
	size_t n, cap;
};

/* Every distinct sampled (cookie, offset), resolved once per cookie. */
static int resolve_symbols(struct dcp_recorder *r, struct dcp_symtab *symtab)
{
	size_t nr_cookies = dcp_cookie_table_size(r->cookies);
	struct cookie_offsets *per = calloc(nr_cookies, sizeof(*per));
	struct dcp_symbolizer *s;
	int ret = 0;

	if (!per)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t id = 0; id < dcp_aggregate_nr_stacks(r->agg); id++) {
		uint32_t n;
		const struct dcp_frame *f =
			dcp_aggregate_stack(r->agg, (uint32_t)id, &n);

		for (uint32_t i = 0; i < n; i++) {
			struct cookie_offsets *c = &per[f[i].cookie];

			if (f[i].cookie >= nr_cookies)
				continue;
			if (c->n == c->cap) {
				size_t cap = c->cap ? c->cap * 2 : 16;
				uint64_t *o =
					realloc(c->offsets, cap * sizeof(*o));

				if (!o) {
					ret = dcp_error(ENOMEM,
							"out of memory");
					goto out;
				}
				c->offsets = o;
				c->cap = cap;
			}
			c->offsets[c->n++] = f[i].offset;
		}
	}

	s = dcp_symbolizer_new(&r->kernel);
	if (!s) {
		ret = -errno;
		goto out;
	}
	for (size_t id = 0; id < nr_cookies; id++) {
		struct cookie_offsets *c = &per[id];
		struct dcp_cookie_info info;
		size_t unique = 0;
		int resolved;

		if (!c->n)
			continue;
		qsort(c->offsets, c->n, sizeof(*c->offsets), cmp_u64);
		for (size_t i = 0; i < c->n; i++)
			if (!unique || c->offsets[i] != c->offsets[unique - 1])
				c->offsets[unique++] = c->offsets[i];
		if (dcp_cookie_table_lookup(r->cookies, (uint32_t)id, &info))
			continue;
		resolved = dcp_symbolizer_resolve(
			s, &info,
			dcp_cookie_table_pinned_fd(r->cookies, (uint32_t)id),
			c->offsets, unique, symtab);
		if (resolved < 0) {
			dcp_log(DCP_LOG_INFO, "no symbols for '%s': %s",
				info.name, dcp_last_error());
			resolved = 0;
		}
		if (info.kind != DCP_COOKIE_KIND_IDLE)
			r->stats.symbols_unresolved +=
				unique - (size_t)resolved;
	}
	dcp_symbolizer_free(s);
out:
	for (size_t id = 0; id < nr_cookies; id++)
		free(per[id].offsets);
	free(per);
	return ret;
}

int dcp_recorder_finish(struct dcp_recorder *r, struct dcp_profile_stats *stats)
{
	struct dcp_symtab *symtab;
	int ret;

	if (r->finished)
		return dcp_error(EINVAL, "the recording is already finished");
	r->finished = true;
	dcp_rings_disable(r->rings, r->nr_rings);
	ret = drain_round(r, true);
	if (ret)
		return ret;
	fill_meta(r);
	/* a recording ends with its events: what follows is bookkeeping */
	symtab = dcp_symtab_new();
	if (!symtab)
		return -errno;
	ret = resolve_symbols(r, symtab);
	if (!ret && r->write_error)
		ret = r->write_error;
	if (!ret) {
		r->meta.complete = true;
		ret = dcp_profile_writer_finish(r->writer, &r->meta, r->cookies,
						r->agg, symtab, &r->stats);
	}
	dcp_symtab_free(symtab);
	if (stats)
		*stats = r->stats;
	return ret;
}

void dcp_recorder_free(struct dcp_recorder *r)
{
	if (!r)
		return;
	dcp_rings_close(r->rings, r->nr_rings);
	free(r->pollfds);
	dcp_profile_writer_free(r->writer);
	dcp_reorder_free(r->queue);
	dcp_aggregate_free(r->agg);
	dcp_process_table_free(r->procs);
	dcp_kernel_layout_free(&r->kernel);
	dcp_cookie_table_free(r->cookies);
	dcp_unwinder_free(r->unwinder);
	free(r->compact);
	free(r->held);
	free(r->roots);
	free(r->output);
	free(r->event_name);
	free(r->cmdline);
	free(r);
}
