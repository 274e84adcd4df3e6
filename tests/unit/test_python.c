// SPDX-License-Identifier: MIT
/*
 * Python frames' user-space half (lib/record/bpf/python.c,
 * python_layout.c): CPython 3.11's location table read into lines, the
 * versions and their tables, and the DWARF reader that answers the
 * tables' questions (lib/symbols/dwarf_types.c): on a library built here
 * from known types, its DWARF in the file or in a separate debug file
 * found by build id, and on the CPython interpreters whose tables it
 * must reproduce (Debian's python3.11 with python3.11-dbg's debug file,
 * required under CI; pyenv's 3.12.1 and 3.13.0 libpython where they are
 * installed).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/python_internal.h"
#include "buildid_internal.h"
#include "dwarf_types_internal.h"
#include "symbolize_internal.h"
#include "unit_shell.h"

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
	const struct dcp_py_version *v;
	struct dcp_py_layout l;
	const char *why = NULL;
	int64_t values[64];

	(void)state;
	v = dcp_py_version_find(0x030b02f0); /* 3.11.2 final */
	assert_non_null(v);
	assert_string_equal(v->version, "3.11");
	assert_non_null(dcp_py_version_find(0x030b07f0));
	assert_null(dcp_py_version_find(0x030a0cf0)); /* 3.10 */
	assert_null(dcp_py_version_find(0));
	/* the table's values, each field where its name says */
	assert_int_equal(dcp_py_layout_make(v, NULL, &l, NULL), 0);
	assert_string_equal(l.version, "3.11");
	assert_int_equal(l.code_adaptive, 184);
	assert_int_equal(l.str_compact_data, 72);
	assert_int_equal(l.shim_owner, 0); /* not a 3.11 field */
	v = dcp_py_version_find(0x030d00f0);
	assert_non_null(v);
	assert_true(v->nr_fields <= sizeof(values) / sizeof(values[0]));
	assert_int_equal(dcp_py_layout_make(v, NULL, &l, NULL), 0);
	assert_int_equal(l.interp_threads_head, 7344);
	assert_int_equal(l.shim_owner, 3);
	/* answers put where the table's go; one that does not fit refused */
	for (size_t i = 0; i < v->nr_fields; i++)
		values[i] = v->fields[i].value + 1;
	assert_int_equal(dcp_py_layout_make(v, values, &l, &why), 0);
	assert_int_equal(l.interp_threads_head, 7345);
	assert_int_equal(l.cframe_frame, 0); /* not a 3.13 field */
	values[1] = 1 << 16;
	assert_int_equal(dcp_py_layout_make(v, values, &l, &why), -ERANGE);
	assert_string_equal(why, v->fields[1].name);
	/* each version sets a field once */
	for (uint32_t hex = 0x030b0000; (v = dcp_py_version_find(hex));
	     hex += 0x10000)
		for (size_t i = 0; i < v->nr_fields; i++)
			for (size_t j = 0; j < i; j++)
				assert_int_not_equal(v->fields[i].at,
						     v->fields[j].at);
}

/* ---- the DWARF reader on known types ------------------------------ */

static char tmpdir[] = "/tmp/dcp-python-XXXXXX";

/*
 * The types of the library built below, compiled into this test too: its
 * compiler's offsetof and sizeof are the answers. A structure defined in
 * one unit and declared (with a typedef of it) in another, which comes
 * first; an anonymous union member; a structure member of an anonymous
 * structure type; a typedef of an anonymous structure; a bit-field.
 */
#define TYPES                            \
	struct inner {                   \
		char c;                  \
		long l;                  \
	};                               \
	struct later {                   \
		int a;                   \
		struct inner in;         \
		union {                  \
			short s;         \
			double d;        \
		};                       \
		struct {                 \
			int x, y;        \
		} pair;                  \
		unsigned bits : 3;       \
		const struct inner *ptr; \
	};                               \
	typedef struct later later_t;    \
	typedef struct {                 \
		char tag;                \
		later_t l;               \
	} anon_t;                        \
	enum colour { RED = -2, GREEN = 7, BLUE, WIDE = 200 };
#define STR(...) #__VA_ARGS__
#define XSTR(...) STR(__VA_ARGS__)

TYPES

static const char unit_a[] = "struct later;\n"
			     "typedef struct later later_t;\n"
			     "later_t *declared_only;\n";
