/* SPDX-License-Identifier: MIT */
/*
 * The summary of a profile (docs/FORMAT.md, "The summary"): what views
 * grouped by process name and function read, without the detail that
 * makes a profile grow with the recording's length. Its rows are summed
 * over pids (pid 0), and each frame is replaced by one representative
 * address of its function: the same object, symbol and chain of inlined
 * calls, so the same names in every view. A workload that starts a new
 * process every few milliseconds, or hits one more address of a hot loop,
 * adds nothing to it.
 */
#ifndef DCPROF_SUMMARY_INTERNAL_H
#define DCPROF_SUMMARY_INTERNAL_H

#include "aggregate_internal.h"
#include "symtab_internal.h"

struct dcp_summary {
	/* Strings have the ids of the profile's; stacks and rows are the
	 * summary's own. */
	struct dcp_aggregate *agg;
	/* The entries of the representative addresses, copied. */
	struct dcp_symtab *symbols;
};

/*
 * Summarize agg, whose addresses symbols names, taking its stacks in
 * stack_order (aggregate stack ids; NULL: the aggregate's order), the
 * order the file lists them in: a function's representative is its first
 * address in that order. Returns 0 or -ENOMEM; on success the caller
 * frees out with dcp_summary_free().
 */
int dcp_summary_build(const struct dcp_aggregate *agg,
		      const struct dcp_symtab *symbols,
		      const uint32_t *stack_order, struct dcp_summary *out);
void dcp_summary_free(struct dcp_summary *s);

#endif
