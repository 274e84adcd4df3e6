/* SPDX-License-Identifier: MIT */
/*
 * The recorder's state, shared by the stages of its pipeline: a record
 * source (source_internal.h) delivers in time order to replay (replay.c:
 * sync records into the process table), samples (samples.c: frames,
 * cookies, pinning, JIT, DWARF, marking, aggregation) and the collection
 * walk (walk.c: what existed before, and the samples held for it); the
 * lifecycle (recorder.c) sets it up, flushes and finishes.
 */
#ifndef DCPROF_RECORDER_INTERNAL_H
#define DCPROF_RECORDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "dcprof/dcprof.h"
#include "aggregate_internal.h"
#include "cgroup_internal.h"
#include "cookie_internal.h"
#include "process_internal.h"
#include "records_internal.h"
#include "source_internal.h"
#include "symbolize_internal.h"
#include "unwind_internal.h"

#define MAX_STACK 512

struct dcp_recorder {
	char *output;
	char *event_name;
	char *cmdline;
	uint32_t sample_freq;
	uint64_t sample_period; /* -c: replaces sample_freq, 0: none */
	bool callchain; /* any call graph: the profile's meta flag */
	/* the pipeline's: FP for stacks that come walked (the BPF source's
	 * walk by tables included), DWARF for stack copies to unwind */
	enum dcp_call_graph call_graph;
	enum dcp_call_graph call_graph_asked; /* the options' */
	uint64_t unwind_memory; /* the BPF source's tables, 0: default */
	uint32_t stack_user; /* dwarf: bytes of user stack per sample */
	uint32_t flush_interval_ms;
	bool off_cpu; /* --off-cpu: switches are recorded too */
	uint64_t off_cpu_min_ns;

	struct dcp_source *source;
	/* the source's name, for the meta: "bpf", "perf" */
	const char *backend;
	/* the ring said that Python frames need the BPF backend */
	bool python_said;

	/* samples held until the collection walk is replayed (walk.c) */
	unsigned char *held;
	size_t held_len, held_cap;
	uint64_t hold_until; /* when the walk ended; 0: nothing is held */
	uint64_t samples_held;

	struct dcp_cookie_table *cookies;
	struct dcp_process_table *procs;
	/* exits replayed, retired once time has passed them (replay.c) */
	struct dcp_exit_pending {
		uint64_t time;
		pid_t pid, tid;
	} * exits;
	size_t exits_first, nr_exits, cap_exits;
	struct dcp_aggregate *agg;
	/* the cgroups of samples; NULL: not recorded */
	struct dcp_cgroup_table *cgroups;
	struct dcp_kernel_layout kernel;
	uint32_t cookie_vdso, cookie_vsyscall, cookie_anon, cookie_idle;

	/* -p / command mode: only these trees are kept; the first
	 * nr_listed roots are the caller's, the others their descendants
	 * that already ran when recording began (gone ones are no error) */
	bool targeted;
	pid_t *roots;
	size_t nr_roots, nr_listed;
	bool no_inherit; /* the roots alone: their children are not kept */

	struct dcp_profile_writer *writer;
	struct dcp_profile_meta meta;
	struct dcp_profile_stats stats;
	char hostname[65];
	char kernel_release[65];
	uint64_t start_mono_ns;
	/* when the source was told to stop (0: not yet): the recording's
	 * end, not the drain of what it had left, which comes after */
	uint64_t end_mono_ns;
	uint64_t next_flush_ns;
	int write_error;
	bool finished;
	/* a flush that fell due in a poll that had run past its caller's
	 * time: the next poll begins with it (see dcp_recorder_poll) */
	bool flush_deferred;
	uint64_t flush_max_ns; /* how long the longest one took */
	/* dcp_recorder_cut(): write errors end a period, not the recording;
	 * the source's counts at the start of the current period */
	bool periods;
	struct dcp_source_counts counts_base;
	size_t period_stacks_wanted; /* stacks whose cookies were queued */
	/* let go at cuts (period.c), for dcp_recorder_memory() */
	uint64_t names_dropped, pins_closed, files_closed;
	/* the bounds (setup_bounds()): the naming thread keeps naming_files
	 * files within DCP_NAMING_BYTES(memory_limit), a cut keeps names
	 * within DCP_NAMES_BYTES(memory_limit) (names_evicted past it) */
	uint64_t memory_limit;
	uint32_t max_open_files;
	size_t naming_files;
	uint64_t names_evicted;

