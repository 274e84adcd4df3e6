/* SPDX-License-Identifier: MIT */
/*
 * Hashing for every table of the project: FNV-1a over bytes and strings,
 * and the murmur3 64-bit finalizer that spreads their low bits before they
 * are used to pick a slot.
 */
#ifndef DCPROF_BASE_HASH_H
#define DCPROF_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define DCP_FNV_OFFSET 0xcbf29ce484222325ull
#define DCP_FNV_PRIME 0x100000001b3ull

/* murmur3's fmix64: every input bit affects every output bit. */
static inline uint64_t dcp_hash_fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* FNV-1a of n bytes, continuing from h (DCP_FNV_OFFSET to start). */
static inline uint64_t dcp_hash_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * DCP_FNV_PRIME;
	return h;
}

/* FNV-1a of a NUL-terminated string; *len (if given) gets its length. */
static inline uint64_t dcp_hash_fnv1a_str(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = DCP_FNV_OFFSET;

	while (*p)
		h = (h ^ *p++) * DCP_FNV_PRIME;
	if (len)
		*len = (size_t)(p - (const unsigned char *)s);
	return h;
}

#endif
