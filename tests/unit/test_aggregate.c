// SPDX-License-Identifier: MIT
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "aggregate_internal.h"
#include "symtab_internal.h"

static void test_strings(void **state)
{
	struct dcp_aggregate *a = dcp_aggregate_new();
	char buf[16];

	assert_non_null(a);
	strcpy(buf, "bash");
	assert_int_equal(dcp_aggregate_intern_string(a, buf), 0);
	assert_int_equal(dcp_aggregate_intern_string(a, "zsh"), 1);
	assert_int_equal(dcp_aggregate_intern_string(a, ""), 2);
	assert_int_equal(dcp_aggregate_intern_string(a, "bash"), 0);
	assert_int_equal(dcp_aggregate_intern_string(a, "zsh"), 1);
	assert_int_equal(dcp_aggregate_intern_string(a, "bas"), 3);
	assert_int_equal(dcp_aggregate_nr_strings(a), 4);
	/* The table keeps its own copy. */
	strcpy(buf, "XXXX");
	assert_string_equal(dcp_aggregate_string(a, 0), "bash");
	assert_string_equal(dcp_aggregate_string(a, 2), "");
	assert_null(dcp_aggregate_string(a, 4));
	dcp_aggregate_free(a);
}

static void test_stacks(void **state)
{
	struct dcp_aggregate *a = dcp_aggregate_new();
	struct dcp_frame f[3] = {
		{ .cookie = 1, .flags = 0, .offset = 0x1000 },
		{ .cookie = 2, .flags = DCP_FRAME_KERNEL, .offset = 0x2000 },
		{ .cookie = 1, .flags = 0, .offset = 0x3000 },
	};
	struct dcp_frame g[3];
	const struct dcp_frame *got;
	uint32_t nr;

	assert_non_null(a);
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 3), 0);
	memcpy(g, f, sizeof(g));
	assert_int_equal(dcp_aggregate_intern_stack(a, g, 3), 0);
	/* Each field of each frame, and the depth, make a stack distinct. */
	g[1].flags = 0;
	assert_int_equal(dcp_aggregate_intern_stack(a, g, 3), 1);
	memcpy(g, f, sizeof(g));
	g[2].cookie = 3;
	assert_int_equal(dcp_aggregate_intern_stack(a, g, 3), 2);
	memcpy(g, f, sizeof(g));
	g[0].offset++;
	assert_int_equal(dcp_aggregate_intern_stack(a, g, 3), 3);
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 2), 4);
	assert_int_equal(dcp_aggregate_intern_stack(a, NULL, 0), 5);
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 0), 5);
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 3), 0);
	assert_int_equal(dcp_aggregate_nr_stacks(a), 6);

	got = dcp_aggregate_stack(a, 3, &nr);
	assert_int_equal(nr, 3);
	assert_int_equal(got[0].offset, 0x1001);
	assert_memory_equal(&got[1], &f[1], 2 * sizeof(f[0]));
	dcp_aggregate_stack(a, 5, &nr);
	assert_int_equal(nr, 0);
	assert_null(dcp_aggregate_stack(a, 6, &nr));
	dcp_aggregate_free(a);
}

static void test_rows(void **state)
{
	struct dcp_aggregate *a = dcp_aggregate_new();
	struct dcp_row_key k1 = { 0, 100, 0, 0 }, k2 = { 0, 101, 0, 0 },
			   k3 = { 1, 100, 0, 0 }, k4 = { 0, 100, 1, 0 }, key;
	uint64_t count;

	assert_non_null(a);
	assert_int_equal(dcp_aggregate_add(a, &k1, 1), 0);
	assert_int_equal(dcp_aggregate_add(a, &k2, 5), 0);
	assert_int_equal(dcp_aggregate_add(a, &k1, 2), 0);
	assert_int_equal(dcp_aggregate_add(a, &k3, 7), 0);
	assert_int_equal(dcp_aggregate_add(a, &k4, 11), 0);
	assert_int_equal(dcp_aggregate_add(a, &k1, 3), 0);
	assert_int_equal(dcp_aggregate_nr_rows(a), 4);

	dcp_aggregate_row(a, 0, &key, &count);
	assert_memory_equal(&key, &k1, sizeof(key));
	assert_int_equal(count, 6);
	dcp_aggregate_row(a, 1, &key, &count);
	assert_memory_equal(&key, &k2, sizeof(key));
	assert_int_equal(count, 5);
	dcp_aggregate_row(a, 2, &key, &count);
	assert_memory_equal(&key, &k3, sizeof(key));
	assert_int_equal(count, 7);
	dcp_aggregate_row(a, 3, &key, &count);
	assert_memory_equal(&key, &k4, sizeof(key));
	assert_int_equal(count, 11);
	dcp_aggregate_free(a);
}

/* Threads: interned (tid, name) pairs from id 1; rows of one process,
 * stack and name apart by thread. */
