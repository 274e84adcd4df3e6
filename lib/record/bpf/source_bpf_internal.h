/* SPDX-License-Identifier: MIT */
/*
 * The BPF record source's state, shared by its files: source_bpf.c
 * (loading, start/poll/stop), source_bpf_counts.c (the count maps' drain,
 * the stacks copied from the kernel) and source_bpf_tasks.c
 * (task events from the BPF ring buffer, processes' maps read from /proc,
 * pinning, JIT and frames the kernel gave as plain addresses).
 */
#ifndef DCPROF_SOURCE_BPF_INTERNAL_H
#define DCPROF_SOURCE_BPF_INTERNAL_H

#ifndef DCPROF_NO_BPF

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "file_ident_internal.h"
#include "recorder_internal.h"
#include "cache_internal.h"
#include "profile_common.h"
#include "python_internal.h"
#include "unwind_table_internal.h"

#define MAPS_TRIED 4096
#define PRE_EXEC_SLOTS 256
/* counts read from a map at a time (the drain's buffers) */
#define DCP_BPF_DRAIN_BATCH 4096

/*
 * Unwind tables in the kernel (source_bpf_unwind.c): the rows and pages
 * arrays, within the memory set at load, each table written through a
 * mapping of its part; their free extents and the tables in them
 * (source_bpf_unwind_room.c); what was built, and what was not.
 */
#define DCP_BPF_UNWIND_MEMORY_DEFAULT (32ull << 20)
/* an array map's elements are 8-byte aligned: rows are that far apart in
 * the mapped array */
#define DCP_BPF_UNWIND_ROW_STRIDE \
	((sizeof(struct dcp_unwind_row) + 7) & ~(size_t)7)

/* The free parts of one of the unwind arrays: extents sorted by start,
 * none adjacent. */
struct unwind_space {
	struct unwind_extent {
		uint32_t start, len;
	} * free;
	size_t nr, cap;
};

struct bpf_unwind {
	bool on;
	int files_fd, wanted_fd, rows_fd, pages_fd, targets_fd;
	size_t targets_sent; /* of the recorder's roots */
	uint32_t rows_cap, pages_cap, rows_used;
	struct unwind_space rows, pages;
	/* the tables in the kernel, where their rows and pages are */
	struct unwind_placed {
		struct dcp_bpf_file_key key;
		struct unwind_extent rows, pages;
	} * placed;
	size_t nr_placed, cap_placed;
	uint64_t tables, table_bytes; /* in the kernel now */
	uint64_t evicted; /* taken out to make room for others */
	uint64_t refused; /* no room left in the memory given */
	/* files refused, asked for again from after_ns on: room may have
	 * been made by then */
	struct unwind_retry {
		struct dcp_bpf_file_key key;
		uint64_t after_ns;
	} * retries;
	size_t nr_retries, cap_retries;
	uint64_t failed; /* no CFI, or not an ELF file */
	uint64_t build_ns, cfi_bytes, from_cache; /* for -v */
	/* the files built (not read from the cache): their time and size,
	 * what a build is expected to take (fits_before()) */
	uint64_t built_ns, built_bytes;
	struct dcp_cache cache; /* the symbol cache: tables by build id */
	/* tables built, waiting to be stored in the cache */
	struct pending_store {
		char name[DCP_UNWIND_CACHE_NAME];
		struct dcp_unwind_table t;
	} * stores;
	size_t nr_stores, cap_stores;
};

struct bpf_source {
	struct dcp_source base;
	struct dcp_recorder *r;
	struct recorder_bpf *skel;
	int *links; /* the sampling program's, per cpu-clock event */
	int *event_fds;
	/* the task, mmap and switch programs' links */
	int task_links[6]; /* attach_task_programs() says why */
	uint32_t nr_task_links;
	uint32_t switch_link; /* the switch program's: index + 1, 0: none */
	uint32_t nr_events;
	struct ring_buffer *rb;
	int nr_possible;
	uint32_t count_entries, stack_entries;
	enum dcp_call_graph call_graph;

