/* SPDX-License-Identifier: MIT */
/*
 * The public calls' handling of caller-allocated structs that start with
 * `size_t sz` (libbpf's OPTS_VALID): checking sz, and filling only the
 * bytes the caller's version of the struct has.
 */
#ifndef DCPROF_API_INTERNAL_H
#define DCPROF_API_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "log_internal.h"

/*
 * Whether s (a struct starting with size_t sz) is at least min bytes long
 * by its own account. min is the size of the struct at the version that
 * added its last field a caller must have: the whole struct
 * (DCP_SZ_VALID), or for a struct the library fills that has grown since,
 * its first version's size (below), so that a program built before still
 * works and gets the fields it knows (dcp_sz_copy).
 */
static inline bool dcp_sz_ok(const void *s, size_t min)
{
	size_t sz;

	if (!s)
		return false;
	memcpy(&sz, s, sizeof(sz));
	return sz >= min;
}

#define DCP_SZ_VALID(s) dcp_sz_ok((s), sizeof(*(s)))

/* The first versions of the structs that grew: up to the field added. */
#define DCP_PROFILE_STATS_FIRST_SZ \
	offsetof(struct dcp_profile_stats, samples_other_idle)
#define DCP_SNAPSHOT_INFO_FIRST_SZ offsetof(struct dcp_snapshot_info, behind_ns)
#define DCP_RESYMBOLIZE_STATS_FIRST_SZ \
	offsetof(struct dcp_resymbolize_stats, symbols_before)
#define DCP_SYMBOL_FIRST_SZ offsetof(struct dcp_symbol, flags)

/* The error for a struct whose sz fails DCP_SZ_VALID: -EINVAL. */
static inline int dcp_sz_error(const char *type, const void *s)
{
	size_t sz = 0;

	if (!s)
		return dcp_error(EINVAL, "struct %s: NULL", type);
	memcpy(&sz, s, sizeof(sz));
	return dcp_error(EINVAL,
			 "struct %s: sz is %zu, not its size (set sz = "
			 "sizeof(struct %s))",
			 type, sz, type);
}

#define DCP_SZ_ERROR(type, s) dcp_sz_error(#type, (s))

/*
 * Copy src, a struct of src_size bytes the library filled (its sz
 * ignored), into the caller's dst, whose sz stays: the first
 * min(sz, src_size) bytes, and zeros from src_size up to sz for the fields
 * of a newer header than the library's.
 */
static inline void dcp_sz_copy(void *dst, const void *src, size_t src_size)
{
	size_t sz;

	memcpy(&sz, dst, sizeof(sz));
	memcpy((char *)dst + sizeof(sz), (const char *)src + sizeof(sz),
	       (sz < src_size ? sz : src_size) - sizeof(sz));
	if (sz > src_size)
		memset((char *)dst + src_size, 0, sz - src_size);
}

/*
 * Options passed in (libbpf's OPTS_VALID): NULL is fine (the defaults); a
 * sz below sizeof(size_t) is not; bytes past the size this library knows
 * must be zero, for they ask for something it cannot do.
 */
static inline bool dcp_opts_ok(const void *opts, size_t known)
{
	size_t sz, i;

	if (!opts)
		return true;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(sz))
		return false;
	for (i = known; i < sz; i++)
		if (((const char *)opts)[i])
			return false;
	return true;
}

#define DCP_OPTS_VALID(o) dcp_opts_ok((o), sizeof(*(o)))

/* The error for options that fail DCP_OPTS_VALID: -EINVAL. */
static inline int dcp_opts_error(const char *type)
{
	return dcp_error(EINVAL,
			 "struct %s: sz too small, or fields this library "
			 "does not know are set",
			 type);
}

#define DCP_OPTS_ERROR(type) dcp_opts_error(#type)

/* The value of an options field, or dflt when opts is NULL or its sz
 * does not reach that field (libbpf's OPTS_GET). */
#define DCP_OPTS_HAS(o, f) \
	((o) && (o)->sz >= offsetof(__typeof__(*(o)), f) + sizeof((o)->f))
#define DCP_OPTS_GET(o, f, dflt) (DCP_OPTS_HAS(o, f) ? (o)->f : (dflt))

/*
 * What a public call returns: ret, with errno set to -ret when it is an
 * error, for the paths that pass on an internal function's -errno.
 */
static inline int dcp_api_ret(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

#endif
