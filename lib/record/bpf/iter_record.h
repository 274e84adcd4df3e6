/* SPDX-License-Identifier: MIT */
/*
 * The records the task iterators (task_iter.bpf.c) write with
 * bpf_seq_write and iter.c reads from the iterator's file descriptor:
 * a fixed header, then the fields, 8-byte aligned. Shared by the BPF
 * programs (vmlinux.h types) and user space (linux/types.h).
 */
#ifndef DCPROF_ITER_RECORD_H
#define DCPROF_ITER_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define DCP_ITER_TASK 1 /* struct dcp_iter_task */
#define DCP_ITER_VMA 2 /* struct dcp_iter_vma, then the path */

#define DCP_ITER_NAME_MAX 256 /* NAME_MAX and its NUL */
#define DCP_ITER_COMM_LEN 16

/* dcp_iter_vma.region: where no file backs the mapping */
#define DCP_ITER_REGION_FILE 0
#define DCP_ITER_REGION_ANON 1
#define DCP_ITER_REGION_VDSO 2
#define DCP_ITER_REGION_HEAP 3
#define DCP_ITER_REGION_STACK 4

struct dcp_iter_hdr {
	__u32 kind;
	__u32 size; /* the whole record, path included, a multiple of 8 */
};

/* One task (thread) of the task walk. */
struct dcp_iter_task {
	struct dcp_iter_hdr hdr;
	__u32 tgid, tid;
	__u32 ppid; /* the thread group's parent (real_parent's tgid) */
	__u32 has_mm;
	__u64 start_boottime; /* ns after boot, suspend included */
	char comm[DCP_ITER_COMM_LEN];
};

/* One executable mapping of the task_vma walk. */
struct dcp_iter_vma {
	struct dcp_iter_hdr hdr;
	__u32 tgid;
	__u32 region; /* DCP_ITER_REGION_* */
	__u64 start, end, pgoff; /* pgoff in bytes */
	__u64 vm_flags;
	__u64 ino;
	__u32 dev; /* the kernel's s_dev: major << 20 | minor */
	__u32 generation;
	__u32 path_len; /* bytes of path, its NUL included; 0 for none */
	__u32 pad;
	/* then path_len bytes: the mapped file's name (its dentry's, the
	 * last component of its path), its NUL, and padding to 8 bytes */
};

#endif
