/* SPDX-License-Identifier: MIT */
/*
 * The order in which a compact file lists its stacks and rows. The
 * aggregate keeps them in the order they were first sampled, which
 * interleaves unrelated stacks and processes; written that way, zstd finds
 * few repeats close together. Sorted, stacks that share callers follow
 * each other (they differ only near the leaf) and a process's rows are
 * together, and the same records compress to about half. Stack ids in the
 * file are positions in this order; nothing else changes.
 */
#ifndef DCPROF_PROFILE_ORDER_INTERNAL_H
#define DCPROF_PROFILE_ORDER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate_internal.h"

struct dcp_write_order {
	uint32_t *stack_at; /* position in the file -> aggregate stack id */
	uint32_t *stack_pos; /* aggregate stack id -> position in the file */
	size_t *row_at; /* position in the file -> aggregate row index */
};

/*
 * Stacks by their frames from the outermost caller in (cookie, flags,
 * offset), a stack before the longer ones it starts; rows by process name,
 * pid, thread and stack position. Returns 0 or -ENOMEM (o is then empty
 * and the caller may write in the aggregate's order).
 */
int dcp_write_order_build(struct dcp_write_order *o,
			  const struct dcp_aggregate *agg);
void dcp_write_order_free(struct dcp_write_order *o);

#endif
