// SPDX-License-Identifier: MIT
/*
 * A row's cgroup by path, unit, container or pod, from the names
 * dcp_cgroup_parse_path() finds in its path.
 */
#include <stdio.h>
#include <string.h>

#include "cgroup_label.h"

int view_cgroup_key_parse(const char *name)
{
	static const char *const names[VIEW_CGROUP_NR] = { "cgroup", "unit",
							   "container", "pod" };

	for (int k = 0; k < VIEW_CGROUP_NR; k++)
		if (!strcmp(name, names[k]))
			return k;
	return -1;
}

const char *view_cgroup_label(const struct dcp_sample_row *row,
			      enum view_cgroup_key key, char *buf, size_t size)
{
	struct dcp_cgroup_names n = { .sz = sizeof(n) };

	if (!row->cgroup)
		return VIEW_CGROUP_NONE;
	if (key == VIEW_CGROUP_PATH)
		return row->cgroup[0] ? row->cgroup : "[gone before named]";
	if (dcp_cgroup_parse_path(row->cgroup, &n))
		return VIEW_CGROUP_NONE;
	switch (key) {
	case VIEW_CGROUP_UNIT:
		if (n.unit[0] || n.slice[0])
			snprintf(buf, size, "%s", n.unit[0] ? n.unit : n.slice);
		else
			return VIEW_CGROUP_NONE;
		break;
	case VIEW_CGROUP_CONTAINER:
		if (!n.container_id[0])
			return VIEW_CGROUP_NONE;
		snprintf(buf, size, "%s%s%.12s%s%s", n.runtime,
			 n.runtime[0] ? ":" : "", n.container_id,
			 row->container_name ? " " : "",
			 row->container_name ? row->container_name : "");
		break;
	case VIEW_CGROUP_POD:
		if (!n.pod_uid[0])
			return VIEW_CGROUP_NONE;
		snprintf(buf, size, "%s (%s)", n.pod_uid, n.qos);
		break;
	default:
		return VIEW_CGROUP_NONE;
	}
	return buf;
}
