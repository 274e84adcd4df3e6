// SPDX-License-Identifier: MIT
/*
 * Samples: every sampled ip into a (cookie, offset) frame against its
 * process's maps (frame-pointer chains, or user stacks unwound with DWARF),
 * pinning each sampled file and naming JIT code on first sight, dropping
 * what --only leaves out, and counting the stack in the aggregate.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_internal.h"
#include "perfmap_internal.h"
#include "recorder_internal.h"

/*
 * The file of a mapping: /proc/PID/map_files, which needs CAP_SYS_ADMIN
 * (or CAP_CHECKPOINT_RESTORE); without it, a path of the mapping that
 * still holds the same file (build id, else device and inode).
 */
static int open_mapped(struct dcp_recorder *r, const struct dcp_process *p,
		       const struct dcp_map *map)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 p->pid, map->start, map->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || (errno != EPERM && errno != EACCES))
		return fd;
	if (dcp_cookie_table_lookup(r->cookies, map->cookie, &ci) ||
	    ci.kind != DCP_COOKIE_KIND_FILE)
		return -1;
	fd = dcp_symbolizer_open_object(&ci, NULL);
	return fd >= 0 ? fd : -1;
}

static void pin_file(struct dcp_recorder *r, const struct dcp_process *p,
		     const struct dcp_map *map)
{
	int fd;

	dcp_cookie_table_set_pin_tried(r->cookies, map->cookie);
	fd = open_mapped(r, p, map);
	if (fd < 0) {
		/* the process is gone already: symbols come from the path,
		 * if its identity still matches */
		r->stats.files_unpinned++;
		return;
	}
	if (dcp_cookie_table_pin(r->cookies, map->cookie, fd) == 0)
		r->stats.files_pinned++;
}

/*
 * The unwinder's files: the pinned handle when there is one, else the
 * process's own mapping, which is what it executes even when the path
 * now names another file.
 */
int dcp_samples_open_map(void *ctx, const struct dcp_process *p,
			 const struct dcp_map *map)
{
	struct dcp_recorder *r = ctx;
	int fd = dcp_cookie_table_pinned_fd(r->cookies, map->cookie);

	if (fd >= 0)
		return fcntl(fd, F_DUPFD_CLOEXEC, 0);
	fd = open_mapped(r, p, map);
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

static bool is_kernel_ip(uint64_t ip)
{
	return ip >= 0xffff800000000000ull;
}

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
 * goes away. Looked for at its first sample in anonymous memory; a map
 * owned by another user than the process's is ignored. A process may run
 * code before it writes the map (or a frame pointer chain may lead there
 * before the process has any JIT code): a miss is looked at again
 * JIT_RETRY_NS later, not kept for the process's life.
 */
#define JIT_NONE UINT32_MAX
#define JIT_RETRY_NS (200 * 1000 * 1000ull)

uint32_t dcp_samples_jit_cookie(struct dcp_recorder *r,
				const struct dcp_process *cp)
{
	/* the process table hands out mutable entries; only the cache
	 * fields are written here */
	struct dcp_process *p = (struct dcp_process *)cp;
	uint64_t now = 0;
	char name[32];
	int64_t uid, cookie;
	int fd;

	if (!p)
		return 0;
	if (p->user_id == JIT_NONE) {
		now = dcp_now_ns(CLOCK_MONOTONIC);
		if (now - p->user_id_missed_ns < JIT_RETRY_NS)
			return 0;
	} else if (p->user_id) {
		return p->user_id;
	}
	fd = -ENOENT;
	uid = process_uid(p->pid);
	if (uid >= 0)
		fd = dcp_perfmap_open_for(p->pid, (uid_t)uid);
	if (fd >= 0) {
		snprintf(name, sizeof(name), "[jit:%d]", p->pid);
		cookie = dcp_cookie_table_intern_special(
			r->cookies, DCP_COOKIE_KIND_JIT, name, NULL);
		if (cookie <= 0)
			close(fd);
		else if (dcp_cookie_table_pin(r->cookies, (uint32_t)cookie,
					      fd) == 0)
			return p->user_id = (uint32_t)cookie;
	} else if (fd == -EPERM && p->user_id != JIT_NONE) {
		/* said once, not at every retry */
		dcp_log(DCP_LOG_INFO, "%s", dcp_last_error());
	}
	p->user_id = JIT_NONE;
	p->user_id_missed_ns = now ? now : dcp_now_ns(CLOCK_MONOTONIC);
	return 0;
}

/* One ip into a frame; caller frames are looked up at ip - 1, inside the
 * call instruction, so that a call at the very end of a function is not
 * attributed to the next one. An activation (the sampled ip, or where the
 * user program was interrupted or entered the kernel) is the instruction
 * itself: a fault fetching the first instruction of a mapping has the
 * mapping's first byte there. */
static void resolve_frame(struct dcp_recorder *r, const struct dcp_process *p,
			  uint64_t ip, bool kernel, bool activation,
			  struct dcp_frame *f)
{
	uint64_t addr = activation ? ip : ip - 1;
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
		uint32_t jit = dcp_samples_jit_cookie(r, p);

		if (jit)
			f->cookie = jit; /* offsets stay absolute addresses */
		return;
	}
	if (!dcp_cookie_table_pin_tried(r->cookies, map->cookie) &&
	    map->cookie != r->cookie_anon && map->cookie != r->cookie_vdso &&
	    map->cookie != r->cookie_vsyscall)
		pin_file(r, p, map);
}