static const char unit_b[] = XSTR(TYPES) "\n"
					 "anon_t used_anon;\n"
					 "enum colour used_colour;\n";

static const struct dcp_dwarf_query queries[] = {
	{ DCP_DWARF_MEMBER_OFFSET, "struct later", "in.l" },
	{ DCP_DWARF_MEMBER_OFFSET, "struct later", "d" },
	{ DCP_DWARF_MEMBER_OFFSET, "later_t", "pair.y" },
	{ DCP_DWARF_MEMBER_OFFSET, "anon_t", "l.pair.x" },
	{ DCP_DWARF_TYPE_SIZE, "anon_t", NULL },
	{ DCP_DWARF_TYPE_SIZE, "struct inner", NULL },
	{ DCP_DWARF_TYPE_SIZE, "long int", NULL },
	{ DCP_DWARF_TYPE_SIZE, "enum colour", NULL },
	{ DCP_DWARF_ENUMERATOR, NULL, "RED" },
	{ DCP_DWARF_ENUMERATOR, NULL, "BLUE" },
	{ DCP_DWARF_ENUMERATOR, NULL, "WIDE" },
	/* no answer: a bit-field, through a pointer, no such member, type
	 * or enumerator, a member of a scalar */
	{ DCP_DWARF_MEMBER_OFFSET, "struct later", "bits" },
	{ DCP_DWARF_MEMBER_OFFSET, "struct later", "ptr.c" },
	{ DCP_DWARF_MEMBER_OFFSET, "struct later", "in.nope" },
	{ DCP_DWARF_TYPE_SIZE, "struct nothere", NULL },
	{ DCP_DWARF_ENUMERATOR, NULL, "PURPLE" },
	{ DCP_DWARF_MEMBER_OFFSET, "struct inner", "c.x" },
};
#define NR_QUERIES (sizeof(queries) / sizeof(queries[0]))
#define NR_ANSWERED 11

static const int64_t expected[NR_ANSWERED] = {
	offsetof(struct later, in.l),
	offsetof(struct later, d),
	offsetof(later_t, pair.y),
	offsetof(anon_t, l.pair.x),
	sizeof(anon_t),
	sizeof(struct inner),
	sizeof(long),
	sizeof(enum colour),
	RED,
	BLUE,
	WIDE,
};

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The library of units a and b built with flags into tmpdir/name. */
static void build_types(const char *name, const char *flags, char *out)
{
	static const char *const units[] = { unit_a, unit_b };
	char src[2][PATH_MAX];

	for (int i = 0; i < 2; i++) {
		FILE *f;

		snprintf(src[i], PATH_MAX, "%s/%s_%c.c", tmpdir, name, 'a' + i);
		f = fopen(src[i], "w");
		assert_non_null(f);
		fputs(units[i], f);
		fclose(f);
	}
	snprintf(out, PATH_MAX, "%s/%s.so", tmpdir, name);
	run("gcc -shared -fPIC -Wl,--build-id %s -o '%s' '%s' '%s'", flags, out,
	    src[0], src[1]);
}

static void check_answers(struct dcp_symbolizer *s, const char *path,
			  const char *dwarf_file)
{
	struct dcp_dwarf_answer a[NR_QUERIES];
	char *dwarf_path = NULL;

	assert_int_equal(dcp_dwarf_types_answer(s, path, -1, queries,
						NR_QUERIES, a, &dwarf_path),
			 NR_ANSWERED);
	for (size_t i = 0; i < NR_QUERIES; i++) {
		if (i < NR_ANSWERED &&
		    (!a[i].found || a[i].value != expected[i]))
			fail_msg("%s %s: %d %lld, expected %lld",
				 queries[i].type ? queries[i].type : "",
				 queries[i].name ? queries[i].name : "",
				 a[i].found, (long long)a[i].value,
				 (long long)expected[i]);
		if (i >= NR_ANSWERED && a[i].found)
			fail_msg("%s %s: answered %lld",
				 queries[i].type ? queries[i].type : "",
				 queries[i].name, (long long)a[i].value);
	}
	assert_non_null(dwarf_path);
	assert_string_equal(dwarf_path, dwarf_file);
	free(dwarf_path);
}

/* The DWARF in the file itself, in each form of member offsets. */
static void test_dwarf_own(void **state)
{
	char path[PATH_MAX];

	(void)state;
	build_types("own", "-g", path);
	check_answers(NULL, path, path);
	/* DWARF 2's offsets are location expressions */
	build_types("dwarf2", "-gdwarf-2 -gstrict-dwarf -g", path);
	check_answers(NULL, path, path);
}

