/* SPDX-License-Identifier: MIT */
/*
 * JIT perf maps: the /tmp/perf-PID.map files that JIT compilers write
 * (Node's --perf-basic-prof, Python's -X perf, the JVM's perf-map-agent),
 * one "START SIZE NAME" line per piece of generated code, in hex.
 */
#ifndef DCPROF_PERFMAP_INTERNAL_H
#define DCPROF_PERFMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dcp_perfmap_entry {
	uint64_t start, size;
	const char *name;
	uint32_t seq; /* line order: a later line wins where code moved */
};

struct dcp_perfmap {
	struct dcp_perfmap_entry *e; /* sorted by start */
	size_t n;
	uint64_t *max_end; /* greatest start + size up to each entry */
	char *names;
	size_t skipped; /* lines that were not "START SIZE NAME" */
};

/*
 * Parse a perf map held in memory. Lines that do not parse (garbage, a
 * size of 0, a range that wraps) are skipped and counted. NULL on ENOMEM.
 */
struct dcp_perfmap *dcp_perfmap_parse(const char *text, size_t len);

/* Parse the map read through fd from its start (pread: the offset of a
 * shared, pinned handle is left alone); at most 256 MiB are read. */
struct dcp_perfmap *dcp_perfmap_read_fd(int fd);

void dcp_perfmap_free(struct dcp_perfmap *m);

/* The entry covering addr (the latest line when several do), or NULL. */
const struct dcp_perfmap_entry *dcp_perfmap_lookup(const struct dcp_perfmap *m,
						   uint64_t addr);

/*
 * Open a perf map for reading, safely from a privileged recorder: never
 * through a symbolic link (O_NOFOLLOW), never blocking on a FIFO, only a
 * regular file, and only when owned by owner (the process's uid) or root:
 * anyone can create /tmp/perf-PID.map for someone else's pid. Returns the
 * descriptor or a negative errno (-EPERM for a file of another owner).
 */
int dcp_perfmap_open_path(const char *path, uid_t owner);

/*
 * The recorder's entry point: open /tmp/perf-PID.map of process pid,
 * whose real uid is owner, as above. -ENOENT when the process wrote none.
 */
int dcp_perfmap_open_for(pid_t pid, uid_t owner);

#endif
