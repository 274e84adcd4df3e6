// SPDX-License-Identifier: MIT
/*
 * Encoding a profile's chunks (docs/FORMAT.md): records little endian into
 * a raw payload, closed into a checksummed chunk, zstd-compressed when that
 * is smaller, and split when large; the file header and its checksum.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "profile_encode_internal.h"
#include "summary_internal.h"

static bool buf_reserve(struct dcp_enc_buf *b, size_t n)
{
	uint8_t *p = NULL;

	if (b->oom)
		return false;
	if (b->cap - b->len >= n)
		return true;
	if (n <= SIZE_MAX - b->len)
		p = dcp_grow_from(b->p, &b->cap, b->len + n, 1, 4096);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	return true;
}

static void put_bytes(struct dcp_enc_buf *b, const void *p, size_t n)
{
	if (n && buf_reserve(b, n)) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
	}
}

static void put_zeros(struct dcp_enc_buf *b, size_t n)
{
	if (n && buf_reserve(b, n)) {
		memset(b->p + b->len, 0, n);
		b->len += n;
	}
}

static void put_u8(struct dcp_enc_buf *b, uint8_t v)
{
	put_bytes(b, &v, 1);
}

static void put_u16(struct dcp_enc_buf *b, uint16_t v)
{
	v = htole16(v);
	put_bytes(b, &v, 2);
}

static void put_u32(struct dcp_enc_buf *b, uint32_t v)
{
	v = htole32(v);
	put_bytes(b, &v, 4);
}

static void put_u64(struct dcp_enc_buf *b, uint64_t v)
{
	v = htole64(v);
	put_bytes(b, &v, 8);
}

static void put_str(struct dcp_enc_buf *b, const char *s)
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

void dcp_enc_buf_free(struct dcp_enc_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void chunk_begin(struct dcp_emitter *em, uint32_t type, bool counted)
{
	em->type = type;
	em->counted = counted;
	em->count = 0;
	em->raw.len = 0;
	if (counted)
		put_u32(&em->raw, 0);
}

static void chunk_append(struct dcp_emitter *em, const uint8_t *payload,
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
static void chunk_end(struct dcp_emitter *em)
{
	struct dcp_enc_buf *raw = &em->raw;
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
static void record_done(struct dcp_emitter *em)
{
	em->count++;
	if (em->raw.len >= DCP_FMT_SPLIT_RAW || em->count == UINT32_MAX) {
		uint32_t type = em->type;

		chunk_end(em);
		chunk_begin(em, type, true);
	}
}

void dcp_emit_meta(struct dcp_emitter *em, const struct dcp_profile_meta *m)
{
	uint32_t flags;

	chunk_begin(em, DCP_FMT_CHUNK_META, false);
	put_u64(&em->raw, m->start_realtime_ns);
	put_u64(&em->raw, m->duration_ns);
	put_u64(&em->raw, m->sample_period);
	put_u32(&em->raw, m->sample_freq);
	put_u32(&em->raw, m->nr_cpus);
	flags = m->callchain ? DCP_FMT_META_CALLCHAIN : 0;
	if (m->kernel_excluded)
		flags |= DCP_FMT_META_KERNEL_EXCLUDED;
	if (m->off_cpu)
		flags |= DCP_FMT_META_OFF_CPU;
	if (m->disk_full)
		flags |= DCP_FMT_META_DISK_FULL;
	put_u32(&em->raw, flags);
	put_str(&em->raw, m->event);
	put_str(&em->raw, m->cmdline);
	put_str(&em->raw, m->hostname);
	put_str(&em->raw, m->kernel_release);
	put_str(&em->raw, m->backend);
	chunk_end(em);
}

static void put_cookie(struct dcp_emitter *em, const struct dcp_cookie_info *ci)
{
	struct dcp_enc_buf *b = &em->raw;
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
void dcp_emit_dirty_cookies(struct dcp_emitter *em, struct dcp_cookie_table *t)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
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

/* Every cookie (compact file), or those the stacks of used_by name. */
void dcp_emit_all_cookies(struct dcp_emitter *em,
			  const struct dcp_cookie_table *t,
			  const struct dcp_aggregate *used_by)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	size_t n = dcp_cookie_table_size(t), i;
	unsigned char *used = NULL;

	if (used_by) {
		used = calloc(n ? n : 1, 1);
		if (!used) {
			em->out.oom = true;
			return;
		}
		used[0] = 1;
		for (i = 0; i < dcp_aggregate_nr_stacks(used_by); i++) {
			uint32_t nf;
			const struct dcp_frame *f =
				dcp_aggregate_stack(used_by, (uint32_t)i, &nf);

			for (uint32_t j = 0; j < nf; j++)
				if (f[j].cookie < n)
					used[f[j].cookie] = 1;
		}
	}
	chunk_begin(em, DCP_FMT_CHUNK_COOKIES, true);
	for (i = 0; i < n; i++) {
		if ((!used || used[i]) &&
		    dcp_cookie_table_lookup(t, (uint32_t)i, &ci) == 0)
			put_cookie(em, &ci);
	}
	chunk_end(em);
	free(used);
}