/* The DWARF in a separate debug file, by build id, as the symbolizer
 * finds one; none at all: -ENOENT. */
static void test_dwarf_separate(void **state)
{
	uint8_t id[DCP_BUILD_ID_MAX];
	char path[PATH_MAX], debug[2 * PATH_MAX], hex[2 * DCP_BUILD_ID_MAX + 1];
	char search[PATH_MAX + 32], *dwarf_path = (char *)"x";
	struct dcp_dwarf_answer a[NR_QUERIES];
	struct dcp_symbolizer *s;
	int n;

	(void)state;
	build_types("split", "-g", path);
	n = dcp_build_id_read_path(path, id);
	assert_true(n > 1);
	dcp_build_id_hex(id, (size_t)n, hex);
	run("mkdir -p '%s/debug/.build-id/%.2s'", tmpdir, hex);
	snprintf(debug, sizeof(debug), "%s/debug/.build-id/%.2s/%s.debug",
		 tmpdir, hex, hex + 2);
	run("objcopy --only-keep-debug '%s' '%s' && strip --strip-debug '%s'",
	    path, debug, path);
	s = dcp_symbolizer_new(NULL);
	assert_non_null(s);
	snprintf(search, sizeof(search), ":.debug:%s/debug", tmpdir);
	assert_int_equal(dcp_symbolizer_set_debuginfo_path(s, search), 0);
	check_answers(s, path, debug);
	dcp_symbolizer_free(s);
	/* without the search path's directory: nothing to read */
	assert_int_equal(dcp_dwarf_types_answer(NULL, path, -1, queries,
						NR_QUERIES, a, &dwarf_path),
			 -ENOENT);
	assert_null(dwarf_path);
}

/* ---- the choice between the debug info and the table --------------- */

static char said[8][512];
static size_t nr_said;

static void log_said(enum dcp_log_level level, const char *message, void *ctx)
{
	(void)level;
	(void)ctx;
	if (nr_said < sizeof(said) / sizeof(said[0]))
		snprintf(said[nr_said], sizeof(said[0]), "%s", message);
	nr_said++;
}

/* The fields of made-up versions, asked of the library's types: the
 * second one's table value wrong; the third, which the library has no
 * answer for, in the lacking version only. */
static const struct dcp_py_field fields[] = {
	{ "tstate_next",
	  offsetof(struct dcp_py_layout, tstate_next),
	  offsetof(struct later, in.l),
	  { DCP_DWARF_MEMBER_OFFSET, "struct later", "in.l" } },
	{ "var_size",
	  offsetof(struct dcp_py_layout, var_size),
	  999,
	  { DCP_DWARF_TYPE_SIZE, "anon_t", NULL } },
	{ "shim_owner",
	  offsetof(struct dcp_py_layout, shim_owner),
	  5,
	  { DCP_DWARF_ENUMERATOR, NULL, "PURPLE" } },
};

static void test_layout_choice(void **state)
{
	const struct dcp_py_version v = { "9.9", 0x09090000, 0x0909ffff, fields,
					  2 };
	const struct dcp_py_version lacking = { "9.8", 0x09080000, 0x0908ffff,
						fields, 3 };
	const struct dcp_py_layout *l, *again;
	struct dcp_py_layouts *ls;
	char path[PATH_MAX], bare[PATH_MAX + 8];
	int fd, fd2, fd3;

	(void)state;
	build_types("choice", "-g", path);
	snprintf(bare, sizeof(bare), "%s.bare", path);
	run("strip --strip-debug -o '%s' '%s'", bare, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	fd2 = open(bare, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0 && fd2 >= 0);
	ls = dcp_py_layouts_new();
	assert_non_null(ls);
	dcp_set_log(log_said, NULL);
	nr_said = 0;
	/* every question answered: the debug info's values, the field that
	 * disagrees said */
	l = dcp_py_layouts_get(ls, &v, path, fd);
	assert_non_null(l);
	assert_int_equal(l->tstate_next, offsetof(struct later, in.l));
	assert_int_equal(l->var_size, sizeof(anon_t));
	assert_int_equal(nr_said, 2);
	assert_non_null(strstr(said[0], "gives var_size = "));
	assert_non_null(strstr(said[0], ", the table 999 (sizeof(anon_t))"));
	assert_non_null(strstr(said[1], "from the debug info of '"));
	/* the same file again, through another handle: found once, said
	 * once */
	fd3 = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd3 >= 0);
	again = dcp_py_layouts_get(ls, &v, path, fd3);
	close(fd3);
	assert_ptr_equal(again, l);
	assert_int_equal(nr_said, 2);
	/* a question without an answer: the table, saying which */
	l = dcp_py_layouts_get(ls, &lacking, path, fd);
	assert_non_null(l);
	assert_int_equal(l->var_size, 999);
	assert_int_equal(l->shim_owner, 5);
	assert_int_equal(nr_said, 3);
	assert_non_null(strstr(said[2], "from the table for 9.8 (the debug "
					"info of '"));
	assert_non_null(strstr(said[2], "' lacks shim_owner)"));
	/* a copy without debug info (the same build id: asked of new
	 * layouts) */
	dcp_py_layouts_free(ls);
	ls = dcp_py_layouts_new();
	assert_non_null(ls);
	l = dcp_py_layouts_get(ls, &v, bare, fd2);
	assert_non_null(l);
	assert_int_equal(l->var_size, 999);
	assert_int_equal(nr_said, 4);
	assert_non_null(strstr(said[3], "from the table for 9.9 (no debug "
					"info found)"));
	dcp_set_log(NULL, NULL);
	dcp_py_layouts_free(ls);
	close(fd);
	close(fd2);
}

