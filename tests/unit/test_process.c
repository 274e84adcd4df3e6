// SPDX-License-Identifier: MIT
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "process_internal.h"

/* Check p's maps against an expected list of {start, end, pgoff, cookie}. */
static void check_maps(const struct dcp_process *p, const uint64_t (*want)[4],
		       size_t n)
{
	size_t i;

	assert_int_equal(p->nr_maps, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(p->maps[i].start, want[i][0]);
		assert_int_equal(p->maps[i].end, want[i][1]);
		assert_int_equal(p->maps[i].pgoff, want[i][2]);
		assert_int_equal(p->maps[i].cookie, want[i][3]);
	}
}

static void test_get_find(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	struct dcp_process *p, *q;

	assert_non_null(t);
	assert_null(dcp_process_table_find(t, 42));
	p = dcp_process_table_get(t, 42);
	assert_non_null(p);
	assert_int_equal(p->pid, 42);
	assert_string_equal(p->comm, "");
	assert_int_equal(p->nr_maps, 0);
	assert_ptr_equal(dcp_process_table_find(t, 42), p);
	assert_ptr_equal(dcp_process_table_get(t, 42), p);
	q = dcp_process_table_get(t, 43);
	assert_true(q != p);
	assert_int_equal(dcp_process_table_count(t), 2);
	dcp_process_table_remove(t, 42);
	assert_null(dcp_process_table_find(t, 42));
	assert_ptr_equal(dcp_process_table_find(t, 43), q);
	assert_int_equal(dcp_process_table_count(t), 1);
	dcp_process_table_remove(t, 42); /* unknown pid: nothing */
	assert_int_equal(dcp_process_table_count(t), 1);
	dcp_process_table_free(t);
}

static void test_map_insert_find(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	struct dcp_process *p = dcp_process_table_get(t, 1);
	const struct dcp_map *m;

	/* out of order inserts end up sorted */
	assert_int_equal(dcp_process_map_insert(p, 0x3000, 0x1000, 0, 3, 5), 0);
	assert_int_equal(dcp_process_map_insert(p, 0x1000, 0x1000, 0x10, 1, 5),
			 0);
	assert_int_equal(dcp_process_map_insert(p, 0x2000, 0x800, 0x20, 2, 5),
			 0);
	const uint64_t want[][4] = { { 0x1000, 0x2000, 0x10, 1 },
				     { 0x2000, 0x2800, 0x20, 2 },
				     { 0x3000, 0x4000, 0, 3 } };
	check_maps(p, want, 3);

	assert_null(dcp_process_map_find(p, 0));
	assert_null(dcp_process_map_find(p, 0xfff));
	m = dcp_process_map_find(p, 0x1000);
	assert_non_null(m);
	assert_int_equal(m->cookie, 1);
	assert_int_equal(m->prot, 5);
	assert_int_equal(dcp_process_map_find(p, 0x1fff)->cookie, 1);
	assert_int_equal(dcp_process_map_find(p, 0x2000)->cookie, 2);
	assert_null(dcp_process_map_find(p, 0x2800)); /* the gap */
	assert_null(dcp_process_map_find(p, 0x2fff));
	assert_int_equal(dcp_process_map_find(p, 0x3fff)->cookie, 3);
	assert_null(dcp_process_map_find(p, 0x4000));
	assert_null(dcp_process_map_find(p, UINT64_MAX));

	/* zero length: nothing */
	assert_int_equal(dcp_process_map_insert(p, 0x9000, 0, 0, 9, 5), 0);
	assert_int_equal(p->nr_maps, 3);
	dcp_process_table_free(t);
}

static void test_overlap_middle_split(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	struct dcp_process *p = dcp_process_table_get(t, 1);

	assert_int_equal(
		dcp_process_map_insert(p, 0x10000, 0x10000, 0x5000, 1, 5), 0);
	/* a new map in the middle splits the old one around it */
	assert_int_equal(dcp_process_map_insert(p, 0x14000, 0x2000, 0, 2, 5),
			 0);
	const uint64_t want[][4] = { { 0x10000, 0x14000, 0x5000, 1 },
				     { 0x14000, 0x16000, 0, 2 },
				     { 0x16000, 0x20000, 0x5000 + 0x6000, 1 } };
	check_maps(p, want, 3);
	/* offsets in the right piece still point into the same file bytes */
	const struct dcp_map *m = dcp_process_map_find(p, 0x17010);
	assert_int_equal(0x17010 - m->start + m->pgoff,
			 0x17010 - 0x10000 + 0x5000);
	dcp_process_table_free(t);
}

