/* SPDX-License-Identifier: MIT */
/*
 * What the BPF record source's kernel half (profile.bpf.c) and its user
 * half (source_bpf.c) share: the count map's key, the statistics slots and
 * the task events of the ring buffer. Plain fixed-size types only: this
 * header is compiled both by clang -target bpf and by the C compiler.
 */
#ifndef DCPROF_PROFILE_COMMON_H
#define DCPROF_PROFILE_COMMON_H

#define DCP_BPF_MAX_FRAMES 127 /* perf_event_max_stack's default */
#define DCP_BPF_COMM_LEN 16
#define DCP_BPF_BUILD_ID_SIZE 20
#define DCP_BPF_PATH_LEN 256
#define DCP_BPF_MAX_CGROUP_FILTER 8 /* cgroups a recording may be kept to */

/*
 * Stacks are kept in LRU hash maps by a 64-bit hash of their frames (0:
 * none): the same stack has the same key for the whole recording, so user
 * space copies it once, and no map is ever emptied.
 */

/* One count: a thread's stacks (user and kernel, by hash) and name. */
struct dcp_bpf_key {
	unsigned int pid; /* tgid; 0 with tid 0: idle */
	unsigned int tid;
	unsigned long long user_stack;
	unsigned long long kernel_stack;
	char comm[DCP_BPF_COMM_LEN]; /* the thread's name */
	/*
	 * The kernel's exec counter of the process's program when sampled
	 * (task self_exec_id, low 32 bits): a sample taken between a fork
	 * and the exec that followed has an older one than the exec's event,
	 * and is named against the maps from before the exec.
	 */
	unsigned int exec_id;
	unsigned int leaf_of; /* enum dcp_bpf_leaf: what ip is */
	/*
	 * leaf_of KERNEL or USER: that stack's innermost frame, kept out of
	 * its hash (the loop a sample stops in moves from sample to sample
	 * under the same callers, which stay one stack; the first frame
	 * stored under the hash is another sample's). NONE: the sampled
	 * address when neither stack could be taken, else 0.
	 */
	unsigned long long ip;
	/* the thread's cgroup (v2) id, 0 when cgroups are not recorded */
	unsigned long long cgroup;
};

enum dcp_bpf_leaf {
	DCP_BPF_LEAF_NONE = 0,
	DCP_BPF_LEAF_KERNEL = 1, /* ip is the kernel stack's first frame */
	DCP_BPF_LEAF_USER = 2, /* ip is the user stack's first frame */
};

/*
 * Time off the CPU (--off-cpu): a thread's stacks when it was switched out
 * and why (enum dcp_off_cpu_state); the value is the ns it stayed out.
 */
/* --off-cpu: a thread's last switch-out (the task storage off_starts). */
struct dcp_bpf_off_start {
	unsigned long long time;
	unsigned long long user_stack;
	unsigned long long kernel_stack;
	unsigned int pid;
	unsigned int state;
	char comm[DCP_BPF_COMM_LEN];
	/* the scheduler's count of the thread's waits for a CPU
	 * (sched_info.run_delay) then: what it has grown by at the
	 * switch-in is the block's runnable part */
	unsigned long long run_delay;
	unsigned long long cgroup;
};

struct dcp_bpf_off_key {
	unsigned int pid; /* tgid */
	unsigned int tid;
	unsigned long long user_stack;
	unsigned long long kernel_stack;
	char comm[DCP_BPF_COMM_LEN];
	unsigned int state;
	unsigned int pad;
	unsigned long long cgroup;
};

/* A key's time off the CPU, and the blocks it adds up (a woken sleep's
 * block is under two keys, its sleep's and its wait's: counted once) */
struct dcp_bpf_off_val {
	unsigned long long ns;
	unsigned long long blocks;
};