static void test_threads(void **state)
{
	struct dcp_aggregate *a = dcp_aggregate_new();
	struct dcp_row_key k1 = { 0, 100, 0, 0 }, k2 = k1, key;
	struct dcp_agg_thread w1 = { 101, 1, 0 }, w2 = { 102, 1, 0 }, t;
	struct dcp_agg_cgroup c1 = { 42, 2, DCP_AGG_NO_STRING }, c2 = c1, c;
	int64_t t1, t2, g1, g2;
	uint64_t count;

	assert_non_null(a);
	assert_int_equal(dcp_aggregate_intern_string(a, "proc"), 0);
	assert_int_equal(dcp_aggregate_intern_string(a, "worker"), 1);
	assert_int_equal(dcp_aggregate_intern_string(a, "/a.service"), 2);
	t1 = dcp_aggregate_intern_thread(a, &w1);
	t2 = dcp_aggregate_intern_thread(a, &w2);
	assert_int_equal(t1, 1);
	assert_int_equal(t2, 2);
	assert_int_equal(dcp_aggregate_intern_thread(a, &w1), 1);
	assert_int_equal(dcp_aggregate_nr_threads(a), 2);
	assert_true(dcp_aggregate_thread(a, 2, &t));
	assert_int_equal(t.tid, 102);
	assert_int_equal(t.comm_id, 1);
	assert_false(dcp_aggregate_thread(a, 0, &t));
	assert_false(dcp_aggregate_thread(a, 3, &t));

	/* a cgroup made again under its path has another kernel id: two;
	 * a thread in another cgroup is another thread */
	c2.kernel_id = 43;
	g1 = dcp_aggregate_intern_cgroup(a, &c1);
	g2 = dcp_aggregate_intern_cgroup(a, &c2);
	assert_int_equal(g1, 1);
	assert_int_equal(g2, 2);
	assert_int_equal(dcp_aggregate_intern_cgroup(a, &c1), 1);
	assert_int_equal(dcp_aggregate_nr_cgroups(a), 2);
	assert_true(dcp_aggregate_cgroup(a, 2, &c));
	assert_int_equal(c.kernel_id, 43);
	assert_int_equal(c.path_id, 2);
	assert_false(dcp_aggregate_cgroup(a, 3, &c));
	w1.cgroup = (uint32_t)g2;
	assert_int_equal(dcp_aggregate_intern_thread(a, &w1), 3);
	assert_true(dcp_aggregate_thread(a, 3, &t));
	assert_int_equal(t.cgroup, 2);
	w1.cgroup = 0;

	k2.thread_id = (uint32_t)t1;
	assert_int_equal(dcp_aggregate_add(a, &k1, 1), 0);
	assert_int_equal(dcp_aggregate_add(a, &k2, 2), 0);
	assert_int_equal(dcp_aggregate_add(a, &k2, 3), 0);
	assert_int_equal(dcp_aggregate_nr_rows(a), 2);
	dcp_aggregate_row(a, 1, &key, &count);
	assert_int_equal(key.thread_id, 1);
	assert_int_equal(count, 5);
	dcp_aggregate_free(a);
}

static void test_unflushed(void **state)
{
	struct dcp_aggregate *a = dcp_aggregate_new();
	struct dcp_row_key k1 = { 0, 1, 0, 0 }, k2 = { 0, 2, 0, 0 };
	uint64_t count;

	assert_non_null(a);
	dcp_aggregate_add(a, &k1, 4);
	dcp_aggregate_add(a, &k2, 1);
	assert_int_equal(dcp_aggregate_row_unflushed(a, 0), 4);
	assert_int_equal(dcp_aggregate_row_unflushed(a, 1), 1);
	dcp_aggregate_mark_flushed(a);
	assert_int_equal(dcp_aggregate_row_unflushed(a, 0), 0);
	assert_int_equal(dcp_aggregate_row_unflushed(a, 1), 0);
	dcp_aggregate_add(a, &k1, 3);
	assert_int_equal(dcp_aggregate_row_unflushed(a, 0), 3);
	assert_int_equal(dcp_aggregate_row_unflushed(a, 1), 0);
	dcp_aggregate_row(a, 0, NULL, &count);
	assert_int_equal(count, 7);
	dcp_aggregate_mark_flushed(a);
	assert_int_equal(dcp_aggregate_row_unflushed(a, 0), 0);
	dcp_aggregate_row(a, 0, NULL, &count);
	assert_int_equal(count, 7);
	dcp_aggregate_free(a);
}

#define MANY 100000u

static void make_stack(struct dcp_frame *f, uint32_t i)
{
	f[0] = (struct dcp_frame){ .cookie = i % 7, .offset = i };
	f[1] = (struct dcp_frame){ .cookie = 1, .offset = (uint64_t)i * 3 };
	f[2] = (struct dcp_frame){ .cookie = 2, .flags = i & 1, .offset = 9 };
}

