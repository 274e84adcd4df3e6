// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The BPF record source's task events: exec, exit and fork of every task,
 * and the executable file mappings processes make (the program and its
 * loader at exec, mmap(2) after), into a ring buffer user space reads
 * (source_bpf_tasks.c), so that a process that lives a few milliseconds
 * is named without a /proc read. Linked with profile.bpf.c into the
 * recorder's object.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "profile_common.h"
#include "stats.bpf.h"
#include "unwind.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* 1: the exec program sends the new program's mappings (dcp_mmap loads) */
const volatile int send_exec_mappings = 0;
/* 1: every process's executable mappings are kept in proc_ranges, for
 * the walk by unwind tables (unwind.bpf.h) */
const volatile int keep_ranges = 0;

/* where a process's new ranges are put together */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dcp_bpf_ranges);
} ranges_scratch SEC(".maps");

/* add_range()'s copy of a process's ranges, one range a step */
struct range_copy {
	struct dcp_bpf_ranges *old, *nw;
	struct dcp_bpf_range add;
	__u32 nr, j;
	bool placed;
};

static __always_inline bool put_range(struct range_copy *c,
				      const struct dcp_bpf_range *r)
{
	__u32 j = c->j;

	if (j >= DCP_BPF_MAX_RANGES)
		return false;
	asm volatile("" : "+r"(j));
	c->nw->r[j & (DCP_BPF_MAX_RANGES - 1)] = *r;
	c->j = j + 1;
	return true;
}

static long copy_range(__u32 i, struct range_copy *c)
{
	struct dcp_bpf_range *r;

	if (i >= c->nr || i >= DCP_BPF_MAX_RANGES)
		return 1;
	/* the mask the verifier needs, which the compiler would drop */
	asm volatile("" : "+r"(i));
	r = &c->old->r[i & (DCP_BPF_MAX_RANGES - 1)];
	if (r->end > c->add.start && r->start < c->add.end)
		return 0; /* replaced */
	if (!c->placed && r->start > c->add.start) {
		if (!put_range(c, &c->add))
			return 1;
		c->placed = true;
	}
	return put_range(c, r) ? 0 : 1;
}

/*
 * The executable mapping [start, end) of file (ino, dev) at file offset
 * pgoff into tgid's sorted ranges, in place of those it overlaps (a
 * mapping made over others replaces them). The ranges are put together
 * apart and stored whole: a walk on another CPU reads either the old ones
 * or the new.
 */
static __always_inline void add_range(__u32 tgid, __u64 start, __u64 end,
				      __u64 pgoff, __u64 ino, __u32 dev)
{
	struct range_copy c = {};
	__u32 zero = 0;

	c.old = bpf_map_lookup_elem(&proc_ranges, &tgid);
	c.nw = bpf_map_lookup_elem(&ranges_scratch, &zero);
	if (!c.nw)
		return;
	c.add.start = start;
	c.add.end = end;
	c.add.bias = pgoff - start;
	c.add.ino = ino;
	c.add.dev = dev;
	if (c.old) {
		c.nr = c.old->nr;
		bpf_loop(DCP_BPF_MAX_RANGES, copy_range, &c, 0);
	}
	if (!c.placed && !put_range(&c, &c.add)) {
		count_stat(DCP_BPF_STAT_UNWIND_RANGES_FULL);
		return;
	}
	c.nw->nr = c.j;
	if (bpf_map_update_elem(&proc_ranges, &tgid, c.nw, BPF_ANY))
		count_stat(DCP_BPF_STAT_UNWIND_RANGES_FULL);
}

