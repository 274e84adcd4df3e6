// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The BPF record source's kernel half: on every cpu-clock sample, the
 * thread's user stack (addresses, or with user_build_ids (build id, file
 * offset) frames) and its kernel stack go into LRU hash maps by the hash
 * of their frames, and (pid, tid, thread name, stack hashes) is counted in
 * a hash map that user space drains; with
 * --only, a sample whose leaf is in no marked file is dropped here and
 * only counted (tasks.bpf.c: exec, exit, fork and mappings). With
 * --off-cpu, switches: the time a thread is off the CPU by stack and
 * state, a sleep's wait for a CPU after its wake-up runnable.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "profile_common.h"
#include "stats.bpf.h"

#define EEXIST 17

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct dcp_stats_map stats SEC(".maps");
struct dcp_events_map events SEC(".maps");
struct dcp_proc_ranges_map proc_ranges SEC(".maps");
struct dcp_unwind_targets_map unwind_targets SEC(".maps");

struct stack_buf {
	struct bpf_stack_build_id frames[DCP_BPF_MAX_FRAMES];
};

struct ip_stack {
	__u64 ips[DCP_BPF_MAX_FRAMES];
};

/* what one sample counts: more than 1 once user space lowered the rate by
 * that factor to keep the program within its CPU budget */
volatile __u32 sample_weight = 1;

/* set before load */
const volatile int filter_marked = 0;
/* 1: user frames as (build id, offset) in the kernel; 0: plain addresses */
const volatile int user_build_ids = 0;
/*
 * 1: the sampling event's call chain has no user part
 * (exclude_callchain_user) and the program walks the user frames itself,
 * as the switch program does (walk_user_frames()); 0 with build-id
 * frames and --only, whose helpers read the event's.
 */
const volatile int own_user_walk = 0;
/* 1: user stacks are walked by the files' unwind tables (unwind.bpf.h),
 * frame pointers where a file has none; 0: by frame pointers alone */
const volatile int unwind_tables = 0;
/* 1: some processes only are recorded: walks ask for the tables of the
 * processes in unwind_targets only */
const volatile int unwind_targeted = 0;
/* --off-cpu: blocks shorter than off_cpu_min_ns are dropped */
const volatile __u64 off_cpu_min_ns = 0;
/* 1: counts carry the thread's cgroup id */
const volatile int with_cgroups = 0;
/* the first nr_cgroup_filter cgroups of cgroup_filter: only threads in
 * them or below them are kept */
const volatile __u32 nr_cgroup_filter = 0;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, DCP_BPF_MAX_CGROUP_FILTER);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dcp_bpf_key);
	__type(value, __u64);
} counts SEC(".maps");

/*
 * Stacks by the hash of their frames (profile_common.h), least recently
 * used first out: user frames as (build id, offset) or as addresses (one
 * of the two maps is made with one entry), kernel frames as addresses.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct stack_buf);
} user_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct ip_stack);
} user_ips SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct ip_stack);
} kernel_stacks SEC(".maps");

/* where a stack is taken and hashed before it is looked up */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_buf);
} stack_scratch SEC(".maps");

/*
 * --off-cpu: a thread's last switch-out, kept on the task itself (time 0
 * once it ran again): no hash to update and delete twice per switch, no
 * table to fill, and freed with the task.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dcp_bpf_off_start);
} off_starts SEC(".maps");

/* --off-cpu: ns off the CPU by (thread, stacks, state), drained */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dcp_bpf_off_key);
	__type(value, struct dcp_bpf_off_val);
} off_counts SEC(".maps");

/* --only: the marked files' build ids */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__uint(key_size, DCP_BPF_BUILD_ID_SIZE);
	__uint(value_size, 1);
} marked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_stack_build_id);
} leaf_buf SEC(".maps");