static void test_many(void **state)
{
	struct dcp_aggregate *a = dcp_aggregate_new();
	const struct dcp_frame *first, *got;
	struct dcp_frame f[3];
	struct dcp_row_key key;
	uint64_t count, total = 0;
	uint32_t i, nr;
	size_t r;

	assert_non_null(a);
	for (i = 0; i < MANY; i++) {
		make_stack(f, i);
		assert_int_equal(dcp_aggregate_intern_stack(a, f, 3), i);
		if (i == 0)
			first = dcp_aggregate_stack(a, 0, &nr);
	}
	assert_int_equal(dcp_aggregate_nr_stacks(a), MANY);
	/* Growth never moves the frames handed out. */
	assert_ptr_equal(dcp_aggregate_stack(a, 0, &nr), first);
	for (i = 0; i < MANY; i++) {
		make_stack(f, i);
		assert_int_equal(dcp_aggregate_intern_stack(a, f, 3), i);
		got = dcp_aggregate_stack(a, i, &nr);
		assert_int_equal(nr, 3);
		assert_memory_equal(got, f, sizeof(f));
	}
	for (i = 0; i < 2 * MANY; i++) {
		key = (struct dcp_row_key){ .comm_id = i % 3,
					    .pid = i % 1000,
					    .stack_id = i % MANY };
		assert_int_equal(dcp_aggregate_add(a, &key, i % 5 + 1), 0);
	}
	/* (i % 3, i % 1000, i % 100000) repeats with period 300000 > 2e5,
	 * so every i made a row of its own */
	assert_int_equal(dcp_aggregate_nr_rows(a), 2 * MANY);
	for (r = 0; r < dcp_aggregate_nr_rows(a); r++) {
		dcp_aggregate_row(a, r, &key, &count);
		assert_int_equal(key.pid, r % 1000);
		total += count;
	}
	for (i = 0; i < 2 * MANY; i++)
		total -= i % 5 + 1;
	assert_int_equal(total, 0);
	dcp_aggregate_free(a);
}

static void test_deep_stack(void **state)
{
	static struct dcp_frame f[10000];
	struct dcp_aggregate *a = dcp_aggregate_new();
	const struct dcp_frame *got;
	uint32_t i, nr;

	for (i = 0; i < 10000; i++)
		f[i] = (struct dcp_frame){ .cookie = i,
					   .offset = ~(uint64_t)i };
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 3), 0);
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 10000), 1);
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 4), 2);
	assert_int_equal(dcp_aggregate_intern_stack(a, f, 10000), 1);
	got = dcp_aggregate_stack(a, 1, &nr);
	assert_int_equal(nr, 10000);
	assert_memory_equal(got, f, sizeof(f));
	got = dcp_aggregate_stack(a, 2, &nr);
	assert_int_equal(nr, 4);
	assert_memory_equal(got, f, 4 * sizeof(f[0]));
	dcp_aggregate_free(a);
}

static void test_symtab(void **state)
{
	struct dcp_symtab *s = dcp_symtab_new();
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	uint64_t offset;
	uint32_t cookie, i;
	char name[32];

	assert_non_null(s);
	strcpy(name, "main");
	assert_int_equal(dcp_symtab_add(s, 1, 0x1010, name, 0x1000, 0x40), 0);
	strcpy(name, "XXXX");
	assert_int_equal(dcp_symtab_add(s, 2, 0x1010, NULL, 0, 0), 0);
	assert_int_equal(dcp_symtab_lookup(s, 1, 0x1010, &sym), 0);
	assert_string_equal(sym.name, "main");
	assert_int_equal(sym.start, 0x1000);
	assert_int_equal(sym.size, 0x40);
	assert_int_equal(dcp_symtab_lookup(s, 2, 0x1010, &sym), 0);
	assert_null(sym.name);
	assert_int_equal(dcp_symtab_lookup(s, 1, 0x1011, &sym), -ENOENT);
	assert_null(sym.name);
	assert_int_equal(dcp_symtab_lookup(s, 3, 0x1010, &sym), -ENOENT);

	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		assert_int_equal(dcp_symtab_add(s, 7, i * 16, name, i * 16, 16),
				 0);
	}
	assert_int_equal(dcp_symtab_count(s), 5002);
	dcp_symtab_entry(s, 0, &cookie, &offset, &sym);
	assert_int_equal(cookie, 1);
	assert_int_equal(offset, 0x1010);
	assert_string_equal(sym.name, "main");
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		assert_int_equal(dcp_symtab_lookup(s, 7, i * 16, &sym), 0);
		assert_string_equal(sym.name, name);
		dcp_symtab_entry(s, i + 2, &cookie, &offset, &sym);
		assert_int_equal(offset, i * 16);
	}
	/* A second answer for an address replaces the first in place. */
	assert_int_equal(dcp_symtab_add(s, 2, 0x1010, "late", 0x1000, 8), 0);
	assert_int_equal(dcp_symtab_count(s), 5002);
	dcp_symtab_entry(s, 1, &cookie, &offset, &sym);
	assert_string_equal(sym.name, "late");
	dcp_symtab_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_unflushed),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_deep_stack),
		cmocka_unit_test(test_symtab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
