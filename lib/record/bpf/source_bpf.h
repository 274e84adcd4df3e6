/* SPDX-License-Identifier: MIT */
/*
 * The BPF record source: stacks counted in the kernel by a perf_event BPF
 * program on cpu-clock, their user frames named (build id, file offset)
 * by the kernel, drained every flush interval into the pipeline's
 * dcp_recorder_take_stack(); task events through a BPF ring buffer.
 */
#ifndef DCPROF_SOURCE_BPF_H
#define DCPROF_SOURCE_BPF_H

#include "source_internal.h"

/*
 * Checks that the backend can be used with these options (built, cpu-clock,
 * no DWARF call graph) and opens nothing. NULL with errno and a message.
 */
struct dcp_source *dcp_bpf_source_new(const struct dcp_recorder_opts *opts,
				      struct dcp_recorder *sink);

/* The source is the BPF one (for the profile's meta). */
bool dcp_source_is_bpf(const struct dcp_source *s);

/*
 * The collection walk through the kernel's task iterators, with the
 * programs the source loaded at its start (no second load: the kernel's
 * BTF is parsed once). NULL with errno and a message.
 */
struct dcp_collection_bpf *
dcp_bpf_source_collection_open(struct dcp_source *s,
			       enum dcp_collection_kind kind,
			       const struct dcp_collection_opts *opts);

#endif
