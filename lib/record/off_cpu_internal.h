/* SPDX-License-Identifier: MIT */
/*
 * Off-CPU time from the perf ring (record --off-cpu): the
 * sched:sched_switch and sched:sched_wakeup tracepoints of every CPU,
 * routed into that CPU's ring, and the tracker that pairs each thread's
 * switch-out (time, why, stack) with its wake-up and its next switch-in
 * and hands the finished block to the recorder.
 */
#ifndef DCPROF_OFF_CPU_INTERNAL_H
#define DCPROF_OFF_CPU_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring_internal.h"
#include "source_internal.h"

struct dcp_off_cpu_tracker;

/*
 * Find sched:sched_switch (mounting tracefs when needed) and open it on
 * the CPU of every ring, into that ring, with call chains; sched_wakeup
 * too, without, when it can be (else said at -v). NULL with errno
 * and a message saying why it cannot be used. min_ns: shorter blocks are
 * dropped and counted.
 */
struct dcp_off_cpu_tracker *dcp_off_cpu_open(struct dcp_ring *rings,
					     size_t nr_rings, uint64_t min_ns,
					     bool cgroups,
					     struct dcp_source *source);
/* Whether a ring's sample of this IDENTIFIER is the tracker's (a switch
 * or a wake-up). */
bool dcp_off_cpu_is_own(const struct dcp_off_cpu_tracker *t, uint64_t id);
/*
 * A switch or wake-up sample, delivered in time order: a switch remembers
 * the thread switched out and hands the block of the one switched in to
 * the recorder (dcp_recorder_take_off_cpu), a sleep's time up to its
 * wake-up under its state and the rest runnable; a wake-up marks where
 * the sleep of a thread switched out ends. A switch sample holds both
 * threads, so nothing else is needed (no context-switch records). A
 * switch-out of a thread whose switch-in was never seen drops the block
 * it ends and counts it (off_cpu_missed_switch_ins). Malformed records
 * are ignored.
 */
int dcp_off_cpu_take(struct dcp_off_cpu_tracker *t, uint64_t time,
		     const struct perf_event_header *h, size_t size);
void dcp_off_cpu_disable(struct dcp_off_cpu_tracker *t);
/*
 * A thread found off the CPU when recording began (state: enum
 * dcp_off_cpu_state; chain: its stack as a sample's call chain): its wait
 * is charged from time, unless its switch-out is known already; a
 * switch-out older than time that comes later gives it its whole stack.
 */
int dcp_off_cpu_under_way(struct dcp_off_cpu_tracker *t, uint64_t time,
			  uint32_t pid, uint32_t tid, uint32_t state,
			  const uint64_t *chain, uint64_t nr_chain);
/* The kernel's text symbols by name (off_cpu_seed.c); NULL: no memory. */
struct dcp_kernel_names;
struct dcp_kernel_names *dcp_kernel_names_load(void);
void dcp_kernel_names_free(struct dcp_kernel_names *k);
/*
 * -p or -a (pids NULL: every process): find the threads off the CPU now
 * from /proc (their state, kernel stack, named through k, and the user ip
 * of their system call) and give them to dcp_off_cpu_under_way() with the
 * time of the scan (off_cpu_seed.c).
 */
int dcp_off_cpu_seed(struct dcp_off_cpu_tracker *t,
		     const struct dcp_kernel_names *k, const pid_t *pids,
		     size_t nr_pids);
/* Everything delivered: count the threads still switched out, and charge
 * their time up to end (the recording's end, in the rings' clock). */
int dcp_off_cpu_finish(struct dcp_off_cpu_tracker *t, uint64_t end);
void dcp_off_cpu_close(struct dcp_off_cpu_tracker *t);

#endif