/* The per-CPU statistics array's slots. */
enum dcp_bpf_stat {
	DCP_BPF_STAT_SAMPLES, /* the program ran */
	DCP_BPF_STAT_FILTERED, /* leaf in no marked file: dropped */
	DCP_BPF_STAT_LOST_FULL, /* the count map was full */
	DCP_BPF_STAT_LOST_STACK, /* a stack map had no room for a stack */
	DCP_BPF_STAT_LOST_EVENTS, /* the task event ring was full */
	DCP_BPF_STAT_OFF_SWITCHES, /* --off-cpu: a switch-out kept */
	DCP_BPF_STAT_OFF_SHORT, /* a block under the minimum: dropped */
	DCP_BPF_STAT_OFF_LOST, /* no room in the off-CPU maps */
	DCP_BPF_STAT_OFF_BLOCKS, /* blocks added to the off-CPU counts */
	/* sleeps whose wait for a CPU after the wake-up is counted as
	 * sleeping: the kernel keeps no sched_info */
	DCP_BPF_STAT_OFF_UNSPLIT,
	/* a switch-out of a thread still out: its switch-in was not traced,
	 * and the block it ended is dropped */
	DCP_BPF_STAT_OFF_MISSED,
	/* a thread still switched out at the end: its time up to the end
	 * charged (dcp_off_cpu_open) */
	DCP_BPF_STAT_OFF_OPEN,
	/* a thread found asleep at the start: its wait begins there, on
	 * its kernel stack (dcp_off_cpu_seed) */
	DCP_BPF_STAT_OFF_UNDER_WAY,
	/* user stacks walked with the files' unwind tables (unwind.bpf.h),
	 * and their frames: found by a table row, or by the frame pointer
	 * where the file has no table (yet: user space builds it) or the
	 * address is in no file the kernel knows of the process */
	DCP_BPF_STAT_UNWIND_WALKS,
	DCP_BPF_STAT_UNWIND_TABLE_FRAMES,
	DCP_BPF_STAT_UNWIND_FP_FRAMES,
	DCP_BPF_STAT_UNWIND_NO_TABLE,
	DCP_BPF_STAT_UNWIND_NO_MAPPING,
	/* how each walk ended: the outermost frame, the frame-pointer chain
	 * ending, a row no kind expresses, a stack read failing, the depth */
	DCP_BPF_STAT_UNWIND_END_ROOT,
	DCP_BPF_STAT_UNWIND_END_FP,
	DCP_BPF_STAT_UNWIND_END_UNSUPPORTED,
	DCP_BPF_STAT_UNWIND_END_READ,
	DCP_BPF_STAT_UNWIND_END_DEPTH,
	/* an executable mapping the kernel could not add to its process's
	 * ranges (DCP_BPF_MAX_RANGES, or no memory) */
	DCP_BPF_STAT_UNWIND_RANGES_FULL,
	/* user frames the walk named (file cookie, offset) itself */
	DCP_BPF_STAT_UNWIND_NAMED,
	/* a sample of a thread outside the cgroup filter: dropped */
	DCP_BPF_STAT_CGROUP_FILTERED,
	/* Python frames (unwind.bpf.h): those put in stacks; samples of a
	 * Python process whose thread had no thread state found (not a
	 * Python thread, or more threads than the search looks at); walks
	 * that ended with Python frames not put in (the native walk ended
	 * first, the depth, or a frame that could not be read) */
	DCP_BPF_STAT_PY_FRAMES,
	DCP_BPF_STAT_PY_NO_THREAD,
	DCP_BPF_STAT_PY_CUT,
	DCP_BPF_STAT_NR,
};

enum dcp_bpf_event_type {
	DCP_BPF_EVENT_EXEC = 1,
	DCP_BPF_EVENT_EXIT = 2,
	DCP_BPF_EVENT_FORK = 3,
	DCP_BPF_EVENT_MMAP = 4, /* struct dcp_bpf_mmap_event */
	DCP_BPF_EVENT_VDSO = 5, /* the same, of the vdso (no file) */
	/* a walk met a file without an unwind table: a wake-up for user
	 * space to build it (unwind_wanted says which), nothing more */
	DCP_BPF_EVENT_UNWIND_WANT = 6,
	/* a walk met a Python code object new to its process: struct
	 * dcp_bpf_py_code_event, for user space to read it while the
	 * process lives */
	DCP_BPF_EVENT_PY_CODE = 7,
};

