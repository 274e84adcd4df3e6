// SPDX-License-Identifier: MIT
/* The reorder window: records leave in (time, arrival) order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reorder_internal.h"

struct seen {
	uint64_t times[100000];
	uint32_t payloads[100000];
	size_t n;
	size_t stop_after;
};

static int collect(uint64_t time, const void *rec, size_t size, void *ctx)
{
	struct seen *s = ctx;

	assert_int_equal(size, sizeof(uint32_t));
	s->times[s->n] = time;
	memcpy(&s->payloads[s->n], rec, sizeof(uint32_t));
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 42 : 0;
}

static void test_interleaved_rings_come_out_sorted(void **state)
{
	struct dcp_reorder *q = dcp_reorder_new();
	struct seen *s = calloc(1, sizeof(*s));
	uint64_t ring_time[4] = { 0 };

	(void)state;
	srand(7);
	/* four "rings", each in its own time order, interleaved at random */
	for (uint32_t i = 0; i < 50000; i++) {
		int ring = rand() % 4;

		ring_time[ring] += 1 + (uint64_t)(rand() % 100);
		assert_int_equal(
			dcp_reorder_push(q, ring_time[ring], &i, sizeof(i)), 0);
	}
	assert_int_equal(dcp_reorder_count(q), 50000);
	assert_int_equal(dcp_reorder_bytes(q), 50000 * sizeof(uint32_t));
	assert_int_equal(dcp_reorder_flush(q, UINT64_MAX, collect, s), 0);
	assert_int_equal(s->n, 50000);
	for (size_t i = 1; i < s->n; i++)
		assert_true(s->times[i - 1] <= s->times[i]);
	assert_int_equal(dcp_reorder_count(q), 0);
	assert_int_equal(dcp_reorder_bytes(q), 0);
	assert_true(dcp_reorder_oldest(q) == UINT64_MAX);
	dcp_reorder_free(q);
	free(s);
}

static void test_flush_upto_keeps_newer(void **state)
{
	struct dcp_reorder *q = dcp_reorder_new();
	struct seen *s = calloc(1, sizeof(*s));
	uint64_t times[] = { 50, 10, 40, 20, 30 };

	(void)state;
	for (uint32_t i = 0; i < 5; i++)
		dcp_reorder_push(q, times[i], &i, sizeof(i));
	assert_int_equal(dcp_reorder_oldest(q), 10);
	assert_int_equal(dcp_reorder_flush(q, 30, collect, s), 0);
	assert_int_equal(s->n, 3);
	assert_int_equal(s->times[0], 10);
	assert_int_equal(s->times[2], 30);
	assert_int_equal(dcp_reorder_count(q), 2);
	assert_int_equal(dcp_reorder_oldest(q), 40);
	dcp_reorder_free(q); /* frees what is still queued */
	free(s);
}

static void test_equal_times_keep_arrival_order(void **state)
{
	struct dcp_reorder *q = dcp_reorder_new();
	struct seen *s = calloc(1, sizeof(*s));

	(void)state;
	for (uint32_t i = 0; i < 1000; i++)
		dcp_reorder_push(q, 5, &i, sizeof(i));
	dcp_reorder_flush(q, UINT64_MAX, collect, s);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(s->payloads[i], i);
	dcp_reorder_free(q);
	free(s);
}

static void test_callback_error_stops_flush(void **state)
{
	struct dcp_reorder *q = dcp_reorder_new();
	struct seen *s = calloc(1, sizeof(*s));

	(void)state;
	for (uint32_t i = 0; i < 10; i++)
		dcp_reorder_push(q, i, &i, sizeof(i));
	s->stop_after = 4;
	assert_int_equal(dcp_reorder_flush(q, UINT64_MAX, collect, s), 42);
	assert_int_equal(s->n, 4);
	assert_int_equal(dcp_reorder_count(q), 6);
	assert_int_equal(dcp_reorder_oldest(q), 4);
	dcp_reorder_free(q);
	free(s);
}

/*
 * Records of every size, up to one larger than a copy block, pushed and
 * released in rounds as the recorder does: each comes out whole (its
 * bytes a pattern of its own number), in order, while the window's
 * blocks fill, empty and are reused. Run under ASan (SANITIZE=1), this
 * also checks that no copy is read after its block was freed.
 */
struct checked {
	uint64_t last_time;
	size_t n;
};

static int check_pattern(uint64_t time, const void *rec, size_t size, void *ctx)
{
	struct checked *c = ctx;
	const unsigned char *p = rec;
	uint32_t id;

	assert_true(size >= sizeof(id));
	memcpy(&id, p, sizeof(id));
	assert_true(time >= c->last_time);
	c->last_time = time;
	for (size_t i = sizeof(id); i < size; i++)
		assert_int_equal(p[i], (unsigned char)(id * 31 + i));
	c->n++;
	return 0;
}

