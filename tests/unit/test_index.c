// SPDX-License-Identifier: MIT
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hash.h"
#include "index.h"

/* A table of uint64_t keys: keys[id], live[id], hashed by key_hash. */
struct table {
	struct dcp_index ix;
	uint64_t keys[4096];
	bool live[4096];
	uint32_t n;
	uint64_t hash_mask; /* few bits: long runs of equal hashes */
};

/* Inverted so that few bits give homes in the last slots, whose runs
 * wrap around to the first. */
static uint64_t key_hash(const struct table *t, uint64_t key)
{
	return ~(dcp_hash_mix(key, 0) & t->hash_mask);
}

/* The hash masks the tests run with (cmocka's state). */
static uint64_t spread = UINT64_MAX;
/* Eight homes, the last slots, for 3000 keys: runs thousands of slots
 * long that wrap around. */
static uint64_t eight_homes = 7;
/* Runs of equal hashes that wrap past the last slot, with removals. */
static uint64_t few_homes = 0x7f;

static uint64_t hash_of(const void *ctx, uint32_t id)
{
	const struct table *t = ctx;

	return key_hash(t, t->keys[id]);
}

/* The id of key, or -1; *pos gets where the probe ended. */
static int64_t find(const struct table *t, uint64_t key, size_t *pos)
{
	uint64_t h = key_hash(t, key);
	uint32_t id;
	size_t p;

	dcp_index_for_each(&t->ix, h, p, id) {
		if (t->keys[id] == key) {
			*pos = p;
			return id;
		}
	}
	*pos = p;
	return -1;
}

/* The id of key, added with the next id when new. */
static int64_t intern(struct table *t, uint64_t key)
{
	size_t pos;
	int64_t id = find(t, key, &pos);

	if (id >= 0)
		return id;
	t->keys[t->n] = key;
	t->live[t->n] = true;
	assert_int_equal(
		dcp_index_add(&t->ix, pos, key_hash(t, key), t->n, hash_of, t),
		0);
	return t->n++;
}

static void check_all(const struct table *t)
{
	size_t pos, nr = 0;

	for (uint32_t id = 0; id < t->n; id++) {
		int64_t got = find(t, t->keys[id], &pos);

		if (t->live[id]) {
			assert_int_equal(got, id);
			assert_int_equal(t->ix.slots[pos], id + 1);
			nr++;
		} else {
			assert_int_equal(got, -1);
			assert_int_equal(t->ix.slots[pos], 0);
		}
	}
	assert_int_equal(t->ix.nr, nr);
	/* Never more than half full. */
	assert_true(2 * t->ix.nr <= t->ix.mask + 1);
}

static void test_intern(void **state)
{
	struct table *t = calloc(1, sizeof(*t));
	size_t slots_before;

	assert_non_null(t);
	t->hash_mask = *(uint64_t *)*state;
	assert_int_equal(dcp_index_init(&t->ix, 4), 0);
	for (uint64_t k = 0; k < 3000; k++)
		assert_int_equal(intern(t, k * 7919), k);
	/* Ids stay with their keys through every growth. */
	slots_before = t->ix.mask + 1;
	for (uint64_t k = 0; k < 3000; k++)
		assert_int_equal(intern(t, k * 7919), k);
	assert_int_equal(t->ix.mask + 1, slots_before);
	assert_int_equal(t->n, 3000);
	check_all(t);
	dcp_index_free(&t->ix);
	assert_null(t->ix.slots);
	free(t);
}

static void test_half_full(void **state)
{
	struct table *t = calloc(1, sizeof(*t));

	(void)state;
	assert_non_null(t);
	t->hash_mask = UINT64_MAX;
	assert_int_equal(dcp_index_init(&t->ix, 8), 0);
	for (uint64_t k = 0; k < 4; k++)
		intern(t, k);
	assert_int_equal(t->ix.mask + 1, 8);
	/* The fifth id would make 8 slots more than half full. */
	intern(t, 4);
	assert_int_equal(t->ix.mask + 1, 16);
	assert_int_equal(t->ix.nr, 5);
	check_all(t);
	dcp_index_free(&t->ix);
	free(t);
}

