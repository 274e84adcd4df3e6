/* SPDX-License-Identifier: MIT */
/*
 * Decoding of the sync records (COMM, FORK, EXIT, MMAP2), injected by the
 * collection or read live from the kernel: one decoder for both paths.
 */
#ifndef DCPROF_COLLECT_INTERNAL_H
#define DCPROF_COLLECT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cookie_internal.h"
#include "records_internal.h"

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

/*
 * The cookie of a decoded MMAP2 record's object: its file identity, or the
 * named special region. Returns the cookie (> 0) or a negative errno.
 */
int64_t dcp_record_intern(struct dcp_cookie_table *t,
			  const struct dcp_record_view *v);

/*
 * The number of /proc system calls (opens, reads, readlinks, directory
 * reads) the collection has made so far: the work behind its records.
 */
uint64_t dcp_collection_syscalls(const struct dcp_collection *c);

#endif