/* Whether the sample's leaf is in a marked file (user mode only). */
static __always_inline int leaf_marked(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	struct bpf_stack_build_id *leaf = bpf_map_lookup_elem(&leaf_buf, &zero);
	__u64 ip = ctx->regs.ip;

	/* a barrier keeps clang from re-deriving ctx + off (verifier) */
	asm volatile("" : "+r"(ip));
	if ((__s64)ip < 0 || !leaf)
		return 0; /* the kernel's own code is in no marked file */
	if (bpf_get_stack(ctx, leaf, sizeof(*leaf),
			  BPF_F_USER_STACK | BPF_F_USER_BUILD_ID | 1) <= 0)
		return 0;
	if (leaf->status != BPF_STACK_BUILD_ID_VALID)
		return 0;
	return bpf_map_lookup_elem(&marked, leaf->build_id) != NULL;
}

#define DCPROF_UNWIND_WALK
#include "unwind.bpf.h"

/* task flags (include/linux/sched.h): no user stack to walk */
#define DCP_PF_USER_WORKER 0x00004000
#define DCP_PF_KTHREAD 0x00200000
#define DCP_USER_CS_64 0x33 /* __USER_CS: a 64-bit task's code segment */

/*
 * The current task's user stack into buf, from the registers it entered
 * the kernel with (unwind.bpf.h): by the files' unwind tables with
 * unwind_tables, else by frame pointers as the kernel's own walk
 * (perf_callchain_user()) reads them, but ending at a frame pointer of 0:
 * the outermost frame's mark (glibc's clone and _start clear it), which
 * the kernel's walk reads as a frame, at the cost of a fault. Returns the
 * bytes filled, 0 for none, -1 for a task whose frames are not 64-bit
 * (the kernel's walk reads those, but for a sample of an event without
 * the chain's user part: its leaf alone then).
 */
static __always_inline long walk_user_frames(struct ip_stack *buf)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	__u32 n;

	if (task->flags & (DCP_PF_KTHREAD | DCP_PF_USER_WORKER) || !task->mm)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	if (BPF_CORE_READ(regs, cs) != DCP_USER_CS_64)
		return -1;
	n = unwind_user(regs, buf->ips, unwind_tables);
	if (n < DCP_BPF_MAX_FRAMES)
		buf->ips[n] = 0; /* readers stop at the first empty frame */
	return n * 8;
}

/*
 * A stack in buf (n bytes of frames, the rest empty or past the first
 * empty frame) into map under the hash of its frames, unless there
 * already; leaf: its first frame goes to the caller, out of the hash.
 * Returns the hash, 0 when there is no stack or no room (counted).
 */
struct stack_hash {
	__u64 *w;
	__u64 h;
	__u32 first, words;
};

/* One more word of a stack into its hash; 1: done. A step of bpf_loop():
 * as a loop of the program, each stack length would be verified apart. */
static long hash_word(__u32 i, struct stack_hash *c)
{
	i += c->first;
	if (i >= c->words || i >= sizeof(struct stack_buf) / 8)
		return 1;
	/* a bound the verifier keeps, which the compiler would drop */
	asm volatile("" : "+r"(i));
	i &= 511;
	if (i >= sizeof(struct stack_buf) / 8)
		return 1;
	c->h = (c->h ^ c->w[i]) * 0x100000001b3ull;
	return 0;
}

static __always_inline __u64 keep_stack(void *map, struct stack_buf *buf,
					long n, __u64 *leaf)
{
	__u64 *w = (__u64 *)buf, h = 0xcbf29ce484222325ull; /* FNV-1a */
	struct stack_hash c = { .w = w };
	long err;

	if (n <= 0)
		return 0;
	/* leaf: an address stack's first frame goes to the caller, out of
	 * the hash (see dcp_bpf_key.ip), which is then seeded apart: the
	 * callers of one stack may be the whole of another in the map */
	if (leaf) {
		*leaf = w[0];
		h = (h ^ 0x6c656166ull) * 0x100000001b3ull;
	}
	c.h = h;
	c.first = leaf ? 1 : 0;
	c.words = (__u32)(n / 8);
	bpf_loop(sizeof(*buf) / 8, hash_word, &c, 0);
	h = c.h;
	if (!h)
		h = 1;
	if (bpf_map_lookup_elem(map, &h))
		return h;
	err = bpf_map_update_elem(map, &h, buf, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		count_stat(DCP_BPF_STAT_LOST_STACK);
		return 0;
	}
	return h;
}