static void test_overlap_cover_and_edges(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	struct dcp_process *p = dcp_process_table_get(t, 1);

	dcp_process_map_insert(p, 0x1000, 0x1000, 0, 1, 5);
	dcp_process_map_insert(p, 0x2000, 0x1000, 0, 2, 5);
	dcp_process_map_insert(p, 0x3000, 0x1000, 0, 3, 5);
	dcp_process_map_insert(p, 0x5000, 0x1000, 0x100, 4, 5);

	/* covering 2 and 3 exactly, plus cutting the left of 4 */
	assert_int_equal(dcp_process_map_insert(p, 0x2000, 0x3800, 0, 7, 5), 0);
	const uint64_t want1[][4] = { { 0x1000, 0x2000, 0, 1 },
				      { 0x2000, 0x5800, 0, 7 },
				      { 0x5800, 0x6000, 0x100 + 0x800, 4 } };
	check_maps(p, want1, 3);

	/* partial on the right of 1 */
	assert_int_equal(dcp_process_map_insert(p, 0x1800, 0x400, 0x40, 8, 5),
			 0);
	const uint64_t want2[][4] = { { 0x1000, 0x1800, 0, 1 },
				      { 0x1800, 0x1c00, 0x40, 8 },
				      { 0x1c00, 0x2000, 0xc00, 1 },
				      { 0x2000, 0x5800, 0, 7 },
				      { 0x5800, 0x6000, 0x900, 4 } };
	check_maps(p, want2, 5);

	/* right part of one and left part of the next */
	assert_int_equal(dcp_process_map_insert(p, 0x1a00, 0x800, 0, 9, 5), 0);
	const uint64_t want3[][4] = { { 0x1000, 0x1800, 0, 1 },
				      { 0x1800, 0x1a00, 0x40, 8 },
				      { 0x1a00, 0x2200, 0, 9 },
				      { 0x2200, 0x5800, 0x200, 7 },
				      { 0x5800, 0x6000, 0x900, 4 } };
	check_maps(p, want3, 5);

	/* one map over everything */
	assert_int_equal(dcp_process_map_insert(p, 0, 0x10000, 0, 10, 5), 0);
	const uint64_t want4[][4] = { { 0, 0x10000, 0, 10 } };
	check_maps(p, want4, 1);

	/* the same range again replaces, never duplicates */
	assert_int_equal(dcp_process_map_insert(p, 0, 0x10000, 0, 11, 5), 0);
	const uint64_t want5[][4] = { { 0, 0x10000, 0, 11 } };
	check_maps(p, want5, 1);
	dcp_process_table_free(t);
}

static void test_remove(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	struct dcp_process *p = dcp_process_table_get(t, 1);

	dcp_process_map_insert(p, 0x10000, 0x10000, 0x1000, 1, 5);
	dcp_process_map_insert(p, 0x30000, 0x1000, 0, 2, 5);

	/* a hole in the middle */
	assert_int_equal(dcp_process_map_remove(p, 0x12000, 0x1000), 0);
	const uint64_t want1[][4] = { { 0x10000, 0x12000, 0x1000, 1 },
				      { 0x13000, 0x20000, 0x4000, 1 },
				      { 0x30000, 0x31000, 0, 2 } };
	check_maps(p, want1, 3);
	assert_null(dcp_process_map_find(p, 0x12800));

	/* the left edge of a map */
	assert_int_equal(dcp_process_map_remove(p, 0x13000, 0x1000), 0);
	/* the right edge, across the gap, and all of the last map */
	assert_int_equal(dcp_process_map_remove(p, 0x1f000, 0x20000), 0);
	const uint64_t want2[][4] = { { 0x10000, 0x12000, 0x1000, 1 },
				      { 0x14000, 0x1f000, 0x5000, 1 } };
	check_maps(p, want2, 2);

	/* nothing mapped there */
	assert_int_equal(dcp_process_map_remove(p, 0x50000, 0x1000), 0);
	check_maps(p, want2, 2);
	assert_int_equal(dcp_process_map_remove(p, 0, UINT64_MAX), 0);
	assert_int_equal(p->nr_maps, 0);
	dcp_process_table_free(t);
}

