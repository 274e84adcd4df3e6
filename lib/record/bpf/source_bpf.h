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

#endif
