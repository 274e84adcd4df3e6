// SPDX-License-Identifier: MIT
/*
 * Reading a profile file (docs/FORMAT.md): the header, then every chunk
 * checked, decompressed and handed to the decoders (profile_decode.c) that
 * fill the profile object's cookie table, aggregate and stored symbols; a
 * torn tail ends a working file.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "profile_reader_internal.h"

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
		return dcp_reader_corrupt(r,
					  "chunk at offset %" PRIu64
					  " claims two compressions",
					  r->chunk_off);
	/* deflate never expands more than 1032:1; a zstd frame states its
	 * size, checked before anything is allocated for it */
	if (raw_size > DCP_FMT_MAX_RAW ||
	    ((flags & DCP_FMT_CHUNK_DEFLATE) && raw_size > psize * 1032 + 64) ||
	    ((flags & DCP_FMT_CHUNK_ZSTD) &&
	     ZSTD_getFrameContentSize(payload, psize) != raw_size))
		return dcp_reader_corrupt(r,
					  "chunk at offset %" PRIu64
					  " claims %" PRIu64 " bytes",
					  r->chunk_off, raw_size);
	if (raw_size > r->inflated_cap) {
		uint8_t *q = realloc(r->inflated, raw_size);

		if (!q)
			return dcp_reader_nomem();
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
			return dcp_reader_nomem();
		n = ZSTD_decompressDCtx(r->zstd, r->inflated, raw_size, payload,
					psize);
		ok = !ZSTD_isError(n) && n == raw_size;
	}
	if (!ok)
		return dcp_reader_corrupt(
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
	static const uint32_t full[] = {
		DCP_FMT_CHUNK_STACKS,  DCP_FMT_CHUNK_ROWS,
		DCP_FMT_CHUNK_SYMBOLS, DCP_FMT_CHUNK_SYMBOL_DETAILS,
		DCP_FMT_CHUNK_THREADS, DCP_FMT_CHUNK_OFF_CPU_ROWS,
	};
	static const uint32_t summary[] = {
		DCP_FMT_CHUNK_SUMMARY_STACKS,
		DCP_FMT_CHUNK_SUMMARY_ROWS,
		DCP_FMT_CHUNK_SUMMARY_SYMBOLS,
		DCP_FMT_CHUNK_SUMMARY_SYMBOL_DETAILS,
		DCP_FMT_CHUNK_SUMMARY_THREADS,
		DCP_FMT_CHUNK_SUMMARY_OFF_CPU_ROWS,
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
			return dcp_reader_corrupt(
				r,
				"data after the END chunk, at offset "
				"%" PRIu64,
				off);
		left = r->size - off;
		if (left < sizeof(h)) {
			if (complete)
				return dcp_reader_corrupt(
					r,
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
				return dcp_reader_corrupt(
					r,
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
			return dcp_reader_corrupt(
				r,
				"non-zero padding after chunk at "
				"offset %" PRIu64,
				off);
		if (flags & ~DCP_FMT_CHUNK_KNOWN_FLAGS)
			return dcp_reader_corrupt(
				r,
				"unknown flags 0x%" PRIx32
				" in chunk at offset %" PRIu64,
				flags, off);
		r->chunk_name = dcp_fmt_chunk_name(type);
		type = chunk_type_read(r, type);
		if (!type) {
			/* checked, not wanted: not even decompressed */
		} else if (flags &
			   (DCP_FMT_CHUNK_DEFLATE | DCP_FMT_CHUNK_ZSTD)) {
			ret = decompress(r, flags, payload, psize, raw_size);
			if (ret == 0)
				ret = dcp_reader_decode_chunk(
					r, type, r->inflated, raw_size);
		} else {
			if (raw_size != psize)
				return dcp_reader_corrupt(
					r,
					"chunk at offset %" PRIu64
					" has sizes %" PRIu64 " and %" PRIu64,
					off, psize, raw_size);
			ret = dcp_reader_decode_chunk(r, type, payload, psize);
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
		return dcp_reader_nomem();
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			uint8_t *q = dcp_grow(buf, &cap, len + 1, 1);

			if (!q) {
				free(buf);
				close(fd);
				return dcp_reader_nomem();
			}
			buf = q;
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
		return dcp_reader_corrupt(r, "bad header size %" PRIu32, hsize);
	if (le32toh(h.header_crc32) !=
	    dcp_fmt_header_crc(&h, r->data + sizeof(h), hsize - sizeof(h)))
		return dcp_reader_corrupt(r, "bad header checksum");
	*complete = le64toh(h.flags) & DCP_FMT_COMPLETE;
	file_size = le64toh(h.file_size);
	if (*complete && file_size != r->size) {
		if (file_size > r->size)
			return dcp_error(EINVAL,
					 "'%s' is truncated (%llu of %llu "
					 "bytes)",
					 r->path, (unsigned long long)r->size,
					 (unsigned long long)file_size);
		return dcp_reader_corrupt(
			r, "%zu bytes where the header says %" PRIu64, r->size,
			file_size);
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
	r.p->stats.sz = sizeof(r.p->stats);
	r.p->cookies = dcp_cookie_table_new();
	r.p->agg = dcp_aggregate_new();
	r.p->symbols = dcp_symtab_new();
	if (!r.p->cookies || !r.p->agg || !r.p->symbols) {
		ret = dcp_reader_nomem();
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
		ret = dcp_reader_corrupt(&r, "no END chunk");
	if (ret < 0)
		goto fail;
	r.p->meta.complete = r.end_seen;
	count_cookie_samples(&r);
	ret = 0;
fail:
	free(data);
	free(r.strings.id);
	free(r.stacks.id);
	free(r.threads.id);
	free(r.cgroups.id);
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