static void test_fork_exec(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	struct dcp_process *parent = dcp_process_table_get(t, 100), *child;

	strcpy(parent->comm, "bash");
	parent->target = true;
	dcp_process_map_insert(parent, 0x1000, 0x1000, 0, 1, 5);
	dcp_process_map_insert(parent, 0x4000, 0x1000, 0, 2, 5);

	child = dcp_process_table_fork(t, 100, 200);
	assert_non_null(child);
	parent = dcp_process_table_find(t, 100);
	assert_int_equal(child->pid, 200);
	assert_int_equal(child->ppid, 100);
	assert_string_equal(child->comm, "bash");
	assert_true(child->target);
	const uint64_t both[][4] = { { 0x1000, 0x2000, 0, 1 },
				     { 0x4000, 0x5000, 0, 2 } };
	check_maps(child, both, 2);
	assert_ptr_not_equal(child->maps, parent->maps);

	/* independent afterwards */
	dcp_process_map_insert(child, 0x1000, 0x1000, 0, 3, 5);
	dcp_process_map_remove(parent, 0x4000, 0x1000);
	const uint64_t want_parent[][4] = { { 0x1000, 0x2000, 0, 1 } };
	const uint64_t want_child[][4] = { { 0x1000, 0x2000, 0, 3 },
					   { 0x4000, 0x5000, 0, 2 } };
	check_maps(parent, want_parent, 1);
	check_maps(child, want_child, 2);
	strcpy(child->comm, "ls");
	assert_string_equal(parent->comm, "bash");

	/* exec: a new address space, same process */
	dcp_process_exec(child);
	assert_int_equal(child->nr_maps, 0);
	assert_null(dcp_process_map_find(child, 0x1000));
	assert_int_equal(child->pid, 200);
	assert_string_equal(child->comm, "ls");
	assert_int_equal(dcp_process_map_insert(child, 0x8000, 0x1000, 0, 4, 5),
			 0);
	assert_int_equal(dcp_process_map_find(child, 0x8000)->cookie, 4);

	/* a reused pid: the old entry is replaced */
	child = dcp_process_table_fork(t, 100, 200);
	check_maps(child, want_parent, 1);
	assert_string_equal(child->comm, "bash");
	assert_int_equal(dcp_process_table_count(t), 2);

	/* unknown parent: an empty child */
	child = dcp_process_table_fork(t, 999, 300);
	assert_non_null(child);
	assert_int_equal(child->nr_maps, 0);
	assert_string_equal(child->comm, "");
	assert_false(child->target);
	assert_null(dcp_process_table_find(t, 999));
	assert_int_equal(dcp_process_table_count(t), 3);
	dcp_process_table_free(t);
}

static int count_fn(struct dcp_process *p, void *ctx)
{
	uint64_t *sum = ctx;

	*sum += (uint64_t)p->pid;
	return 0;
}

static int stop_fn(struct dcp_process *p, void *ctx)
{
	int *calls = ctx;

	return ++*calls == 3 ? 7 : 0;
}

static int remove_fn(struct dcp_process *p, void *ctx)
{
	if (p->pid % 2)
		dcp_process_table_remove(ctx, p->pid);
	return 0;
}

static void test_for_each(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	uint64_t sum = 0;
	int calls = 0;
	pid_t pid;

	for (pid = 1; pid <= 1000; pid++)
		assert_non_null(dcp_process_table_get(t, pid));
	assert_int_equal(dcp_process_table_for_each(t, count_fn, &sum), 0);
	assert_int_equal(sum, 1000 * 1001 / 2);
	assert_int_equal(dcp_process_table_for_each(t, stop_fn, &calls), 7);
	assert_int_equal(calls, 3);

	/* the callback may retire the process it is given */
	assert_int_equal(dcp_process_table_for_each(t, remove_fn, t), 0);
	assert_int_equal(dcp_process_table_count(t), 500);
	sum = 0;
	dcp_process_table_for_each(t, count_fn, &sum);
	assert_int_equal(sum, 2 * (500 * 501 / 2));
	dcp_process_table_free(t);
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void churn(struct dcp_process_table *t, pid_t first, int cycles)
{
	int i;

	for (i = 0; i < cycles; i++) {
		pid_t pid = first + i;
		struct dcp_process *p = dcp_process_table_fork(t, 1, pid);

		assert_non_null(p);
		assert_int_equal(
			dcp_process_map_insert(p, 0x100000, 0x1000, 0, 9, 5),
			0);
		/* a few alive at once, like a busy shell */
		if (i >= 8)
			dcp_process_table_remove(t, pid - 8);
	}
	for (i = cycles - 8; i < cycles; i++)
		dcp_process_table_remove(t, first + i);
}

static void test_churn_bounded(void **state)
{
	struct dcp_process_table *t = dcp_process_table_new();
	struct dcp_process *init = dcp_process_table_get(t, 1);
	size_t base_count, after_warmup, after;
	int i;

	for (i = 0; i < 20; i++)
		dcp_process_map_insert(init, 0x1000 * (uint64_t)(2 * i + 1),
				       0x1000, 0, (uint32_t)i, 5);
	base_count = dcp_process_table_count(t);
	churn(t, 2, 1000);
	assert_int_equal(dcp_process_table_count(t), base_count);
	after_warmup = heap_in_use();

	churn(t, 2000, 100000);
	assert_int_equal(dcp_process_table_count(t), base_count);
	after = heap_in_use();
	/* 100,000 processes of ~1 KiB each came and went: a leak or piling
	 * tombstones would show as megabytes. */
	assert_true(after < after_warmup + 16 * 1024);

	/* the same after a burst of many live processes is retired */
	for (i = 0; i < 50000; i++)
		assert_non_null(dcp_process_table_get(t, 200000 + i));
	for (i = 0; i < 50000; i++)
		dcp_process_table_remove(t, 200000 + i);
	assert_int_equal(dcp_process_table_count(t), base_count);
	assert_true(heap_in_use() < after_warmup + 16 * 1024);
	assert_int_equal(dcp_process_table_find(t, 1)->nr_maps, 20);
	dcp_process_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_find),
		cmocka_unit_test(test_map_insert_find),
		cmocka_unit_test(test_overlap_middle_split),
		cmocka_unit_test(test_overlap_cover_and_edges),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_for_each),
		cmocka_unit_test(test_churn_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
