// SPDX-License-Identifier: MIT
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "format_internal.h"
#include "log_internal.h"
#include "profile_internal.h"
#include "summary_internal.h"

/* Bytes in memory; an allocation failure is remembered, not checked at
 * every put, and turned into -ENOMEM when the buffer is used. */
struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

/*
 * Chunks are assembled in memory: records go to raw, the finished chunk
 * (header, payload compressed when that is smaller, padding) to out, so a
 * whole flush is a single write().
 */
struct emitter {
	struct buf out, raw, z;
	ZSTD_CCtx *zstd; /* made on first use, kept for the next chunks */
	int level; /* zstd level */
	uint32_t type;
	bool counted; /* the payload starts with a u32 record count */
	uint32_t count;
};

/*
 * Flushes are written every couple of seconds and replaced by the compact
 * file at the end: the fastest level. The compact file is written once:
 * zstd's default, smaller than zlib's best and several times faster.
 */
#define DCP_ZSTD_LEVEL_FLUSH 1
#define DCP_ZSTD_LEVEL_FINAL 3

struct dcp_profile_writer {
	char *path;
	int fd;
	int err; /* first write error: no more flushes after one */
	bool finished;
	uint64_t created_ns;
	/* Strings and stacks below these ids are in the working file. */
	size_t strings_written, stacks_written;
	struct emitter em;
};

