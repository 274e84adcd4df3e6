/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * User stacks unwound in the kernel from the files' unwind tables: each
 * frame's address is found in its process's executable mappings (kept by
 * tasks.bpf.c), its file's table row (compiled from .eh_frame by user
 * space, lib/unwind/unwind_table.c) says where the caller's frame is, and
 * the walk goes on from there. Code no table covers (JIT code, a file
 * whose table is not built yet, the vdso) is walked by its frame pointer.
 * The walk and its maps are profile.bpf.c's (it defines DCPROF_UNWIND_WALK
 * before including this); proc_ranges is defined there too and kept by
 * tasks.bpf.c, which shares it by name (bpftool gen object).
 */
#ifndef DCPROF_UNWIND_BPF_H
#define DCPROF_UNWIND_BPF_H

#include "unwind_row.h"

struct dcp_proc_ranges_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, __u32); /* tgid */
	__type(value, struct dcp_bpf_ranges);
};
extern struct dcp_proc_ranges_map proc_ranges SEC(".maps");

/*
 * When some processes only are recorded (-p, a command): those processes,
 * by tgid, put in by user space and kept by the fork and exit programs.
 * Only their walks ask for tables: the others' samples are dropped.
 */
struct dcp_unwind_targets_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, __u32);
};
extern struct dcp_unwind_targets_map unwind_targets SEC(".maps");

#ifdef DCPROF_UNWIND_WALK

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dcp_bpf_file_key);
	__type(value, struct dcp_bpf_unwind_file);
} unwind_files SEC(".maps");

/* sized before load, written by user space through a mapping of the part
 * a table fills (source_bpf_unwind.c) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dcp_bpf_unwind_page);
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dcp_unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct dcp_bpf_file_key);
	__type(value, struct dcp_bpf_unwind_want);
} unwind_wanted SEC(".maps");

/* the files user space has named, by their cookie: the walk names their
 * frames (file, offset) itself (DCP_BPF_NAMED_FRAME) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dcp_bpf_file_key);
	__type(value, __u32);
} file_cookies SEC(".maps");

/* the CPython processes, by tgid (profile_common.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct dcp_bpf_py_proc);
} py_procs SEC(".maps");

/* the threads a search for a thread's Python state looks at */
#define DCP_PY_MAX_THREADS 64

/*
 * The code objects the walks have met, by process: the first time, user
 * space is woken to read it (the drain may come after the process is
 * gone). Before the hash, each CPU's direct-mapped slots of the codes it
 * met last.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dcp_bpf_py_code_event);
	__type(value, __u8);
} py_codes SEC(".maps");

#define DCP_PY_SEEN_SLOTS 256
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DCP_PY_SEEN_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} py_seen SEC(".maps");

/* the thread states found, by tid: checked by their native thread id and
 * searched for again when it is not the tid's (the thread is gone) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} py_threads SEC(".maps");

/* x86-64 system call numbers (pt_regs.orig_ax at the kernel's entry) */
#define DCP_NR_EXECVE 59
#define DCP_NR_EXECVEAT 322

/* the ucontext a signal handler returns through (__restore_rt's CFI) */
#define DCP_SIGFRAME_RBP 120
#define DCP_SIGFRAME_RSP 160
#define DCP_SIGFRAME_RIP 168

/*
 * A walk's registers and counts, kept in map memory (walk_state), whose
 * values the verifier does not follow from one step to the next: on the
 * stack, each frame count would be a state of its own to verify.
 */
struct unwind_regs {
	__u64 pc, sp, bp;
	__u32 pid;
	__u32 n;
	__u32 end; /* the DCP_BPF_STAT_UNWIND_END_* slot, 0 going on */
	__u32 by_table, by_fp, no_table, no_mapping, named;
	__u32 lo, hi; /* a search's bounds */
	/* the range, table and cookie of the last frame's file, for the
	 * next frame, often in the same file (cached_end 0: none; a table
	 * of no pages: none) */
	__u64 cached_start, cached_end, cached_bias;
	struct dcp_bpf_unwind_file cached_file;
	__u32 cached_cookie;
	/* the frame's file by cookie (0: not named) and its bias */
	__u32 frame_cookie;
	__u64 frame_bias;
	/* 0: the frames stay addresses (a walk inside execve(2), whose
	 * registers are the old program's and ranges the new one's) */
	__u8 naming;
	__u8 tables; /* 0: frame pointers alone, nothing counted */
	__u8 bp_known;
	/* pc is where the thread was interrupted (the leaf, or the frame a
	 * signal interrupted), not a return address: looked up as it is */
	__u8 activation;
	/*
	 * The Python walk: the process's layout (py.runtime 0: not a Python
	 * process); the next Python frame to put in (0: none left); whether
	 * the Python frames of the evaluation frame at pc are in already;
	 * the search for the thread's state.
	 */
	__u8 py_done;
	__u8 py_found;
	__u32 py_frames;
	__u64 py_frame, py_tstate, py_tid;
	struct dcp_bpf_py_proc py;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_regs);
} walk_state SEC(".maps");

