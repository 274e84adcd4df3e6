/* SPDX-License-Identifier: MIT */
/*
 * The record source: what the recorder's pipeline reads from, and the
 * calls through which a source hands its input to the pipeline. The perf
 * ring source (source_perf.c) is the one today; a BPF source, which
 * counts stacks in the kernel, implements the same operations.
 */
#ifndef DCPROF_SOURCE_INTERNAL_H
#define DCPROF_SOURCE_INTERNAL_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "dcprof/dcprof.h"
#include "cookie_internal.h"
#include "records_internal.h"

struct dcp_recorder;
struct dcp_source;

/* What the recorder settled on, for the source to ask the kernel for. */
struct dcp_source_settings {
	uint32_t sample_freq; /* Hz */
	enum dcp_call_graph call_graph;
	/* what every sample record must carry for the pipeline to decode it */
	const struct dcp_sample_layout *layout;
	uint32_t stack_user; /* dwarf: bytes of user stack per sample */
	uint32_t buffer_pages; /* per CPU; 0: the source's own choice */
	bool off_cpu; /* --off-cpu: switches too */
	uint64_t off_cpu_min_ns; /* shorter blocks are dropped, counted */
	/* user stacks unwound in the kernel with the files' unwind tables
	 * (the BPF source), within unwind_memory bytes (0: its default) */
	bool unwind_tables;
	uint64_t unwind_memory;
	/* the recorder's cgroups: samples carry their cgroup's id, and the
	 * table learns paths (NULL: no cgroups) */
	struct dcp_cgroup_table *cgroups;
};

/* What a source counts rather than delivers: the profile's stats. */
struct dcp_source_counts {
	uint64_t lost_records; /* records the kernel had no room for */
	uint64_t lost_samples;
	uint64_t throttle_events;
	uint64_t context_switches;
	uint64_t reorder_late; /* delivered after a newer record */
	/* --off-cpu: switch-outs of threads, blocks under the minimum,
	 * threads still switched out at the end */
	uint64_t off_cpu_switches;
	uint64_t off_cpu_short;
	uint64_t off_cpu_unfinished;
	uint64_t off_cpu_missed_switch_ins;
	uint64_t off_cpu_under_way; /* waits found at the start */
	/* unwinding by tables in the kernel: dcp_profile_stats' unwind_*
	 * fields, the same names */
	uint64_t unwind_walks, unwind_table_frames, unwind_fp_frames;
	uint64_t unwind_no_table_frames, unwind_no_mapping_frames;
	uint64_t unwind_end_root, unwind_end_fp, unwind_end_unsupported;
	uint64_t unwind_end_read, unwind_end_depth;
	uint64_t unwind_tables, unwind_table_bytes;
	uint64_t unwind_tables_refused, unwind_tables_failed;
	uint64_t unwind_tables_evicted;
	uint64_t unwind_named_frames;
	/* Python frames: dcp_profile_stats' python_* fields */
	uint64_t python_frames, python_no_thread, python_cut, python_unnamed;
};

struct dcp_source_ops {
	/*
	 * Ask the kernel: on return the events run and deliveries may begin.
	 * On failure, the message says what the kernel refused and what to
	 * do about it.
	 */
	int (*start)(struct dcp_source *s,
		     const struct dcp_source_settings *set);
	/*
	 * A record of the collection walk (perf's layout, marked
	 * DCP_RECORD_MISC_INJECTED) stamped time: to be delivered in time
	 * order with the kernel's own.
	 */
	int (*inject)(struct dcp_source *s, uint64_t time,
		      const struct perf_event_header *h);
	/*
	 * Optional: the walk is done, sampling may begin. A source whose
	 * sampling needs no record from before the walk starts it here, so
	 * that the walk does not run under its own sampling's interrupts;
	 * the recording's start is then this moment.
	 */
	int (*begin)(struct dcp_source *s);
	/*
	 * Take in what the kernel holds without delivering it: called between
	 * the walk's reads, so that the kernel's buffers do not overflow
	 * while the walk runs.
	 */
	int (*drain)(struct dcp_source *s);
	/*
	 * Wait up to timeout_ms for data, then deliver everything that no
	 * older record can still precede.
	 */
	int (*poll)(struct dcp_source *s, int timeout_ms);
	/*
	 * Optional: between two periods, let go of the files the source
	 * holds open whose cookie is not in needed; how many were closed.
	 */
	size_t (*forget)(struct dcp_source *s,
			 const struct dcp_cookie_set *needed);
	/*
	 * Optional: between two periods, add to needed the cookies whose
	 * pinned files the source writes names into while their processes
	 * live (a Python process's code map): kept pinned whether or not
	 * the period sampled them.
	 */
	void (*need)(struct dcp_source *s, struct dcp_cookie_set *needed);
	/* Stop the kernel's side and deliver everything left. */
	int (*stop)(struct dcp_source *s);
	void (*free)(struct dcp_source *s);
};

