/* SPDX-License-Identifier: MIT */
/*
 * The collection's state and what its three files share: collect.c (the
 * iterator and its public calls), collect_proc.c (reading /proc, the
 * process and task walk, FORK/COMM records) and collect_maps.c (the walk
 * of /proc/PID/maps, file identities, MMAP2 records).
 */
#ifndef DCPROF_COLLECT_WALK_INTERNAL_H
#define DCPROF_COLLECT_WALK_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dcprof/dcprof.h"
#include "cookie_internal.h"
#include "file_ident_internal.h"

#define COMM_MAX 16 /* TASK_COMM_LEN: what live COMM records carry */
#define MAPS_TRIES 4 /* reads of a changing maps file before giving up */
#define DENTS_SIZE 16384
/* A process that disappeared (or was replaced) while it was read. */
#define GONE (-ESRCH)

struct dcp_coll_buf {
	char *p;
	size_t len, cap;
};

/*
 * The records a collection has ready for its caller, handed over whole by
 * dcp_coll_queue_read(), and an error met after some records were already
 * handed over, kept for the next read.
 */
struct dcp_coll_queue {
	struct dcp_coll_buf out;
	size_t out_pos;
	int deferred_err;
	char *deferred_msg;
};

/*
 * Queue more records for the next read (the queue is empty when called;
 * size is the caller's buffer size). Returns > 0 when it queued some, 0
 * when the collection is done, or a negative errno with a message.
 */
typedef int (*dcp_coll_refill_fn)(void *ctx, size_t size);

/*
 * One collection read: as many whole queued records as fit in buf
 * (refilling through refill), counted in stats. The iterator contract of
 * include/dcprof/dcprof.h: 0 at the end, -ENOSPC with *needed when the
 * next record does not fit an empty buffer, an error after some records
 * deferred to the next read.
 */
ssize_t dcp_coll_queue_read(struct dcp_coll_queue *q,
			    struct dcp_collection_stats *stats, void *buf,
			    size_t size, size_t *needed,
			    dcp_coll_refill_fn refill, void *ctx);

void dcp_coll_queue_free(struct dcp_coll_queue *q);

/* A directory read with getdents64 from a buffer we own. */
struct dcp_coll_dents {
	int fd;
	size_t pos, len;
	char *buf;
};

struct dcp_coll_target {
	pid_t pid;
	unsigned long long start; /* clock ticks after boot */
};

struct dcp_proc_stat {
	char comm[COMM_MAX];
	pid_t ppid;
	long threads;
	unsigned long long start;
};

/* One executable line of /proc/PID/maps. */
struct dcp_maps_line {
	uint64_t start, end, pgoff;
	uint32_t prot, flags;
	uint32_t maj, min;
	uint64_t ino;
	const char *path; /* NUL-terminated in place; "" for anonymous */
};

struct dcp_collection {
	enum dcp_collection_kind kind;
	struct dcp_cookie_table *cookies;
	bool own_cookies;
	bool only_marked;

	struct dcp_coll_dents proc; /* whole system: the cursor in /proc */
	struct dcp_coll_target *targets; /* pid list */
	size_t nr_targets, next_target;
	bool done;

	uint64_t time; /* trailer time: when the collection was opened */
	uint64_t boot_minus_mono; /* CLOCK_BOOTTIME - CLOCK_MONOTONIC */
	long clk_tck;

	/* records of the current process, handed over from q.out_pos */
	struct dcp_coll_queue q;

	struct dcp_coll_buf rd, rd2; /* /proc file contents */
	struct dcp_coll_buf maps; /* the executable lines of a maps file */
	char *dents_buf; /* for task directories */
	char *link; /* PATH_MAX */

	struct dcp_ident_cache idents;
	/* dcp_collection_for_recorder(): outlives the walk, or NULL */
	struct dcp_ident_cache *shared_idents;
	bool maps_once;

	const char *what; /* the /proc file being read, for messages */
	struct dcp_collection_stats stats;
	uint64_t syscalls;
};

static inline bool dcp_coll_is_gone(int err)
{
	err = err < 0 ? -err : err;
	return err == ENOENT || err == ESRCH;
}

/* ---- collect_proc.c ---- */

/* Room for n more bytes in b. 0 or -ENOMEM (with a message). */
int dcp_coll_buf_reserve(struct dcp_coll_buf *b, size_t n);
/* Read a /proc file from offset 0 to its end. */
int dcp_coll_read_whole(struct dcp_collection *c, int fd,
			struct dcp_coll_buf *b);
/* openat(dirfd, path, O_RDONLY | flags), counted: the fd or -errno. */
int dcp_coll_open_at(struct dcp_collection *c, int dirfd, const char *path,
		     int flags);
/* Read and parse the stat file at path. */
int dcp_coll_stat_at(struct dcp_collection *c, int dirfd, const char *path,
		     struct dcp_proc_stat *st);
/* The next numeric entry of a directory: 1, 0 at its end, or -errno. */
int dcp_coll_dents_next(struct dcp_collection *c, struct dcp_coll_dents *d,
			pid_t *out);
/* Bytes a NUL-terminated string takes in a record, 8-byte aligned. */
size_t dcp_coll_str_space(const char *s);
/* Append a zeroed record of size bytes (trailer included) to c->out. */
void *dcp_coll_record_new(struct dcp_collection *c, uint32_t type,
			  uint16_t misc, size_t size, uint32_t pid,
			  uint32_t tid);

/*
 * Append a zeroed injected record of size bytes (trailer included, its time
 * time, its cpu -1) to b; NULL with a message when it cannot.
 */
void *dcp_coll_buf_record(struct dcp_coll_buf *b, uint64_t time, uint32_t type,
			  uint16_t misc, size_t size, uint32_t pid,
			  uint32_t tid);

/*
 * The options of a collection of kind, checked (size, known fields, a pid
 * list that is there) and copied into *out (zeroed where o is shorter or
 * NULL): 0, or -EINVAL with a message.
 */
int dcp_coll_opts_copy(enum dcp_collection_kind kind,
		       const struct dcp_collection_opts *o,
		       struct dcp_collection_opts *out);

/*
 * The clocks every record of a walk is stamped with: the clock tick of
 * /proc's start times, the walk's CLOCK_MONOTONIC time, and the time spent
 * suspended (CLOCK_BOOTTIME - CLOCK_MONOTONIC), rounded to that tick so
 * that it reads the same in every collection.
 */
void dcp_coll_clock_init(long *clk_tck, uint64_t *time,
			 uint64_t *boot_minus_mono);
/*
 * Build the records of one process into c->out: 0 (with the records, or
 * none when it vanished or may not be read), or a negative errno.
 */
int dcp_coll_load_process(struct dcp_collection *c, pid_t pid,
			  unsigned long long expect_start, bool listed);

/* ---- collect_maps.c ---- */

/* MMAP2 records for the executable mappings of the process at dirfd. */
int dcp_coll_load_maps(struct dcp_collection *c, int dirfd, pid_t pid);
/* The MMAP2 record of the main executable's first executable mapping. */
int dcp_coll_load_exe_map(struct dcp_collection *c, int dirfd, pid_t pid,
			  const char *exe);

#endif