/*
 * The current task's stack (flags and size as bpf_get_stack() takes them),
 * or with task that task's kernel stack, into map (keep_stack()).
 */
static __always_inline __u64 take_stack(void *ctx, void *map, __u64 flags,
					__u32 size, __u64 *leaf,
					struct task_struct *task)
{
	__u32 zero = 0;
	struct stack_buf *buf = bpf_map_lookup_elem(&stack_scratch, &zero);
	long n;

	if (!buf)
		return 0;
	/* the rest of buf is zeros: bpf_get_stack() fills size bytes */
	n = task ? bpf_get_task_stack(task, buf, size, flags) :
		   bpf_get_stack(ctx, buf, size, flags);
	return keep_stack(map, buf, n, leaf);
}

/* The current task's user stack as addresses (walk_user_frames()) into
 * the user address map (keep_stack()). */
static __always_inline __u64 take_user_frames(void *ctx, __u64 *leaf)
{
	__u32 zero = 0;
	struct stack_buf *buf = bpf_map_lookup_elem(&stack_scratch, &zero);
	long n;

	if (!buf)
		return 0;
	n = walk_user_frames((struct ip_stack *)buf);
	if (n < 0)
		return take_stack(ctx, &user_ips, BPF_F_USER_STACK,
				  sizeof(struct ip_stack), leaf, NULL);
	return keep_stack(&user_ips, buf, n, leaf);
}

/*
 * The current task's stacks (ctx: the program's context, as
 * bpf_get_stack() takes it; kernel_skip: innermost kernel frames left out;
 * marks: 1 when the stacks come from the sampling event's own call chain,
 * whose kernel and user parts each begin with a PERF_CONTEXT_* mark, 0
 * otherwise). key: a sample's, whose innermost frame goes to key->ip out
 * of its stack's hash; NULL: the stacks whole (a switch-out's leaf is
 * where the thread left the CPU, the same every time).
 */
static __always_inline void take_stacks(void *ctx, __u64 *user, __u64 *kernel,
					__u32 kernel_skip, __u32 marks,
					struct dcp_bpf_key *key)
{
	__u64 leaf = 0;

	*kernel = take_stack(ctx, &kernel_stacks,
			     (kernel_skip + marks) & BPF_F_SKIP_FIELD_MASK,
			     sizeof(struct ip_stack), key ? &leaf : NULL, NULL);
	if (key && *kernel) {
		key->ip = leaf;
		key->leaf_of = DCP_BPF_LEAF_KERNEL;
	}
	if (user_build_ids) {
		*user = take_stack(ctx, &user_stacks,
				   BPF_F_USER_STACK | BPF_F_USER_BUILD_ID |
					   marks,
				   sizeof(struct stack_buf), NULL, NULL);
		return;
	}
	/* a sample's call chain is the perf event's, walked already, but for
	 * the user part with own_user_walk */
	*user = marks && !own_user_walk ?
			take_stack(ctx, &user_ips, BPF_F_USER_STACK | marks,
				   sizeof(struct ip_stack),
				   key && !*kernel ? &leaf : NULL, NULL) :
			take_user_frames(ctx, key && !*kernel ? &leaf : NULL);
	if (key && !*kernel && *user) {
		key->ip = leaf;
		key->leaf_of = DCP_BPF_LEAF_USER;
	}
}

/*
 * Whether process tgid is recorded: with some processes only (-p, a
 * command), the others' samples and switches are counted, and dropped by
 * user space, so their stacks are not walked.
 */
static __always_inline bool recorded(__u32 tgid)
{
	return !unwind_targeted ||
	       bpf_map_lookup_elem(&unwind_targets, &tgid) != NULL;
}

/* Whether the current thread is in the cgroups kept (or below them). */
static __always_inline bool cgroup_kept(void)
{
	if (!nr_cgroup_filter)
		return true;
	for (__u32 i = 0; i < DCP_BPF_MAX_CGROUP_FILTER; i++) {
		if (i >= nr_cgroup_filter)
			break;
		if (bpf_current_task_under_cgroup(&cgroup_filter, i) == 1)
			return true;
	}
	return false;
}

