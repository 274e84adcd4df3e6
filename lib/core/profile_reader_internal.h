/* SPDX-License-Identifier: MIT */
/*
 * The profile reader's state, and what its files share: profile_read.c
 * (the header and the chunks' framing, checksums and decompression),
 * profile_decode.c and profile_decode_symbols.c (the records of each
 * chunk into the profile object).
 */
#ifndef DCPROF_PROFILE_READER_INTERNAL_H
#define DCPROF_PROFILE_READER_INTERNAL_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "format_internal.h"
#include "profile_internal.h"

/* File ids to aggregate ids: the aggregate interns, so a (hand-made)
 * file with two equal strings still maps each id somewhere valid. */
struct id_map {
	uint32_t *id;
	size_t n, cap;
};

struct reader {
	const char *path;
	struct dcp_profile *p;
	const uint8_t *data;
	size_t size;
	uint64_t chunk_off; /* of the chunk being decoded, for messages */
	const char *chunk_name;
	struct id_map strings, stacks, threads, cgroups;
	uint8_t *inflated; /* the chunk being decoded, decompressed */
	size_t inflated_cap;
	ZSTD_DCtx *zstd;
	char *scratch; /* NUL-terminated copies of strings */
	size_t scratch_cap;
	struct dcp_frame *frames;
	size_t frames_cap;
	uint64_t cookie_records;
	bool end_seen;
	bool summary; /* read the summary's chunks instead of the full ones */
	dcp_demangle_fn demangle; /* for files older than SYMBOL_DETAILS */
};

/* Bounds-checked decoding: a short read sets bad and yields zeros. */
struct cursor {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static inline const uint8_t *take(struct cursor *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || c->left < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return p;
}

static inline uint8_t get_u8(struct cursor *c)
{
	const uint8_t *p = take(c, 1);

	return p ? *p : 0;
}

static inline uint16_t get_u16(struct cursor *c)
{
	const uint8_t *p = take(c, 2);
	uint16_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 2);
	return le16toh(v);
}

static inline uint32_t get_u32(struct cursor *c)
{
	const uint8_t *p = take(c, 4);
	uint32_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint64_t get_u64(struct cursor *c)
{
	const uint8_t *p = take(c, 8);
	uint64_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 8);
	return le64toh(v);
}

/* A string: its bytes (not NUL-terminated) in *s, NULL when missing. */
static inline uint32_t get_str(struct cursor *c, const uint8_t **s, bool *null)
{
	uint32_t n = get_u32(c);

	*null = false;
	*s = NULL;
	if (c->bad)
		return 0;
	if (n == DCP_FMT_NULL_STRING) {
		*null = true;
		return 0;
	}
	*s = take(c, n);
	return *s ? n : 0;
}

/* Is there room for count records of at least min bytes each? */
static inline bool room_for(const struct cursor *c, uint32_t count, size_t min)
{
	return !c->bad && (uint64_t)count * min <= c->left;
}

/* -EBADMSG, with "'<path>' is corrupt: <why>" as the message. */
int dcp_reader_corrupt(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* -EBADMSG for the chunk being decoded. */
int dcp_reader_malformed(struct reader *r);
int dcp_reader_nomem(void);
/* Copy n bytes to the scratch area at *used, NUL-terminated. */
int dcp_reader_scratch_put(struct reader *r, size_t *used, const uint8_t *s,
			   uint32_t n);

/* The name of a chunk type, for messages ("unknown" for a later one). */
const char *dcp_fmt_chunk_name(uint32_t type);
/*
 * Decode the records of one chunk of the given type (as read: a summary
 * chunk's type when the summary stands in) from its n raw bytes.
 * A later version's chunk type is skipped. 0 or a negative errno.
 */
int dcp_reader_decode_chunk(struct reader *r, uint32_t type, const uint8_t *p,
			    size_t n);

/* profile_decode_symbols.c: SYMBOLS and SYMBOL_DETAILS. */
int dcp_reader_read_symbols(struct reader *r, struct cursor *c);
int dcp_reader_read_symbol_details(struct reader *r, struct cursor *c);

#endif