/* The kernel's chain (PERF_CONTEXT_* markers between its parts) into
 * r->frames from n on; returns the new count. Each part begins with its
 * activation: the kernel's with the sampled ip, the user's with the ip of
 * the user registers. */
static uint32_t chain_frames(struct dcp_recorder *r,
			     const struct dcp_process *p, uint64_t ip,
			     const uint64_t *chain, uint64_t nr, uint32_t n)
{
	bool kernel = is_kernel_ip(ip), activation = true;

	for (uint64_t i = 0; i < nr && n < MAX_STACK; i++) {
		uint64_t v = chain[i];

		if (v >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = v == (uint64_t)PERF_CONTEXT_KERNEL;
			activation = true;
			continue;
		}
		resolve_frame(r, p, v, kernel, activation, &r->frames[n]);
		activation = false;
		n++;
	}
	return n;
}

/* The file with most breaks among the top three of the stats, in order;
 * counts only grow, so a file not listed never has more than the last. */
static void fp_break_top(struct dcp_recorder *r, uint32_t cookie,
			 uint64_t breaks)
{
	uint64_t *ck = r->stats.fp_broken_cookie, *in = r->stats.fp_broken_in;
	int i;

	for (i = 0; i < 3; i++)
		if (in[i] && ck[i] == cookie)
			break;
	if (i == 3) {
		if (breaks <= in[2])
			return;
		i = 2;
	}
	ck[i] = cookie;
	in[i] = breaks;
	for (; i > 0 && in[i] > in[i - 1]; i--) {
		uint64_t c = ck[i], b = in[i];

		ck[i] = ck[i - 1];
		in[i] = in[i - 1];
		ck[i - 1] = c;
		in[i - 1] = b;
	}
}

/*
 * -g: a user stack whose frame-pointer chain left the mapped code (a
 * return address in no executable mapping) or stopped right after the
 * leaf ends at a [truncated] marker (DCP_FRAME_TRUNCATED, cookie 0),
 * counted against the file of its last good frame; what follows the break
 * is dropped. Returns the new frame count.
 */