SEC("perf_event")
int dcp_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct dcp_bpf_key key = {};
	__u64 weight = sample_weight, *v;
	long err;

	count_stat(DCP_BPF_STAT_SAMPLES);
	key.pid = id >> 32;
	key.tid = (__u32)id;
	if (!cgroup_kept()) {
		count_stat_n(DCP_BPF_STAT_CGROUP_FILTERED, weight);
		return 0;
	}
	if (key.tid != 0) {
		if (filter_marked && !leaf_marked(ctx)) {
			count_stat_n(DCP_BPF_STAT_FILTERED, weight);
			return 0;
		}
		if (with_cgroups)
			key.cgroup = bpf_get_current_cgroup_id();
		bpf_get_current_comm(key.comm, sizeof(key.comm));
		key.exec_id = (__u32)bpf_get_current_task_btf()->self_exec_id;
		if (recorded(key.pid))
			take_stacks(ctx, &key.user_stack, &key.kernel_stack, 0,
				    1, &key);
		if (!key.user_stack && !key.kernel_stack) {
			__u64 ip = ctx->regs.ip;

			asm volatile("" : "+r"(ip));
			key.ip = ip;
		}
	} else {
		key.pid = 0;
	}
	v = bpf_map_lookup_elem(&counts, &key);
	if (v) {
		__sync_fetch_and_add(v, weight);
		return 0;
	}
	err = bpf_map_update_elem(&counts, &key, &weight, BPF_NOEXIST);
	if (err == -EEXIST) {
		v = bpf_map_lookup_elem(&counts, &key);
		if (v)
			__sync_fetch_and_add(v, weight);
	} else if (err) {
		count_stat_n(DCP_BPF_STAT_LOST_FULL, weight);
	}
	return 0;
}

/* task __state bits (include/linux/sched.h) */
#define DCP_TASK_UNINTERRUPTIBLE 0x2
#define DCP_TASK_DEAD 0x80
#define DCP_TASK_NOLOAD 0x400

/* --off-cpu: ns more off the CPU for a (thread, stacks, state), and the
 * blocks (0 or 1) that adds */
static __always_inline void add_off_time(struct dcp_bpf_off_key *key, __u64 ns,
					 __u64 blocks)
{
	struct dcp_bpf_off_val *v = bpf_map_lookup_elem(&off_counts, key);
	struct dcp_bpf_off_val init = { .ns = ns, .blocks = blocks };
	long err;

	if (!v) {
		err = bpf_map_update_elem(&off_counts, key, &init, BPF_NOEXIST);
		if (!err)
			return;
		/* another CPU added the key meanwhile: add to its value */
		v = err == -EEXIST ? bpf_map_lookup_elem(&off_counts, key) :
				     NULL;
		if (!v) {
			count_stat(DCP_BPF_STAT_OFF_LOST);
			return;
		}
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->blocks, blocks);
}

/*
 * How long t has waited for a CPU since it started, in the scheduler's
 * own account (sched_info.run_delay, as /proc/PID/schedstat shows it),
 * with the wait it is in now when it is queued (since last_queued, on
 * the clock of its runqueue, which that field is in; the runqueue through
 * its CFS queue: the per-CPU `runqueues` is not in kallsyms without
 * KALLSYMS_ALL). A thread's wait after its wake-up is what this grows by
 * while it is switched out, migrations between runqueues included; no
 * wake-up needs tracing. -1: the kernel keeps no sched_info.
 */
static __always_inline __u64 cpu_wait(struct task_struct *t, bool queued)
{
	__u64 ns, since, clock;

	if (!bpf_core_field_exists(t->sched_info.run_delay) ||
	    !bpf_core_field_exists(t->se.cfs_rq) ||
	    !bpf_core_field_exists(struct cfs_rq, rq))
		return (__u64)-1;
	/* direct loads from the tracepoint's task pointers: a helper call
	 * per field (BPF_CORE_READ) cost more than the wake-up program
	 * this replaces */
	ns = t->sched_info.run_delay;
	since = t->sched_info.last_queued;
	if (!queued || !since)
		return ns;
	clock = t->se.cfs_rq->rq->clock;
	return clock > since ? ns + (clock - since) : ns;
}