/* Every source begins with this; its operations read the rest. */
struct dcp_source {
	const struct dcp_source_ops *ops;
	struct dcp_recorder *sink; /* where deliveries go */
	uint32_t nr_cpus; /* known once started: the profile's meta */
	bool kernel_excluded; /* user frames only were allowed: meta too */
	struct dcp_source_counts counts;
	/*
	 * Set by each poll: 0 when it left nothing of the kernel's unread,
	 * else the CLOCK_MONOTONIC time up to which what it delivered goes
	 * (the live view is behind by the time since).
	 */
	uint64_t behind_since;
	/* CLOCK_MONOTONIC time up to which the samples delivered go (the
	 * newest record's, or the last whole drain's start); 0: none yet */
	uint64_t delivered_until;
};

/*
 * The perf ring source: one sampling event per CPU with its ring, the
 * munmap tracepoint, and the reorder window. Checks the options it reads
 * (the event) and opens nothing before start. NULL with errno and a
 * message on failure.
 */
struct dcp_source *dcp_perf_source_new(const struct dcp_recorder_opts *opts,
				       struct dcp_recorder *sink);

/* ---- the pipeline's input: what a source calls, in time order ---------- */

/*
 * One record in perf's layout: a sample of the sampling event (decoded
 * with the settings' layout), or MMAP2, COMM, FORK or EXIT, live or
 * injected. Other types are ignored.
 */
int dcp_recorder_take_record(struct dcp_recorder *r, uint64_t time,
			     const struct perf_event_header *h, size_t size);

/* [addr, addr + len) unmapped by process pid. */
int dcp_recorder_take_munmap(struct dcp_recorder *r, uint64_t time,
			     uint32_t pid, uint64_t addr, uint64_t len);

/*
 * A stack the source counted itself (a BPF source aggregates in the
 * kernel), delivered after the sync records up to its reading. Its frames
 * are either instruction pointers as in a perf callchain (leaf first,
 * PERF_CONTEXT_* markers between kernel and user), looked up in the
 * process's maps as they are now, or frames already (cookie, offset),
 * with cookies from dcp_recorder_file_cookie(). pid 0 is the idle task.
 */
struct dcp_stack_count {
	uint32_t pid;
	const char *comm; /* NULL: the name the process table knows */
	uint32_t tid; /* 0: pid */
	/* the thread's name; NULL: the one COMM records gave it, else the
	 * process's */
	const char *thread_comm;
	const uint64_t *ips;
	uint32_t nr_ips;
	const struct dcp_frame *frames; /* used when ips is NULL */
	uint32_t nr_frames;
	/* frames: their user part is a frame-pointer chain, checked as the
	 * ring's (samples.c); false for a leaf kept alone (no stack taken,
	 * a sample inside an exec) */
	bool check_user_chain;
	uint64_t count; /* samples it stands for */
	/* --off-cpu: ns off the CPU by enum dcp_off_cpu_state, in place of
	 * samples (count 0); NULL: samples */
	const uint64_t *off_cpu_ns;
	uint64_t off_cpu_blocks; /* the blocks that time adds up */
	uint64_t cgroup_id; /* the kernel's id of the thread's cgroup, 0 */
};

int dcp_recorder_take_stack(struct dcp_recorder *r,
			    const struct dcp_stack_count *c);

/*
 * Time a thread spent off the CPU (--off-cpu), delivered when it is
 * switched back in: charged to the stack it was switched out with, as
 * instruction pointers of a perf callchain (leaf first, PERF_CONTEXT_*
 * markers), looked up in the process's maps as they are now.
 */
struct dcp_off_cpu_block {
	uint32_t pid, tid;
	const uint64_t *ips;
	uint32_t nr_ips;
	uint64_t ns[DCP_OFF_CPU_NR_STATES];
	uint64_t cgroup_id; /* at the switch-out; 0: not known */
};

int dcp_recorder_take_off_cpu(struct dcp_recorder *r, uint64_t time,
			      const struct dcp_off_cpu_block *b);

/* The cookie of a file the source names by identity (> 0), or -errno. */
int64_t dcp_recorder_file_cookie(struct dcp_recorder *r,
				 const struct dcp_file_id *id,
				 const char *path);

#endif
