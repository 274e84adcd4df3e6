// SPDX-License-Identifier: MIT
/*
 * The BPF source's filters in the kernel. Cgroups: the programs read each
 * sample's cgroup id (bpf_get_current_cgroup_id()) and keep only the
 * threads under the recorder's cgroup filter, tested against a cgroup
 * array of the filter's directories (bpf_current_task_under_cgroup()), so
 * that the walks of the other threads' stacks are not made at all. And
 * --only's files, by build id.
 */
#ifndef DCPROF_NO_BPF

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "buildid_internal.h"
#include "log_internal.h"
#include "recorder.lskel.h"
#include "source_bpf_internal.h"

int dcp_bpf_cgroups_configure(struct bpf_source *bs,
			      const struct dcp_cgroup_table *t)
{
	size_t n;

	bs->skel->rodata->with_cgroups = t != NULL;
	if (!t)
		return 0;
	n = dcp_cgroup_table_nr_filter(t);
	if (n > DCP_BPF_MAX_CGROUP_FILTER)
		return dcp_error(EINVAL,
				 "the BPF backend keeps at most %d cgroups, "
				 "not %zu",
				 DCP_BPF_MAX_CGROUP_FILTER, n);
	bs->skel->rodata->nr_cgroup_filter = (uint32_t)n;
	return 0;
}

int dcp_bpf_cgroups_start(struct bpf_source *bs,
			  const struct dcp_cgroup_table *t)
{
	int fds[DCP_BPF_MAX_CGROUP_FILTER], n, ret = 0;
	int map = bs->skel->maps.cgroup_filter.map_fd;

	if (!t)
		return 0;
	n = dcp_cgroup_table_filter_fds(t, fds, DCP_BPF_MAX_CGROUP_FILTER);
	if (n < 0)
		return n;
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		if (!ret && bpf_map_update_elem(map, &i, &fds[i], BPF_ANY))
			ret = dcp_error(errno, "cannot keep to a cgroup: %s",
					strerror(errno));
		close(fds[i]);
	}
	return ret;
}

/*
 * --only's files as build ids for the kernel; a file without one can only
 * be matched in user space, so then the kernel keeps every sample.
 */
int dcp_bpf_take_marks(struct bpf_source *bs,
		       const struct dcp_recorder_opts *opts)
{
	if (!opts->nr_only)
		return 0;
	bs->marks = calloc(opts->nr_only, sizeof(*bs->marks));
	if (!bs->marks)
		return dcp_error(ENOMEM, "out of memory");
	bs->filter = true;
	for (size_t i = 0; i < opts->nr_only; i++) {
		uint8_t id[DCP_BUILD_ID_MAX];
		int n = dcp_build_id_parse_hex(opts->only[i], id);

		if (n <= 0)
			n = dcp_build_id_read_path(opts->only[i], id);
		if (n <= 0 || n > DCP_BPF_BUILD_ID_SIZE) {
			bs->filter = false;
			continue;
		}
		/* the kernel's ids are zero-padded to 20 bytes */
		memset(bs->marks[bs->nr_marks], 0, DCP_BPF_BUILD_ID_SIZE);
		memcpy(bs->marks[bs->nr_marks++], id, (size_t)n);
	}
	return 0;
}

#endif