/* why a thread leaves the CPU: 0 runnable, 1 sleeping, 2 blocked */
static __always_inline __u32 off_state(bool preempt, unsigned int prev_state)
{
	if (preempt || !(prev_state & 0xff))
		return 0;
	/* idle kernel workers (TASK_IDLE) sleep, they do not block */
	if ((prev_state & DCP_TASK_UNINTERRUPTIBLE) &&
	    !(prev_state & DCP_TASK_NOLOAD))
		return 2;
	return 1;
}

/*
 * t's block (st, its switch-out) up to now to its stacks' count, the sleep
 * and the wait for a CPU after its wake-up apart; st is emptied.
 */
static __always_inline void
charge_block(struct task_struct *t, struct dcp_bpf_off_start *st, __u64 now)
{
	struct dcp_bpf_off_key key = {};
	__u64 block = now - st->time, counted = 0;

	key.pid = st->pid;
	key.tid = t->pid;
	key.user_stack = st->user_stack;
	key.kernel_stack = st->kernel_stack;
	key.state = st->state;
	key.cgroup = st->cgroup;
	__builtin_memcpy(key.comm, st->comm, sizeof(key.comm));
	/* a sleep ends at its wake-up; the wait for a CPU after it is CPU
	 * contention: runnable, on the same stack */
	if (key.state) {
		__u64 waited = cpu_wait(t, true), runnable = 0;

		if (waited == (__u64)-1 || st->run_delay == (__u64)-1)
			count_stat(DCP_BPF_STAT_OFF_UNSPLIT);
		else if (waited > st->run_delay)
			runnable = waited - st->run_delay;
		if (runnable > block)
			runnable = block;
		if (block > runnable) {
			add_off_time(&key, block - runnable, 1);
			counted = 1;
		}
		key.state = 0;
		block = runnable;
	}
	if (block)
		add_off_time(&key, block, !counted);
	st->time = 0;
}

/*
 * --off-cpu (loaded only then): prev leaves the CPU with its stacks and
 * state; next comes back, and the time since its own switch-out is added
 * to its stacks' count. The stacks are the current task's: prev's.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(dcp_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct dcp_bpf_off_start *st;

	if (prev->pid && !(prev_state & DCP_TASK_DEAD) && cgroup_kept()) {
		st = bpf_task_storage_get(&off_starts, prev, NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!st) {
			count_stat(DCP_BPF_STAT_OFF_LOST);
		} else {
			count_stat(DCP_BPF_STAT_OFF_SWITCHES);
			if (st->time)
				count_stat(DCP_BPF_STAT_OFF_MISSED);
			st->time = now;
			st->run_delay = cpu_wait(prev, false);
			st->pid = prev->tgid;
			st->state = off_state(preempt, prev_state);
			st->cgroup =
				with_cgroups ? bpf_get_current_cgroup_id() : 0;
			/* the kernel stack starts inside the tracepoint's
			 * call of this program (the program,
			 * bpf_trace_run4): from __schedule on, as the ring
			 * backend's sched_switch call chains (but for
			 * __traceiter_sched_switch when other probes share
			 * the tracepoint: user space drops it,
			 * source_bpf_counts.c) */
			if (recorded(st->pid))
				take_stacks(ctx, &st->user_stack,
					    &st->kernel_stack, 2, 0, NULL);
			else
				st->user_stack = st->kernel_stack = 0;
			bpf_get_current_comm(st->comm, sizeof(st->comm));
		}
	}
	if (!next->pid)
		return 0;
	st = bpf_task_storage_get(&off_starts, next, NULL, 0);
	if (!st || !st->time)
		return 0; /* switched out before recording began */
	if (now - st->time < off_cpu_min_ns || now <= st->time) {
		count_stat(DCP_BPF_STAT_OFF_SHORT);
		st->time = 0;
		return 0;
	}
	count_stat(DCP_BPF_STAT_OFF_BLOCKS);
	charge_block(next, st, now);
	return 0;
}

