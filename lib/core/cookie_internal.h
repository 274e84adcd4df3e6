/* SPDX-License-Identifier: MIT */
/*
 * The cookie table: file identities (and named special regions) to small
 * integers, with the paths they were seen under, the marks set by --only
 * and the handles that pin sampled files.
 */
#ifndef DCPROF_COOKIE_INTERNAL_H
#define DCPROF_COOKIE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dcprof/dcprof.h"

/* What identifies a file: its build id when it has one, else dev+inode. */
struct dcp_file_id {
	uint8_t build_id[DCP_BUILD_ID_MAX];
	uint8_t build_id_size; /* 0: use dev/ino/generation */
	uint32_t dev_major, dev_minor;
	uint64_t ino, ino_generation;
};

/* dcp_cookie_table_new() and _free() are public: dcprof/dcprof.h. */

/* The file identity a cookie's description carries. */
void dcp_file_id_from_info(struct dcp_file_id *id,
			   const struct dcp_cookie_info *info);
/* Whether two identities are one file: the build id when there is one,
 * else device, inode and generation. */
bool dcp_file_id_equal(const struct dcp_file_id *a,
		       const struct dcp_file_id *b);

/*
 * The cookie of a file identity, created on first use. path (may be NULL)
 * is added to the cookie's paths when not already there. Lookup is O(1)
 * on average: this runs for every MMAP2 record. Returns the cookie (> 0)
 * or a negative errno.
 */
int64_t dcp_cookie_table_intern_file(struct dcp_cookie_table *t,
				     const struct dcp_file_id *id,
				     const char *path);

/* The cookie of a file identity already interned, or -1: nothing is added. */
int64_t dcp_cookie_table_find_file(const struct dcp_cookie_table *t,
				   const struct dcp_file_id *id);

/*
 * The cookie of a named object without a file identity of its own: the
 * kernel image, a module (name is the module name), [vdso], [vsyscall],
 * anonymous executable memory, JIT, idle. One cookie per (kind, name).
 * For kernel and modules, id may carry the build id (else NULL).
 */
int64_t dcp_cookie_table_intern_special(struct dcp_cookie_table *t,
					enum dcp_cookie_kind kind,
					const char *name,
					const struct dcp_file_id *id);

/*
 * Insert a cookie with a given number, as read back from a profile file;
 * info->paths are copied. Numbers may arrive in any order; a repeated
 * number replaces the earlier entry (later chunks carry more paths).
 */
int dcp_cookie_table_insert(struct dcp_cookie_table *t,
			    const struct dcp_cookie_info *info);

/* Whether the table describes cookie (a cheap dcp_cookie_table_lookup). */
bool dcp_cookie_table_has(const struct dcp_cookie_table *t, uint32_t cookie);

/* Marking (--only). A mark by identity applies to existing cookies too. */
int dcp_cookie_table_mark_id(struct dcp_cookie_table *t,
			     const struct dcp_file_id *id);
/*
 * A path or a hex build id, as given to --only: a path is stat'ed and its
 * build id read, so the mark matches the file under any name.
 */
int dcp_cookie_table_mark_arg(struct dcp_cookie_table *t, const char *arg);
bool dcp_cookie_table_has_marks(const struct dcp_cookie_table *t);
bool dcp_cookie_table_is_marked(const struct dcp_cookie_table *t,
				uint32_t cookie);
bool dcp_cookie_table_id_is_marked(const struct dcp_cookie_table *t,
				   const struct dcp_file_id *id);

/* Leaf-frame sample count per cookie (also filled in by the reader). */
void dcp_cookie_table_add_samples(struct dcp_cookie_table *t, uint32_t cookie,
				  uint64_t n);

/*
 * A new period of a continuous recording (its own profile file): the
 * per-cookie counts start again from 0, and a cookie made before is
 * reported again by dcp_cookie_table_take_dirty() only once
 * dcp_cookie_table_want() asks for it (a stack of the period names it),
 * so that a period's working file holds the cookies it uses, not every
 * file the recorder ever saw.
 */
void dcp_cookie_table_new_period(struct dcp_cookie_table *t);
/* Queue cookie for the current period's file unless it already was. */
int dcp_cookie_table_want(struct dcp_cookie_table *t, uint32_t cookie);

/* User stacks whose frame-pointer chain broke after a frame of cookie
 * (the recorder's count per file); returns the new count, 0: no cookie. */
uint64_t dcp_cookie_table_add_fp_breaks(struct dcp_cookie_table *t,
					uint32_t cookie, uint64_t n);

/*
 * Pinning: the table takes ownership of fd (closed by _free) as the handle
 * through which the cookie's file is read when symbols are resolved, even
 * after it was deleted or replaced. A second pin of the same cookie closes
 * the new fd and returns 0; a pin past the bound set closes fd, is counted
 * and returns -EMFILE (no message: the count says it).
 */
int dcp_cookie_table_pin(struct dcp_cookie_table *t, uint32_t cookie, int fd);
/* At most max pinned handles (0: no bound); those refused, counted. */
void dcp_cookie_table_set_max_pinned(struct dcp_cookie_table *t, size_t max);
uint64_t dcp_cookie_table_pins_refused(const struct dcp_cookie_table *t);
int dcp_cookie_table_pinned_fd(const struct dcp_cookie_table *t,
			       uint32_t cookie); /* -1 if none */
bool dcp_cookie_table_pin_tried(const struct dcp_cookie_table *t,
				uint32_t cookie);
void dcp_cookie_table_set_pin_tried(struct dcp_cookie_table *t,
				    uint32_t cookie);
/* A set of cookies: has[cookie] for the cookies below n, none above. */
struct dcp_cookie_set {
	bool *has;
	size_t n;
};

static inline bool dcp_cookie_set_has(const struct dcp_cookie_set *s,
				      uint32_t cookie)
{
	return cookie < s->n && s->has[cookie];
}

/* cookie into s (a cookie above s->n, made since s was, is left out). */
static inline void dcp_cookie_set_add(struct dcp_cookie_set *s, uint32_t cookie)
{
	if (cookie < s->n)
		s->has[cookie] = true;
}

/*
 * Close the pins of the cookies not in needed and let them be pinned
 * again: the number closed. A continuous recording keeps only the files
 * its next period may name; a file sampled again is pinned again through
 * its process.
 */
size_t dcp_cookie_table_unpin_unneeded(struct dcp_cookie_table *t,
				       const struct dcp_cookie_set *needed);
/* How many cookies hold a pinned handle. */
size_t dcp_cookie_table_nr_pinned(const struct dcp_cookie_table *t);

/*
 * Writers persist cookies incrementally: every cookie created or given a
 * new path since the last call is reported once. Returns how many were
 * stored into out (at most max); call until it returns 0.
 */
size_t dcp_cookie_table_take_dirty(struct dcp_cookie_table *t, uint32_t *out,
				   size_t max);

#endif
