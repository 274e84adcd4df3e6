/* SPDX-License-Identifier: MIT */
/*
 * The reorder window. Each per-CPU ring is in time order, but the rings are
 * not in order with each other: records are queued here (copied) and
 * released in timestamp order once no ring can still deliver an older one.
 */
#ifndef DCPROF_REORDER_INTERNAL_H
#define DCPROF_REORDER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

struct dcp_reorder;

typedef int (*dcp_reorder_fn)(uint64_t time, const void *record, size_t size,
			      void *ctx);

struct dcp_reorder *dcp_reorder_new(void);
void dcp_reorder_free(struct dcp_reorder *q);

/* Queue a copy of record (size bytes) with its timestamp. */
int dcp_reorder_push(struct dcp_reorder *q, uint64_t time, const void *record,
		     size_t size);

/*
 * Release, oldest first, every queued record with time <= upto (UINT64_MAX:
 * all). Stops at and returns the first non-zero value fn returns.
 */
int dcp_reorder_flush(struct dcp_reorder *q, uint64_t upto, dcp_reorder_fn fn,
		      void *ctx);

size_t dcp_reorder_count(const struct dcp_reorder *q);
size_t dcp_reorder_bytes(const struct dcp_reorder *q);
/* Time of the oldest queued record; UINT64_MAX when empty. */
uint64_t dcp_reorder_oldest(const struct dcp_reorder *q);

#endif