/*
 * Programs user space has named and pinned (source_bpf_tasks.c): their
 * exec needs no prompt wake-up when mappings come as events.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct dcp_bpf_file_key);
	__type(value, __u8);
} known_execs SEC(".maps");

static __always_inline void task_event(__u32 type, struct task_struct *t,
				       struct task_struct *parent,
				       struct linux_binprm *bprm)
{
	/* the path is an exec's alone: forks and exits, most of a storm's
	 * events, leave it out of the ring */
	struct dcp_bpf_event *e = bpf_ringbuf_reserve(
		&events, bprm ? sizeof(*e) : DCP_BPF_TASK_EVENT_SIZE, 0);
	bool known = false;

	if (!e) {
		count_stat(DCP_BPF_STAT_LOST_EVENTS);
		return;
	}
	e->type = type;
	e->pid = BPF_CORE_READ(t, tgid);
	e->tid = BPF_CORE_READ(t, pid);
	e->ppid = parent ? BPF_CORE_READ(parent, tgid) : 0;
	e->ptid = parent ? BPF_CORE_READ(parent, pid) : 0;
	e->exec_id = (__u32)BPF_CORE_READ(t, self_exec_id);
	e->time = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	e->ino = 0;
	e->dev = 0;
	if (bprm) {
		struct inode *inode = BPF_CORE_READ(bprm, file, f_inode);
		struct dcp_bpf_file_key k = {};

		bpf_probe_read_kernel_str(e->path, sizeof(e->path),
					  BPF_CORE_READ(bprm, filename));
		e->ino = BPF_CORE_READ(inode, i_ino);
		e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
		k.ino = e->ino;
		k.dev = e->dev;
		known = send_exec_mappings &&
			bpf_map_lookup_elem(&known_execs, &k) != NULL;
	}
	/*
	 * Only the exec of a program user space does not hold yet needs it
	 * at once (to pin the program while the process lives; the maps
	 * come as events); forks, exits and the exec of a known program wait
	 * for the next drain, which reads the ring first, unless it fills: a
	 * wake-up per fork and exit was 12% of the recorder's CPU with 20
	 * new processes a second. Forced: the ring wakes its reader only
	 * for a record right at the reader's position, and the fork before
	 * an exec is usually still unread.
	 */
	if ((type == DCP_BPF_EVENT_EXEC && !known) ||
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
		    DCP_BPF_EVENTS_SIZE / 4)
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	else
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/*
 * Executable mappings of files as processes make them (mmap(2): the loader
 * mapping libraries, dlopen): a process that lives a few milliseconds maps
 * its libraries and is gone before user space could read its maps; with
 * these its frames are named from the identities user space holds
 * (source_bpf_tasks.c). The program and its loader, mapped by exec itself,
 * are sent by the exec program after its event. (fentry on
 * perf_event_mmap(), where perf makes its MMAP2 records, would see every
 * mapping, but this kernel refuses fentry programs.)
 */
#define DCP_VM_EXEC 0x00000004UL

struct dcp_sys_exit_args {
	__u64 common;
	int syscall_nr;
	long ret;
};

static long mapped_vma(struct task_struct *task, struct vm_area_struct *vma,
		       void *data)
{
	struct dcp_bpf_mmap_event *e = data;
	struct file *file = vma->vm_file;
	struct inode *inode;

	e->flags = (__u32)vma->vm_flags;
	e->end = vma->vm_end;
	e->start = vma->vm_start;
	e->len = vma->vm_end - vma->vm_start;
	if (!(vma->vm_flags & DCP_VM_EXEC) || !file)
		return 0;
	inode = file->f_inode;
	e->pgoff = (__u64)vma->vm_pgoff << 12;
	e->dev = inode->i_sb->s_dev;
	e->ino = inode->i_ino;
	e->generation = inode->i_generation;
	return 0;
}

/*
 * The executable mapping of the current task at addr into the ring (vdso:
 * the vdso's; anonymous memory: ino 0); returns the end of the vma there
 * (0: none, or busy), for walking on.
 */
static __always_inline __u64 send_mapping(__u64 addr, bool vdso,
					  bool send_events)
{
	struct dcp_bpf_mmap_event m = {}, *e;
	bool anon_exec;
	__u64 id;

	if (bpf_find_vma(bpf_get_current_task_btf(), addr, mapped_vma, &m, 0))
		return 0;
	/* anonymous executable memory (a JIT's) is sent without a file:
	 * user space learns that maps it read before are missing code */
	anon_exec = !vdso && !m.ino && (m.flags & DCP_VM_EXEC);
	if (vdso ? m.start != addr : !m.ino && !anon_exec)
		return m.end; /* not executable */
	id = bpf_get_current_pid_tgid();
	if (keep_ranges && !anon_exec)
		add_range(id >> 32, m.start, m.end, m.pgoff,
			  vdso ? DCP_BPF_VDSO_INO : m.ino, vdso ? 0 : m.dev);
	if (!send_events)
		return m.end;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_stat(DCP_BPF_STAT_LOST_EVENTS);
		return 0;
	}
	m.type = vdso ? DCP_BPF_EVENT_VDSO : DCP_BPF_EVENT_MMAP;
	m.pid = id >> 32;
	m.tid = (__u32)id;
	m.time = bpf_ktime_get_ns();
	*e = m;
	bpf_ringbuf_submit(e, 0);
	return m.end;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int dcp_mmap(struct dcp_sys_exit_args *ctx)
{
	long ret = ctx->ret;

	if (ret >= 0 || ret <= -4096)
		send_mapping((__u64)ret, false, send_exec_mappings);
	return 0;
}

