// SPDX-License-Identifier: MIT
/*
 * Python frames' user-space half (lib/record/bpf/python.c,
 * python_layout.c): CPython 3.11's location table read into lines, and
 * the layouts found by version.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bpf/python_internal.h"

/*
 * co_linetable of this function compiled by CPython 3.11.2 (first line 2),
 * and the line of each of its 83 code units as code.co_lines() gives them
 * (-1: None, no location):
 *
 * def f(x):
 *     a = 1
 *     if x:
 *         b = [i for i in range(3)]
 *
 *
 *
 *         return (a +
 *                 b[0])
 *     for i in range(2):
 *         try:
 *             a += i
 *         except Exception:
 *             pass
 *     return a
 */
static const uint8_t table[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xd8, 0x07, 0x08, 0xf0, 0x00,
	0x06, 0x05, 0x16, 0xd8, 0x0c, 0x21, 0xd0, 0x0c, 0x21, 0x9d, 0x05, 0x98,
	0x61, 0x99, 0x08, 0x9c, 0x08, 0xd0, 0x0c, 0x21, 0xd1, 0x0c, 0x21, 0xd4,
	0x0c, 0x21, 0x88, 0x01, 0xf0, 0x08, 0x00, 0x11, 0x12, 0xd8, 0x10, 0x11,
	0x90, 0x21, 0x94, 0x04, 0xf1, 0x03, 0x01, 0x11, 0x15, 0xf0, 0x00, 0x01,
	0x09, 0x16, 0xe5, 0x0d, 0x12, 0x90, 0x31, 0x89, 0x58, 0x8c, 0x58, 0xf0,
	0x00, 0x04, 0x05, 0x11, 0xf0, 0x00, 0x04, 0x05, 0x11, 0x88, 0x01, 0xf0,
	0x02, 0x03, 0x09, 0x11, 0xd8, 0x0c, 0x0d, 0x90, 0x11, 0x89, 0x46, 0x88,
	0x41, 0x88, 0x41, 0xf8, 0xdd, 0x0f, 0x18, 0xf0, 0x00, 0x01, 0x09, 0x11,
	0xf0, 0x00, 0x01, 0x09, 0x11, 0xf0, 0x00, 0x01, 0x09, 0x11, 0xd8, 0x0c,
	0x10, 0x88, 0x44, 0xf0, 0x03, 0x01, 0x09, 0x11, 0xf8, 0xf8, 0xf8, 0xe0,
	0x0b, 0x0c, 0x80, 0x48
};

static const int lines[] = { 2,	 3,  3,	 4,  4,	 5,  5,	 5,  5,	 5,  5,	 5,
			     5,	 5,  5,	 5,  5,	 5,  5,	 5,  5,	 5,  5,	 5,
			     5,	 5,  5,	 5,  5,	 5,  9,	 10, 10, 10, 10, 10,
			     10, 10, 9,	 9,  9,	 11, 11, 11, 11, 11, 11, 11,
			     11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 12, 13,
			     13, 13, 13, 13, 13, -1, 14, 14, 14, 14, 14, 14,
			     14, 14, 14, 15, 15, 14, -1, -1, -1, 16, 16 };

static void test_lines(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		assert_int_equal(dcp_py_line(table, sizeof(table), 2, i),
				 lines[i]);
	/* past the table's end, and a cut or damaged table: no line */
	assert_int_equal(dcp_py_line(table, sizeof(table), 2, 83), -1);
	assert_int_equal(dcp_py_line(table, 0, 2, 0), -1);
	for (size_t len = 1; len < sizeof(table); len++)
		(void)dcp_py_line(table, len, 2, 82);
	{
		static const uint8_t damaged[] = { 0x80, 0x00, 0x41, 0xd8 };

		assert_int_equal(dcp_py_line(damaged, sizeof(damaged), 1, 3),
				 -1);
	}
}

static void test_layouts(void **state)
{
	const struct dcp_py_layout *l;

	(void)state;
	l = dcp_py_layout_find(0x030b02f0); /* 3.11.2 final */
	assert_non_null(l);
	assert_string_equal(l->version, "3.11");
	assert_non_null(dcp_py_layout_find(0x030b07f0));
	assert_null(dcp_py_layout_find(0x030a0cf0)); /* 3.10 */
	assert_null(dcp_py_layout_find(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_layouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