static bool buf_reserve(struct buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (b->cap - b->len >= n)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	if (n && buf_reserve(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

static void put_zeros(struct buf *b, size_t n)
{
	if (n && buf_reserve(b, n)) {
		memset(b->p + b->len, 0, n);
		b->len += n;
	}
}

static void put_u8(struct buf *b, uint8_t v)
{
	put_bytes(b, &v, 1);
}

static void put_u16(struct buf *b, uint16_t v)
{
	v = htole16(v);
	put_bytes(b, &v, 2);
}

static void put_u32(struct buf *b, uint32_t v)
{
	v = htole32(v);
	put_bytes(b, &v, 4);
}

static void put_u64(struct buf *b, uint64_t v)
{
	v = htole64(v);
	put_bytes(b, &v, 8);
}

static void put_str(struct buf *b, const char *s)
{
	size_t n;

	if (!s) {
		put_u32(b, DCP_FMT_NULL_STRING);
		return;
	}
	n = strlen(s);
	/* Nothing real comes near 4 GiB; cut rather than fail the flush. */
	if (n >= DCP_FMT_NULL_STRING)
		n = DCP_FMT_NULL_STRING - 1;
	put_u32(b, (uint32_t)n);
	put_bytes(b, s, n);
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void chunk_begin(struct emitter *em, uint32_t type, bool counted)
{
	em->type = type;
	em->counted = counted;
	em->count = 0;
	em->raw.len = 0;
	if (counted)
		put_u32(&em->raw, 0);
}

static void chunk_append(struct emitter *em, const uint8_t *payload,
			 size_t size, size_t raw_size, uint32_t flags)
{
	struct dcp_fmt_chunk h = {
		.type = htole32(em->type),
		.flags = htole32(flags),
		.payload_size = htole64(size),
		.raw_size = htole64(raw_size),
	};

	h.crc32 = htole32(dcp_fmt_chunk_crc(&h, payload, size));
	put_bytes(&em->out, &h, sizeof(h));
	put_bytes(&em->out, payload, size);
	put_zeros(&em->out, dcp_fmt_pad(size) - size);
}

/* Close the chunk being built; a counted chunk with no record is dropped. */
static void chunk_end(struct emitter *em)
{
	struct buf *raw = &em->raw;
	size_t zlen;

	if (raw->oom) {
		em->out.oom = true;
		return;
	}
	if (em->counted) {
		uint32_t n = htole32(em->count);

		if (!em->count)
			return;
		memcpy(raw->p, &n, 4);
	}
	/* Tiny payloads never shrink enough to pay for a zstd frame. */
	if (raw->len >= 128) {
		em->z.len = 0;
		if (!buf_reserve(&em->z, ZSTD_compressBound(raw->len)) ||
		    (!em->zstd && !(em->zstd = ZSTD_createCCtx()))) {
			em->out.oom = true;
			return;
		}
		/* one frame, its content size in the frame header */
		zlen = ZSTD_compressCCtx(em->zstd, em->z.p, em->z.cap, raw->p,
					 raw->len, em->level);
		if (!ZSTD_isError(zlen) && zlen < raw->len) {
			chunk_append(em, em->z.p, zlen, raw->len,
				     DCP_FMT_CHUNK_ZSTD);
			return;
		}
	}
	chunk_append(em, raw->p, raw->len, raw->len, 0);
}

/* One more record is in raw: split large chunks so that readers never need
 * to hold more than DCP_FMT_SPLIT_RAW (plus one record) of one at once. */
static void record_done(struct emitter *em)
{
	em->count++;
	if (em->raw.len >= DCP_FMT_SPLIT_RAW || em->count == UINT32_MAX) {
		uint32_t type = em->type;

		chunk_end(em);
		chunk_begin(em, type, true);
	}
}

static void emit_meta(struct emitter *em, const struct dcp_profile_meta *m)
{
	chunk_begin(em, DCP_FMT_CHUNK_META, false);
	put_u64(&em->raw, m->start_realtime_ns);
	put_u64(&em->raw, m->duration_ns);
	put_u64(&em->raw, m->sample_period);
	put_u32(&em->raw, m->sample_freq);
	put_u32(&em->raw, m->nr_cpus);
	put_u32(&em->raw, m->callchain ? DCP_FMT_META_CALLCHAIN : 0);
	put_str(&em->raw, m->event);
	put_str(&em->raw, m->cmdline);
	put_str(&em->raw, m->hostname);
	put_str(&em->raw, m->kernel_release);
	chunk_end(em);
}

static void put_cookie(struct emitter *em, const struct dcp_cookie_info *ci)
{
	struct buf *b = &em->raw;
	uint8_t build_id[DCP_BUILD_ID_MAX] = { 0 };
	uint8_t size = ci->build_id_size;
	size_t i;

	if (size > DCP_BUILD_ID_MAX)
		size = DCP_BUILD_ID_MAX;
	memcpy(build_id, ci->build_id, size);
	put_u32(b, ci->cookie);
	put_u32(b, (uint32_t)ci->kind);
	put_u8(b, size);
	put_u8(b, ci->marked ? DCP_FMT_COOKIE_MARKED : 0);
	put_u16(b, 0);
	put_bytes(b, build_id, sizeof(build_id));
	put_u32(b, ci->dev_major);
	put_u32(b, ci->dev_minor);
	put_u64(b, ci->ino);
	put_u64(b, ci->ino_generation);
	put_str(b, ci->name);
	put_u32(b, (uint32_t)ci->nr_paths);
	for (i = 0; i < (uint32_t)ci->nr_paths; i++)
		put_str(b, ci->paths[i]);
	record_done(em);
}

/* The cookies the table reports dirty (working file). */
static void emit_dirty_cookies(struct emitter *em, struct dcp_cookie_table *t)
{
	struct dcp_cookie_info ci;
	uint32_t ids[256];
	size_t n, i;

	chunk_begin(em, DCP_FMT_CHUNK_COOKIES, true);
	while ((n = dcp_cookie_table_take_dirty(t, ids, 256)) > 0) {
		for (i = 0; i < n; i++) {
			if (dcp_cookie_table_lookup(t, ids[i], &ci) == 0)
				put_cookie(em, &ci);
		}
	}
	chunk_end(em);
}

/* Every cookie (compact file). */
static void emit_all_cookies(struct emitter *em,
			     const struct dcp_cookie_table *t)
{
	struct dcp_cookie_info ci;
	size_t n = dcp_cookie_table_size(t), i;

	chunk_begin(em, DCP_FMT_CHUNK_COOKIES, true);
	for (i = 0; i < n; i++) {
		if (dcp_cookie_table_lookup(t, (uint32_t)i, &ci) == 0)
			put_cookie(em, &ci);
	}
	chunk_end(em);
}

static void emit_strings(struct emitter *em, const struct dcp_aggregate *agg,
			 size_t from)
{
	size_t n = dcp_aggregate_nr_strings(agg), i;

	chunk_begin(em, DCP_FMT_CHUNK_STRINGS, true);
	for (i = from; i < n; i++) {
		put_u32(&em->raw, (uint32_t)i);
		put_str(&em->raw, dcp_aggregate_string(agg, (uint32_t)i));
		record_done(em);
	}
	chunk_end(em);
}

static void emit_stacks(struct emitter *em, uint32_t type,
			const struct dcp_aggregate *agg, size_t from)
{
	size_t n = dcp_aggregate_nr_stacks(agg), i;
	const struct dcp_frame *f;
	uint32_t nr, j;

	chunk_begin(em, type, true);
	for (i = from; i < n; i++) {
		f = dcp_aggregate_stack(agg, (uint32_t)i, &nr);
		put_u32(&em->raw, (uint32_t)i);
		put_u32(&em->raw, nr);
		for (j = 0; j < nr; j++) {
			put_u32(&em->raw, f[j].cookie);
			put_u32(&em->raw, f[j].flags);
			put_u64(&em->raw, f[j].offset);
		}
		record_done(em);
	}
	chunk_end(em);
}

/* Rows: the deltas since the last flush, or (compact) the totals. */
static void emit_rows(struct emitter *em, uint32_t type,
		      const struct dcp_aggregate *agg, bool deltas)
{
	size_t n = dcp_aggregate_nr_rows(agg), i;
	struct dcp_row_key key;
	uint64_t count;

	chunk_begin(em, type, true);
	for (i = 0; i < n; i++) {
		dcp_aggregate_row(agg, i, &key, &count);
		if (deltas)
			count = dcp_aggregate_row_unflushed(agg, i);
		if (!count)
			continue;
		put_u32(&em->raw, key.comm_id);
		put_u32(&em->raw, key.pid);
		put_u32(&em->raw, key.stack_id);
		put_u32(&em->raw, 0);
		put_u64(&em->raw, count);
		record_done(em);
	}
	chunk_end(em);
}

static void emit_symbols(struct emitter *em, uint32_t type,
			 const struct dcp_symtab *s)
{
	size_t n = dcp_symtab_count(s), i;
	struct dcp_symbol sym;
	uint64_t offset;
	uint32_t cookie;

	chunk_begin(em, type, true);
	for (i = 0; i < n; i++) {
		dcp_symtab_entry(s, i, &cookie, &offset, &sym);
		put_u32(&em->raw, cookie);
		put_u32(&em->raw, sym.name ? DCP_FMT_SYMBOL_RESOLVED : 0);
		put_u64(&em->raw, offset);
		put_u64(&em->raw, sym.start);
		put_u64(&em->raw, sym.size);
		put_str(&em->raw, sym.name);
		record_done(em);
	}
	chunk_end(em);
}

/* Only the addresses DWARF or the demangler said something about. */
static void emit_symbol_details(struct emitter *em, uint32_t type,
				const struct dcp_symtab *s)
{
	size_t n = dcp_symtab_count(s), i;
	struct dcp_inline_frame inl;
	struct dcp_symbol sym;
	uint64_t offset;
	uint32_t cookie;

	chunk_begin(em, type, true);
	for (i = 0; i < n; i++) {
		dcp_symtab_entry(s, i, &cookie, &offset, &sym);
		if (!sym.demangled && !sym.file && !sym.nr_inline)
			continue;
		put_u32(&em->raw, cookie);
		put_u32(&em->raw, 0);
		put_u64(&em->raw, offset);
		put_str(&em->raw, sym.demangled);
		put_str(&em->raw, sym.file);
		put_u32(&em->raw, sym.line);
		put_u32(&em->raw, sym.nr_inline);
		for (uint32_t j = 0; j < sym.nr_inline; j++) {
			dcp_symtab_entry_inline(s, i, j, &inl);
			put_str(&em->raw, inl.name);
			put_str(&em->raw, inl.demangled);
			put_str(&em->raw, inl.file);
			put_u32(&em->raw, inl.line);
		}
		record_done(em);
	}
	chunk_end(em);
}

/* Raw bytes of the rows and stacks of agg, as emit_rows and emit_stacks
 * write them. */
static uint64_t rows_and_stacks_size(const struct dcp_aggregate *agg)
{
	uint64_t n = 24 * (uint64_t)dcp_aggregate_nr_rows(agg);
	size_t i;

	for (i = 0; i < dcp_aggregate_nr_stacks(agg); i++) {
		uint32_t nr;

		dcp_aggregate_stack(agg, (uint32_t)i, &nr);
		n += 8 + 16 * (uint64_t)nr;
	}
	return n;
}

/*
 * The summary, for the views that group by process name and function. A
 * profile is whole without it, so a summary that cannot be made (out of
 * memory) is left out with a warning rather than failing the write. One
 * that would hold more than 7/8 of the full rows and stacks is left out
 * too: it would make the file almost twice as large for reading hardly
 * less (every stack a different path of functions, with one pid and one
 * address per function); readers then read the whole file.
 */
static void emit_summary(struct emitter *em, const struct dcp_aggregate *agg,
			 const struct dcp_symtab *symbols)
{
	struct dcp_summary sum;

	if (dcp_summary_build(agg, symbols, &sum) < 0) {
		dcp_log(DCP_LOG_WARN,
			"the profile is written without its "
			"summary: %s",
			dcp_last_error());
		return;
	}
	if (8 * rows_and_stacks_size(sum.agg) > 7 * rows_and_stacks_size(agg)) {
		dcp_summary_free(&sum);
		return;
	}
	emit_stacks(em, DCP_FMT_CHUNK_SUMMARY_STACKS, sum.agg, 0);
	emit_rows(em, DCP_FMT_CHUNK_SUMMARY_ROWS, sum.agg, false);
	emit_symbols(em, DCP_FMT_CHUNK_SUMMARY_SYMBOLS, sum.symbols);
	emit_symbol_details(em, DCP_FMT_CHUNK_SUMMARY_SYMBOL_DETAILS,
			    sum.symbols);
	dcp_summary_free(&sum);
}

static void emit_stats(struct emitter *em, const struct dcp_profile_stats *s)
{
	uint64_t v[DCP_FMT_NR_STATS];
	size_t i;

	memcpy(v, s, sizeof(v));
	chunk_begin(em, DCP_FMT_CHUNK_STATS, false);
	put_u32(&em->raw, DCP_FMT_NR_STATS);
	for (i = 0; i < DCP_FMT_NR_STATS; i++)
		put_u64(&em->raw, v[i]);
	chunk_end(em);
}

static void emit_end(struct emitter *em)
{
	chunk_begin(em, DCP_FMT_CHUNK_END, false);
	chunk_end(em);
}

static void put_header(struct buf *b, uint64_t flags, uint64_t created_ns)
{
	struct dcp_fmt_header h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, DCP_FMT_MAGIC, DCP_FMT_MAGIC_SIZE);
	h.version = htole32(DCP_FMT_VERSION);
	h.header_size = htole32(sizeof(h));
	h.flags = htole64(flags);
	h.created_realtime_ns = htole64(created_ns);
	put_bytes(b, &h, sizeof(h));
}

/* Set file_size and the checksum of the header at the start of b. */
static void seal_header(struct buf *b, uint64_t file_size)
{
	struct dcp_fmt_header h;

	memcpy(&h, b->p, sizeof(h));
	h.file_size = htole64(file_size);
	h.header_crc32 = 0;
	h.header_crc32 = htole32(dcp_fmt_header_crc(&h, NULL, 0));
	memcpy(b->p, &h, sizeof(h));
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Move an existing output aside, as perf does with perf.data.old. */
static int move_old(const char *path)
{
	struct stat st;
	char *old;
	int ret = 0;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return dcp_error(errno, "cannot create '%s': %s", path,
				 strerror(errno));
	}
	/* A symlink is renamed itself, never followed; anything but a file
	 * or a link (a directory given by mistake) is left alone. */
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return dcp_error(
			S_ISDIR(st.st_mode) ? EISDIR : EEXIST,
			"cannot create '%s': %s", path,
			strerror(S_ISDIR(st.st_mode) ? EISDIR : EEXIST));
	if (asprintf(&old, "%s.old", path) < 0)
		return dcp_error(ENOMEM, "out of memory");
	if (rename(path, old) < 0)
		ret = dcp_error(errno, "cannot rename '%s' to '%s': %s", path,
				old, strerror(errno));
	free(old);
	return ret;
}

struct dcp_profile_writer *dcp_profile_writer_open(const char *path)
{
	struct dcp_profile_writer *w;
	struct buf hdr = { 0 };
	int ret, err;

	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	w->fd = -1;
	w->em.level = DCP_ZSTD_LEVEL_FLUSH;
	w->created_ns = realtime_ns();
	ret = move_old(path);
	if (ret < 0)
		goto fail;
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (w->fd < 0) {
		ret = dcp_error(errno, "cannot create '%s': %s", path,
				strerror(errno));
		goto fail;
	}
	/* The header first, so that even a recorder killed before its
	 * first flush leaves a file that opens (empty). */
	put_header(&hdr, 0, w->created_ns);
	if (hdr.oom)
		ret = -ENOMEM;
	else {
		seal_header(&hdr, 0);
		ret = write_all(w->fd, hdr.p, sizeof(struct dcp_fmt_header));
	}
	buf_free(&hdr);
	if (ret < 0) {
		ret = dcp_error(ret, "cannot write '%s': %s", path,
				strerror(-ret));
		unlink(path);
		goto fail;
	}
	return w;
fail:
	err = ret;
	dcp_profile_writer_free(w);
	errno = -err;
	return NULL;
}

int dcp_profile_writer_flush(struct dcp_profile_writer *w,
			     const struct dcp_profile_meta *meta,
			     struct dcp_cookie_table *cookies,
			     struct dcp_aggregate *agg,
			     const struct dcp_profile_stats *stats)
{
	struct emitter *em = &w->em;
	int ret;

	if (w->finished)
		return dcp_error(EINVAL, "cannot write '%s': already finished",
				 w->path);
	if (w->err)
		return dcp_error(w->err, "cannot write '%s': %s", w->path,
				 strerror(-w->err));
	em->out.len = 0;
	em->out.oom = em->raw.oom = em->z.oom = false;
	em->level = DCP_ZSTD_LEVEL_FLUSH;
	/* Order matters to a reader of a torn file: everything a record
	 * refers to (cookies, strings, stacks) comes before it. */
	if (meta)
		emit_meta(em, meta);
	if (cookies)
		emit_dirty_cookies(em, cookies);
	if (agg) {
		emit_strings(em, agg, w->strings_written);
		emit_stacks(em, DCP_FMT_CHUNK_STACKS, agg, w->stacks_written);
		emit_rows(em, DCP_FMT_CHUNK_ROWS, agg, true);
	}
	if (stats)
		emit_stats(em, stats);

	/* Dirty cookies were taken: a failed flush cannot be redone, so any
	 * failure ends the working file (finish still writes everything). */
	if (em->out.oom || em->raw.oom)
		ret = -ENOMEM;
	else
		ret = write_all(w->fd, em->out.p, em->out.len);
	if (ret == 0 && fdatasync(w->fd) < 0)
		ret = -errno;
	if (ret < 0) {
		w->err = ret;
		return dcp_error(ret, "cannot write '%s': %s", w->path,
				 strerror(-ret));
	}
	if (agg) {
		w->strings_written = dcp_aggregate_nr_strings(agg);
		w->stacks_written = dcp_aggregate_nr_stacks(agg);
		dcp_aggregate_mark_flushed(agg);
	}
	/* A big first flush need not pin its memory for the whole run. */
	if (em->out.cap > (16u << 20)) {
		buf_free(&em->out);
		buf_free(&em->z);
	}
	return 0;
}

/* The directory entry of a rename is durable only once its directory is. */
static void sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

int dcp_profile_write_compact(const char *path, uint64_t created_ns,
			      const struct dcp_profile_meta *meta,
			      const struct dcp_cookie_table *cookies,
			      const struct dcp_aggregate *agg,
			      const struct dcp_symtab *symbols,
			      const struct dcp_profile_stats *stats)
{
	struct emitter em = { .level = DCP_ZSTD_LEVEL_FINAL };
	char *tmp = NULL;
	int fd = -1, ret;

	put_header(&em.out, DCP_FMT_COMPLETE, created_ns);
	if (meta)
		emit_meta(&em, meta);
	if (cookies)
		emit_all_cookies(&em, cookies);
	if (agg) {
		emit_strings(&em, agg, 0);
		emit_stacks(&em, DCP_FMT_CHUNK_STACKS, agg, 0);
		emit_rows(&em, DCP_FMT_CHUNK_ROWS, agg, false);
	}
	if (symbols) {
		emit_symbols(&em, DCP_FMT_CHUNK_SYMBOLS, symbols);
		emit_symbol_details(&em, DCP_FMT_CHUNK_SYMBOL_DETAILS, symbols);
	}
	if (agg && symbols)
		emit_summary(&em, agg, symbols);
	if (stats)
		emit_stats(&em, stats);
	emit_end(&em);
	if (em.out.oom || em.raw.oom) {
		ret = dcp_error(ENOMEM, "cannot write '%s': out of memory",
				path);
		goto out;
	}
	seal_header(&em.out, em.out.len);

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		ret = dcp_error(ENOMEM, "out of memory");
		goto out;
	}
	/* mkostemp: O_CREAT|O_EXCL (never follows a link), mode 0600 */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = dcp_error(errno, "cannot create '%s': %s", tmp,
				strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	ret = write_all(fd, em.out.p, em.out.len);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (ret == 0 && close(fd) < 0)
		ret = -errno;
	fd = -1;
	if (ret < 0) {
		ret = dcp_error(ret, "cannot write '%s': %s", tmp,
				strerror(-ret));
		goto out;
	}
	if (rename(tmp, path) < 0) {
		ret = dcp_error(errno, "cannot rename '%s' to '%s': %s", tmp,
				path, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	sync_dir(path);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	buf_free(&em.out);
	buf_free(&em.raw);
	buf_free(&em.z);
	ZSTD_freeCCtx(em.zstd);
	return ret;
}

int dcp_profile_writer_finish(struct dcp_profile_writer *w,
			      const struct dcp_profile_meta *meta,
			      struct dcp_cookie_table *cookies,
			      struct dcp_aggregate *agg,
			      const struct dcp_symtab *symbols,
			      const struct dcp_profile_stats *stats)
{
	int ret = dcp_profile_write_compact(w->path, w->created_ns, meta,
					    cookies, agg, symbols, stats);

	if (ret < 0)
		return ret;
	/* The working file's inode is gone from the path now. */
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->finished = true;
	return 0;
}

void dcp_profile_writer_free(struct dcp_profile_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	buf_free(&w->em.out);
	buf_free(&w->em.raw);
	ZSTD_freeCCtx(w->em.zstd);
	buf_free(&w->em.z);
	free(w->path);
	free(w);
}