	struct dcp_frame frames[MAX_STACK];

	/* --call-graph dwarf */
	struct dcp_sample_layout layout;
	struct dcp_unwinder *unwinder;
	uint64_t map_generation; /* the last one given to a process */
	struct dcp_unwind_frame uframes[MAX_STACK];

	/* dcp_recorder_snapshot() (snapshot.c): the live view, and the
	 * names of the addresses of stacks 0 .. snap_stacks_named - 1, given
	 * to the naming thread (naming.c) */
	struct dcp_profile *snap;
	struct dcp_symtab *snap_symbols;
	struct dcp_naming *snap_naming;
	size_t snap_stacks_named;
};

static inline uint64_t dcp_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A poll's timeout_ms (negative: none) cut so that the wait ends by
 * deadline_ns (CLOCK_MONOTONIC, as now_ns), rounded up to a millisecond.
 */
static inline int dcp_timeout_until(int timeout_ms, uint64_t now_ns,
				    uint64_t deadline_ns)
{
	uint64_t left_ms;

	if (now_ns >= deadline_ns)
		return 0;
	left_ms = (deadline_ns - now_ns + 999999) / 1000000;
	if (timeout_ms < 0 || (uint64_t)timeout_ms > left_ms)
		return (int)left_ms;
	return timeout_ms;
}

/* When a wait of timeout_ms from now_ns ends (negative: never). */
static inline uint64_t dcp_deadline_after(uint64_t now_ns, int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX :
				now_ns + (uint64_t)timeout_ms * 1000000ull;
}

/* the least time a poll gives to moving data on, whatever its timeout */
#define DCP_POLL_WORK_MIN_MS 10

/*
 * When a source's work in a poll (reading, ordering, delivering) stops:
 * at the caller's deadline, but no sooner than DCP_POLL_WORK_MIN_MS after
 * now_ns, so that a caller that polls without waiting (top, 20 times a
 * second) still moves the data on. What is left goes on at the next poll:
 * at high rates one poll could otherwise outlast a --duration by seconds.
 */
static inline uint64_t dcp_poll_work_deadline(uint64_t deadline_ns,
					      uint64_t now_ns)
{
	uint64_t least = now_ns + DCP_POLL_WORK_MIN_MS * 1000000ull;

	return deadline_ns > least ? deadline_ns : least;
}

/* recorder.c: the recording (or period) starts now: its clocks and first
 * flush. */
void dcp_recorder_start_clock(struct dcp_recorder *r);
/* recorder.c: the meta and stats of now, as a flush writes them. */
void dcp_recorder_fill_meta(struct dcp_recorder *r);

/* recorder.c: flush the working file now (a period's first flush). */
int dcp_recorder_flush(struct dcp_recorder *r);

/* period.c: the current period's compact profile (removed on failure). */
int dcp_recorder_write_period(struct dcp_recorder *r);

/*
 * snapshot.c: name the addresses of the aggregate's stacks from
 * snap_stacks_named on that snap_symbols does not hold yet, with the kept
 * symbolizer (each address is named once for the recorder's life: the
 * live view and every period of a continuous recording share them).
 */
int dcp_snapshot_name_new(struct dcp_recorder *r,
			  struct dcp_snapshot_info *info);
/* snapshot.c: free the live view (dcp_recorder_free). */
void dcp_snapshot_free(struct dcp_recorder *r);

/*
 * naming.c: the snapshots' naming thread. A batch holds copies of the
 * objects (identity, paths, a duplicate pinned handle) and their offsets;
 * submitted, it is the thread's. The names come back through
 * dcp_naming_wait(), into the caller's table, once the batch is done.
 */
struct dcp_naming;
struct naming_batch;
#define DCP_MEMORY_LIMIT_DEFAULT (32ull << 20)
/* memory_limit's shares: the files kept open to name with hold most of
 * what naming keeps (their symbol tables and DWARF), a period's names
 * little beside them */