/* A task event in the ring buffer. */
struct dcp_bpf_event {
	unsigned int type;
	unsigned int pid; /* tgid */
	unsigned int tid;
	unsigned int ppid; /* fork: the parent's tgid */
	unsigned int ptid;
	unsigned int exec_id; /* exec: the new program's (see dcp_bpf_key) */
	unsigned long long time; /* CLOCK_MONOTONIC ns */
	/* exec: the program's file (s_dev: major << 20 | minor; 0: none) */
	unsigned long long ino;
	unsigned int dev;
	unsigned int pad;
	char comm[DCP_BPF_COMM_LEN];
	char path[DCP_BPF_PATH_LEN]; /* exec: the program's path as given */
};
/* a fork's or an exit's event: the same without the path */
#define DCP_BPF_TASK_EVENT_SIZE \
	(sizeof(struct dcp_bpf_event) - DCP_BPF_PATH_LEN)

/* A program's file, by inode and device (s_dev), in known_execs. */
struct dcp_bpf_file_key {
	unsigned long long ino;
	unsigned int dev;
	unsigned int pad;
};
/* the vdso's key (dev 0): it has no file, and its table is built by user
 * space from its own image, the same in every 64-bit process */
#define DCP_BPF_VDSO_INO 0xffffffffffffffffull

/*
 * A user frame the walk named in the kernel, in place of its address:
 * the top bit set (no user address has it), the file's cookie (user
 * space's, put in file_cookies by it) and the offset in the file. A frame
 * whose cookie or offset does not fit stays an address.
 */
#define DCP_BPF_NAMED_FRAME (1ull << 63)
#define DCP_BPF_NAMED_OFF_BITS 40
#define DCP_BPF_NAMED_COOKIE_MAX ((1u << 22) - 1)
#define DCP_BPF_NAMED_OFF_MASK ((1ull << DCP_BPF_NAMED_OFF_BITS) - 1)
/*
 * A Python call (unwind.bpf.h): the top two bits set (a named frame's
 * cookie never has its top bit, bit 62), then the code object's address
 * over 8 (user addresses are below 2^47, code objects 8-byte aligned) and
 * the index of its instruction (code units from co_code_adaptive, at
 * most DCP_BPF_PY_INSTR_MAX).
 */
#define DCP_BPF_PY_FRAME (3ull << 62)
#define DCP_BPF_PY_INSTR_BITS 18
#define DCP_BPF_PY_INSTR_MAX ((1u << DCP_BPF_PY_INSTR_BITS) - 1)
#define DCP_BPF_PY_CODE_MASK ((1ull << 44) - 1)
#define DCP_BPF_IS_PY_FRAME(ip) (((ip)&DCP_BPF_PY_FRAME) == DCP_BPF_PY_FRAME)

/*
 * A CPython process, by tgid in py_procs (put there by user space,
 * lib/record/bpf/python.c): where its runtime state and its evaluation
 * function are, and the offsets of the fields the walk reads in its
 * version's layout.
 */
struct dcp_bpf_py_proc {
	unsigned long long runtime; /* the address of _PyRuntime */
	/* _PyEval_EvalFrameDefault's code: its native frames run the
	 * Python frames up to an entry frame */
	unsigned long long eval_start, eval_end;
	unsigned short interp_head; /* _PyRuntime.interpreters.head */
	unsigned short threads_head; /* PyInterpreterState.threads.head */
	unsigned short tstate_next, tstate_native_tid, tstate_cframe;
	unsigned short cframe_frame; /* _PyCFrame.current_frame */
	/* PyThreadState.current_frame (3.13: no _PyCFrame); 0: the frame
	 * is found through tstate_cframe */
	unsigned short tstate_frame;
	unsigned short frame_code, frame_previous, frame_prev_instr;
	/*
	 * The byte that ends an evaluation call's frames: 3.11's is_entry
	 * (the frame the call began with: put in, then the end), or with
	 * shim_owner the owner of 3.12 on (a frame owned by the C stack, the
	 * shim the call pushed first: left out, the end).
	 */
	unsigned short frame_entry;
	unsigned short shim_owner;
	unsigned short code_adaptive; /* PyCodeObject.co_code_adaptive */
	unsigned short pad[3];
};