static void test_records_survive_block_reuse(void **state)
{
	struct dcp_reorder *q = dcp_reorder_new();
	struct checked c = { 0 };
	unsigned char *rec = malloc(3u << 20);
	uint64_t time = 0;
	uint32_t id = 0;

	(void)state;
	srand(11);
	for (int round = 0; round < 200; round++) {
		for (int k = 0; k < 100; k++, id++) {
			size_t size = 4 + (size_t)(rand() % 9000);

			if (id == 5000)
				size = 3u << 20; /* more than a block */
			memcpy(rec, &id, sizeof(id));
			for (size_t i = sizeof(id); i < size; i++)
				rec[i] = (unsigned char)(id * 31 + i);
			time += (uint64_t)(rand() % 3);
			assert_int_equal(dcp_reorder_push(q, time, rec, size),
					 0);
		}
		/* release all but the newest few, as a round does */
		assert_int_equal(dcp_reorder_flush(q, time > 20 ? time - 20 : 0,
						   check_pattern, &c),
				 0);
	}
	assert_int_equal(dcp_reorder_flush(q, UINT64_MAX, check_pattern, &c),
			 0);
	assert_int_equal(c.n, id);
	assert_int_equal(dcp_reorder_bytes(q), 0);
	/* some left queued at the end are freed with the window */
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(dcp_reorder_push(q, i, &i, sizeof(i)), 0);
	dcp_reorder_free(q);
	free(rec);
}

/*
 * As the recorder drains: each round takes every ring whole (its records
 * in time order, one run each), then releases what is older than the
 * newest time of the round before. Every record comes out once, in time
 * order, equal times in arrival order, while runs empty and their
 * records' room is reused.
 */
struct round_seen {
	uint64_t last_time, last_seq;
	size_t n;
};

static int check_round(uint64_t time, const void *rec, size_t size, void *ctx)
{
	struct round_seen *s = ctx;
	uint64_t seq;

	assert_int_equal(size, sizeof(seq));
	memcpy(&seq, rec, sizeof(seq));
	assert_true(time > s->last_time ||
		    (time == s->last_time && seq > s->last_seq) || !s->n);
	s->last_time = time;
	s->last_seq = seq;
	s->n++;
	return 0;
}

static void test_rings_drained_in_rounds(void **state)
{
	struct dcp_reorder *q = dcp_reorder_new();
	struct round_seen s = { 0 };
	uint64_t ring_time[8] = { 0 }, seq = 0, prev_max = 0, round_max = 0;

	(void)state;
	srand(3);
	for (int round = 0; round < 300; round++) {
		for (int ring = 0; ring < 8; ring++) {
			int n = rand() % 200;

			/* the rings' clocks agree: a round's records are
			 * younger than the round before's newest */
			if (ring_time[ring] < (uint64_t)round * 1000)
				ring_time[ring] = (uint64_t)round * 1000;
			for (int k = 0; k < n; k++, seq++) {
				/* ties within and across rings */
				ring_time[ring] += (uint64_t)(rand() % 3);
				assert_int_equal(
					dcp_reorder_push(q, ring_time[ring],
							 &seq, sizeof(seq)),
					0);
				if (ring_time[ring] > round_max)
					round_max = ring_time[ring];
			}
		}
		assert_int_equal(
			dcp_reorder_flush(q, prev_max, check_round, &s), 0);
		assert_true(dcp_reorder_oldest(q) > prev_max);
		prev_max = round_max;
	}
	assert_int_equal(dcp_reorder_flush(q, UINT64_MAX, check_round, &s), 0);
	assert_int_equal(s.n, seq);
	assert_int_equal(dcp_reorder_count(q), 0);
	dcp_reorder_free(q);
}

/* A record pushed while the window releases (a callback that queues). */
struct pushing {
	struct dcp_reorder *q;
	uint64_t times[64];
	size_t n;
};

static int push_back(uint64_t time, const void *rec, size_t size, void *ctx)
{
	struct pushing *p = ctx;
	uint32_t id;

	(void)size;
	memcpy(&id, rec, sizeof(id));
	p->times[p->n++] = time;
	if (id < 10) {
		id += 10;
		return dcp_reorder_push(p->q, time + 5, &id, sizeof(id));
	}
	return 0;
}

static void test_push_while_flushing(void **state)
{
	struct pushing p = { .q = dcp_reorder_new() };

	(void)state;
	for (uint32_t i = 0; i < 10; i++)
		dcp_reorder_push(p.q, i * 10, &i, sizeof(i));
	assert_int_equal(dcp_reorder_flush(p.q, UINT64_MAX, push_back, &p), 0);
	assert_int_equal(p.n, 20);
	for (size_t i = 1; i < p.n; i++)
		assert_true(p.times[i - 1] <= p.times[i]);
	dcp_reorder_free(p.q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_rings_come_out_sorted),
		cmocka_unit_test(test_flush_upto_keeps_newer),
		cmocka_unit_test(test_equal_times_keep_arrival_order),
		cmocka_unit_test(test_callback_error_stops_flush),
		cmocka_unit_test(test_records_survive_block_reuse),
		cmocka_unit_test(test_rings_drained_in_rounds),
		cmocka_unit_test(test_push_while_flushing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
