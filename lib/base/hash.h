/* SPDX-License-Identifier: MIT */
/*
 * Hashing for every table of the project: FNV-1a over bytes and strings,
 * the murmur3 64-bit finalizer that spreads their low bits before they
 * are used to pick a slot, and dcp_hash_mix for keys made of integers.
 */
#ifndef DCPROF_BASE_HASH_H
#define DCPROF_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define DCP_FNV_OFFSET 0xcbf29ce484222325ull
#define DCP_FNV_PRIME 0x100000001b3ull
/* 2^64 divided by the golden ratio: odd, its multiples of small integers
 * differ in their high bits. */
#define DCP_HASH_GOLDEN 0x9e3779b97f4a7c15ull

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

/*
 * The hash of integer words: h (a hash so far, or a first word) with v
 * folded in, every bit of both affecting every bit of the result. Chained
 * for keys of more than two words.
 */
static inline uint64_t dcp_hash_mix(uint64_t h, uint64_t v)
{
	return dcp_hash_fmix64(h ^ dcp_hash_fmix64(v + DCP_HASH_GOLDEN));
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

/* The hash of a NUL-terminated string for a table: FNV-1a, spread by
 * fmix64; *len (if given) gets its length. */
static inline uint64_t dcp_hash_string(const char *s, size_t *len)
{
	return dcp_hash_fmix64(dcp_hash_fnv1a_str(s, len));
}

#endif