static void remove_key(struct table *t, uint32_t id)
{
	size_t pos;

	assert_int_equal(find(t, t->keys[id], &pos), id);
	dcp_index_remove(&t->ix, pos, hash_of, t);
	t->live[id] = false;
}

static void test_remove(void **state)
{
	struct table *t = calloc(1, sizeof(*t));
	uint64_t r = 1;

	assert_non_null(t);
	t->hash_mask = *(uint64_t *)*state;
	assert_int_equal(dcp_index_init(&t->ix, 64), 0);
	for (uint64_t k = 0; k < 2000; k++)
		intern(t, k + 1);
	/* Every third, then others at random: the rest stay reachable. */
	for (uint32_t id = 0; id < t->n; id += 3)
		remove_key(t, id);
	check_all(t);
	for (int i = 0; i < 1000; i++) {
		uint32_t id;

		r = r * 6364136223846793005ull + 1442695040888963407ull;
		id = (uint32_t)(r >> 33) % t->n;
		if (t->live[id])
			remove_key(t, id);
	}
	check_all(t);
	/* A removed key comes back under a new id. */
	assert_false(t->live[0]);
	assert_int_equal(intern(t, t->keys[0]), 2000);
	t->keys[0] = 0; /* no key of the table: id 0 stays out */
	check_all(t);
	for (uint32_t id = 0; id < t->n; id++)
		if (t->live[id])
			remove_key(t, id);
	check_all(t);
	for (size_t i = 0; i <= t->ix.mask; i++)
		assert_int_equal(t->ix.slots[i], 0);
	dcp_index_free(&t->ix);
	free(t);
}

static void test_remove_wraps(void **state)
{
	struct table *t = calloc(1, sizeof(*t));
	size_t pos;

	(void)state;
	assert_non_null(t);
	/* Every key at home in the last of 8 slots: a run 7, 0, 1, 2. */
	t->hash_mask = 0;
	assert_int_equal(dcp_index_init(&t->ix, 8), 0);
	for (uint32_t id = 0; id < 4; id++) {
		assert_int_equal(find(t, 100 + id, &pos), -1);
		assert_int_equal(pos, (7 + id) & 7);
		assert_int_equal(intern(t, 100 + id), id);
	}
	remove_key(t, 0);
	/* The run shifted back over the wrap: 1 at 7, 2 at 0, 3 at 1. */
	assert_int_equal(t->ix.slots[7], 2);
	assert_int_equal(t->ix.slots[0], 3);
	assert_int_equal(t->ix.slots[1], 4);
	assert_int_equal(t->ix.slots[2], 0);
	check_all(t);
	/* From the middle of the run: the rest moves back too. */
	remove_key(t, 2);
	assert_int_equal(t->ix.slots[7], 2);
	assert_int_equal(t->ix.slots[0], 4);
	assert_int_equal(t->ix.slots[1], 0);
	check_all(t);
	dcp_index_free(&t->ix);
	free(t);
}

static void test_hash_mix(void **state)
{
	(void)state;
	/* Both words and their order count. */
	assert_int_not_equal(dcp_hash_mix(1, 2), dcp_hash_mix(2, 1));
	assert_int_not_equal(dcp_hash_mix(0, 0), dcp_hash_mix(0, 1));
	assert_int_not_equal(dcp_hash_mix(0, 0), dcp_hash_mix(1, 0));
	assert_int_equal(dcp_hash_mix(5, 6), dcp_hash_mix(5, 6));
	/* Small keys differ in the low bits that pick a slot. */
	assert_int_not_equal(dcp_hash_mix(1, 0) & 63, dcp_hash_mix(2, 0) & 63);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "test_intern_spread", test_intern, NULL, NULL, &spread },
		{ "test_intern_colliding", test_intern, NULL, NULL,
		  &eight_homes },
		cmocka_unit_test(test_half_full),
		{ "test_remove_spread", test_remove, NULL, NULL, &spread },
		{ "test_remove_colliding", test_remove, NULL, NULL,
		  &few_homes },
		cmocka_unit_test(test_remove_wraps),
		cmocka_unit_test(test_hash_mix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
