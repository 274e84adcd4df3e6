/* SPDX-License-Identifier: MIT */
/*
 * A sample row's cgroup as the views group and label it: by its path, its
 * systemd unit, its container or its Kubernetes pod.
 */
#ifndef DCPROF_CGROUP_LABEL_H
#define DCPROF_CGROUP_LABEL_H

#include <stddef.h>

#include "dcprof/dcprof.h"

enum view_cgroup_key {
	VIEW_CGROUP_PATH,
	VIEW_CGROUP_UNIT,
	VIEW_CGROUP_CONTAINER,
	VIEW_CGROUP_POD,
	VIEW_CGROUP_NR
};

/* The key of its name ("cgroup", "unit", "container", "pod"), or -1. */
int view_cgroup_key_parse(const char *name);

/* Labels of rows that carry no such thing: recorded without cgroups, or
 * in no unit, container or pod. */
#define VIEW_CGROUP_NONE "-"

/*
 * The label of row's cgroup by key, in buf (size bytes) or a constant:
 * the path; the unit (or the slice when no unit); "RUNTIME:ID" of the
 * container (the id's first 12 digits, as docker shows it) followed by
 * the runtime's name for it; the pod's UID and QoS class.
 */
const char *view_cgroup_label(const struct dcp_sample_row *row,
			      enum view_cgroup_key key, char *buf, size_t size);

#endif
