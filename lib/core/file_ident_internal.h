/* SPDX-License-Identifier: MIT */
/*
 * The identities of mapped files by (device, inode), read once per walk,
 * or once while a long-lived cache holds the file open: what the
 * collection's MMAP2 records carry (lib/core/file_ident.c).
 */
#ifndef DCPROF_FILE_IDENT_INTERNAL_H
#define DCPROF_FILE_IDENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cookie_internal.h"
#include "index.h"

struct dcp_ident_entry {
	uint32_t maj, min;
	uint64_t ino;
	struct dcp_file_id id;
	int fd; /* held_max: the file held open, else -1 */
};

/*
 * Entries in order of first sight, found through an index; zeroed is
 * empty. A walk's
 * cache trusts (device, inode) for the walk's short time. A cache that
 * outlives walks (held_max > 0) trusts an entry only while it holds the
 * file open, as then no other file can get its inode number; at held_max
 * files it starts again empty.
 */
struct dcp_ident_cache {
	struct dcp_ident_entry *e;
	size_t nr, cap;
	struct dcp_index index; /* allocated with the first entry */
	size_t held, held_max;
	/* times the cache let every file go for want of room: what a user
	 * relies on its holding (an inode number's file) is gone then */
	unsigned int resets;
};

/* A new descriptor of the mapped file, or a negative errno. */
typedef int (*dcp_ident_open_fn)(void *ctx);

/*
 * The identity of the file (maj, min, ino): build id, else device, inode
 * and inode generation. The first time, the file is read through
 * open_file(ctx); a file that cannot be opened keeps device and inode only.
 * *out stays valid until a call adds another file (the entries may move)
 * or the cache is freed. 0 or -ENOMEM.
 */
int dcp_ident_cache_get(struct dcp_ident_cache *c, uint32_t maj, uint32_t min,
			uint64_t ino, dcp_ident_open_fn open_file, void *ctx,
			const struct dcp_file_id **out);

/*
 * The identity of (maj, min, ino) if the cache has it and may trust it,
 * else NULL: nothing is opened. Valid as dcp_ident_cache_get()'s *out.
 */
const struct dcp_file_id *dcp_ident_cache_find(const struct dcp_ident_cache *c,
					       uint32_t maj, uint32_t min,
					       uint64_t ino);

/*
 * A new descriptor of the file (maj, min, ino) that the cache holds open,
 * for a reader whose process is gone; -ENOENT when it holds none.
 */
int dcp_ident_cache_dup(const struct dcp_ident_cache *c, uint32_t maj,
			uint32_t min, uint64_t ino);

/* Whether fd is the file (maj, min, ino): a path may name another file now. */
bool dcp_ident_fd_is(int fd, uint32_t maj, uint32_t min, uint64_t ino);

/*
 * Close the files held for entries that keep(id, ctx) does not want: those
 * entries are no longer trusted and are read again when asked for. How
 * many were closed.
 */
size_t dcp_ident_cache_release(struct dcp_ident_cache *c,
			       bool (*keep)(const struct dcp_file_id *id,
					    void *ctx),
			       void *ctx);

void dcp_ident_cache_free(struct dcp_ident_cache *c);

#endif