/* the steps' context, on the walk's stack */
struct unwind_walk {
	struct unwind_regs *r;
	struct dcp_bpf_ranges *ranges; /* NULL: the process is not known */
	__u64 *ips; /* DCP_BPF_MAX_FRAMES */
};

/*
 * The binary searches, a bpf_loop() step each: verified once, not once per
 * pair of bounds. Their bounds live in map memory (st->lo, st->hi).
 */
struct range_search {
	struct unwind_regs *st;
	struct dcp_bpf_ranges *rs;
	__u64 pc;
};

static long range_step(__u32 i, struct range_search *c)
{
	struct unwind_regs *st = c->st;
	__u32 mid;

	if (st->lo >= st->hi)
		return 1;
	mid = (st->lo + st->hi) / 2;
	if (c->rs->r[mid & (DCP_BPF_MAX_RANGES - 1)].start <= c->pc)
		st->lo = mid + 1;
	else
		st->hi = mid;
	return 0;
}

/* The range of rs holding pc; NULL: none. */
static __always_inline struct dcp_bpf_range *
find_range(struct unwind_regs *st, struct dcp_bpf_ranges *rs, __u64 pc)
{
	struct range_search c = { .st = st, .rs = rs, .pc = pc };
	struct dcp_bpf_range *r;
	__u32 idx;

	st->lo = 0;
	st->hi = rs->nr;
	if (st->hi > DCP_BPF_MAX_RANGES)
		st->hi = DCP_BPF_MAX_RANGES;
	/* the last range starting at or before pc */
	bpf_loop(9, range_step, &c, 0);
	idx = st->lo;
	if (!idx)
		return NULL;
	r = &rs->r[(idx - 1) & (DCP_BPF_MAX_RANGES - 1)];
	return pc < r->end ? r : NULL;
}

struct row_search {
	struct unwind_regs *st;
	__u64 off;
};

static long row_step(__u32 i, struct row_search *c)
{
	struct unwind_regs *st = c->st;
	struct dcp_unwind_row *row;
	__u32 mid;

	if (st->lo >= st->hi)
		return 1;
	mid = st->lo + (st->hi - st->lo) / 2;
	row = bpf_map_lookup_elem(&unwind_rows, &mid);
	if (!row) {
		st->lo = st->hi = 0;
		return 1;
	}
	if (row->off <= c->off)
		st->lo = mid + 1;
	else
		st->hi = mid;
	return 0;
}

/* The row in force at file offset off of the table f; NULL: none (gap). */
static __always_inline struct dcp_unwind_row *
find_row(struct unwind_regs *st, struct dcp_bpf_unwind_file *f, __u64 off)
{
	__u64 page = off >> DCP_BPF_UNWIND_PAGE_SHIFT;
	struct row_search c = { .st = st, .off = off };
	struct dcp_bpf_unwind_page *pg;
	__u32 idx, first;

	if (page < f->page_base || page - f->page_base >= f->nr_pages)
		return NULL;
	idx = f->first_page + (__u32)(page - f->page_base);
	pg = bpf_map_lookup_elem(&unwind_pages, &idx);
	if (!pg)
		return NULL;
	first = pg->first_row;
	st->lo = first;
	st->hi = first + pg->nr_rows;
	/* the last row beginning at or before off */
	bpf_loop(17, row_step, &c, 0);
	idx = st->lo;
	if (idx <= first)
		return NULL;
	idx--;
	return bpf_map_lookup_elem(&unwind_rows, &idx);
}