	/* --only: build ids for the kernel's marked map */
	uint8_t (*marks)[DCP_BPF_BUILD_ID_SIZE];
	size_t nr_marks;
	bool filter;

	/* the drain's buffers */
	struct dcp_bpf_key *keys;
	struct dcp_bpf_off_key *off_keys; /* --off-cpu */
	bool off_cpu;
	/* --off-cpu: __traceiter_sched_switch's addresses (0, 0: unknown),
	 * a frame the switch program's stacks start with when other probes
	 * share the tracepoint */
	uint64_t switch_iter_start, switch_iter_end;
	uint64_t *vals;
	struct dcp_bpf_off_val *off_vals;
	struct bpf_stack_build_id *ustack;
	uint64_t *kstack;
	uint64_t *percpu;
	struct dcp_frame *frames;

	/* exits wait for the next drain: their counts come first */
	struct dcp_task_record *exits;
	size_t nr_exits, cap_exits;

	/*
	 * A drain goes through the count maps a batch at a time and may stop
	 * between two counts at its caller's deadline; the next poll goes on
	 * where it stopped (the batch read, the map's batch token). Only the
	 * exits read before a drain began are applied when it ends: a
	 * process's counts added to a bucket the drain had passed come in
	 * the next one.
	 */
	bool drain_unfinished;
	uint64_t drain_began_ns; /* CLOCK_MONOTONIC, of the drain under way */
	bool drain_counts_done; /* its sample counts: the off-CPU ones next */
	struct dcp_bpf_batch {
		uint32_t token; /* where the pass goes on in the map */
		uint32_t len, next; /* the batch read, and named so far */
		bool pass; /* a pass under way: token holds */
		bool last; /* the batch read ends the pass */
	} count_batch, off_batch;
	size_t exits_ready;

	uint32_t maps_tried[MAPS_TRIED]; /* pids whose maps were read */
	/* pids whose maps were read from /proc since their last exec */
	uint32_t maps_read[MAPS_TRIED];
	/* read again at most once per drain when an address is in none */
	uint32_t reread_pid[MAPS_TRIED], reread_gen[MAPS_TRIED];
	uint32_t drain_gen;
	/*
	 * The maps processes had before their last exec, a slot per pid
	 * modulo PRE_EXEC_SLOTS (a newer exec takes the slot), kept two
	 * drains: a sample taken between a fork and the exec is drained
	 * after the exec emptied its process's maps, and its older exec id
	 * (dcp_bpf_key) sends it to these.
	 */
	struct pre_exec {
		uint32_t pid, exec_id, drain_gen;
		char comm[16];
		struct dcp_map *maps;
		size_t nr_maps;
	} pre_exec[PRE_EXEC_SLOTS];
	bool pre_exec_view; /* frames named against a pre_exec: no /proc */
	/* the user frames just named are a chain the kernel walked (or the
	 * one frame known of another task's), not a leaf kept alone */
	bool user_chain;
	/* the identities of mapped files, kept open while cached */
	struct dcp_ident_cache idents;
	/* idents.resets when the kernel's file_cookies were last in step
	 * with it (dcp_bpf_name_file()) */
	unsigned int named_resets;
	/* the kernel sends executable mappings (mmap(2) and exec's own) */
	bool mapping_events;
	uint64_t mmaps_named, mmaps_unnamed; /* for -v */

