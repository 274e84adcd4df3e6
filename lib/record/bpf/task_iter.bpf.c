// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The collection through the kernel: bpf_iter programs that walk the tasks
 * that exist (iter/task: every thread) and their executable mappings
 * (iter/task_vma: every process once), writing fixed binary records
 * (iter_record.h) into the iterator's seq_file. User space (iter.c) reads
 * the iterator's file descriptor with any buffer size; the kernel resumes
 * the walk where the last read stopped.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "iter_record.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define VM_EXEC 0x00000004UL

/* A vma record and room for its path: too large for the BPF stack. */
struct vma_buf {
	struct dcp_iter_vma r;
	char path[DCP_ITER_NAME_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_buf);
} vma_scratch SEC(".maps");

SEC("iter/task")
int dcp_iter_task(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct dcp_iter_task r = {};

	if (!t)
		return 0;
	r.hdr.kind = DCP_ITER_TASK;
	r.hdr.size = sizeof(r);
	r.tgid = t->tgid;
	r.tid = t->pid;
	r.ppid = BPF_CORE_READ(t, real_parent, tgid);
	r.has_mm = t->mm != NULL;
	r.start_boottime = t->start_boottime;
	bpf_probe_read_kernel_str(r.comm, sizeof(r.comm), t->comm);
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}

/* Name the region of a mapping without a file, as /proc/PID/maps does. */
static __always_inline __u32 region_of(struct vm_area_struct *vma,
				       struct mm_struct *mm)
{
	__u64 start = vma->vm_start, end = vma->vm_end;

	if (!mm)
		return DCP_ITER_REGION_ANON;
	if (start == (__u64)BPF_CORE_READ(mm, context.vdso))
		return DCP_ITER_REGION_VDSO;
	if (start <= BPF_CORE_READ(mm, brk) &&
	    end >= BPF_CORE_READ(mm, start_brk))
		return DCP_ITER_REGION_HEAP;
	if (start <= BPF_CORE_READ(mm, start_stack) &&
	    end >= BPF_CORE_READ(mm, start_stack))
		return DCP_ITER_REGION_STACK;
	return DCP_ITER_REGION_ANON;
}

static __always_inline int write_vma(struct bpf_iter__task_vma *ctx,
				     bool exe_only)
{
	struct vm_area_struct *vma = ctx->vma;
	struct task_struct *task = ctx->task;
	struct file *file, *exe;
	struct vma_buf *b;
	struct inode *inode;
	__u32 zero = 0;
	long n;

	if (!task || !vma)
		return 0;
	if (!(vma->vm_flags & VM_EXEC))
		return 0;
	file = vma->vm_file;
	if (exe_only) {
		exe = BPF_CORE_READ(vma, vm_mm, exe_file);
		if (!file || !exe ||
		    BPF_CORE_READ(file, f_inode) != BPF_CORE_READ(exe, f_inode))
			return 0;
	}
	b = bpf_map_lookup_elem(&vma_scratch, &zero);
	if (!b)
		return 0;
	b->r.hdr.kind = DCP_ITER_VMA;
	b->r.tgid = task->tgid;
	b->r.start = vma->vm_start;
	b->r.end = vma->vm_end;
	b->r.pgoff = (__u64)vma->vm_pgoff << 12;
	b->r.vm_flags = vma->vm_flags;
	b->r.ino = 0;
	b->r.dev = 0;
	b->r.generation = 0;
	b->r.path_len = 0;
	b->r.pad = 0;
	if (file) {
		inode = BPF_CORE_READ(file, f_inode);
		b->r.region = DCP_ITER_REGION_FILE;
		b->r.ino = BPF_CORE_READ(inode, i_ino);
		b->r.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		b->r.generation = BPF_CORE_READ(inode, i_generation);
		/*
		 * bpf_d_path() wants a trusted path, and the task_vma
		 * iterator's vma is not one: the last component here, the
		 * whole path from /proc/PID/map_files in user space.
		 */
		n = bpf_probe_read_kernel_str(
			b->path, sizeof(b->path),
			BPF_CORE_READ(file, f_path.dentry, d_name.name));
		if (n > 0 && n <= DCP_ITER_NAME_MAX)
			b->r.path_len = n;
	} else {
		b->r.region = region_of(vma, vma->vm_mm);
	}
	n = (sizeof(b->r) + b->r.path_len + 7) & ~7UL;
	if (n > sizeof(*b))
		n = sizeof(*b);
	b->r.hdr.size = n;
	bpf_seq_write(ctx->meta->seq, b, n & 0x1ff);
	return 0;
}

SEC("iter/task_vma")
int dcp_iter_vma(struct bpf_iter__task_vma *ctx)
{
	return write_vma(ctx, false);
}

/* The main executable's mappings only: the tasks walk's exe records. */
SEC("iter/task_vma")
int dcp_iter_exe(struct bpf_iter__task_vma *ctx)
{
	return write_vma(ctx, true);
}