/* The caller of the frame at r by its frame pointer; 0: the chain ends. */
static __always_inline int fp_step(struct unwind_regs *r)
{
	__u64 frame[2], bp = r->bp;

	/* the lowest page is never mapped (mmap_min_addr) */
	if (!r->bp_known || bp < 4096 || (bp & 7) || (__s64)bp < 0 ||
	    bpf_probe_read_user(frame, sizeof(frame), (void *)bp) ||
	    !frame[1]) {
		r->end = DCP_BPF_STAT_UNWIND_END_FP;
		return 0;
	}
	r->by_fp++;
	r->sp = bp + 16;
	r->bp = frame[0];
	r->pc = frame[1];
	r->activation = 0;
	return 1;
}

/*
 * CPython's perf trampoline (-X perf, 3.12 on): one copy per code object
 * of "sub $8,%rsp; call *%rcx; add $8,%rsp; ret" in anonymous memory,
 * without a table and without a frame pointer, through which the
 * interpreter enters each Python call. At its return address (the add)
 * the caller's return address is 8 bytes up and the caller's frame 16;
 * rbp is the caller's still. Known by those bytes, in a Python process
 * only; counted with the frames by tables (a known rule, not a guess).
 * 1: r is the caller's; 0: pc is in no trampoline.
 */
static __always_inline int py_trampoline_step(struct unwind_regs *r)
{
	__u64 code[2] = {}, ra;

	if (!r->py.runtime || r->activation ||
	    bpf_probe_read_user(code, 11, (void *)(r->pc - 6)))
		return 0;
	/* 48 83 ec 08 ff d1 48 83 | c4 08 c3, little-endian */
	if (code[0] != 0x8348d1ff08ec8348ull ||
	    (code[1] & 0xffffff) != 0xc308c4 ||
	    bpf_probe_read_user(&ra, 8, (void *)(r->sp + 8)) || !ra)
		return 0;
	r->by_table++;
	r->sp += 16;
	r->pc = ra;
	return 1;
}

/* Wake user space so that it builds the table of r's file, the first time
 * a walk meets the file without one: its samples are walked by frame
 * pointers until then. */
static __always_inline void ask_for_table(struct unwind_regs *st,
					  struct dcp_bpf_range *r,
					  struct dcp_bpf_file_key *key)
{
	struct dcp_bpf_unwind_want want = {
		.pid = st->pid,
		.woken = 1,
		.start = r->start,
		.end = r->end,
	};
	struct dcp_bpf_unwind_want *asked;
	__u32 *e;

	if (unwind_targeted && !bpf_map_lookup_elem(&unwind_targets, &st->pid))
		return;
	/* asked for already (a mapping event): woken once */
	asked = bpf_map_lookup_elem(&unwind_wanted, key);
	if (asked) {
		if (asked->woken)
			return;
		asked->woken = 1;
	} else if (bpf_map_update_elem(&unwind_wanted, key, &want,
				       BPF_NOEXIST)) {
		return;
	}
	e = bpf_ringbuf_reserve(&events, 8, 0);
	if (e) {
		e[0] = DCP_BPF_EVENT_UNWIND_WANT;
		e[1] = 0;
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	}
}

/*
 * The table row in force at pc; NULL: none (counted when not a gap). The
 * file's cookie and bias go to st->frame_cookie and st->frame_bias.
 */
static __always_inline struct dcp_unwind_row *row_of(struct unwind_walk *w,
						     __u64 pc)
{
	struct unwind_regs *st = w->r;
	struct dcp_bpf_file_key key = {};
	struct dcp_bpf_unwind_file *f;
	struct dcp_bpf_range *r;
	__u32 *cookie;
	__u64 now;

	st->frame_cookie = 0;
	if (!st->tables)
		return NULL;
	if (pc < st->cached_start || pc >= st->cached_end) {
		r = w->ranges ? find_range(st, w->ranges, pc) : NULL;
		if (!r) {
			st->no_mapping++;
			return NULL;
		}
		key.ino = r->ino;
		key.dev = r->dev;
		f = bpf_map_lookup_elem(&unwind_files, &key);
		if (!f)
			ask_for_table(st, r, &key);
		cookie = st->naming ? bpf_map_lookup_elem(&file_cookies, &key) :
				      NULL;
		st->cached_cookie = cookie ? *cookie : 0;
		st->cached_start = r->start;
		st->cached_end = r->end;
		st->cached_bias = r->bias;
		if (f) {
			/* a store only when the mark is stale: every CPU's
			 * walks share it */
			now = bpf_ktime_get_ns();
			if (f->nr_pages &&
			    now - f->last_used > DCP_BPF_UNWIND_USE_NS)
				f->last_used = now;
			st->cached_file = *f;
		} else {
			st->cached_file.nr_pages = 0;
		}
	}
	st->frame_cookie = st->cached_cookie;
	st->frame_bias = st->cached_bias;
	if (!st->cached_file.nr_pages) {
		st->no_table++;
		return NULL;
	}
	return find_row(st, &st->cached_file, pc + st->cached_bias);
}

