// SPDX-License-Identifier: MIT
/* JIT perf maps: parsing, lookup, the ownership rule, and JIT cookies. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfmap_internal.h"
#include "symbolize_internal.h"
#include "symtab_internal.h"

static char tmpdir[64];

static const char *lookup(const struct dcp_perfmap *m, uint64_t addr)
{
	const struct dcp_perfmap_entry *e = dcp_perfmap_lookup(m, addr);

	return e ? e->name : NULL;
}

static void test_parse(void **state)
{
	static const char text[] =
		"7f0000001000 40 LazyCompile:*add /app/x.js:3\n"
		"0x7f0000002000 0x10 py::f:/a.py\r\n"
		"garbage line\n"
		"\n"
		"7f0000003000 0 zero-sized\n"
		"7f0000004000 zz bad size\n"
		"ffffffffffffff00 200 wraps\n"
		"12345678901234567 10 too long\n"
		"7f0000005000 20\n"
		"7f0000006000\t8\tTabbed name  \n"
		"7f0000001010 8 replaced later";
	struct dcp_perfmap *m = dcp_perfmap_parse(text, sizeof(text) - 1);

	assert_non_null(m);
	assert_int_equal(m->n, 4);
	assert_int_equal(m->skipped, 6);
	assert_string_equal(lookup(m, 0x7f0000001000),
			    "LazyCompile:*add /app/x.js:3");
	assert_string_equal(lookup(m, 0x7f000000103f),
			    "LazyCompile:*add /app/x.js:3");
	assert_null(lookup(m, 0x7f0000001040));
	assert_null(lookup(m, 0x7f0000000fff));
	/* an overlapping later line wins inside its range only */
	assert_string_equal(lookup(m, 0x7f0000001010), "replaced later");
	assert_string_equal(lookup(m, 0x7f0000001017), "replaced later");
	assert_string_equal(lookup(m, 0x7f0000001018),
			    "LazyCompile:*add /app/x.js:3");
	assert_string_equal(lookup(m, 0x7f0000002000), "py::f:/a.py");
	assert_null(lookup(m, 0x7f0000002010));
	assert_null(lookup(m, 0x7f0000003000));
	assert_string_equal(lookup(m, 0x7f0000006007), "Tabbed name");
	dcp_perfmap_free(m);

	m = dcp_perfmap_parse("", 0);
	assert_non_null(m);
	assert_int_equal(m->n, 0);
	assert_null(lookup(m, 0));
	dcp_perfmap_free(m);
}

/* Many entries, one lookup per entry's first and last byte. */
static void test_many(void **state)
{
	size_t n = 5000, len = 0;
	char *text = malloc(n * 40);
	struct dcp_perfmap *m;

	assert_non_null(text);
	/* written out of order, as a JIT reusing freed code would */
	for (size_t i = 0; i < n; i++) {
		size_t k = (i * 7919) % n;

		len += (size_t)sprintf(text + len, "%zx %x fn_%zu\n",
				       0x10000 + k * 0x100, 0x80, k);
	}
	m = dcp_perfmap_parse(text, len);
	assert_non_null(m);
	assert_int_equal(m->n, n);
	for (size_t k = 0; k < n; k++) {
		char want[32];

		snprintf(want, sizeof(want), "fn_%zu", k);
		assert_string_equal(lookup(m, 0x10000 + k * 0x100), want);
		assert_string_equal(lookup(m, 0x10000 + k * 0x100 + 0x7f),
				    want);
		assert_null(lookup(m, 0x10000 + k * 0x100 + 0x80));
	}
	dcp_perfmap_free(m);
	free(text);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_ownership(void **state)
{
	char path[128], link[128], fifo[128];
	int fd;

	if (geteuid() != 0)
		skip();
	snprintf(path, sizeof(path), "%s/perf-1.map", tmpdir);
	write_file(path, "1000 10 f\n");

	/* the process's user or root own it: accepted */
	assert_int_equal(chown(path, 12345, 12345), 0);
	fd = dcp_perfmap_open_path(path, 12345);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chown(path, 0, 0), 0);
	fd = dcp_perfmap_open_path(path, 12345);
	assert_true(fd >= 0);
	close(fd);

	/* someone else's file for this process: refused */
	assert_int_equal(chown(path, 12345, 12345), 0);
	assert_int_equal(dcp_perfmap_open_path(path, 1000), -EPERM);
	assert_non_null(strstr(dcp_last_error(), "12345"));
	assert_int_equal(dcp_perfmap_open_path(path, 0), -EPERM);

	/* never through a link, never a FIFO */
	snprintf(link, sizeof(link), "%s/perf-2.map", tmpdir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(dcp_perfmap_open_path(link, 12345), -EPERM);
	snprintf(fifo, sizeof(fifo), "%s/perf-3.map", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(dcp_perfmap_open_path(fifo, 0), -EPERM);

	snprintf(path, sizeof(path), "%s/none.map", tmpdir);
	assert_int_equal(dcp_perfmap_open_path(path, 0), -ENOENT);
}

/* The recorder's entry point: /tmp/perf-PID.map. */
static void test_open_for(void **state)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	assert_int_equal(dcp_perfmap_open_for(getpid(), getuid()), -ENOENT);
	write_file(path, "2000 10 g\n");
	fd = dcp_perfmap_open_for(getpid(), getuid());
	assert_true(fd >= 0);
	close(fd);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 12345, 12345), 0);
		assert_int_equal(dcp_perfmap_open_for(getpid(), getuid()),
				 -EPERM);
	}
	unlink(path);
}

/* A JIT cookie resolves through its pinned map: offsets are addresses. */
static void test_jit_cookie(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	uint64_t offs[3] = { 0x7f00001000, 0x7f00001234, 0x7f00009000 };
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/jit.map", tmpdir);
	write_file(path,
		   "7f00001000 100 jitted_loop\n"
		   "7f00001200 100 _ZN7mycrate4spin17h0123456789abcdefE\n");
	fd = dcp_perfmap_open_path(path, getuid());
	assert_true(fd >= 0);
	/* the pinned handle's offset is not the reader's business */
	assert_true(lseek(fd, 0, SEEK_END) > 0);
	memset(&info, 0, sizeof(info));
	info.cookie = 3;
	info.kind = DCP_COOKIE_KIND_JIT;
	info.name = "[jit]";
	assert_int_equal(dcp_symbolizer_resolve(s, &info, fd, offs, 3, t), 2);
	assert_int_equal(dcp_symtab_lookup(t, 3, offs[0], &sym), 0);
	assert_string_equal(sym.name, "jitted_loop");
	assert_int_equal(sym.start, 0x7f00001000);
	assert_int_equal(sym.size, 0x100);
	assert_int_equal(dcp_symtab_lookup(t, 3, offs[1], &sym), 0);
	assert_string_equal(sym.demangled, "mycrate::spin");
	assert_int_equal(dcp_symtab_lookup(t, 3, offs[2], &sym), 0);
	assert_null(sym.name);
	close(fd);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dcp-perfmap-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_ownership),
		cmocka_unit_test(test_open_for),
		cmocka_unit_test(test_jit_cookie),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
