/* SPDX-License-Identifier: MIT */
/*
 * Every perf record type dcprof reads, in one place: their layouts as the
 * kernel writes them for our attributes (sample_id_all with
 * TID|TIME|CPU|IDENTIFIER) and as the collection writes them for processes
 * that existed before recording, and their decoders: samples of every
 * call-graph mode and the sync records (COMM, FORK, EXIT, MMAP2).
 */
#ifndef DCPROF_RECORDS_INTERNAL_H
#define DCPROF_RECORDS_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cookie_internal.h"

/* sample_type of every event we open; the trailer below follows from it */
#define DCP_SAMPLE_ID_TYPE                                      \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_IDENTIFIER)

/* The sample_id_all trailer at the end of every non-sample record. */
struct dcp_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, reserved;
	uint64_t id;
};

/* PERF_RECORD_COMM: then char comm[] (NUL-padded to 8), then trailer. */
struct dcp_comm_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT, then trailer. */
struct dcp_task_record {
	struct perf_event_header header;
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint64_t time;
};

/* PERF_RECORD_MMAP2: then char filename[] (NUL-padded to 8), trailer. */
struct dcp_mmap2_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

/* PERF_RECORD_LOST, then trailer. */
struct dcp_lost_record {
	struct perf_event_header header;
	uint64_t id, lost;
};

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* The trailer of a non-sample record, or NULL if it is too short. */
static inline const struct dcp_sample_id *
dcp_record_sample_id(const struct perf_event_header *h)
{
	if (h->size < sizeof(*h) + sizeof(struct dcp_sample_id))
		return 0;
	return (const struct dcp_sample_id *)((const char *)h + h->size -
					      sizeof(struct dcp_sample_id));
}

/* What the sample records carry, from the attributes we opened. */
struct dcp_sample_layout {
	bool callchain; /* PERF_SAMPLE_CALLCHAIN */
	uint64_t regs_mask; /* PERF_SAMPLE_REGS_USER with this mask, or 0 */
	bool stack_user; /* PERF_SAMPLE_STACK_USER */
	bool cgroup; /* PERF_SAMPLE_CGROUP */
};

/*
 * One decoded sample: IDENTIFIER, IP, TID, TIME, CPU, PERIOD, then
 * CALLCHAIN (u64 nr, ips[nr]), REGS_USER (u64 abi, regs[hweight(mask)]
 * when abi is not NONE), STACK_USER (u64 size, data[size], u64 dyn_size
 * when size is not 0). Pointers point into the record.
 */
struct dcp_sample {
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	const uint64_t *chain;
	uint64_t nr_chain;
	uint64_t regs_abi; /* PERF_SAMPLE_REGS_ABI_*, 0: no user registers */
	const uint64_t *regs; /* in mask bit order */
	uint32_t nr_regs;
	const unsigned char *stack; /* the copy of [sp, sp + stack_size) */
	uint64_t stack_size; /* dyn_size: the bytes the kernel copied */
	uint64_t stack_room; /* size: the bytes reserved for the copy */
	uint64_t cgroup; /* PERF_SAMPLE_CGROUP: the cgroup (v2) id, else 0 */
};

/*
 * Decode a PERF_RECORD_SAMPLE of the given layout. Every length is checked
 * against the record; a malformed record gives -EBADMSG (no message: it
 * is counted, not explained).
 */
int dcp_sample_parse(const struct perf_event_header *h,
		     const struct dcp_sample_layout *l, struct dcp_sample *s);

/*
 * Copy a sample record into out (at least h->size bytes) with its stack
 * copy cut to the bytes the kernel filled: most stacks are far shallower
 * than the room reserved for them, and records wait in the reorder window.
 * Returns the new size, or 0 when the record is kept as it is.
 */
size_t dcp_sample_compact(const struct perf_event_header *h,
			  const struct dcp_sample_layout *l, void *out);

struct dcp_record_view {
	uint32_t type; /* PERF_RECORD_* */
	uint16_t misc;
	bool injected; /* DCP_RECORD_MISC_INJECTED */
	uint32_t pid, tid;
	/* FORK and EXIT: the parent, and the time of the event (for injected
	 * FORK records: the task's start time, CLOCK_MONOTONIC ns) */
	uint32_t ppid, ptid;
	uint64_t time;
	/* COMM */
	const char *comm;
	bool comm_exec;
	/* MMAP2 */
	uint64_t addr, len, pgoff;
	uint32_t prot, flags;
	struct dcp_file_id id; /* build id, else dev/ino/generation */
	/* DCP_COOKIE_KIND_FILE, or ANON, VDSO, VSYSCALL for regions without
	 * a file of their own */
	enum dcp_cookie_kind region;
	const char *filename;
	/* the sample_id_all trailer */
	const struct dcp_sample_id *sample_id;
};

/*
 * Decode one COMM, FORK, EXIT or MMAP2 record of h->size bytes (avail: the
 * bytes readable at h, h->size must not exceed it). Strings point into the
 * record. Returns 0, -EINVAL for a malformed record, -ENOTSUP for another
 * record type (type, misc and injected are still filled in).
 */
int dcp_record_decode(const struct perf_event_header *h, size_t avail,
		      struct dcp_record_view *v);

/* The kind of region an MMAP2 filename names ("[vdso]", "//anon", ...). */
enum dcp_cookie_kind dcp_record_region(const char *filename);

#endif
