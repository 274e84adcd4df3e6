/* SPDX-License-Identifier: MIT */
/*
 * The recorder's cgroups: the kernel's id of a sample's cgroup (of the
 * cgroup v2 hierarchy, wherever it is mounted) turned into its path, the
 * name its container runtime gave it, and an id of the aggregate's
 * cgroup table; and the filter of the cgroups a recording keeps to.
 */
#ifndef DCPROF_CGROUP_INTERNAL_H
#define DCPROF_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcp_aggregate;
struct dcp_cgroup_table;

/*
 * The cgroup v2 hierarchy's table. With nr_filter, only the cgroups at
 * those paths (relative to the hierarchy's root) and their descendants
 * are kept. NULL and errno with a message: ENOENT when no cgroup v2
 * hierarchy is mounted or a filter path is not in it, ENOMEM.
 */
struct dcp_cgroup_table *dcp_cgroup_table_new(const char *const *filter,
					      size_t nr_filter);
void dcp_cgroup_table_free(struct dcp_cgroup_table *t);

/* The filter's cgroups' directories, opened O_RDONLY, for a kernel
 * filter: nr_filter descriptors the caller closes, or negative errno. */
int dcp_cgroup_table_filter_fds(const struct dcp_cgroup_table *t, int *fds,
				size_t max);
size_t dcp_cgroup_table_nr_filter(const struct dcp_cgroup_table *t);

/* A cgroup's path from the kernel, before its samples: a
 * PERF_RECORD_CGROUP (u64 id, the path, then the sample id); a malformed
 * one is ignored. 0 or -ENOMEM. */
struct perf_event_header;
int dcp_cgroup_table_learn_record(struct dcp_cgroup_table *t,
				  const struct perf_event_header *h);

/*
 * The aggregate's id of kernel cgroup id (interned in agg on first
 * sight; 0 for id 0), and in *kept whether the filter keeps it. A cgroup
 * not yet known is looked for in the hierarchy. Negative errno.
 */
int64_t dcp_cgroup_table_intern(struct dcp_cgroup_table *t,
				struct dcp_aggregate *agg, uint64_t id,
				bool *kept);

/* agg is another aggregate from now on (a new period): ids are interned
 * in it again. */
void dcp_cgroup_table_new_aggregate(struct dcp_cgroup_table *t);

#endif
