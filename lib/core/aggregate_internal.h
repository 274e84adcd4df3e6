/* SPDX-License-Identifier: MIT */
/*
 * In-memory aggregation: interned strings (process names), interned stacks
 * of (cookie, offset) frames, interned threads (tid, name), and sample
 * counts per (comm, pid, thread, stack). The
 * profile grows with the number of distinct stacks, not with samples.
 */
#ifndef DCPROF_AGGREGATE_INTERNAL_H
#define DCPROF_AGGREGATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcprof/dcprof.h"
#include "thread_life_internal.h"

struct dcp_aggregate;

struct dcp_row_key {
	uint32_t comm_id; /* interned string: the process's name */
	uint32_t pid;
	uint32_t stack_id;
	/* the thread: 0 is the process's own (tid = pid, named as the
	 * process), else an id of dcp_aggregate_intern_thread() */
	uint32_t thread_id;
};

struct dcp_aggregate *dcp_aggregate_new(void);
void dcp_aggregate_free(struct dcp_aggregate *a);

/* Ids are dense, from 0, in order of first appearance. Negative errno. */
int64_t dcp_aggregate_intern_string(struct dcp_aggregate *a, const char *s);
int64_t dcp_aggregate_intern_stack(struct dcp_aggregate *a,
				   const struct dcp_frame *frames,
				   uint32_t nr_frames);
/*
 * A thread: its tid, its name (a string id) and the cgroup it was in (a
 * dcp_aggregate_intern_cgroup() id, 0: not known). A thread that moves to
 * another cgroup, or renames itself, is another entry.
 */
struct dcp_agg_thread {
	uint32_t tid;
	uint32_t comm_id;
	uint32_t cgroup;
};

/* Thread ids are dense from 1, 0 being no thread of its own. Negative
 * errno. */
int64_t dcp_aggregate_intern_thread(struct dcp_aggregate *a,
				    const struct dcp_agg_thread *t);

/*
 * A cgroup: the kernel's id of it (of the cgroup v2 hierarchy: a cgroup
 * removed and made again under the same path has another id), its path
 * in the hierarchy and the name its container runtime gave it (string
 * ids; name DCP_AGG_NO_STRING: none). Ids are dense from 1. Negative
 * errno.
 */
#define DCP_AGG_NO_STRING UINT32_MAX
struct dcp_agg_cgroup {
	uint64_t kernel_id;
	uint32_t path_id;
	uint32_t name_id;
};

int64_t dcp_aggregate_intern_cgroup(struct dcp_aggregate *a,
				    const struct dcp_agg_cgroup *c);
size_t dcp_aggregate_nr_cgroups(const struct dcp_aggregate *a);
/* Cgroup id (1..nr_cgroups); false for another id. */
bool dcp_aggregate_cgroup(const struct dcp_aggregate *a, uint32_t id,
			  struct dcp_agg_cgroup *out);
/* Add count to (comm_id, pid, stack_id, thread_id). 0 or -ENOMEM. */
int dcp_aggregate_add(struct dcp_aggregate *a, const struct dcp_row_key *key,
		      uint64_t count);

/*
 * Add off-CPU time (ns by DCP_OFF_CPU_* state) to a row, created with no
 * samples if new. 0 or -ENOMEM.
 */
int dcp_aggregate_add_off_cpu(struct dcp_aggregate *a,
			      const struct dcp_row_key *key,
			      const uint64_t ns[DCP_OFF_CPU_NR_STATES]);
/* Whether any row has off-CPU time. */
bool dcp_aggregate_has_off_cpu(const struct dcp_aggregate *a);
/*
 * Row i's off-CPU time by state (unflushed: gained since the last
 * dcp_aggregate_mark_flushed()); false when it is all zero.
 */
bool dcp_aggregate_row_off_cpu(const struct dcp_aggregate *a, size_t i,
			       bool unflushed,
			       uint64_t ns[DCP_OFF_CPU_NR_STATES]);

size_t dcp_aggregate_nr_strings(const struct dcp_aggregate *a);
const char *dcp_aggregate_string(const struct dcp_aggregate *a, uint32_t id);
size_t dcp_aggregate_nr_stacks(const struct dcp_aggregate *a);
/* Threads have ids 1..nr_threads; false for another id. */
size_t dcp_aggregate_nr_threads(const struct dcp_aggregate *a);
bool dcp_aggregate_thread(const struct dcp_aggregate *a, uint32_t id,
			  struct dcp_agg_thread *out);
const struct dcp_frame *dcp_aggregate_stack(const struct dcp_aggregate *a,
					    uint32_t id, uint32_t *nr_frames);
size_t dcp_aggregate_nr_rows(const struct dcp_aggregate *a);
/* Row i (0..nr_rows-1, in order of creation): key and total count. */
void dcp_aggregate_row(const struct dcp_aggregate *a, size_t i,
		       struct dcp_row_key *key, uint64_t *count);

/*
 * Incremental flushing: the count each row gained since the last call to
 * dcp_aggregate_mark_flushed() (which marks off-CPU time too). Rows with
 * no gain are skipped by writers.
 */
uint64_t dcp_aggregate_row_unflushed(const struct dcp_aggregate *a, size_t i);
void dcp_aggregate_mark_flushed(struct dcp_aggregate *a);

/* The lifetimes of the recorded processes' threads (marked flushed with
 * the rows). */
struct dcp_lives *dcp_aggregate_lives(const struct dcp_aggregate *a);

#endif