#define DCP_NAMING_BYTES(limit) ((limit) / 4 * 3)
#define DCP_NAMES_BYTES(limit) ((limit) / 8)
#define DCP_MAX_OPEN_FILES_DEFAULT 512u

/* The thread keeps up to max_files files open, within max_bytes. */
struct dcp_naming *dcp_naming_new(const struct dcp_kernel_layout *kernel,
				  size_t max_files, size_t max_bytes);
void dcp_naming_free(struct dcp_naming *nm);
struct naming_batch *dcp_naming_batch_new(void);
int dcp_naming_batch_add(struct naming_batch *b,
			 const struct dcp_cookie_info *ci, int pinned_fd,
			 const uint64_t *offsets, size_t n);
void dcp_naming_batch_free(struct naming_batch *b);
/* -EBUSY while the last batch is not done. */
int dcp_naming_submit(struct dcp_naming *nm, struct naming_batch *b);
bool dcp_naming_busy(struct dcp_naming *nm);
/* Wait up to timeout_ns for the batch; when it is done, its names into
 * out (each entry copied, details included). */
int dcp_naming_wait(struct dcp_naming *nm, uint64_t timeout_ns,
		    struct dcp_symtab *out);
/* Close the files the thread keeps open whose cookie is not in needed,
 * unless a batch is being named: how many. */
size_t dcp_naming_forget(struct dcp_naming *nm,
			 const struct dcp_cookie_set *needed);
/* What the thread's kept files hold, as of its last batch. */
void dcp_naming_kept_stats(struct dcp_naming *nm,
			   struct dcp_symbolizer_kept_stats *st);
/* Wall time the thread spent naming: in total, and on its last batch. */
void dcp_naming_times(struct dcp_naming *nm, uint64_t *total_ns,
		      uint64_t *last_ns);

/* replay.c: sync records, in time order, into the process table. */

/* MMAP2, COMM, FORK or EXIT, live or injected; other types are ignored. */
int dcp_replay_record(struct dcp_recorder *r,
		      const struct perf_event_header *h);
int dcp_replay_munmap(struct dcp_recorder *r, uint32_t pid, uint64_t addr,
		      uint64_t len);
/* Retire the tasks whose exit is far enough before time. */
void dcp_replay_retire(struct dcp_recorder *r, uint64_t time);
/* The process of pid, created on first sight (a target if a root). */
struct dcp_process *dcp_replay_process(struct dcp_recorder *r, pid_t pid);

/* samples.c: samples into frames and the aggregate. */

/*
 * One perf sample record. before_exec: the sample ran a program its
 * process has since replaced (a held sample, walk.c): only its kernel
 * frames can be named, and its name is not known.
 */
int dcp_samples_take(struct dcp_recorder *r, const struct perf_event_header *h,
		     bool before_exec);
/* One off-CPU block (--off-cpu) into frames and the aggregate. */
int dcp_samples_take_off_cpu(struct dcp_recorder *r,
			     const struct dcp_off_cpu_block *b);
/*
 * The JIT cookie of process p: its perf-map file (owned by the process's
 * user) interned and pinned when first found, cached in p->user_id; 0 while
 * it has none (a miss is looked at again a little later).
 */
uint32_t dcp_samples_jit_cookie(struct dcp_recorder *r,
				const struct dcp_process *p);
/* The unwinder's files (dcp_unwind_open_fn), pinned as they are opened. */
int dcp_samples_open_map(void *ctx, const struct dcp_process *p,
			 const struct dcp_map *map);

/* walk.c: the processes that existed before recording. */

/*
 * Walk /proc (tasks, then maps) into the source, draining it between
 * reads, and hold samples from then on until the walk is replayed.
 */
int dcp_walk_inject(struct dcp_recorder *r);
/* Keep a sample until the walk is replayed; false: take it now. */
bool dcp_walk_hold(struct dcp_recorder *r, uint64_t time, const void *rec,
		   size_t size);
/* The same for an off-CPU block (its stack is copied). */
bool dcp_walk_hold_off_cpu(struct dcp_recorder *r, uint64_t time,
			   const struct dcp_off_cpu_block *b);
/* The walk is replayed: take every held sample, and hold no more. */
int dcp_walk_release(struct dcp_recorder *r);

#endif