	/*
	 * Stacks copied from the kernel, a slot per hash (profile_common.h)
	 * modulo ucache_size: a stack is copied once, and again only when
	 * another took its slot.
	 */
	struct stack_copy {
		uint64_t hash; /* 0: free */
		uint32_t nr;
		struct bpf_stack_build_id *frames;
	} * ucache;
	uint32_t ucache_size;
	struct kstack_copy {
		uint64_t hash; /* 0: free */
		uint32_t nr;
		uint64_t *ips;
	} * kcache, *icache; /* kernel stacks; user stacks as addresses */
	/*
	 * The frames pointers of the slots ever filled, freed at the end:
	 * walking all three caches then would touch every page of them.
	 */
	void **filled;
	size_t nr_filled, filled_cap;
	bool user_build_ids; /* the kernel names user frames by build id */
	/* dcp_recorder_opts' bpf_* settings, copied at creation */
	bool no_python_frames;
	uint32_t map_entries; /* 0: sized from the rate */
	char *btf_path; /* NULL: DEFAULT_BTF */
	double cpu_max_percent; /* 0: the kernel's sysctl */
	/* stacks a count named and the kernel's map no longer held */
	uint64_t stacks_evicted;

	/* what crossed from the kernel, for -v and the bench */
	uint64_t bytes_read, samples_seen;
	uint64_t counts_read, stacks_copied;
	uint64_t kernel_counts[DCP_BPF_STAT_NR];
	uint64_t next_drain_ns;

	/* the sampling program's CPU budget (source_bpf_budget.c) */
	int stats_fd; /* BPF_ENABLE_STATS while held; -1: no budget */
	uint32_t freq, weight;
	double max_percent;
	uint64_t budget_at_ns, budget_run_ns;

	struct bpf_unwind unwind;
	/* the Python processes and their code's names (python_internal.h);
	 * NULL: user stacks are not walked by tables, no Python frames */
	struct dcp_python *python;
};

/*
 * source_bpf_unwind.c: the maps sized before load (on: user stacks walked
 * by tables; memory: bytes for the tables, 0 for the default), the tables
 * asked for built at polls, those expected to end before deadline_ns (0:
 * all), no more than max_tables (0: no limit), the tables not yet stored
 * put in the cache at the end.
 */
/*
 * The cgroups (source_bpf_cgroups.c): before the load, whether counts
 * carry them and how many cgroups the programs keep to; after it, those
 * cgroups in the programs' map. t NULL: none. 0 or negative errno.
 */
int dcp_bpf_cgroups_configure(struct bpf_source *bs,
			      const struct dcp_cgroup_table *t);
int dcp_bpf_cgroups_start(struct bpf_source *bs,
			  const struct dcp_cgroup_table *t);

void dcp_bpf_unwind_size(struct bpf_source *bs, bool on, uint64_t memory);
int dcp_bpf_unwind_start(struct bpf_source *bs);
int dcp_bpf_unwind_work(struct bpf_source *bs, uint64_t deadline_ns,
			size_t max_tables);
/* Before sampling: the cached tables of the files mapped now; after
 * it, the tables still asked for, built for the cache. */
int dcp_bpf_unwind_finish(struct bpf_source *bs);
int dcp_bpf_unwind_preload(struct bpf_source *bs, uint64_t deadline_ns);
/* A file mapped executable by pid at [start, end): its table asked for
 * before a walk meets it (the mapping events). */
void dcp_bpf_unwind_want(struct bpf_source *bs, uint32_t pid, uint64_t start,
			 uint64_t end, uint64_t ino, uint32_t dev);
void dcp_bpf_unwind_free(struct bpf_source *bs);

/*
 * source_bpf_unwind_room.c: the arrays' free extents, all free at first;
 * extents of nr_rows rows and nr_pages pages into *p, the tables no walk
 * uses evicted when they do not fit (-ENOSPC when they still do not); an
 * extent given back; a table's kernel memory.
 */
int dcp_bpf_unwind_space_init(struct bpf_unwind *u);
int dcp_bpf_unwind_take_room(struct bpf_source *bs, uint32_t nr_rows,
			     uint32_t nr_pages, struct unwind_placed *p);
int dcp_bpf_unwind_give_back(struct bpf_unwind *u,
			     const struct unwind_placed *p);
uint64_t dcp_bpf_unwind_placed_bytes(const struct unwind_placed *p);
void dcp_bpf_unwind_space_free(struct bpf_unwind *u);

