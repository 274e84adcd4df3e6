/* SPDX-License-Identifier: MIT */
/*
 * The collection iterator's internals: cookies of decoded MMAP2 records and
 * the count of /proc system calls behind a walk.
 */
#ifndef DCPROF_COLLECT_INTERNAL_H
#define DCPROF_COLLECT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cookie_internal.h"
#include "file_ident_internal.h"
#include "records_internal.h"

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

/*
 * A walk for a recorder that reads a process's maps again whenever an
 * address is in none of them: each /proc/PID/maps is read once instead of
 * until two reads agree (a snapshot is not worth the second read), and
 * file identities come from idents, a cache that outlives the walk
 * (held_max set: it holds the files open), so that the libraries of every
 * new process are not opened and read again.
 */
void dcp_collection_for_recorder(struct dcp_collection *c,
				 struct dcp_ident_cache *idents);

/*
 * The living processes descended from the roots (their children forked
 * before now, and theirs), the roots left out, each once: a new array of
 * *nr_out pids for the caller to free (NULL when none). Read from the
 * parent links of /proc/PID/stat; a process that exits meanwhile is not
 * listed.
 */
int dcp_proc_descendants(const pid_t *roots, size_t nr_roots, pid_t **out,
			 size_t *nr_out);

#endif