void dcp_emit_strings(struct dcp_emitter *em, const struct dcp_aggregate *agg,
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

void dcp_emit_stacks(struct dcp_emitter *em, uint32_t type,
		     const struct dcp_aggregate *agg, size_t from,
		     const struct dcp_write_order *order)
{
	size_t n = dcp_aggregate_nr_stacks(agg), i;
	const struct dcp_frame *f;
	uint32_t nr, j;

	chunk_begin(em, type, true);
	for (i = from; i < n; i++) {
		f = dcp_aggregate_stack(
			agg, order ? order->stack_at[i] : (uint32_t)i, &nr);
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

void dcp_emit_threads(struct dcp_emitter *em, uint32_t type,
		      const struct dcp_aggregate *agg, size_t from)
{
	size_t n = dcp_aggregate_nr_threads(agg), i;
	struct dcp_agg_thread t;

	chunk_begin(em, type, true);
	for (i = from + 1; i <= n; i++) {
		dcp_aggregate_thread(agg, (uint32_t)i, &t);
		put_u32(&em->raw, (uint32_t)i);
		put_u32(&em->raw, t.tid);
		put_u32(&em->raw, t.comm_id);
		put_u32(&em->raw, t.cgroup);
		record_done(em);
	}
	chunk_end(em);
}

void dcp_emit_cgroups(struct dcp_emitter *em, const struct dcp_aggregate *agg,
		      size_t from)
{
	size_t n = dcp_aggregate_nr_cgroups(agg), i;
	struct dcp_agg_cgroup c;

	chunk_begin(em, DCP_FMT_CHUNK_CGROUPS, true);
	for (i = from + 1; i <= n; i++) {
		dcp_aggregate_cgroup(agg, (uint32_t)i, &c);
		put_u32(&em->raw, (uint32_t)i);
		put_u32(&em->raw, c.path_id);
		put_u32(&em->raw, c.name_id);
		put_u32(&em->raw, 0);
		put_u64(&em->raw, c.kernel_id);
		record_done(em);
	}
	chunk_end(em);
}

void dcp_emit_lives(struct dcp_emitter *em, const struct dcp_aggregate *agg,
		    bool changed)
{
	const struct dcp_lives *l = dcp_aggregate_lives(agg);
	size_t n = dcp_lives_count(l);

	chunk_begin(em, DCP_FMT_CHUNK_THREAD_LIFETIMES, true);
	for (size_t i = 0; i < n; i++) {
		const struct dcp_thread_life *t = dcp_lives_get(l, i);

		if (changed && !dcp_lives_dirty(l, i))
			continue;
		put_u32(&em->raw, t->pid);
		put_u32(&em->raw, t->tid);
		put_u32(&em->raw, t->flags);
		put_u32(&em->raw, 0);
		put_u64(&em->raw, t->start_ns);
		put_u64(&em->raw, t->flags & DCP_LIFE_RUNNING ? 0 : t->end_ns);
		record_done(em);
	}
	chunk_end(em);
}

/* Rows: the deltas since the last flush, or (compact) the totals. */
void dcp_emit_rows(struct dcp_emitter *em, uint32_t type,
		   const struct dcp_aggregate *agg, bool deltas,
		   const struct dcp_write_order *order)
{
	size_t n = dcp_aggregate_nr_rows(agg), i, r;
	struct dcp_row_key key;
	uint64_t count;

	chunk_begin(em, type, true);
	for (i = 0; i < n; i++) {
		r = order ? order->row_at[i] : i;
		dcp_aggregate_row(agg, r, &key, &count);
		if (deltas)
			count = dcp_aggregate_row_unflushed(agg, r);
		if (!count)
			continue;
		if (order)
			key.stack_id = order->stack_pos[key.stack_id];
		put_u32(&em->raw, key.comm_id);
		put_u32(&em->raw, key.pid);
		put_u32(&em->raw, key.stack_id);
		put_u32(&em->raw, key.thread_id);
		put_u64(&em->raw, count);
		record_done(em);
	}
	chunk_end(em);
}

/* Off-CPU time: the deltas since the last flush, or (compact) the totals. */
void dcp_emit_off_cpu_rows(struct dcp_emitter *em, uint32_t type,
			   const struct dcp_aggregate *agg, bool deltas,
			   const struct dcp_write_order *order)
{
	size_t n = dcp_aggregate_nr_rows(agg), i, r;
	uint64_t ns[DCP_OFF_CPU_NR_STATES];
	struct dcp_row_key key;

	if (!dcp_aggregate_has_off_cpu(agg))
		return;
	chunk_begin(em, type, true);
	for (i = 0; i < n; i++) {
		r = order ? order->row_at[i] : i;
		if (!dcp_aggregate_row_off_cpu(agg, r, deltas, ns))
			continue;
		dcp_aggregate_row(agg, r, &key, NULL);
		if (order)
			key.stack_id = order->stack_pos[key.stack_id];
		put_u32(&em->raw, key.comm_id);
		put_u32(&em->raw, key.pid);
		put_u32(&em->raw, key.stack_id);
		put_u32(&em->raw, key.thread_id);
		for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
			put_u64(&em->raw, ns[s]);
		record_done(em);
	}
	chunk_end(em);
}

void dcp_emit_symbols(struct dcp_emitter *em, uint32_t type,
		      const struct dcp_symtab *s)
{
	size_t n = dcp_symtab_count(s), i;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
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
void dcp_emit_symbol_details(struct dcp_emitter *em, uint32_t type,
			     const struct dcp_symtab *s)
{
	size_t n = dcp_symtab_count(s), i;
	struct dcp_inline_frame inl = { .sz = sizeof(inl) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };
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
 * address per function); readers then read the whole file. So is the
 * summary of a small profile (rows and stacks under SUMMARY_MIN_BYTES):
 * read whole it takes a few ms, and its summary, with the names of its
 * addresses again, was 40% of a 10 s off-CPU recording's file.
 */
#define SUMMARY_MIN_BYTES (64u << 10)

void dcp_emit_summary(struct dcp_emitter *em, const struct dcp_aggregate *agg,
		      const struct dcp_symtab *symbols,
		      const struct dcp_write_order *order)
{
	struct dcp_write_order sum_order;
	struct dcp_summary sum;
	bool sorted;

	if (rows_and_stacks_size(agg) < SUMMARY_MIN_BYTES)
		return;
	if (dcp_summary_build(agg, symbols, order ? order->stack_at : NULL,
			      &sum) < 0) {
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
	/* unsorted when out of memory for the order: still the same file */
	sorted = order && dcp_write_order_build(&sum_order, sum.agg) == 0;
	dcp_emit_stacks(em, DCP_FMT_CHUNK_SUMMARY_STACKS, sum.agg, 0,
			sorted ? &sum_order : NULL);
	dcp_emit_threads(em, DCP_FMT_CHUNK_SUMMARY_THREADS, sum.agg, 0);
	dcp_emit_rows(em, DCP_FMT_CHUNK_SUMMARY_ROWS, sum.agg, false,
		      sorted ? &sum_order : NULL);
	dcp_emit_off_cpu_rows(em, DCP_FMT_CHUNK_SUMMARY_OFF_CPU_ROWS, sum.agg,
			      false, sorted ? &sum_order : NULL);
	if (sorted)
		dcp_write_order_free(&sum_order);
	dcp_emit_symbols(em, DCP_FMT_CHUNK_SUMMARY_SYMBOLS, sum.symbols);
	dcp_emit_symbol_details(em, DCP_FMT_CHUNK_SUMMARY_SYMBOL_DETAILS,
				sum.symbols);
	dcp_summary_free(&sum);
}

void dcp_emit_stats(struct dcp_emitter *em, const struct dcp_profile_stats *s)
{
	uint64_t v[DCP_FMT_NR_STATS];
	uint32_t n = DCP_FMT_NR_STATS_CPU;
	size_t i;

	memcpy(v, DCP_FMT_STATS_FIRST(s), sizeof(v));
	for (i = DCP_FMT_NR_STATS_CPU; i < DCP_FMT_NR_STATS; i++)
		if (v[i])
			n = DCP_FMT_NR_STATS;
	chunk_begin(em, DCP_FMT_CHUNK_STATS, false);
	put_u32(&em->raw, n);
	for (i = 0; i < n; i++)
		put_u64(&em->raw, v[i]);
	chunk_end(em);
}

void dcp_emit_end(struct dcp_emitter *em)
{
	chunk_begin(em, DCP_FMT_CHUNK_END, false);
	chunk_end(em);
}

void dcp_enc_put_header(struct dcp_enc_buf *b, uint64_t flags,
			uint64_t created_ns)
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
void dcp_enc_seal_header(struct dcp_enc_buf *b, uint64_t file_size)
{
	struct dcp_fmt_header h;

	memcpy(&h, b->p, sizeof(h));
	h.file_size = htole64(file_size);
	h.header_crc32 = 0;
	h.header_crc32 = htole32(dcp_fmt_header_crc(&h, NULL, 0));
	memcpy(b->p, &h, sizeof(h));
}