#define DCP_AT_BASE 7 /* auxv: the program interpreter's base */

SEC("tp_btf/sched_process_exec")
int BPF_PROG(dcp_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct mm_struct *mm = BPF_CORE_READ(p, mm);
	__u64 base = 0, addr;

	__u32 tgid = BPF_CORE_READ(p, tgid);

	task_event(DCP_BPF_EVENT_EXEC, p, NULL, bprm);
	if (keep_ranges)
		bpf_map_delete_elem(&proc_ranges, &tgid);
	if (!mm || (!send_exec_mappings && !keep_ranges))
		return 0;
	/* after the event, whose record empties the process's maps: the
	 * program's text, then the loader's segments, from its base on */
	send_mapping(BPF_CORE_READ(mm, start_code), false, send_exec_mappings);
	for (int i = 0; i < 54; i += 2)
		if (BPF_CORE_READ(mm, saved_auxv[i]) == DCP_AT_BASE) {
			base = BPF_CORE_READ(mm, saved_auxv[i + 1]);
			break;
		}
	addr = base;
	for (int k = 0; k < 4 && addr; k++)
		addr = send_mapping(addr, false, send_exec_mappings);
	/* clock_gettime() and friends run there, with no file to name them */
	addr = (__u64)BPF_CORE_READ(mm, context.vdso);
	if (addr)
		send_mapping(addr, true, send_exec_mappings);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(dcp_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	/* every thread: its end is its lifetime's (report --threads) */
	task_event(DCP_BPF_EVENT_EXIT, p, NULL, NULL);
	if (keep_ranges && p->pid == tgid) {
		bpf_map_delete_elem(&proc_ranges, &tgid);
		bpf_map_delete_elem(&unwind_targets, &tgid);
	}
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(dcp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = child->tgid, ptgid = parent->tgid, one = 1;
	struct dcp_bpf_ranges *rs;

	task_event(DCP_BPF_EVENT_FORK, child, parent, NULL);
	/* a new process maps what its parent maps */
	if (keep_ranges && child->pid == tgid && tgid != ptgid) {
		rs = bpf_map_lookup_elem(&proc_ranges, &ptgid);
		if (rs && bpf_map_update_elem(&proc_ranges, &tgid, rs, BPF_ANY))
			count_stat(DCP_BPF_STAT_UNWIND_RANGES_FULL);
		/* a recorded process's children are recorded */
		if (bpf_map_lookup_elem(&unwind_targets, &ptgid))
			bpf_map_update_elem(&unwind_targets, &tgid, &one,
					    BPF_ANY);
	}
	return 0;
}

/*
 * The executable file mappings of the processes that exist when recording
 * begins (an iterator over every process's vmas, run once after the task
 * programs are attached): the ranges the exec and mmap programs keep for
 * the processes that come after.
 */
SEC("iter/task_vma")
int dcp_ranges_seed(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct task_struct *t = ctx->task;
	struct file *file;
	struct inode *inode;

	if (!t || !vma || !(vma->vm_flags & DCP_VM_EXEC))
		return 0;
	file = vma->vm_file;
	if (!file) {
		if (vma->vm_start ==
		    (__u64)BPF_CORE_READ(vma, vm_mm, context.vdso))
			add_range(t->tgid, vma->vm_start, vma->vm_end, 0,
				  DCP_BPF_VDSO_INO, 0);
		return 0;
	}
	inode = file->f_inode;
	add_range(t->tgid, vma->vm_start, vma->vm_end,
		  (__u64)vma->vm_pgoff << 12, inode->i_ino, inode->i_sb->s_dev);
	return 0;
}
