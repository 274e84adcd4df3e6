/* SPDX-License-Identifier: MIT */
/*
 * The symbol cache: files derived from inputs named by build id, kept
 * between recordings because deriving them again costs more than reading
 * them (see cache.c).
 */
#ifndef DCPROF_CACHE_INTERNAL_H
#define DCPROF_CACHE_INTERNAL_H

#include <stddef.h>

/* Entries are refused past this total size of the directory. */
#define DCP_CACHE_MAX_BYTES (1ull << 30)

struct dcp_cache {
	int dir_fd; /* -1: no cache */
	char *path; /* of the directory, for messages and libdwfl */
};

/*
 * Open the cache directory, creating it (0700) if needed: the directory
 * named by $DCPROF_CACHE_DIR (empty: no cache), else /var/cache/dcprof for
 * root and $XDG_CACHE_HOME/dcprof or ~/.cache/dcprof for others. A
 * directory that is a symlink, belongs to another user or is writable by
 * others is not used (one warning). Never fails: without a usable
 * directory, c->dir_fd is -1.
 */
void dcp_cache_open(struct dcp_cache *c);
void dcp_cache_close(struct dcp_cache *c);

/* An entry for reading: a regular file of ours, never through a symlink.
 * A descriptor, or a negative errno (-ENOENT: not cached). */
int dcp_cache_entry_open(const struct dcp_cache *c, const char *name);

/*
 * Start writing an entry: a new 0600 file under a temporary name, written
 * by the caller then committed (renamed over name, after fsync) or
 * aborted (removed). Returns the descriptor, open for reading and
 * writing, or a negative errno (-ENOSPC: the cache is full).
 */
int dcp_cache_entry_create(const struct dcp_cache *c, char *tmp,
			   size_t tmp_size);
int dcp_cache_entry_commit(const struct dcp_cache *c, int fd, const char *tmp,
			   const char *name);
void dcp_cache_entry_abort(const struct dcp_cache *c, int fd, const char *tmp);

#endif
