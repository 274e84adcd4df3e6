// SPDX-License-Identifier: MIT
/*
 * Reading a profile file (docs/FORMAT.md): the header, then every chunk
 * checked, decompressed and decoded into the profile object's cookie
 * table, aggregate and stored symbols; a torn tail ends a working file.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "format_internal.h"
#include "grow.h"
#include "log_internal.h"
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
	struct id_map strings, stacks;
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

static const uint8_t *take(struct cursor *c, size_t n)
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

static uint8_t get_u8(struct cursor *c)
{
	const uint8_t *p = take(c, 1);

	return p ? *p : 0;
}

static uint16_t get_u16(struct cursor *c)
{
	const uint8_t *p = take(c, 2);
	uint16_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 2);
	return le16toh(v);
}

static uint32_t get_u32(struct cursor *c)
{
	const uint8_t *p = take(c, 4);
	uint32_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get_u64(struct cursor *c)
{
	const uint8_t *p = take(c, 8);
	uint64_t v;

	if (!p)
		return 0;
	memcpy(&v, p, 8);
	return le64toh(v);
}

/* A string: its bytes (not NUL-terminated) in *s, NULL when missing. */
static uint32_t get_str(struct cursor *c, const uint8_t **s, bool *null)
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
static bool room_for(const struct cursor *c, uint32_t count, size_t min)
{
	return !c->bad && (uint64_t)count * min <= c->left;
}

