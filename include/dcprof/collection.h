/* SPDX-License-Identifier: MIT */
/*
 * libdcprof's collection: the processes and mappings that existed before
 * recording began, as records in perf's layout. Included by
 * <dcprof/dcprof.h>; not included on its own.
 */
#ifndef DCPROF_COLLECTION_H
#define DCPROF_COLLECTION_H

#ifndef DCPROF_DCPROF_H
#error "include <dcprof/dcprof.h>, which includes this header"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- collection: processes that existed before recording --------------- */

enum dcp_collection_kind {
	DCP_COLLECTION_TASKS = 1, /* one FORK + COMM record per thread */
	DCP_COLLECTION_MAPS = 2, /* one MMAP2 record per executable mapping */
};

struct dcp_collection_opts {
	size_t sz;
	const pid_t *pids; /* NULL: every process */
	size_t nr_pids;
	/* Cookie table to resolve files against (and to take marks from);
	 * NULL: the collection keeps one of its own. */
	struct dcp_cookie_table *cookies;
	bool only_marked; /* skip maps of files that are not marked */
};

/*
 * Collection statistics, defined races included: a task that exits while
 * it is walked is skipped and counted in tasks_vanished, never an error.
 */
struct dcp_collection_stats {
	uint64_t records;
	uint64_t bytes;
	uint64_t reads;
	uint64_t tasks;
	uint64_t maps;
	uint64_t tasks_vanished;
	uint64_t maps_reread; /* /proc/PID/maps reads retried for a race */
	uint64_t maps_skipped_unmarked;
};

struct dcp_collection;

DCPROF_API struct dcp_collection *
dcp_collection_open(enum dcp_collection_kind kind,
		    const struct dcp_collection_opts *opts);

/*
 * Fill buf with as many whole records as fit and return the number of bytes
 * written; 0 means the walk is over. Records are perf_event_header-framed,
 * in the same layout as the kernel's COMM/FORK/MMAP2 records, with
 * DCP_RECORD_MISC_INJECTED set in header.misc. A resumed read continues
 * where the last one stopped without rescanning. When buf cannot hold even
 * the next record, returns -ENOSPC and, if needed is not NULL, stores the
 * size that record needs.
 */
DCPROF_API ssize_t dcp_collection_read(struct dcp_collection *c, void *buf,
				       size_t size, size_t *needed);

/* The walk's statistics so far, owned by the collection. */
DCPROF_API const struct dcp_collection_stats *
dcp_collection_get_stats(const struct dcp_collection *c);
DCPROF_API void dcp_collection_close(struct dcp_collection *c);

/*
 * Collection through the kernel: the same walk and the same records, read
 * from bpf_iter task and task_vma programs instead of /proc. The kernel
 * walks the tasks and their executable mappings and resumes where the last
 * read stopped; user space adds the mapped files' paths and build ids
 * (through /proc/PID/map_files). Options, reads, statistics and records
 * are those of dcp_collection_*() above (stats.maps_reread stays 0).
 * Differences, defined: records come in the kernel's walk order (every
 * thread by tid for a whole-system DCP_COLLECTION_TASKS walk; per process
 * with a pid list, and always for DCP_COLLECTION_MAPS), and a process that
 * exits before the kernel walk reaches it is simply not seen: it counts in
 * tasks_vanished only when it was listed, or when it exits between the
 * kernel's walk and its files' lookup. Needs root (or CAP_BPF, CAP_PERFMON
 * and CAP_SYS_ADMIN) and kernel BTF; NULL with errno ENOTSUP when the
 * library was built without BPF, EPERM when the kernel refuses.
 */
struct dcp_collection_bpf;

DCPROF_API struct dcp_collection_bpf *
dcp_collection_bpf_open(enum dcp_collection_kind kind,
			const struct dcp_collection_opts *opts);
DCPROF_API ssize_t dcp_collection_bpf_read(struct dcp_collection_bpf *c,
					   void *buf, size_t size,
					   size_t *needed);
DCPROF_API const struct dcp_collection_stats *
dcp_collection_bpf_get_stats(const struct dcp_collection_bpf *c);
DCPROF_API void dcp_collection_bpf_close(struct dcp_collection_bpf *c);

/* header.misc bit on every injected record; the kernel never sets it. */
#define DCP_RECORD_MISC_INJECTED (1u << 12)

/* Types of the records a collection writes: the kernel's PERF_RECORD_*. */
enum dcp_record_type {
	DCP_RECORD_COMM = 3, /* PERF_RECORD_COMM */
	DCP_RECORD_EXIT = 4, /* PERF_RECORD_EXIT (never from a collection) */
	DCP_RECORD_FORK = 7, /* PERF_RECORD_FORK */
	DCP_RECORD_MMAP2 = 10, /* PERF_RECORD_MMAP2 */
};

/* One record, decoded by dcp_collection_record_decode(). */
struct dcp_collection_record {
	size_t sz; /* sizeof(struct dcp_collection_record), set by the caller */
	uint32_t type; /* enum dcp_record_type */
	uint32_t size; /* bytes the record takes in the buffer */
	bool injected; /* DCP_RECORD_MISC_INJECTED is set */
	uint32_t pid, tid;
	/* FORK and EXIT: the parent, and the time of the event (for injected
	 * FORK records: the task's start time, CLOCK_MONOTONIC ns) */
	uint32_t ppid, ptid;
	uint64_t time;
	/* COMM: the thread's name */
	const char *comm;
	/* MMAP2: the mapping, its protection (PROT_*) and flags (MAP_*) */
	uint64_t addr, len, pgoff;
	uint32_t prot, flags;
	/* DCP_COOKIE_KIND_FILE, or ANON, VDSO, VSYSCALL for regions without a
	 * file of their own */
	enum dcp_cookie_kind kind;
	const char *filename;
	/* The file's identity: its build id, else device and inode */
	uint8_t build_id[DCP_BUILD_ID_MAX];
	uint8_t build_id_size;
	uint32_t dev_major, dev_minor;
	uint64_t ino, ino_generation;
	/* MMAP2 decoded with a cookie table: the cookie of the mapped object
	 * (0 otherwise) */
	uint32_t cookie;
};

/*
 * Decode the record at buf, one of those dcp_collection_read() wrote (the
 * recorder decodes the kernel's records with the same code). size is the
 * number of bytes readable at buf; the record's own size must not exceed
 * it. Strings point into buf. With cookies not NULL, the object an MMAP2
 * record maps is interned in that table (created on first sight, the
 * path added to its paths) and its cookie stored in rec->cookie.
 * Returns the record's size in bytes (> 0: where the next record starts),
 * -EINVAL for a malformed record, -ENOTSUP for a record of another type.
 */
DCPROF_API int dcp_collection_record_decode(const void *buf, size_t size,
					    struct dcp_cookie_table *cookies,
					    struct dcp_collection_record *rec);

#ifdef __cplusplus
}
#endif

#endif /* DCPROF_COLLECTION_H */
