// SPDX-License-Identifier: MIT
/*
 * Decoding a profile's stored symbols: the SYMBOLS chunk (names by cookie
 * and offset, demangled here for files older than SYMBOL_DETAILS) and the
 * SYMBOL_DETAILS chunk (demangled names, source lines, inline chains).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "format_internal.h"
#include "log_internal.h"
#include "profile_reader_internal.h"

static int demangle_entry(struct reader *r, uint32_t cookie, uint64_t offset,
			  const char *name)
{
	char *d = r->demangle ? r->demangle(name) : NULL;
	int ret;

	if (!d)
		return 0;
	ret = dcp_symtab_set_detail(r->p->symbols, cookie, offset, d, NULL, 0,
				    NULL, 0);
	free(d);
	return ret;
}

int dcp_reader_read_symbols(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, cookie, flags, n;
	uint64_t offset, start, size;
	const uint8_t *s;
	size_t used;
	bool null;
	int ret;

	if (!room_for(c, count, sizeof(struct dcp_fmt_symbol) + 4))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		cookie = get_u32(c);
		flags = get_u32(c);
		offset = get_u64(c);
		start = get_u64(c);
		size = get_u64(c);
		n = get_str(c, &s, &null);
		if (c->bad)
			return dcp_reader_malformed(r);
		if (!(flags & DCP_FMT_SYMBOL_RESOLVED) || null) {
			ret = dcp_symtab_add(r->p->symbols, cookie, offset,
					     NULL, start, size);
		} else {
			used = 0;
			if (dcp_reader_scratch_put(r, &used, s, n) < 0)
				return dcp_reader_nomem();
			ret = dcp_symtab_add(r->p->symbols, cookie, offset,
					     r->scratch, start, size);
			/* Files written before SYMBOL_DETAILS existed:
			 * demangle here (a later detail record replaces
			 * this). */
			if (ret == 0)
				ret = demangle_entry(r, cookie, offset,
						     r->scratch);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* A string of a detail record, NUL-terminated in the scratch area at *at
 * (SIZE_MAX for a NULL string). */
static int get_scratch_str(struct reader *r, struct cursor *c, size_t *used,
			   size_t *at)
{
	const uint8_t *s;
	bool null;
	uint32_t n = get_str(c, &s, &null);

	*at = SIZE_MAX;
	if (c->bad)
		return dcp_reader_malformed(r);
	if (null)
		return 0;
	*at = *used;
	return dcp_reader_scratch_put(r, used, s, n) < 0 ? dcp_reader_nomem() :
							   0;
}

static const char *scratch_at(struct reader *r, size_t at)
{
	return at == SIZE_MAX ? NULL : r->scratch + at;
}

int dcp_reader_read_symbol_details(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, j, cookie, line, nr;
	struct dcp_inline_frame *inl = NULL;
	size_t *at = NULL, used, dm_at, file_at;
	uint64_t offset;
	int ret = 0;

	if (!room_for(c, count, sizeof(struct dcp_fmt_symbol_detail) + 16))
		return dcp_reader_malformed(r);
	for (i = 0; i < count && ret == 0; i++) {
		cookie = get_u32(c);
		get_u32(c); /* flags: none defined */
		offset = get_u64(c);
		used = 0;
		ret = get_scratch_str(r, c, &used, &dm_at);
		if (ret == 0)
			ret = get_scratch_str(r, c, &used, &file_at);
		if (ret < 0)
			break;
		line = get_u32(c);
		nr = get_u32(c);
		if (c->bad || nr > DCP_FMT_MAX_INLINE || !room_for(c, nr, 16)) {
			ret = dcp_reader_malformed(r);
			break;
		}
		free(at);
		free(inl);
		at = calloc((size_t)nr * 3 + 1, sizeof(*at));
		inl = calloc(nr + 1, sizeof(*inl));
		if (!at || !inl) {
			ret = dcp_reader_nomem();
			break;
		}
		for (j = 0; j < nr && ret == 0; j++) {
			ret = get_scratch_str(r, c, &used, &at[3 * j]);
			if (ret == 0)
				ret = get_scratch_str(r, c, &used,
						      &at[3 * j + 1]);
			if (ret == 0)
				ret = get_scratch_str(r, c, &used,
						      &at[3 * j + 2]);
			inl[j].line = get_u32(c);
		}
		if (ret < 0)
			break;
		if (c->bad) {
			ret = dcp_reader_malformed(r);
			break;
		}
		/* The scratch area may have moved while it grew. */
		for (j = 0; j < nr; j++) {
			inl[j].name = scratch_at(r, at[3 * j]);
			inl[j].demangled = scratch_at(r, at[3 * j + 1]);
			inl[j].file = scratch_at(r, at[3 * j + 2]);
		}
		ret = dcp_symtab_set_detail(
			r->p->symbols, cookie, offset, scratch_at(r, dm_at),
			scratch_at(r, file_at), line, inl, nr);
		if (ret == -ENOENT)
			ret = dcp_reader_corrupt(
				r,
				"symbol details for cookie %" PRIu32
				" offset 0x%" PRIx64
				" without a symbol, in chunk at offset "
				"%" PRIu64,
				cookie, offset, r->chunk_off);
	}
	free(at);
	free(inl);
	return ret;
}
