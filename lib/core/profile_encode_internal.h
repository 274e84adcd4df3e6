/* SPDX-License-Identifier: MIT */
/*
 * Encoding a profile's chunks in memory (docs/FORMAT.md): each kind of
 * record into its chunks, compressed with zstd when that is smaller, and
 * the file header. The writer (profile_write.c) decides what goes out
 * when and writes it.
 */
#ifndef DCPROF_PROFILE_ENCODE_INTERNAL_H
#define DCPROF_PROFILE_ENCODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "dcprof/dcprof.h"
#include "aggregate_internal.h"
#include "cookie_internal.h"
#include "profile_order_internal.h"
#include "symtab_internal.h"

/* Bytes in memory; an allocation failure is remembered, not checked at
 * every put, and turned into -ENOMEM when the buffer is used. */
struct dcp_enc_buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

/*
 * Chunks are assembled in memory: records go to raw, the finished chunk
 * (header, payload compressed when that is smaller, padding) to out, so a
 * whole flush is a single write().
 */
struct dcp_emitter {
	struct dcp_enc_buf out, raw, z;
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

void dcp_enc_buf_free(struct dcp_enc_buf *b);

/* The file header (docs/FORMAT.md) at the end of b, sealed later. */
void dcp_enc_put_header(struct dcp_enc_buf *b, uint64_t flags,
			uint64_t created_ns);
/* Set file_size and the checksum of the header at the start of b. */
void dcp_enc_seal_header(struct dcp_enc_buf *b, uint64_t file_size);

/*
 * Append chunks to em->out. A counted chunk without records is left out;
 * an allocation failure sets em->out.oom (or em->raw.oom).
 */
void dcp_emit_meta(struct dcp_emitter *em, const struct dcp_profile_meta *m);
/* The cookies the table reports dirty (working file). */
void dcp_emit_dirty_cookies(struct dcp_emitter *em, struct dcp_cookie_table *t);
/* Every cookie (compact file); with used_by, only those its stacks name
 * (and cookie 0): a period of a continuous recording. */
void dcp_emit_all_cookies(struct dcp_emitter *em,
			  const struct dcp_cookie_table *t,
			  const struct dcp_aggregate *used_by);
/* Strings and stacks from id from on; type: STACKS or SUMMARY_STACKS.
 * With an order (compact file, from 0), stacks are written in that order,
 * and rows name them by their position in it. */
void dcp_emit_strings(struct dcp_emitter *em, const struct dcp_aggregate *agg,
		      size_t from);
void dcp_emit_stacks(struct dcp_emitter *em, uint32_t type,
		     const struct dcp_aggregate *agg, size_t from,
		     const struct dcp_write_order *order);
/* Threads from id from + 1 on; type: THREADS or SUMMARY_THREADS. */
void dcp_emit_threads(struct dcp_emitter *em, uint32_t type,
		      const struct dcp_aggregate *agg, size_t from);
/* CGROUPS records of the cgroups after the first from */
void dcp_emit_cgroups(struct dcp_emitter *em, const struct dcp_aggregate *agg,
		      size_t from);
/* Thread lifetimes: those changed since the last flush, or all. */
void dcp_emit_lives(struct dcp_emitter *em, const struct dcp_aggregate *agg,
		    bool changed);
/* Rows: the deltas since the last flush, or (compact) the totals. */
void dcp_emit_off_cpu_rows(struct dcp_emitter *em, uint32_t type,
			   const struct dcp_aggregate *agg, bool deltas,
			   const struct dcp_write_order *order);
void dcp_emit_rows(struct dcp_emitter *em, uint32_t type,
		   const struct dcp_aggregate *agg, bool deltas,
		   const struct dcp_write_order *order);
void dcp_emit_symbols(struct dcp_emitter *em, uint32_t type,
		      const struct dcp_symtab *s);
void dcp_emit_symbol_details(struct dcp_emitter *em, uint32_t type,
			     const struct dcp_symtab *s);
/* The summary's chunks, or none (see the comment in profile_encode.c);
 * with the full stacks' order, sorted too. */
void dcp_emit_summary(struct dcp_emitter *em, const struct dcp_aggregate *agg,
		      const struct dcp_symtab *symbols,
		      const struct dcp_write_order *order);
void dcp_emit_stats(struct dcp_emitter *em, const struct dcp_profile_stats *s);
void dcp_emit_end(struct dcp_emitter *em);

#endif
