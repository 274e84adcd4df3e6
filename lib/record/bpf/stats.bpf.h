/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The statistics every program of the BPF record source adds to
 * (DCP_BPF_STAT_*, profile_common.h): one per-CPU array, defined in
 * profile.bpf.c and shared by name with the other objects linked into
 * the recorder's (bpftool gen object); and the ring of task events user
 * space reads (tasks.bpf.c's), defined there too.
 */
#ifndef DCPROF_STATS_BPF_H
#define DCPROF_STATS_BPF_H

struct dcp_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DCP_BPF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
};

extern struct dcp_stats_map stats SEC(".maps");

/* mapped twice by its reader, all of it resident: as small as the task
 * events of a storm of short-lived processes allow between two drains */
#define DCP_BPF_EVENTS_SIZE (2 * 1024 * 1024)

struct dcp_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DCP_BPF_EVENTS_SIZE);
};

extern struct dcp_events_map events SEC(".maps");

static __always_inline void count_stat_n(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += n;
}

static __always_inline void count_stat(__u32 slot)
{
	count_stat_n(slot, 1);
}

#endif