static uint32_t fp_check(struct dcp_recorder *r, uint32_t n, uint64_t count)
{
	struct dcp_frame *f = r->frames;
	uint32_t u = 0, i;

	while (u < n && (f[u].flags & DCP_FRAME_KERNEL))
		u++;
	if (u == n || f[u].cookie == DCP_COOKIE_UNKNOWN)
		return n; /* no user frames, or an unattributed leaf */
	r->stats.fp_user_stacks += count;
	for (i = u + 1; i < n && f[i].cookie != DCP_COOKIE_UNKNOWN; i++)
		;
	if (i == n && n - u > 1)
		return n; /* whole */
	if (i == n && n == MAX_STACK)
		return n;
	for (uint32_t j = i; j < n; j++)
		if (f[j].cookie == DCP_COOKIE_UNKNOWN)
			r->stats.frames_unattributed--;
	f[i] = (struct dcp_frame){ .cookie = DCP_COOKIE_UNKNOWN,
				   .flags = DCP_FRAME_TRUNCATED,
				   .offset = i < n ? f[i].offset : 0 };
	r->stats.fp_broken_stacks += count;
	fp_break_top(r, f[i - 1].cookie,
		     dcp_cookie_table_add_fp_breaks(r->cookies, f[i - 1].cookie,
						    count));
	return i + 1;
}