/* Code object code of the walk's process: user space woken the first
 * time a walk meets it (py_codes). */
static __always_inline void py_note_code(struct unwind_regs *r, __u64 code)
{
	__u32 slot = (__u32)(code >> 4) & (DCP_PY_SEEN_SLOTS - 1);
	__u64 tag = code ^ ((__u64)r->pid << 47), *seen;
	struct dcp_bpf_py_code_event key = {
		.type = DCP_BPF_EVENT_PY_CODE,
		.pid = r->pid,
		.code = code,
	};
	struct dcp_bpf_py_code_event *e;
	__u8 one = 1;

	seen = bpf_map_lookup_elem(&py_seen, &slot);
	if (!seen || *seen == tag)
		return;
	*seen = tag;
	if (bpf_map_lookup_elem(&py_codes, &key) ||
	    bpf_map_update_elem(&py_codes, &key, &one, BPF_NOEXIST))
		return;
	/* no room: the code is read at the drain */
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return;
	*e = key;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * One Python frame (r->py_frame) into ips[n], its caller into r->py_frame;
 * an entry frame (the first one its evaluation call ran; 3.12: the shim
 * frame before it, not put in) ends the Python frames of the native frame
 * at pc. A frame that cannot be read ends the Python walk (counted when
 * the walk ends).
 */
static __always_inline void py_step(struct unwind_regs *r, __u64 *ips, __u32 n)
{
	__u64 f = r->py_frame, code, instr, idx;
	__u8 entry;

	if (bpf_probe_read_user(&entry, 1, (void *)(f + r->py.frame_entry)) ||
	    bpf_probe_read_user(&r->py_frame, 8,
				(void *)(f + r->py.frame_previous))) {
		r->py_frame = f; /* left out: counted as cut */
		r->py_done = 1;
		return;
	}
	if (r->py.shim_owner) {
		if (entry == r->py.shim_owner) {
			r->py_done = 1;
			return;
		}
		entry = 0;
	}
	if (bpf_probe_read_user(&code, 8, (void *)(f + r->py.frame_code)) ||
	    bpf_probe_read_user(&instr, 8,
				(void *)(f + r->py.frame_prev_instr)) ||
	    !code || (code & 7)) {
		r->py_frame = f;
		r->py_done = 1;
		return;
	}
	/* prev_instr is the instruction under way (a caller's: its call);
	 * before the first one while a frame starts */
	idx = instr - (code + r->py.code_adaptive);
	idx = (__s64)idx < 0 ? 0 : idx / 2;
	if (idx > DCP_BPF_PY_INSTR_MAX)
		idx = DCP_BPF_PY_INSTR_MAX;
	py_note_code(r, code);
	ips[n] = DCP_BPF_PY_FRAME |
		 ((code >> 3) & DCP_BPF_PY_CODE_MASK) << DCP_BPF_PY_INSTR_BITS |
		 idx;
	r->n = n + 1;
	r->py_frames++;
	if (entry)
		r->py_done = 1;
}

/* One frame: r->pc into the stack, then its caller into r. 1: stop. */
static long unwind_step(__u32 i, struct unwind_walk *w)
{
	struct unwind_regs *r = w->r;
	struct dcp_unwind_row *row;
	__u64 pc = r->pc, cfa, ra, bp, regs[2], at;
	__u32 n = r->n;

	if (n >= DCP_BPF_MAX_FRAMES) {
		r->end = DCP_BPF_STAT_UNWIND_END_DEPTH;
		return 1;
	}
	/* a native frame of the evaluation function: the Python frames it
	 * runs go in first, innermost first, as its callees */
	at = r->activation ? pc : pc - 1;
	if (r->py_frame && !r->py_done && at >= r->py.eval_start &&
	    at < r->py.eval_end) {
		py_step(r, w->ips, n);
		return 0;
	}
	r->py_done = 0;
	/* a value outside user space ends the walk, as an address no
	 * mapping holds: its top bit would read as a named frame's */
	w->ips[n] = (__s64)pc < 0 ? DCP_BPF_NOT_USER_FRAME : pc;
	r->n = n + 1;
	if (pc < 4096 || (__s64)pc < 0) {
		r->end = DCP_BPF_STAT_UNWIND_END_READ;
		return 1;
	}
	row = row_of(w, r->activation ? pc : pc - 1);
	if (r->frame_cookie && pc + r->frame_bias <= DCP_BPF_NAMED_OFF_MASK) {
		w->ips[n] = DCP_BPF_NAMED_FRAME |
			    (__u64)r->frame_cookie << DCP_BPF_NAMED_OFF_BITS |
			    (pc + r->frame_bias);
		r->named++;
	}
	if (!row && py_trampoline_step(r))
		return 0;
	if (!row || row->kind == DCP_UNWIND_ROW_GAP)
		return fp_step(r) ? 0 : 1;
	switch (row->kind) {
	case DCP_UNWIND_ROW_SP:
		cfa = r->sp + row->cfa_off;
		break;
	case DCP_UNWIND_ROW_FP:
		if (!r->bp_known) {
			r->end = DCP_BPF_STAT_UNWIND_END_READ;
			return 1;
		}
		cfa = r->bp + row->cfa_off;
		break;
	case DCP_UNWIND_ROW_PLT:
		cfa = r->sp + row->cfa_off + ((pc & 15) >= row->param ? 8 : 0);
		break;
	case DCP_UNWIND_ROW_SIGNAL:
		if (bpf_probe_read_user(&bp, 8,
					(void *)(r->sp + DCP_SIGFRAME_RBP)) ||
		    bpf_probe_read_user(regs, sizeof(regs),
					(void *)(r->sp + DCP_SIGFRAME_RSP))) {
			r->end = DCP_BPF_STAT_UNWIND_END_READ;
			return 1;
		}
		r->by_table++;
		r->bp = bp;
		r->bp_known = 1;
		r->sp = regs[0];
		r->pc = regs[1];
		r->activation = 1;
		return 0;
	case DCP_UNWIND_ROW_END:
		r->by_table++;
		r->end = DCP_BPF_STAT_UNWIND_END_ROOT;
		return 1;
	default:
		r->end = DCP_BPF_STAT_UNWIND_END_UNSUPPORTED;
		return 1;
	}
	if (bpf_probe_read_user(&ra, 8, (void *)(cfa - 8))) {
		r->end = DCP_BPF_STAT_UNWIND_END_READ;
		return 1;
	}
	if (row->fp_off == DCP_UNWIND_FP_LOST) {
		r->bp_known = 0;
	} else if (row->fp_off != DCP_UNWIND_FP_SAME) {
		if (bpf_probe_read_user(&bp, 8, (void *)(cfa + row->fp_off)))
			r->bp_known = 0;
		else
			r->bp = bp;
	}
	r->by_table++;
	r->sp = cfa;
	r->pc = ra;
	r->activation = 0;
	if (!ra) {
		/* a return address of 0: the outermost frame's mark */
		r->end = DCP_BPF_STAT_UNWIND_END_ROOT;
		return 1;
	}
	return 0;
}

/* One thread of the interpreter's list: 1 once it is r->py_tid's, or at
 * the list's end (py_tstate 0). */
struct py_search {
	struct unwind_regs *r;
};

static long py_thread_step(__u32 i, struct py_search *c)
{
	struct unwind_regs *r = c->r;
	__u64 t = r->py_tstate, tid;

	if (!t || bpf_probe_read_user(&tid, 8,
				      (void *)(t + r->py.tstate_native_tid))) {
		r->py_tstate = 0;
		return 1;
	}
	if (tid == r->py_tid) {
		r->py_found = 1;
		return 1;
	}
	if (bpf_probe_read_user(&r->py_tstate, 8,
				(void *)(t + r->py.tstate_next)))
		r->py_tstate = 0;
	return 0;
}

/*
 * The current thread's innermost Python frame into r->py_frame when its
 * process is a Python one (py_procs): its thread state found in the main
 * interpreter's list by the native thread id. 0 left where none.
 */
static __always_inline void py_start(struct unwind_regs *r, __u32 tid)
{
	struct dcp_bpf_py_proc *py = bpf_map_lookup_elem(&py_procs, &r->pid);
	struct py_search c = { .r = r };
	__u64 interp, cframe, *known, known_tid;

	r->py_frame = 0;
	r->py_done = 0;
	r->py_frames = 0;
	r->py_found = 0;
	if (!py)
		return;
	r->py = *py;
	r->py_tid = tid;
	known = bpf_map_lookup_elem(&py_threads, &tid);
	if (known) {
		r->py_tstate = *known;
		if (!bpf_probe_read_user(
			    &known_tid, 8,
			    (void *)(r->py_tstate + r->py.tstate_native_tid)) &&
		    known_tid == tid)
			r->py_found = 1;
	}
	if (!r->py_found) {
		if (bpf_probe_read_user(
			    &interp, 8,
			    (void *)(r->py.runtime + r->py.interp_head)) ||
		    !interp ||
		    bpf_probe_read_user(&r->py_tstate, 8,
					(void *)(interp + r->py.threads_head)))
			r->py_tstate = 0;
		bpf_loop(DCP_PY_MAX_THREADS, py_thread_step, &c, 0);
		if (!r->py_found) {
			count_stat(DCP_BPF_STAT_PY_NO_THREAD);
			return;
		}
		bpf_map_update_elem(&py_threads, &tid, &r->py_tstate, BPF_ANY);
	}
	/* 3.13: the thread state holds the frame itself */
	if (r->py.tstate_frame) {
		if (bpf_probe_read_user(
			    &r->py_frame, 8,
			    (void *)(r->py_tstate + r->py.tstate_frame)))
			r->py_frame = 0;
		return;
	}
	if (bpf_probe_read_user(&cframe, 8,
				(void *)(r->py_tstate + r->py.tstate_cframe)) ||
	    !cframe ||
	    bpf_probe_read_user(&r->py_frame, 8,
				(void *)(cframe + r->py.cframe_frame)))
		r->py_frame = 0;
}

/*
 * The current task's user stack (its registers at kernel entry, regs)
 * into ips by the tables (by_tables: 0, by frame pointers alone); returns
 * the frames filled.
 */
static __always_inline __u32 unwind_user(struct pt_regs *regs, __u64 *ips,
					 int by_tables)
{
	struct unwind_walk w = { .ips = ips };
	struct unwind_regs *r;
	__u32 zero = 0;

	r = bpf_map_lookup_elem(&walk_state, &zero);
	if (!r)
		return 0;
	w.r = r;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->pc = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->bp = BPF_CORE_READ(regs, bp);
	r->n = 0;
	r->end = 0;
	r->by_table = r->by_fp = r->no_table = r->no_mapping = r->named = 0;
	r->cached_end = 0;
	r->cached_start = 0;
	/* inside execve(2), past its point of no return, the registers are
	 * the old program's and the ranges the new one's */
	r->naming = BPF_CORE_READ(regs, orig_ax) != DCP_NR_EXECVE &&
		    BPF_CORE_READ(regs, orig_ax) != DCP_NR_EXECVEAT;
	r->tables = by_tables;
	r->bp_known = 1;
	r->activation = 1;
	r->py_frame = 0;
	r->py_frames = 0;
	r->py_done = 0;
	r->py.runtime = 0; /* py_start() sets it for a Python process */
	if (by_tables)
		w.ranges = bpf_map_lookup_elem(&proc_ranges, &r->pid);
	if (by_tables && r->naming)
		py_start(r, (__u32)bpf_get_current_pid_tgid());
	bpf_loop(DCP_BPF_MAX_FRAMES, unwind_step, &w, 0);
	if (!by_tables)
		return r->n;
	if (r->py_frames)
		count_stat_n(DCP_BPF_STAT_PY_FRAMES, r->py_frames);
	if (r->py_frame)
		count_stat(DCP_BPF_STAT_PY_CUT);
	if (!r->end)
		r->end = DCP_BPF_STAT_UNWIND_END_DEPTH;
	count_stat(DCP_BPF_STAT_UNWIND_WALKS);
	count_stat(r->end);
	if (r->by_table)
		count_stat_n(DCP_BPF_STAT_UNWIND_TABLE_FRAMES, r->by_table);
	if (r->by_fp)
		count_stat_n(DCP_BPF_STAT_UNWIND_FP_FRAMES, r->by_fp);
	if (r->no_table)
		count_stat_n(DCP_BPF_STAT_UNWIND_NO_TABLE, r->no_table);
	if (r->no_mapping)
		count_stat_n(DCP_BPF_STAT_UNWIND_NO_MAPPING, r->no_mapping);
	if (r->named)
		count_stat_n(DCP_BPF_STAT_UNWIND_NAMED, r->named);
	return r->n;
}

#endif /* DCPROF_UNWIND_WALK */
#endif