/* ---- the DWARF reader on CPython: the tables' values ---------------- */

/* Version hex's questions asked of path's debug info: the table's
 * values, every one. */
static void check_table(uint32_t hex, const char *path, const char *dwarf_file)
{
	const struct dcp_py_version *v = dcp_py_version_find(hex);
	struct dcp_dwarf_answer *a;
	char *dwarf_path = NULL;
	int n;

	assert_non_null(v);
	a = calloc(v->nr_fields, sizeof(*a));
	assert_non_null(a);
	n = dcp_py_layout_ask(v, NULL, path, -1, a, &dwarf_path);
	for (size_t i = 0; i < v->nr_fields; i++) {
		const struct dcp_py_field *f = &v->fields[i];

		if (!a[i].found)
			fail_msg("%s: %s: no answer in the debug info of %s",
				 v->version, f->name, path);
		if (a[i].value != f->value)
			fail_msg("%s: %s is %u in the table, %lld in the "
				 "debug info of %s",
				 v->version, f->name, f->value,
				 (long long)a[i].value, path);
	}
	assert_int_equal(n, (int)v->nr_fields);
	assert_non_null(dwarf_path);
	if (dwarf_file)
		assert_string_equal(dwarf_path, dwarf_file);
	printf("# %zu fields of %s from %s\n", v->nr_fields, v->version,
	       dwarf_path);
	free(dwarf_path);
	free(a);
}

static void test_python311(void **state)
{
	static const char py[] = "/usr/bin/python3.11";
	uint8_t id[DCP_BUILD_ID_MAX];
	char hex[2 * DCP_BUILD_ID_MAX + 1], debug[PATH_MAX];
	int n;

	(void)state;
	n = access(py, X_OK) ? -1 : dcp_build_id_read_path(py, id);
	if (n > 1) {
		dcp_build_id_hex(id, (size_t)n, hex);
		snprintf(debug, sizeof(debug),
			 "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
			 hex + 2);
	}
	if (n <= 1 || access(debug, R_OK)) {
		if (getenv("CI"))
			fail_msg("no %s with its debug file under CI "
				 "(python3.11-dbg)",
				 py);
		skip();
	}
	check_table(0x030b0000, py, debug);
}

static void test_python_pyenv(void **state)
{
	static const struct {
		uint32_t hex;
		const char *lib;
	} libs[] = {
		{ 0x030c0000,
		  "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0" },
		{ 0x030d0000,
		  "/root/.pyenv/versions/3.13.0/lib/libpython3.13.so.1.0" },
	};

	(void)state;
	/* not on every machine: said, not skipped (t0521 says the same) */
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		if (access(libs[i].lib, R_OK))
			printf("# no %s\n", libs[i].lib);
		else
			check_table(libs[i].hex, libs[i].lib, libs[i].lib);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_dwarf_own),
		cmocka_unit_test(test_dwarf_separate),
		cmocka_unit_test(test_layout_choice),
		cmocka_unit_test(test_python311),
		cmocka_unit_test(test_python_pyenv),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