static uint32_t build_stack(struct dcp_recorder *r, const struct dcp_process *p,
			    uint64_t ip, const uint64_t *chain, uint64_t nr,
			    uint64_t count)
{
	uint32_t n = chain ? chain_frames(r, p, ip, chain, nr, 0) : 0;

	if (n == 0)
		resolve_frame(r, p, ip, is_kernel_ip(ip), true,
			      &r->frames[n++]);
	else if (r->call_graph == DCP_CALL_GRAPH_FP)
		n = fp_check(r, n, count);
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
	uint32_t n, nu;

	n = chain_frames(r, p, s->ip, s->chain, s->nr_chain, 0);
	if (!s->regs || !p) {
		/* a kernel thread, no user state to unwind, or a program
		 * that is no longer the process's (dcp_samples_take) */
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
 * r->frames[0..n) of process p (NULL: idle), named comm, count times, in
 * thread tid named thread_comm (NULL: as the process); or, with off_ns,
 * that much off-CPU time instead.
 */
static int add_stack(struct dcp_recorder *r, const struct dcp_process *p,
		     int64_t comm, uint32_t tid, const char *thread_comm,
		     uint32_t cgroup, uint32_t n, uint64_t count,
		     const uint64_t *off_ns)
{
	struct dcp_row_key key = { 0 };
	uint32_t pid = p ? (uint32_t)p->pid : 0;
	int64_t stack, tcomm = comm, thread = 0;

	if (comm < 0)
		return (int)comm;
	if (thread_comm)
		tcomm = dcp_aggregate_intern_string(r->agg, thread_comm);
	if (tcomm < 0)
		return (int)tcomm;
	/* the main thread under the process's name and in no known cgroup
	 * needs no thread entry */
	if (tid != pid || tcomm != comm || cgroup)
		thread = dcp_aggregate_intern_thread(
			r->agg, &(struct dcp_agg_thread){
					.tid = tid,
					.comm_id = (uint32_t)tcomm,
					.cgroup = cgroup,
				});
	if (thread < 0)
		return (int)thread;
	stack = dcp_aggregate_intern_stack(r->agg, r->frames, n);
	if (stack < 0)
		return (int)stack;
	key.comm_id = (uint32_t)comm;
	key.pid = pid;
	key.stack_id = (uint32_t)stack;
	key.thread_id = (uint32_t)thread;
	if (off_ns) {
		for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
			r->stats.off_cpu_ns += off_ns[s];
		return dcp_aggregate_add_off_cpu(r->agg, &key, off_ns);
	}
	dcp_cookie_table_add_samples(r->cookies, r->frames[0].cookie, count);
	r->stats.samples_kept += count;
	return dcp_aggregate_add(r->agg, &key, count);
}

static int take_idle(struct dcp_recorder *r, uint64_t count)
{
	/* the idle task is in the root cgroup, in no cgroup kept */
	if (r->cgroups && dcp_cgroup_table_nr_filter(r->cgroups)) {
		r->stats.samples_other_cgroups += count;
		return 0;
	}
	if (r->targeted) {
		r->stats.samples_other_tasks += count;
		r->stats.samples_other_idle += count;
		return 0;
	}
	/* idle is in no marked file: --only drops it like the rest */
	if (dcp_cookie_table_has_marks(r->cookies)) {
		r->stats.samples_filtered += count;
		return 0;
	}
	/* idle is one line of the report, not its kernel functions */
	r->frames[0] = (struct dcp_frame){ .cookie = r->cookie_idle };
	r->stats.samples_idle += count;
	return add_stack(r, NULL, dcp_aggregate_intern_string(r->agg, "[idle]"),
			 0, NULL, 0, 1, count, NULL);
}

/*
 * The process of a sample, created on first sight; NULL with *ret 0 when
 * it is outside the recorded trees (counted), or with -ENOMEM.
 */
static struct dcp_process *sample_process(struct dcp_recorder *r, pid_t pid,
					  uint64_t count, int *ret)
{
	struct dcp_process *p = dcp_process_table_find(r->procs, pid);

	*ret = 0;
	if (r->targeted && !(p && p->target)) {
		r->stats.samples_other_tasks += count;
		return NULL;
	}
	if (!p) {
		p = dcp_replay_process(r, pid);
		if (!p)
			*ret = dcp_error(ENOMEM, "out of memory");
	}
	return p;
}

/* The aggregate's cgroup of kernel cgroup id; 0 with *kept false when
 * the cgroup filter drops its samples (counted). Negative errno. */
static int64_t sample_cgroup(struct dcp_recorder *r, uint64_t id,
			     uint64_t count, const uint64_t *off_ns, bool *kept)
{
	int64_t cg;

	*kept = true;
	if (!r->cgroups)
		return 0;
	cg = dcp_cgroup_table_intern(r->cgroups, r->agg, id, kept);
	if (cg >= 0 && !*kept && !off_ns)
		r->stats.samples_other_cgroups += count;
	return cg;
}

/* r->frames[0..n) of process p, thread tid, unless --only drops its leaf.
 * thread_comm NULL: the thread's name from COMM records, else comm.
 * off_ns: off-CPU time instead of samples (--only is not taken then). */
static int keep_stack(struct dcp_recorder *r, const struct dcp_process *p,
		      const char *comm, uint32_t tid, const char *thread_comm,
		      uint64_t cgroup_id, uint32_t n, uint64_t count,
		      const uint64_t *off_ns)
{
	char name[32];
	int64_t cgroup;
	bool kept;

	cgroup = sample_cgroup(r, cgroup_id, count, off_ns, &kept);
	if (cgroup < 0 || !kept)
		return cgroup < 0 ? (int)cgroup : 0;
	if (r->frames[0].cookie == DCP_COOKIE_UNKNOWN)
		r->stats.samples_unattributed += count;
	if (!off_ns && dcp_cookie_table_has_marks(r->cookies) &&
	    !dcp_cookie_table_is_marked(r->cookies, r->frames[0].cookie)) {
		r->stats.samples_filtered += count;
		return 0;
	}
	if (!comm[0]) {
		snprintf(name, sizeof(name), ":%d", p->pid);
		comm = name;
	}
	if (!tid)
		tid = (uint32_t)p->pid;
	if (!thread_comm)
		thread_comm = dcp_process_thread_comm(p, (pid_t)tid);
	if (thread_comm && !thread_comm[0])
		thread_comm = NULL;
	return add_stack(r, p, dcp_aggregate_intern_string(r->agg, comm), tid,
			 thread_comm, (uint32_t)cgroup, n, count, off_ns);
}

int dcp_samples_take(struct dcp_recorder *r, const struct perf_event_header *h,
		     bool before_exec)
{
	struct dcp_sample s;
	struct dcp_process *p;
	uint32_t n;
	int ret;

	r->stats.samples++;
	if (dcp_sample_parse(h, &r->layout, &s))
		return 0; /* malformed: cannot happen */
	if (s.pid == 0 && s.tid == 0)
		return take_idle(r, 1);
	p = sample_process(r, (pid_t)s.pid, 1, &ret);
	if (!p)
		return ret;
	if (r->call_graph == DCP_CALL_GRAPH_DWARF)
		n = build_dwarf_stack(r, before_exec ? NULL : p, &s);
	else if (r->call_graph == DCP_CALL_GRAPH_FP)
		n = build_stack(r, before_exec ? NULL : p, s.ip, s.chain,
				s.nr_chain, 1);
	else
		n = build_stack(r, before_exec ? NULL : p, s.ip, NULL, 0, 1);
	return keep_stack(r, p, before_exec ? "" : p->comm, s.tid,
			  before_exec ? "" : NULL, s.cgroup, n, 1, NULL);
}

int dcp_samples_take_off_cpu(struct dcp_recorder *r,
			     const struct dcp_off_cpu_block *b)
{
	struct dcp_process *p = dcp_process_table_find(r->procs, b->pid);
	uint32_t n;

	if (r->targeted && !(p && p->target)) {
		r->stats.off_cpu_other_tasks++;
		return 0;
	}
	if (!p) {
		p = dcp_replay_process(r, (pid_t)b->pid);
		if (!p)
			return dcp_error(ENOMEM, "out of memory");
	}
	/* count 0: the stack's frames are checked, no sample is counted */
	n = build_stack(r, p, b->nr_ips ? b->ips[0] : 0, b->ips, b->nr_ips, 0);
	r->stats.off_cpu_blocks++;
	return keep_stack(r, p, p->comm, b->tid, NULL, b->cgroup_id, n, 0,
			  b->ns);
}

int dcp_recorder_take_stack(struct dcp_recorder *r,
			    const struct dcp_stack_count *c)
{
	struct dcp_process *p;
	uint32_t n = 0;
	int ret;

	r->stats.samples += c->count;
	if (c->pid == 0)
		return c->off_cpu_ns ? 0 : take_idle(r, c->count);
	if (c->off_cpu_ns && r->targeted) {
		p = dcp_process_table_find(r->procs, (pid_t)c->pid);
		if (!(p && p->target)) {
			r->stats.off_cpu_other_tasks += c->off_cpu_blocks;
			return 0;
		}
	}
	if (c->off_cpu_ns)
		r->stats.off_cpu_blocks += c->off_cpu_blocks;
	p = sample_process(r, (pid_t)c->pid, c->count, &ret);
	if (!p)
		return ret;
	if (c->ips) {
		n = build_stack(r, p, c->nr_ips ? c->ips[0] : 0, c->ips,
				c->nr_ips, c->count);
	} else {
		n = c->nr_frames < MAX_STACK ? c->nr_frames : MAX_STACK;
		memcpy(r->frames, c->frames, n * sizeof(*r->frames));
		if (!n)
			r->frames[n++] = (struct dcp_frame){ 0 };
		else if (c->check_user_chain &&
			 r->call_graph == DCP_CALL_GRAPH_FP)
			n = fp_check(r, n, c->count);
	}
	return keep_stack(r, p, c->comm ? c->comm : p->comm, c->tid,
			  c->thread_comm, c->cgroup_id, n, c->count,
			  c->off_cpu_ns);
}

int64_t dcp_recorder_file_cookie(struct dcp_recorder *r,
				 const struct dcp_file_id *id, const char *path)
{
	return dcp_cookie_table_intern_file(r->cookies, id, path);
}
