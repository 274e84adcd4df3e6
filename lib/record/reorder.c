// SPDX-License-Identifier: MIT
/*
 * A binary min-heap of record copies ordered by (time, arrival), so that
 * records with equal timestamps leave in the order they came in: a ring's
 * own order is kept for ties.
 *
 * The copies are carved from blocks of 1 MiB rather than malloc'ed one by
 * one (a malloc and a free per record were 7% of a recorder's CPU with
 * -g). Records leave in nearly the order they came in, so a block is
 * freed soon after the last record carved from it; the current block is
 * reused once it empties.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "reorder_internal.h"

#define BLOCK_SIZE (1u << 20)

struct block {
	size_t used; /* bytes carved, from data */
	size_t live; /* records carved and not yet released */
	size_t size; /* bytes of data */
	_Alignas(8) unsigned char data[];
};

struct queued_record {
	uint64_t time;
	uint64_t seq;
	uint32_t size;
	void *data;
	struct block *block;
};

struct dcp_reorder {
	struct queued_record *heap;
	size_t count, cap;
	size_t bytes;
	uint64_t seq;
	struct block *current; /* where new copies are carved */
};

struct dcp_reorder *dcp_reorder_new(void)
{
	struct dcp_reorder *q = calloc(1, sizeof(*q));

	if (!q)
		return dcp_error_null(ENOMEM, "out of memory");
	return q;
}

void dcp_reorder_free(struct dcp_reorder *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->count; i++)
		if (q->heap[i].block != q->current &&
		    --q->heap[i].block->live == 0)
			free(q->heap[i].block);
	free(q->current);
	free(q->heap);
	free(q);
}

static bool record_before(const struct queued_record *a,
			  const struct queued_record *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

/* Room for size bytes (8-byte aligned) in the current block, or a new one. */
static void *carve(struct dcp_reorder *q, size_t size, struct block **blockp)
{
	size_t need = (size + 7) & ~(size_t)7;
	struct block *b = q->current;

	if (!b || b->size - b->used < need) {
		size_t bytes = need > BLOCK_SIZE ? need : BLOCK_SIZE;

		b = malloc(sizeof(*b) + bytes);
		if (!b)
			return NULL;
		b->used = b->live = 0;
		b->size = bytes;
		/* the old block goes once its last record is released */
		if (q->current && q->current->live == 0)
			free(q->current);
		q->current = b;
	}
	b->live++;
	b->used += need;
	*blockp = b;
	return b->data + b->used - need;
}

static void release(struct dcp_reorder *q, struct block *b)
{
	if (--b->live)
		return;
	if (b == q->current)
		b->used = 0; /* empty: carve from its start again */
	else
		free(b);
}

int dcp_reorder_push(struct dcp_reorder *q, uint64_t time, const void *record,
		     size_t size)
{
	struct queued_record rec;
	size_t i;

	if (q->count == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;
		struct queued_record *heap =
			realloc(q->heap, cap * sizeof(*heap));

		if (!heap)
			return dcp_error(ENOMEM, "out of memory");
		q->heap = heap;
		q->cap = cap;
	}
	rec.data = carve(q, size, &rec.block);
	if (!rec.data)
		return dcp_error(ENOMEM, "out of memory");
	memcpy(rec.data, record, size);
	rec.time = time;
	rec.size = (uint32_t)size;
	rec.seq = q->seq++;
	i = q->count++;
	q->bytes += size;

	/* parents move down into the hole; the record is written once */
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!record_before(&rec, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = rec;
	return 0;
}

/*
 * The last record sifted down from the root's hole: children move up and
 * the record is written once, where it belongs (swapping it down the path
 * copied it three times per level; on a switch-heavy --off-cpu recording
 * the heap was 41% of the recorder's CPU).
 */
static void pop_root(struct dcp_reorder *q)
{
	struct queued_record last;
	size_t i = 0;

	q->bytes -= q->heap[0].size;
	last = q->heap[--q->count];
	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= q->count)
			break;
		m = l + 1 < q->count &&
				    record_before(&q->heap[l + 1], &q->heap[l]) ?
			    l + 1 :
			    l;
		if (!record_before(&q->heap[m], &last))
			break;
		q->heap[i] = q->heap[m];
		i = m;
	}
	if (q->count)
		q->heap[i] = last;
}

int dcp_reorder_flush(struct dcp_reorder *q, uint64_t upto, dcp_reorder_fn fn,
		      void *ctx)
{
	while (q->count && q->heap[0].time <= upto) {
		struct queued_record r = q->heap[0];
		int ret;

		pop_root(q);
		ret = fn(r.time, r.data, r.size, ctx);
		release(q, r.block);
		if (ret)
			return ret;
	}
	return 0;
}

size_t dcp_reorder_count(const struct dcp_reorder *q)
{
	return q->count;
}

size_t dcp_reorder_bytes(const struct dcp_reorder *q)
{
	return q->bytes;
}

uint64_t dcp_reorder_oldest(const struct dcp_reorder *q)
{
	return q->count ? q->heap[0].time : UINT64_MAX;
}
