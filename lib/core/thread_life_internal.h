/* SPDX-License-Identifier: MIT */
/*
 * Thread lifetimes of the recorded processes: when each thread began
 * (its fork, or the recording's start for one that existed before) and
 * ended (its exit, or the recording's end), in ns since the recording
 * began. The recorder fills them from FORK and EXIT records, the reader
 * from THREAD_LIFETIMES chunks (docs/FORMAT.md); report --threads puts
 * each thread's time on and off the CPU against them.
 */
#ifndef DCPROF_THREAD_LIFE_INTERNAL_H
#define DCPROF_THREAD_LIFE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The thread existed when recording began: start_ns is 0. */
#define DCP_LIFE_STARTED_BEFORE (1u << 0)
/* The thread had not exited when recording stopped: end_ns is unknown. */
#define DCP_LIFE_RUNNING (1u << 1)
#define DCP_LIFE_KNOWN_FLAGS (DCP_LIFE_STARTED_BEFORE | DCP_LIFE_RUNNING)

struct dcp_thread_life {
	uint32_t pid, tid;
	uint32_t flags; /* DCP_LIFE_* */
	uint64_t start_ns, end_ns;
};

struct dcp_lives;

struct dcp_lives *dcp_lives_new(void);
void dcp_lives_free(struct dcp_lives *l);

/*
 * A thread began (flags: DCP_LIFE_RUNNING, and DCP_LIFE_STARTED_BEFORE
 * for one already there). A thread already running under that tid is
 * the same thread (the collection walk and a live record may both tell
 * of it): it is kept. 0 or -ENOMEM.
 */
int dcp_lives_start(struct dcp_lives *l, uint32_t pid, uint32_t tid,
		    uint64_t start_ns, uint32_t flags);
/* The running thread tid ended at end_ns; others are ignored. */
void dcp_lives_end(struct dcp_lives *l, uint32_t tid, uint64_t end_ns);
/*
 * A record read back: it replaces the latest one of the same (pid, tid,
 * start_ns) (a working file's later flush), else it is added. 0 or
 * -ENOMEM.
 */
int dcp_lives_put(struct dcp_lives *l, const struct dcp_thread_life *t);

size_t dcp_lives_count(const struct dcp_lives *l);
const struct dcp_thread_life *dcp_lives_get(const struct dcp_lives *l,
					    size_t i);
/* Whether lifetime i changed since the last dcp_lives_mark_flushed(). */
bool dcp_lives_dirty(const struct dcp_lives *l, size_t i);
void dcp_lives_mark_flushed(struct dcp_lives *l);

#endif