/* A code object of a process (the event, and py_codes' key). */
struct dcp_bpf_py_code_event {
	unsigned int type; /* DCP_BPF_EVENT_PY_CODE */
	unsigned int pid; /* tgid */
	unsigned long long code;
};

/* what a walk stores for a return address outside user space (a broken
 * frame-pointer chain's garbage): in the lowest page, which no mapping
 * holds, and without the named frames' bit */
#define DCP_BPF_NOT_USER_FRAME 1ull

/*
 * An executable mapping of a file as it is made (perf_event_mmap(), where
 * perf takes its MMAP2 records): the file by device and inode, named by
 * user space from the identities it holds.
 */
struct dcp_bpf_mmap_event {
	unsigned int type; /* DCP_BPF_EVENT_MMAP */
	unsigned int pid; /* tgid */
	unsigned int tid;
	unsigned int dev; /* the inode's s_dev: major << 20 | minor */
	unsigned long long time; /* CLOCK_MONOTONIC ns */
	unsigned long long start, len, pgoff; /* pgoff in bytes */
	unsigned long long ino;
	unsigned int generation;
	unsigned int flags; /* the vma's VM_* flags, low 32 bits */
	unsigned long long end; /* the vma's end (the program's own walk) */
};

/*
 * Unwinding in the kernel (unwind.bpf.h): every process's executable file
 * mappings, kept by the task programs from exec, mmap(2) and fork, sorted
 * by start, turn a user address into (file, offset in the file); the
 * file's unwind table (lib/unwind/unwind_row.h rows, compiled by user
 * space from its .eh_frame) says how to find the caller's frame there.
 */
#define DCP_BPF_MAX_RANGES 256 /* a power of two: indexes are masked */

struct dcp_bpf_range {
	unsigned long long start, end;
	/* the file offset of an address in the range is address + bias */
	unsigned long long bias;
	unsigned long long ino;
	unsigned int dev; /* s_dev: major << 20 | minor */
	unsigned int pad;
};

struct dcp_bpf_ranges {
	unsigned int nr;
	unsigned int pad;
	struct dcp_bpf_range r[DCP_BPF_MAX_RANGES];
};

/*
 * A file's table in the rows array, by dcp_bpf_file_key: rows are indexed
 * by 4 KiB page of file offset, nr_pages pages from page_base on, page i's
 * entry at pages[first_page + i]. nr_pages 0: the file has no table (no
 * CFI, or no room): its frames are walked by frame pointers. last_used:
 * when a walk last found the table (CLOCK_MONOTONIC, stored at
 * most every DCP_BPF_UNWIND_USE_NS), for user space to evict the tables
 * used least recently when it needs room.
 */
#define DCP_BPF_UNWIND_PAGE_SHIFT 12
#define DCP_BPF_UNWIND_USE_NS 1000000000ull
struct dcp_bpf_unwind_file {
	unsigned int first_page;
	unsigned int nr_pages;
	unsigned long long page_base;
	unsigned long long last_used;
};

/* The rows a page needs: the one in force at its start, then every row
 * that begins in it. */
struct dcp_bpf_unwind_page {
	unsigned int first_row;
	unsigned int nr_rows;
};
#define DCP_BPF_UNWIND_PAGE_ROWS (1u << 16) /* at most, for the search */

/*
 * A file a walk found without a table, for user space to build one
 * (unwind_wanted, by dcp_bpf_file_key): where a process maps it, to open
 * it through /proc/PID/map_files.
 */
struct dcp_bpf_unwind_want {
	unsigned int pid;
	/* a walk met the file and woke user space (one wake-up a file) */
	unsigned int woken;
	unsigned long long start, end;
};

#endif