/*
 * source_bpf_counts.c: the ring's task events, the count maps (samples,
 * --off-cpu time) into the pipeline, the kernel's statistics read. A
 * drain stops between two counts once CLOCK_MONOTONIC passes deadline_ns
 * (0: none), and the next call goes on with it.
 */
int dcp_bpf_drain_all(struct bpf_source *bs, uint64_t deadline_ns);

/*
 * source_bpf_budget.c: the sampling program kept within
 * kernel.perf_cpu_time_max_percent of the CPUs' time, checked at drains;
 * above it the rate is divided by a whole factor and each sample counts
 * that many.
 */
void dcp_bpf_budget_start(struct bpf_source *bs, uint32_t freq);
void dcp_bpf_budget_check(struct bpf_source *bs);
void dcp_bpf_budget_stop(struct bpf_source *bs);

/* The ring buffer's callback: one task event (ctx is the source). */
int dcp_bpf_on_event(void *ctx, void *data, size_t size);
/* Exits wait for the count drain: their processes' counts come first.
 * The first n queued are applied and dropped from the queue. */
int dcp_bpf_apply_exits(struct bpf_source *bs, size_t n);
/* A file first seen in p: pinned through p's mapping of it, if any. */
int dcp_bpf_pin_cookie(struct bpf_source *bs, struct dcp_process *p,
		       uint32_t cookie);
/*
 * p as it was before its last exec, into *view, when a sample with this
 * exec id was taken then (exec id 0: whenever p has such maps kept). The
 * view's maps point into bs->pre_exec; pass it to dcp_bpf_map_frame()
 * with bs->pre_exec_view set.
 */
bool dcp_bpf_pre_exec_view(struct bpf_source *bs, const struct dcp_process *p,
			   uint32_t exec_id, struct dcp_process *view);
/* Maps kept for samples before an exec: dropped two drains later, or all. */
void dcp_bpf_pre_exec_expire(struct bpf_source *bs, bool all);
/* The file mapped at [start, end) in pid, through /proc/PID/map_files:
 * an fd, or -errno. */
int dcp_bpf_open_mapping(uint32_t pid, uint64_t start, uint64_t end);
/*
 * File (dev: s_dev, ino), whose identity the cache holds open, is cookie:
 * the kernel's walks name its frames (cookie, offset) from now on. No
 * other file can take its inode number while the cache holds it; when
 * the cache lets its files go, the kernel forgets every name.
 */
void dcp_bpf_name_file(struct bpf_source *bs, uint32_t dev, uint64_t ino,
		       int64_t cookie);
/* The files of pid's ranges (the kernel's) that the start-up walk named,
 * named in the kernel too. */
void dcp_bpf_name_ranges(struct bpf_source *bs, uint32_t pid,
			 const struct dcp_bpf_ranges *rs);
/*
 * Process pid, sampled with nr_maps maps known (SIZE_MAX: just exec'd a
 * program named like an interpreter): a Python process's walk given to
 * the kernel the first time it is found (python_internal.h).
 */
int dcp_bpf_probe_python(struct bpf_source *bs, uint32_t pid, size_t nr_maps);

/* --only's files as build ids for the kernel (bs->marks; bs->filter
 * false when one cannot be matched there). */
int dcp_bpf_take_marks(struct bpf_source *bs,
		       const struct dcp_recorder_opts *opts);

/* The source's forget (source_internal.h): the identity cache's files
 * that no needed cookie is, closed, and unnamed in the kernel. */
size_t dcp_bpf_forget(struct dcp_source *s,
		      const struct dcp_cookie_set *needed);
/* The Python processes' code maps' cookies into needed (source ops). */
void dcp_bpf_need(struct dcp_source *s, struct dcp_cookie_set *needed);

/* An address the kernel gave without a build id: looked up in p's maps;
 * leaf: the address the task was interrupted at. */
int dcp_bpf_map_frame(struct bpf_source *bs, struct dcp_process *p,
		      uint64_t addr, bool leaf, struct dcp_frame *f);

#endif
#endif
