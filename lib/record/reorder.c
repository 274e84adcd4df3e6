// SPDX-License-Identifier: MIT
/*
 * The reorder window: record copies released in (time, arrival) order, so
 * that records with equal timestamps leave in the order they came in (a
 * ring's own order is kept for ties).
 *
 * Records arrive as runs already in order: each ring is drained whole, and
 * its records are in time order. So the window keeps them in arrival order
 * and remembers where each run of non-decreasing times begins; releasing
 * merges the runs through a heap of runs, a few per ring and round. A
 * binary heap of every record (as first built) cost log2 of the window's
 * records per record, with a cache miss at each level: 48% of the
 * recorder's CPU on a switch-heavy --off-cpu recording. Any order is
 * still sorted: out-of-order records only make more, shorter runs.
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

#include "grow.h"
#include "log_internal.h"
#include "reorder_internal.h"

#define BLOCK_SIZE (1u << 20)

struct block {
	size_t used; /* bytes carved, from data */
	size_t live; /* records carved and not yet released */
	size_t size; /* bytes of data */
	_Alignas(8) unsigned char data[];
};

/* A record's arrival number is its place in ent (dcp_reorder). */
struct queued_record {
	uint64_t time;
	uint32_t size;
	void *data;
	struct block *block;
};

/* Records head..end-1 by arrival number, in time order. */
struct run {
	uint64_t head, end;
};

struct dcp_reorder {
	/* queued records by arrival: record seq at ent[seq - ent_base] */
	struct queued_record *ent;
	uint64_t ent_base;
	size_t ent_cap;
	/* run r at runs[r - run_base]; the last one is open for appending */
	struct run *runs;
	uint64_t run_base;
	size_t nr_runs, runs_cap;
	/* the runs with records left, by their first record */
	uint64_t *heap;
	size_t heap_len, heap_cap;
	size_t count, bytes;
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

static struct run *run_at(struct dcp_reorder *q, uint64_t r)
{
	return &q->runs[r - q->run_base];
}

static struct queued_record *record_at(struct dcp_reorder *q, uint64_t seq)
{
	return &q->ent[seq - q->ent_base];
}

void dcp_reorder_free(struct dcp_reorder *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->nr_runs; i++)
		for (uint64_t n = q->runs[i].head; n < q->runs[i].end; n++) {
			struct block *b = record_at(q, n)->block;

			if (b != q->current && --b->live == 0)
				free(b);
		}
	free(q->current);
	free(q->ent);
	free(q->runs);
	free(q->heap);
	free(q);
}

/* Whether run a's first record leaves before run b's: by time, then
 * by arrival. */
static bool run_before(struct dcp_reorder *q, uint64_t a, uint64_t b)
{
	uint64_t x = run_at(q, a)->head, y = run_at(q, b)->head;

	if (record_at(q, x)->time != record_at(q, y)->time)
		return record_at(q, x)->time < record_at(q, y)->time;
	return x < y;
}

static void heap_sift_down(struct dcp_reorder *q, size_t i)
{
	uint64_t r = q->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= q->heap_len)
			break;
		m = l + 1 < q->heap_len &&
				    run_before(q, q->heap[l + 1], q->heap[l]) ?
			    l + 1 :
			    l;
		if (!run_before(q, q->heap[m], r))
			break;
		q->heap[i] = q->heap[m];
		i = m;
	}
	q->heap[i] = r;
}

static int heap_add(struct dcp_reorder *q, uint64_t r)
{
	uint64_t *heap =
		dcp_grow(q->heap, &q->heap_cap, q->heap_len + 1, sizeof(*heap));
	size_t i;

	if (!heap)
		return dcp_error(ENOMEM, "out of memory");
	q->heap = heap;
	i = q->heap_len++;
	while (i > 0 && run_before(q, r, q->heap[(i - 1) / 2])) {
		q->heap[i] = q->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->heap[i] = r;
	return 0;
}

/*
 * Room for one more record and one more run: the records and runs
 * released from the front are dropped first (moved down when they are at
 * least half of the array), else the arrays grow.
 */
static int make_room(struct dcp_reorder *q)
{
	uint64_t live = q->nr_runs ? q->runs[0].head : q->seq;
	size_t used = (size_t)(q->seq - q->ent_base);
	struct run *runs;

	/* runs emptied at the front go, but for the open one */
	while (q->nr_runs > 1 && q->runs[0].head == q->runs[0].end) {
		memmove(q->runs, q->runs + 1,
			(q->nr_runs - 1) * sizeof(*q->runs));
		q->nr_runs--;
		q->run_base++;
		live = q->runs[0].head;
	}
	if (used == q->ent_cap && live - q->ent_base >= q->ent_cap / 2 &&
	    q->ent_cap) {
		size_t keep = (size_t)(q->seq - live);

		memmove(q->ent, record_at(q, live), keep * sizeof(*q->ent));
		q->ent_base = live;
	} else if (used == q->ent_cap) {
		struct queued_record *ent = dcp_grow_from(
			q->ent, &q->ent_cap, used + 1, sizeof(*ent), 1024);

		if (!ent)
			return dcp_error(ENOMEM, "out of memory");
		q->ent = ent;
	}
	runs = dcp_grow(q->runs, &q->runs_cap, q->nr_runs + 1, sizeof(*runs));
	if (!runs)
		return dcp_error(ENOMEM, "out of memory");
	q->runs = runs;
	return 0;
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
	struct queued_record *rec;
	struct run *open;
	struct block *block;
	void *data;
	int ret = make_room(q);

	if (ret)
		return ret;
	data = carve(q, size, &block);
	if (!data)
		return dcp_error(ENOMEM, "out of memory");
	memcpy(data, record, size);
	rec = record_at(q, q->seq);
	rec->time = time;
	rec->size = (uint32_t)size;
	rec->data = data;
	rec->block = block;
	q->count++;
	q->bytes += size;
	open = q->nr_runs ? &q->runs[q->nr_runs - 1] : NULL;
	if (open && open->head < open->end &&
	    time >= record_at(q, open->end - 1)->time) {
		open->end++; /* in order: its run goes on */
	} else if (open && open->head == open->end) {
		/* the open run was emptied: it starts again here */
		open->head = q->seq;
		open->end = q->seq + 1;
		ret = heap_add(q, q->run_base + q->nr_runs - 1);
	} else {
		q->runs[q->nr_runs++] =
			(struct run){ .head = q->seq, .end = q->seq + 1 };
		ret = heap_add(q, q->run_base + q->nr_runs - 1);
	}
	q->seq++;
	if (ret) {
		/* not queued after all: forgotten, as if never pushed */
		q->runs[q->nr_runs - 1].end--;
		q->seq--;
		q->count--;
		q->bytes -= size;
		release(q, block);
	}
	return ret;
}

int dcp_reorder_flush(struct dcp_reorder *q, uint64_t upto, dcp_reorder_fn fn,
		      void *ctx)
{
	while (q->heap_len) {
		struct run *run = run_at(q, q->heap[0]);
		struct queued_record r = *record_at(q, run->head);
		int ret;

		if (r.time > upto)
			break;
		run->head++;
		if (run->head < run->end) {
			heap_sift_down(q, 0);
		} else if (--q->heap_len) {
			q->heap[0] = q->heap[q->heap_len];
			heap_sift_down(q, 0);
		}
		q->count--;
		q->bytes -= r.size;
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
	if (!q->heap_len)
		return UINT64_MAX;
	return q->ent[q->runs[q->heap[0] - q->run_base].head - q->ent_base]
		.time;
}