static int corrupt(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int corrupt(struct reader *r, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return dcp_error(EBADMSG, "'%s' is corrupt: %s", r->path, why);
}

static int malformed(struct reader *r)
{
	return corrupt(r, "malformed %s chunk at offset %" PRIu64,
		       r->chunk_name, r->chunk_off);
}

static int nomem(void)
{
	return dcp_error(ENOMEM, "out of memory");
}

static int map_add(struct id_map *m, uint32_t agg_id)
{
	uint32_t *id = dcp_grow(m->id, &m->cap, m->n + 1, sizeof(*id));

	if (!id)
		return -ENOMEM;
	m->id = id;
	m->id[m->n++] = agg_id;
	return 0;
}

/* Copy n bytes to the scratch area at *used, NUL-terminated. */
static int scratch_put(struct reader *r, size_t *used, const uint8_t *s,
		       uint32_t n)
{
	char *p = dcp_grow(r->scratch, &r->scratch_cap, *used + n + 1, 1);

	if (!p)
		return -ENOMEM;
	r->scratch = p;
	if (n)
		memcpy(p + *used, s, n);
	p[*used + n] = 0;
	*used += (size_t)n + 1;
	return 0;
}

static char *dup_str(const uint8_t *s, uint32_t n)
{
	char *d = malloc((size_t)n + 1);

	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

/* META: the last one wins; fields added by later versions are skipped. */
static int read_meta(struct reader *r, struct cursor *c)
{
	struct dcp_profile_meta *m = &r->p->meta;
	const char **fields[4] = { &m->event, &m->cmdline, &m->hostname,
				   &m->kernel_release };
	char *copies[4] = { NULL };
	uint32_t flags;
	int i;

	m->start_realtime_ns = get_u64(c);
	m->duration_ns = get_u64(c);
	m->sample_period = get_u64(c);
	m->sample_freq = get_u32(c);
	m->nr_cpus = get_u32(c);
	flags = get_u32(c);
	m->callchain = flags & DCP_FMT_META_CALLCHAIN;
	for (i = 0; i < 4; i++) {
		const uint8_t *s;
		bool null;
		uint32_t n = get_str(c, &s, &null);

		if (c->bad)
			break;
		if (!null && !(copies[i] = dup_str(s, n))) {
			c->bad = true;
			break;
		}
	}
	if (c->bad) {
		for (i = 0; i < 4; i++)
			free(copies[i]);
		return malformed(r);
	}
	for (i = 0; i < 4; i++) {
		free(r->p->meta_strings[i]);
		r->p->meta_strings[i] = copies[i];
		*fields[i] = copies[i];
	}
	return 0;
}

static int read_cookie(struct reader *r, struct cursor *c)
{
	struct dcp_cookie_info ci;
	const uint8_t *bid, *s;
	size_t used = 0, name_at = 0, *path_at = NULL;
	const char **paths = NULL;
	uint32_t nr_paths, n, i;
	bool null, name_null;
	int ret;

	memset(&ci, 0, sizeof(ci));
	ci.cookie = get_u32(c);
	ci.kind = (enum dcp_cookie_kind)get_u32(c);
	ci.build_id_size = get_u8(c);
	ci.marked = get_u8(c) & DCP_FMT_COOKIE_MARKED;
	get_u16(c);
	bid = take(c, DCP_BUILD_ID_MAX);
	ci.dev_major = get_u32(c);
	ci.dev_minor = get_u32(c);
	ci.ino = get_u64(c);
	ci.ino_generation = get_u64(c);
	n = get_str(c, &s, &name_null);
	if (c->bad || ci.build_id_size > DCP_BUILD_ID_MAX)
		return malformed(r);
	/* Cookie numbers are dense and every one is written once before a
	 * higher one can be: a number far beyond the records read so far is
	 * damage, and would make the table allocate for all below it. */
	if (ci.cookie > 1024 + 2 * r->cookie_records)
		return corrupt(r,
			       "cookie %" PRIu32 " out of range in chunk at "
			       "offset %" PRIu64,
			       ci.cookie, r->chunk_off);
	r->cookie_records++;
	memcpy(ci.build_id, bid, DCP_BUILD_ID_MAX);
	if (!name_null && scratch_put(r, &used, s, n) < 0)
		return nomem();
	nr_paths = get_u32(c);
	if (!room_for(c, nr_paths, 4))
		return malformed(r);
	if (nr_paths) {
		path_at = calloc(nr_paths, sizeof(*path_at));
		paths = calloc(nr_paths, sizeof(*paths));
		if (!path_at || !paths) {
			ret = nomem();
			goto out;
		}
	}
	for (i = 0; i < nr_paths; i++) {
		n = get_str(c, &s, &null);
		if (c->bad || null) {
			ret = malformed(r);
			goto out;
		}
		path_at[i] = used;
		if (scratch_put(r, &used, s, n) < 0) {
			ret = nomem();
			goto out;
		}
	}
	/* The scratch area may have moved while it grew: point into it
	 * only now. */
	ci.name = name_null ? NULL : r->scratch + name_at;
	for (i = 0; i < nr_paths; i++)
		paths[i] = r->scratch + path_at[i];
	ci.paths = paths;
	ci.nr_paths = nr_paths;
	ret = dcp_cookie_table_insert(r->p->cookies, &ci);
	if (ret < 0 && ret != -ENOMEM)
		ret = corrupt(r,
			      "bad cookie record in chunk at offset %" PRIu64
			      ": %s",
			      r->chunk_off, dcp_last_error());
out:
	free(path_at);
	free(paths);
	return ret < 0 ? ret : 0;
}

static int read_cookies(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i;
	int ret;

	if (!room_for(c, count, sizeof(struct dcp_fmt_cookie) + 8))
		return malformed(r);
	for (i = 0; i < count; i++) {
		ret = read_cookie(r, c);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int read_strings(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, id, n;
	const uint8_t *s;
	size_t used;
	bool null;
	int64_t agg_id;

	if (!room_for(c, count, 8))
		return malformed(r);
	for (i = 0; i < count; i++) {
		id = get_u32(c);
		n = get_str(c, &s, &null);
		if (c->bad || null)
			return malformed(r);
		if (id != r->strings.n)
			return corrupt(r,
				       "string id %" PRIu32 " where %zu was "
				       "expected, in chunk at offset %" PRIu64,
				       id, r->strings.n, r->chunk_off);
		used = 0;
		if (scratch_put(r, &used, s, n) < 0)
			return nomem();
		agg_id = dcp_aggregate_intern_string(r->p->agg, r->scratch);
		if (agg_id < 0)
			return (int)agg_id;
		if (map_add(&r->strings, (uint32_t)agg_id) < 0)
			return nomem();
	}
	return 0;
}

static int read_stacks(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, j, id, nr;
	struct dcp_frame *f;
	int64_t agg_id;

	if (!room_for(c, count, sizeof(struct dcp_fmt_stack)))
		return malformed(r);
	for (i = 0; i < count; i++) {
		id = get_u32(c);
		nr = get_u32(c);
		if (!room_for(c, nr, sizeof(struct dcp_fmt_frame)))
			return malformed(r);
		if (id != r->stacks.n)
			return corrupt(r,
				       "stack id %" PRIu32 " where %zu was "
				       "expected, in chunk at offset %" PRIu64,
				       id, r->stacks.n, r->chunk_off);
		f = dcp_grow(r->frames, &r->frames_cap, nr ? nr : 1,
			     sizeof(*f));
		if (!f)
			return nomem();
		r->frames = f;
		for (j = 0; j < nr; j++) {
			f[j].cookie = get_u32(c);
			f[j].flags = get_u32(c);
			f[j].offset = get_u64(c);
		}
		agg_id = dcp_aggregate_intern_stack(r->p->agg, f, nr);
		if (agg_id < 0)
			return (int)agg_id;
		if (map_add(&r->stacks, (uint32_t)agg_id) < 0)
			return nomem();
	}
	return 0;
}

/* Rows may only name strings and stacks of earlier chunks: the writer
 * puts those first, so even a torn file keeps to this. */
static int read_rows(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i;
	struct dcp_row_key key;
	uint64_t n;
	int ret;

	if (!room_for(c, count, sizeof(struct dcp_fmt_row)))
		return malformed(r);
	for (i = 0; i < count; i++) {
		key.comm_id = get_u32(c);
		key.pid = get_u32(c);
		key.stack_id = get_u32(c);
		get_u32(c);
		n = get_u64(c);
		if (c->bad)
			return malformed(r);
		if (key.comm_id >= r->strings.n || key.stack_id >= r->stacks.n)
			return corrupt(r,
				       "row refers to unknown %s %" PRIu32
				       ", in chunk at offset %" PRIu64,
				       key.comm_id >= r->strings.n ? "string" :
								     "stack",
				       key.comm_id >= r->strings.n ?
					       key.comm_id :
					       key.stack_id,
				       r->chunk_off);
		key.comm_id = r->strings.id[key.comm_id];
		key.stack_id = r->stacks.id[key.stack_id];
		ret = dcp_aggregate_add(r->p->agg, &key, n);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int demangle_entry(struct reader *r, uint32_t cookie, uint64_t offset,
			  const char *name)
{
	char *d = r->demangle ? r->demangle(name) : NULL;
	int ret;

	if (!d)
		return 0;
	ret = dcp_symtab_set_detail(r->p->symbols, cookie, offset, d, NULL,
				    0, NULL, 0);
	free(d);
	return ret;
}

static int read_symbols(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, cookie, flags, n;
	uint64_t offset, start, size;
	const uint8_t *s;
	size_t used;
	bool null;
	int ret;

	if (!room_for(c, count, sizeof(struct dcp_fmt_symbol) + 4))
		return malformed(r);
	for (i = 0; i < count; i++) {
		cookie = get_u32(c);
		flags = get_u32(c);
		offset = get_u64(c);
		start = get_u64(c);
		size = get_u64(c);
		n = get_str(c, &s, &null);
		if (c->bad)
			return malformed(r);
		if (!(flags & DCP_FMT_SYMBOL_RESOLVED) || null) {
			ret = dcp_symtab_add(r->p->symbols, cookie, offset,
					     NULL, start, size);
		} else {
			used = 0;
			if (scratch_put(r, &used, s, n) < 0)
				return nomem();
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
		return malformed(r);
	if (null)
		return 0;
	*at = *used;
	return scratch_put(r, used, s, n) < 0 ? nomem() : 0;
}

static const char *scratch_at(struct reader *r, size_t at)
{
	return at == SIZE_MAX ? NULL : r->scratch + at;
}

static int read_symbol_details(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, j, cookie, line, nr;
	struct dcp_inline_frame *inl = NULL;
	size_t *at = NULL, used, dm_at, file_at;
	uint64_t offset;
	int ret = 0;

	if (!room_for(c, count, sizeof(struct dcp_fmt_symbol_detail) + 16))
		return malformed(r);
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
			ret = malformed(r);
			break;
		}
		free(at);
		free(inl);
		at = calloc((size_t)nr * 3 + 1, sizeof(*at));
		inl = calloc(nr + 1, sizeof(*inl));
		if (!at || !inl) {
			ret = nomem();
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
			ret = malformed(r);
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
			ret = corrupt(r,
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

/* STATS: fields beyond the ones known here are skipped, missing ones are
 * zero; the last chunk wins. */
static int read_stats(struct reader *r, struct cursor *c)
{
	uint64_t v[DCP_FMT_NR_STATS] = { 0 };
	uint32_t n = get_u32(c), i;

	if (!room_for(c, n, 8))
		return malformed(r);
	for (i = 0; i < n && i < DCP_FMT_NR_STATS; i++)
		v[i] = get_u64(c);
	memcpy(&r->p->stats, v, sizeof(v));
	return 0;
}

static const char *chunk_name(uint32_t type)
{
	switch (type) {
	case DCP_FMT_CHUNK_META:
		return "META";
	case DCP_FMT_CHUNK_COOKIES:
		return "COOKIES";
	case DCP_FMT_CHUNK_STRINGS:
		return "STRINGS";
	case DCP_FMT_CHUNK_STACKS:
		return "STACKS";
	case DCP_FMT_CHUNK_ROWS:
		return "ROWS";
	case DCP_FMT_CHUNK_STATS:
		return "STATS";
	case DCP_FMT_CHUNK_SYMBOLS:
		return "SYMBOLS";
	case DCP_FMT_CHUNK_END:
		return "END";
	case DCP_FMT_CHUNK_SYMBOL_DETAILS:
		return "SYMBOL_DETAILS";
	case DCP_FMT_CHUNK_SUMMARY_STACKS:
		return "SUMMARY_STACKS";
	case DCP_FMT_CHUNK_SUMMARY_ROWS:
		return "SUMMARY_ROWS";
	case DCP_FMT_CHUNK_SUMMARY_SYMBOLS:
		return "SUMMARY_SYMBOLS";
	case DCP_FMT_CHUNK_SUMMARY_SYMBOL_DETAILS:
		return "SUMMARY_SYMBOL_DETAILS";
	}
	return "unknown";
}

static int read_payload(struct reader *r, uint32_t type, const uint8_t *p,
			size_t n)
{
	struct cursor c = { .p = p, .left = n };
	int ret;

	switch (type) {
	case DCP_FMT_CHUNK_META:
		return read_meta(r, &c);
	case DCP_FMT_CHUNK_COOKIES:
		ret = read_cookies(r, &c);
		break;
	case DCP_FMT_CHUNK_STRINGS:
		ret = read_strings(r, &c);
		break;
	case DCP_FMT_CHUNK_STACKS:
		ret = read_stacks(r, &c);
		break;
	case DCP_FMT_CHUNK_ROWS:
		ret = read_rows(r, &c);
		break;
	case DCP_FMT_CHUNK_SYMBOLS:
		ret = read_symbols(r, &c);
		break;
	case DCP_FMT_CHUNK_SYMBOL_DETAILS:
		ret = read_symbol_details(r, &c);
		break;
	case DCP_FMT_CHUNK_STATS:
		return read_stats(r, &c);
	case DCP_FMT_CHUNK_END:
		r->end_seen = true;
		ret = 0;
		break;
	default:
		/* A later version's chunk: skipped, by design. */
		return 0;
	}
	/* Record chunks end with their last record. */
	if (ret == 0 && c.left)
		return malformed(r);
	return ret;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--) {
		if (*p++)
			return false;
	}
	return true;
}

/*
 * A working file ends where its writer stopped. A chunk cut short, or one
 * whose bytes were not all written before a crash (bad checksum, and only
 * it or zeros after it), is the tail of an unfinished flush: it and what
 * follows are dropped with a warning, and reading stops there.
 */
static int torn_tail(struct reader *r, uint64_t off, const char *why)
{
	dcp_log(DCP_LOG_WARN,
		"'%s': ignoring the last %" PRIu64
		" bytes, from offset %" PRIu64
		" (%s): the recorder stopped while writing them",
		r->path, (uint64_t)r->size - off, off, why);
	return 0;
}

static bool plausible(const struct dcp_fmt_chunk *h)
{
	uint32_t flags = le32toh(h->flags);

	return !(flags & ~DCP_FMT_CHUNK_KNOWN_FLAGS) && h->reserved == 0 &&
	       ((flags & (DCP_FMT_CHUNK_DEFLATE | DCP_FMT_CHUNK_ZSTD)) ||
		h->raw_size == h->payload_size);
}

/* A compressed payload into r->inflated: exactly raw_size bytes from all
 * psize stored bytes, or the chunk is corrupt. */
static int decompress(struct reader *r, uint32_t flags, const uint8_t *payload,
		      uint64_t psize, uint64_t raw_size)
{
	bool ok;

	if (flags == (DCP_FMT_CHUNK_DEFLATE | DCP_FMT_CHUNK_ZSTD))
		return corrupt(r,
			       "chunk at offset %" PRIu64
			       " claims two compressions",
			       r->chunk_off);
	/* deflate never expands more than 1032:1; a zstd frame states its
	 * size, checked before anything is allocated for it */
	if (raw_size > DCP_FMT_MAX_RAW ||
	    ((flags & DCP_FMT_CHUNK_DEFLATE) && raw_size > psize * 1032 + 64) ||
	    ((flags & DCP_FMT_CHUNK_ZSTD) &&
	     ZSTD_getFrameContentSize(payload, psize) != raw_size))
		return corrupt(r,
			       "chunk at offset %" PRIu64 " claims %" PRIu64
			       " bytes",
			       r->chunk_off, raw_size);
	if (raw_size > r->inflated_cap) {
		uint8_t *q = realloc(r->inflated, raw_size);

		if (!q)
			return nomem();
		r->inflated = q;
		r->inflated_cap = raw_size;
	}
	if (flags & DCP_FMT_CHUNK_DEFLATE) {
		uLongf out_len = (uLongf)raw_size;
		uLong in_len = (uLong)psize;

		ok = uncompress2(r->inflated, &out_len, payload, &in_len) ==
			     Z_OK &&
		     out_len == raw_size && in_len == psize;
	} else {
		size_t n;

		if (!r->zstd && !(r->zstd = ZSTD_createDCtx()))
			return nomem();
		n = ZSTD_decompressDCtx(r->zstd, r->inflated, raw_size, payload,
					psize);
		ok = !ZSTD_isError(n) && n == raw_size;
	}
	if (!ok)
		return corrupt(
			r, "chunk at offset %" PRIu64 " does not decompress",
			r->chunk_off);
	return 0;
}

/*
 * The type a chunk is read as: a profile is read either whole or as its
 * summary, whose chunks hold the same records as the full ones and stand
 * in for them. 0: the chunk is not read (it belongs to the other form).
 */
static uint32_t chunk_type_read(const struct reader *r, uint32_t type)
{
	static const uint32_t full[] = { DCP_FMT_CHUNK_STACKS,
					 DCP_FMT_CHUNK_ROWS,
					 DCP_FMT_CHUNK_SYMBOLS,
					 DCP_FMT_CHUNK_SYMBOL_DETAILS };
	static const uint32_t summary[] = {
		DCP_FMT_CHUNK_SUMMARY_STACKS, DCP_FMT_CHUNK_SUMMARY_ROWS,
		DCP_FMT_CHUNK_SUMMARY_SYMBOLS,
		DCP_FMT_CHUNK_SUMMARY_SYMBOL_DETAILS
	};

	for (size_t i = 0; i < sizeof(full) / sizeof(full[0]); i++) {
		if (type == full[i])
			return r->summary ? 0 : type;
		if (type == summary[i])
			return r->summary ? full[i] : 0;
	}
	return type;
}

/* Whether the chunks of a compact file include a summary; only their
 * headers are looked at (read_chunks checks everything). */
static bool has_summary(const struct reader *r, uint64_t off)
{
	struct dcp_fmt_chunk h;

	while (off <= r->size && r->size - off >= sizeof(h)) {
		uint64_t left, psize;

		memcpy(&h, r->data + off, sizeof(h));
		if (le32toh(h.type) == DCP_FMT_CHUNK_SUMMARY_ROWS)
			return true;
		left = r->size - off - sizeof(h);
		psize = le64toh(h.payload_size);
		if (psize > left || dcp_fmt_pad(psize) > left)
			break;
		off += sizeof(h) + dcp_fmt_pad(psize);
	}
	return false;
}

static int read_chunks(struct reader *r, uint64_t off, bool complete)
{
	struct dcp_fmt_chunk h;
	uint64_t psize, raw_size, padded, left;
	const uint8_t *payload;
	uint32_t type, flags;
	int ret;

	while (off < r->size) {
		r->chunk_off = off;
		if (r->end_seen)
			return corrupt(r,
				       "data after the END chunk, at offset "
				       "%" PRIu64,
				       off);
		left = r->size - off;
		if (left < sizeof(h)) {
			if (complete)
				return corrupt(r,
					       "chunk at offset %" PRIu64
					       " is cut short",
					       off);
			return torn_tail(r, off, "cut short");
		}
		memcpy(&h, r->data + off, sizeof(h));
		type = le32toh(h.type);
		flags = le32toh(h.flags);
		psize = le64toh(h.payload_size);
		raw_size = le64toh(h.raw_size);
		if (psize > left - sizeof(h) ||
		    dcp_fmt_pad(psize) > left - sizeof(h)) {
			/* In a finished file the size matched the header:
			 * the length is damaged. In a working file this is
			 * the chunk the recorder was writing, if its header
			 * is one a writer could have made (a cut keeps the
			 * header whole; random bytes hardly ever pass). */
			if (complete || !plausible(&h))
				return corrupt(r,
					       "chunk at offset %" PRIu64
					       " runs past the end of the "
					       "file",
					       off);
			return torn_tail(r, off, "cut short");
		}
		padded = dcp_fmt_pad(psize);
		payload = r->data + off + sizeof(h);
		if (le32toh(h.crc32) != dcp_fmt_chunk_crc(&h, payload, psize)) {
			uint64_t next = off + sizeof(h) + padded;

			if (!complete &&
			    (next == r->size ||
			     all_zero(r->data + off, r->size - off)))
				return torn_tail(r, off, "bad checksum");
			return dcp_error(EBADMSG,
					 "'%s' is corrupt: bad checksum in "
					 "chunk at offset %" PRIu64,
					 r->path, off);
		}
		if (!all_zero(payload + psize, padded - psize))
			return corrupt(r,
				       "non-zero padding after chunk at "
				       "offset %" PRIu64,
				       off);
		if (flags & ~DCP_FMT_CHUNK_KNOWN_FLAGS)
			return corrupt(r,
				       "unknown flags 0x%" PRIx32
				       " in chunk at offset %" PRIu64,
				       flags, off);
		r->chunk_name = chunk_name(type);
		type = chunk_type_read(r, type);
		if (!type) {
			/* checked, not wanted: not even decompressed */
		} else if (flags &
			   (DCP_FMT_CHUNK_DEFLATE | DCP_FMT_CHUNK_ZSTD)) {
			ret = decompress(r, flags, payload, psize, raw_size);
			if (ret == 0)
				ret = read_payload(r, type, r->inflated,
						   raw_size);
		} else {
			if (raw_size != psize)
				return corrupt(r,
					       "chunk at offset %" PRIu64
					       " has sizes %" PRIu64
					       " and %" PRIu64,
					       off, psize, raw_size);
			ret = read_payload(r, type, payload, psize);
		}
		if (ret < 0)
			return ret;
		off += sizeof(h) + padded;
	}
	return 0;
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
	size_t cap = 1 << 16, len = 0;
	struct stat st;
	uint8_t *buf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dcp_error(errno, "cannot open '%s': %s", path,
				 strerror(errno));
	/* The size is a hint only: the file is read to its end. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < SIZE_MAX - 1)
		cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return nomem();
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			uint8_t *q = cap < SIZE_MAX / 2 ?
					     realloc(buf, cap * 2) :
					     NULL;

			if (!q) {
				free(buf);
				close(fd);
				return nomem();
			}
			buf = q;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			free(buf);
			close(fd);
			return dcp_error(err, "cannot read '%s': %s", path,
					 strerror(err));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*data = buf;
	*size = len;
	return 0;
}

static int read_header(struct reader *r, uint64_t *first_chunk, bool *complete)
{
	struct dcp_fmt_header h;
	uint32_t version, hsize;
	uint64_t file_size;

	if (r->size == 0)
		return dcp_error(EINVAL, "'%s' is empty", r->path);
	if (memcmp(r->data, DCP_FMT_MAGIC,
		   r->size < DCP_FMT_MAGIC_SIZE ? r->size :
						  DCP_FMT_MAGIC_SIZE) != 0)
		return dcp_error(EINVAL, "'%s' is not a dcprof profile",
				 r->path);
	if (r->size < sizeof(h))
		return dcp_error(EINVAL,
				 "'%s' is truncated (%zu of at least %zu "
				 "bytes)",
				 r->path, r->size, sizeof(h));
	memcpy(&h, r->data, sizeof(h));
	version = le32toh(h.version);
	if (version != DCP_FMT_VERSION)
		return dcp_error(ENOTSUP,
				 "'%s' is a version %" PRIu32
				 " profile; this dcprof reads version %u",
				 r->path, version, DCP_FMT_VERSION);
	hsize = le32toh(h.header_size);
	if (hsize < sizeof(h) || hsize % DCP_FMT_ALIGN || hsize > r->size)
		return corrupt(r, "bad header size %" PRIu32, hsize);
	if (le32toh(h.header_crc32) !=
	    dcp_fmt_header_crc(&h, r->data + sizeof(h), hsize - sizeof(h)))
		return corrupt(r, "bad header checksum");
	*complete = le64toh(h.flags) & DCP_FMT_COMPLETE;
	file_size = le64toh(h.file_size);
	if (*complete && file_size != r->size) {
		if (file_size > r->size)
			return dcp_error(EINVAL,
					 "'%s' is truncated (%llu of %llu "
					 "bytes)",
					 r->path, (unsigned long long)r->size,
					 (unsigned long long)file_size);
		return corrupt(r, "%zu bytes where the header says %" PRIu64,
			       r->size, file_size);
	}
	*first_chunk = hsize;
	r->p->meta.version = version;
	r->p->created_ns = le64toh(h.created_realtime_ns);
	return 0;
}

/* Leaf-frame samples per cookie; frames should name cookies the file
 * describes. */
static void count_cookie_samples(struct reader *r)
{
	const struct dcp_aggregate *agg = r->p->agg;
	struct dcp_cookie_table *t = r->p->cookies;
	size_t n = dcp_aggregate_nr_rows(agg), i;
	const struct dcp_frame *f;
	struct dcp_row_key key;
	uint64_t count, unknown = 0;
	uint32_t nr, j;

	for (i = 0; i < n; i++) {
		dcp_aggregate_row(agg, i, &key, &count);
		f = dcp_aggregate_stack(agg, key.stack_id, &nr);
		if (nr)
			dcp_cookie_table_add_samples(t, f[0].cookie, count);
	}
	n = dcp_aggregate_nr_stacks(agg);
	for (i = 0; i < n; i++) {
		f = dcp_aggregate_stack(agg, (uint32_t)i, &nr);
		for (j = 0; j < nr; j++) {
			if (f[j].cookie != DCP_COOKIE_UNKNOWN &&
			    !dcp_cookie_table_has(t, f[j].cookie))
				unknown++;
		}
	}
	/* Not fatal: report code shows such frames as unknown objects. */
	if (unknown)
		dcp_log(DCP_LOG_WARN,
			"'%s': %" PRIu64 " frames name cookies the file does "
			"not describe",
			r->path, unknown);
}

struct dcp_profile *dcp_profile_read(const char *path, bool want_summary,
				     dcp_demangle_fn demangle)
{
	struct reader r = { .path = path, .demangle = demangle };
	uint8_t *data = NULL;
	uint64_t first = 0;
	bool complete = false;
	int ret;

	r.p = calloc(1, sizeof(*r.p));
	if (!r.p)
		return dcp_error_null(ENOMEM, "out of memory");
	r.p->cookies = dcp_cookie_table_new();
	r.p->agg = dcp_aggregate_new();
	r.p->symbols = dcp_symtab_new();
	if (!r.p->cookies || !r.p->agg || !r.p->symbols) {
		ret = nomem();
		goto fail;
	}
	ret = read_file(path, &data, &r.size);
	if (ret < 0)
		goto fail;
	r.data = data;
	ret = read_header(&r, &first, &complete);
	/* Only a compact file vouches that its summary covers every row. */
	r.summary =
		ret == 0 && want_summary && complete && has_summary(&r, first);
	r.p->summary = r.summary;
	if (ret == 0)
		ret = read_chunks(&r, first, complete);
	if (ret == 0 && complete && !r.end_seen)
		ret = corrupt(&r, "no END chunk");
	if (ret < 0)
		goto fail;
	r.p->meta.complete = r.end_seen;
	count_cookie_samples(&r);
	ret = 0;
fail:
	free(data);
	free(r.strings.id);
	free(r.stacks.id);
	free(r.inflated);
	ZSTD_freeDCtx(r.zstd);
	free(r.scratch);
	free(r.frames);
	if (ret < 0) {
		dcp_profile_close(r.p);
		errno = -ret;
		return NULL;
	}
	return r.p;
}

DCPROF_API void dcp_profile_close(struct dcp_profile *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < 4; i++)
		free(p->meta_strings[i]);
	dcp_cookie_table_free(p->cookies);
	dcp_aggregate_free(p->agg);
	dcp_symtab_free(p->symbols);
	free(p);
}

DCPROF_API bool dcp_profile_is_summary(const struct dcp_profile *p)
{
	return p->summary;
}

DCPROF_API const struct dcp_profile_meta *
dcp_profile_meta(const struct dcp_profile *p)
{
	return &p->meta;
}

DCPROF_API const struct dcp_profile_stats *
dcp_profile_stats(const struct dcp_profile *p)
{
	return &p->stats;
}

DCPROF_API const struct dcp_cookie_table *
dcp_profile_cookies(const struct dcp_profile *p)
{
	return p->cookies;
}

DCPROF_API size_t dcp_profile_nr_rows(const struct dcp_profile *p)
{
	return dcp_aggregate_nr_rows(p->agg);
}

DCPROF_API int dcp_profile_row(const struct dcp_profile *p, size_t i,
			       struct dcp_sample_row *row)
{
	struct dcp_row_key key;
	uint64_t count;

	if (i >= dcp_aggregate_nr_rows(p->agg))
		return dcp_error(ERANGE, "no row %zu: the profile has %zu", i,
				 dcp_aggregate_nr_rows(p->agg));
	dcp_aggregate_row(p->agg, i, &key, &count);
	row->comm = dcp_aggregate_string(p->agg, key.comm_id);
	row->pid = key.pid;
	row->frames =
		dcp_aggregate_stack(p->agg, key.stack_id, &row->nr_frames);
	row->count = count;
	return 0;
}

DCPROF_API int dcp_profile_symbol(const struct dcp_profile *p, uint32_t cookie,
				  uint64_t offset, struct dcp_symbol *sym)
{
	if (dcp_symtab_lookup(p->symbols, cookie, offset, sym) < 0)
		return dcp_error(ENOENT,
				 "no symbol stored for cookie %" PRIu32
				 " offset 0x%" PRIx64,
				 cookie, offset);
	return 0;
}

DCPROF_API int dcp_profile_symbol_inline(const struct dcp_profile *p,
					 uint32_t cookie, uint64_t offset,
					 uint32_t i,
					 struct dcp_inline_frame *out)
{
	if (dcp_symtab_inline(p->symbols, cookie, offset, i, out) < 0)
		return dcp_error(ENOENT,
				 "no inlined call %" PRIu32
				 " at cookie %" PRIu32 " offset 0x%" PRIx64,
				 i, cookie, offset);
	return 0;
}

DCPROF_API int dcp_profile_frame_expand(const struct dcp_profile *p,
					const struct dcp_frame *f,
					struct dcp_expanded_frame *out,
					size_t max)
{
	struct dcp_inline_frame inl;
	struct dcp_symbol sym;
	uint32_t k;

	if (dcp_symtab_lookup(p->symbols, f->cookie, f->offset, &sym) < 0 ||
	    !sym.name) {
		if (max)
			memset(out, 0, sizeof(*out));
		return 1;
	}
	if (max) {
		out[0].name = sym.demangled ? sym.demangled : sym.name;
		out[0].raw_name = sym.name;
		out[0].file = sym.file;
		out[0].line = sym.line;
		out[0].is_inline = false;
	}
	/* Stored innermost first; expanded outermost first. */
	for (k = 1; k <= sym.nr_inline && k < max; k++) {
		dcp_symtab_inline(p->symbols, f->cookie, f->offset,
				  sym.nr_inline - k, &inl);
		out[k].raw_name = inl.name;
		out[k].name = inl.demangled ? inl.demangled : inl.name;
		out[k].file = inl.file;
		out[k].line = inl.line;
		out[k].is_inline = true;
	}
	return (int)(1 + sym.nr_inline);
}

DCPROF_API int dcp_profile_save(const struct dcp_profile *p, const char *path)
{
	if (p->summary)
		return dcp_error(EINVAL,
				 "cannot write '%s': only the profile's "
				 "summary was read",
				 path);
	/* A compact file says the recorder finished: an incomplete profile
	 * must not be turned into one. */
	if (!p->meta.complete)
		return dcp_error(EINVAL,
				 "cannot write '%s': the profile is incomplete "
				 "(its recorder did not finish)",
				 path);
	return dcp_profile_write_compact(path, p->created_ns, &p->meta,
					 p->cookies, p->agg, p->symbols,
					 &p->stats);
}