/*
 * The user stack of another task, t, as far as it can be known: the one
 * frame where it entered the kernel (its user registers' ip; the kernel
 * walks no other task's user stack), into the user stack map as
 * take_stack() puts the current task's. Its hash, 0 when there is none.
 */
static __always_inline __u64 entry_ip_stack(struct task_struct *t)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u32 zero = 0;
	struct stack_buf *buf = bpf_map_lookup_elem(&stack_scratch, &zero);
	__u64 *w, ip, h = 0xcbf29ce484222325ull;
	long err;

	if (!regs || !buf)
		return 0;
	ip = BPF_CORE_READ(regs, ip);
	if (!ip || (__s64)ip < 0)
		return 0;
	/* readers stop at the first empty frame: the rest is not read */
	w = (__u64 *)buf;
	if (user_build_ids) {
		buf->frames[0].status = BPF_STACK_BUILD_ID_IP;
		buf->frames[0].ip = ip;
		buf->frames[1].status = BPF_STACK_BUILD_ID_EMPTY;
	} else {
		w[0] = ip;
		w[1] = 0;
	}
	h = ((h ^ 0x656e747279ull) * 0x100000001b3ull ^ ip) * 0x100000001b3ull;
	err = bpf_map_update_elem(user_build_ids ? (void *)&user_stacks :
						   (void *)&user_ips,
				  &h, buf, BPF_ANY);
	if (err) {
		count_stat(DCP_BPF_STAT_LOST_STACK);
		return 0;
	}
	return h;
}

/*
 * --off-cpu, at the start of a recording (an iterator over every thread,
 * run once the switch program is attached): a thread asleep since before
 * it (a hung one, a daemon's idle worker) has its wait start now, on its
 * kernel stack and the user ip it entered the kernel at (the rest of the
 * user stack of another task cannot be read), so that the time to its
 * switch-in or to the end is charged.
 */
/* t's cgroup (v2) id, as bpf_get_current_cgroup_id() gives the current
 * task's */
static __always_inline __u64 task_cgroup(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

SEC("iter/task")
int dcp_off_cpu_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct dcp_bpf_off_start *st;
	unsigned int state;

	if (!t || !t->pid || t->exit_state || t->on_cpu)
		return 0;
	state = t->__state;
	if (!(state & 0xff) || (state & DCP_TASK_DEAD))
		return 0; /* running, or waiting for a CPU */
	st = bpf_task_storage_get(&off_starts, t, NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count_stat(DCP_BPF_STAT_OFF_LOST);
		return 0;
	}
	if (st->time)
		return 0; /* switched out since the switch program runs */
	st->time = bpf_ktime_get_ns();
	st->run_delay = cpu_wait(t, false);
	st->pid = t->tgid;
	st->state = off_state(false, state);
	st->cgroup = with_cgroups ? task_cgroup(t) : 0;
	st->user_stack = t->mm ? entry_ip_stack(t) : 0;
	st->kernel_stack = take_stack(ctx, &kernel_stacks, 0,
				      sizeof(struct ip_stack), NULL, t);
	bpf_probe_read_kernel_str(st->comm, sizeof(st->comm), t->comm);
	count_stat(DCP_BPF_STAT_OFF_UNDER_WAY);
	return 0;
}

/*
 * --off-cpu, at the end of a recording (an iterator over every thread,
 * run once after the switch program is detached): a thread still switched
 * out (a hung one, a daemon's idle worker) has its time up to now charged
 * to the stacks it left on, as one block, unless under the minimum. The
 * question off-CPU time answers most is where a thread is stuck now.
 */
SEC("iter/task")
int dcp_off_cpu_open(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct dcp_bpf_off_start *st;
	__u64 now = bpf_ktime_get_ns();

	if (!t)
		return 0;
	st = bpf_task_storage_get(&off_starts, t, NULL, 0);
	if (!st || !st->time)
		return 0;
	if (now > st->time && now - st->time >= off_cpu_min_ns) {
		count_stat(DCP_BPF_STAT_OFF_OPEN);
		charge_block(t, st, now);
	}
	st->time = 0;
	return 0;
}
