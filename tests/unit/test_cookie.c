// SPDX-License-Identifier: MIT
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "buildid_internal.h"
#include "cookie_internal.h"

static char tmpdir[] = "/tmp/dcp-cookie-XXXXXX";

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct dcp_file_id inode_id(uint32_t maj, uint32_t min, uint64_t ino,
				   uint64_t gen)
{
	struct dcp_file_id id = { .dev_major = maj,
				  .dev_minor = min,
				  .ino = ino,
				  .ino_generation = gen };

	return id;
}

static struct dcp_file_id bid(uint8_t seed, uint8_t size)
{
	struct dcp_file_id id = { .build_id_size = size };
	uint8_t i;

	for (i = 0; i < size; i++)
		id.build_id[i] = (uint8_t)(seed + i * 7);
	return id;
}

/* The identity a MMAP2 record would give for path: build id and inode. */
static struct dcp_file_id file_id_of(const char *path, bool with_build_id)
{
	struct dcp_file_id id = { 0 };
	struct stat st;
	int ret;

	assert_int_equal(stat(path, &st), 0);
	id.dev_major = major(st.st_dev);
	id.dev_minor = minor(st.st_dev);
	id.ino = st.st_ino;
	if (with_build_id) {
		ret = dcp_build_id_read_path(path, id.build_id);
		assert_true(ret >= 0);
		id.build_id_size = (uint8_t)ret;
	}
	return id;
}

static void build(const char *name, const char *style, char *out)
{
	char src[PATH_MAX], cmd[3 * PATH_MAX];
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s.c", tmpdir, name);
	snprintf(out, PATH_MAX, "%s/%s", tmpdir, name);
	f = fopen(src, "w");
	assert_non_null(f);
	fprintf(f, "int main(void) { return 0; }\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -Wl,--build-id=%s -o '%s' '%s'", style,
		 out, src);
	assert_int_equal(system(cmd), 0);
}

static void copy(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	assert_int_equal(system(cmd), 0);
}

static void test_cookie_zero(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_cookie_info info = { .sz = sizeof(info) };

	assert_non_null(t);
	assert_int_equal(dcp_cookie_table_size(t), 1);
	assert_int_equal(dcp_cookie_table_lookup(t, DCP_COOKIE_UNKNOWN, &info),
			 0);
	assert_int_equal(info.cookie, 0);
	assert_int_equal(info.kind, DCP_COOKIE_KIND_UNKNOWN);
	assert_string_equal(info.name, "[unknown]");
	assert_int_equal(info.nr_paths, 0);
	assert_false(info.marked);

	assert_int_equal(dcp_cookie_table_lookup(t, 1, &info), -ENOENT);
	assert_int_equal(dcp_cookie_table_lookup(t, UINT32_MAX, &info),
			 -ENOENT);
	assert_false(dcp_cookie_table_is_marked(t, 7));
	assert_int_equal(dcp_cookie_table_pinned_fd(t, 7), -1);
	dcp_cookie_table_free(t);
}

static void test_identity(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id a = inode_id(8, 1, 100, 5);
	struct dcp_file_id a_again = inode_id(8, 1, 100, 5);
	struct dcp_file_id other_ino = inode_id(8, 1, 101, 5);
	struct dcp_file_id other_dev = inode_id(8, 2, 100, 5);
	struct dcp_file_id other_gen = inode_id(8, 1, 100, 6);
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	int64_t ca, c;

	ca = dcp_cookie_table_intern_file(t, &a, "/bin/a");
	assert_true(ca > 0);
	assert_int_equal(dcp_cookie_table_intern_file(t, &a_again, "/bin/a"),
			 ca);
	c = dcp_cookie_table_intern_file(t, &other_ino, "/bin/a");
	assert_true(c > 0 && c != ca);
	c = dcp_cookie_table_intern_file(t, &other_dev, NULL);
	assert_true(c > 0 && c != ca);
	c = dcp_cookie_table_intern_file(t, &other_gen, NULL);
	assert_true(c > 0 && c != ca);
	assert_int_equal(dcp_cookie_table_size(t), 5);

	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)ca, &info), 0);
	assert_int_equal(info.kind, DCP_COOKIE_KIND_FILE);
	assert_string_equal(info.name, "/bin/a");
	assert_int_equal(info.dev_major, 8);
	assert_int_equal(info.dev_minor, 1);
	assert_int_equal(info.ino, 100);
	assert_int_equal(info.ino_generation, 5);
	assert_int_equal(info.build_id_size, 0);

	/* A file interned without a path still has a display name. */
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)c, &info), 0);
	assert_non_null(info.name);
	assert_int_equal(info.nr_paths, 0);
	dcp_cookie_table_free(t);
}

static void test_build_id_identity(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id x1 = bid(1, 20), x2 = bid(1, 20), y = bid(2, 20);
	struct dcp_file_id x_short = bid(1, 16), ino = inode_id(8, 1, 42, 0);
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	int64_t cx, c;

	/* Same build id on two inodes: one object. */
	x1.dev_major = 8, x1.ino = 42;
	x2.dev_major = 9, x2.ino = 77;
	cx = dcp_cookie_table_intern_file(t, &x1, "/usr/lib/libx.so");
	assert_true(cx > 0);
	assert_int_equal(
		dcp_cookie_table_intern_file(t, &x2, "/container/libx.so"), cx);
	/* Another build id on the same inode: another object. */
	y.dev_major = 8, y.ino = 42;
	c = dcp_cookie_table_intern_file(t, &y, "/usr/lib/libx.so");
	assert_true(c > 0 && c != cx);
	/* A prefix of the id is not the id. */
	c = dcp_cookie_table_intern_file(t, &x_short, NULL);
	assert_true(c > 0 && c != cx);
	/* The inode alone (no build id reported) is a different identity. */
	c = dcp_cookie_table_intern_file(t, &ino, "/usr/lib/libx.so");
	assert_true(c > 0 && c != cx);

	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)cx, &info), 0);
	assert_int_equal(info.build_id_size, 20);
	assert_memory_equal(info.build_id, x1.build_id, 20);
	assert_int_equal(info.nr_paths, 2);
	assert_string_equal(info.paths[0], "/usr/lib/libx.so");
	assert_string_equal(info.paths[1], "/container/libx.so");
	assert_string_equal(info.name, "/usr/lib/libx.so");
	dcp_cookie_table_free(t);
}

/* Finding an identity adds nothing: no cookie, no path. */
static void test_find_file(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id x = bid(1, 20), y = bid(2, 20);
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	size_t empty = dcp_cookie_table_size(t); /* cookie 0, reserved */
	int64_t cx;

	assert_int_equal(dcp_cookie_table_find_file(t, &x), -1);
	assert_int_equal(dcp_cookie_table_size(t), empty);
	cx = dcp_cookie_table_intern_file(t, &x, "/bin/x");
	assert_true(cx > 0);
	assert_int_equal(dcp_cookie_table_find_file(t, &x), cx);
	assert_int_equal(dcp_cookie_table_find_file(t, &y), -1);
	assert_int_equal(dcp_cookie_table_size(t), empty + 1);
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)cx, &info), 0);
	assert_int_equal(info.nr_paths, 1);
	dcp_cookie_table_free(t);
}

static void test_paths_accumulate(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id a = inode_id(8, 1, 7, 0);
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	char path[64];
	int64_t c;
	int i;

	c = dcp_cookie_table_intern_file(t, &a, NULL);
	for (i = 0; i < 3; i++) {
		/* the same names again and again, and one new each round */
		assert_int_equal(dcp_cookie_table_intern_file(t, &a, "/p/0"),
				 c);
		snprintf(path, sizeof(path), "/p/%d", i);
		assert_int_equal(dcp_cookie_table_intern_file(t, &a, path), c);
		assert_int_equal(dcp_cookie_table_intern_file(t, &a, NULL), c);
	}
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)c, &info), 0);
	assert_int_equal(info.nr_paths, 3);
	assert_string_equal(info.paths[0], "/p/0");
	assert_string_equal(info.paths[1], "/p/1");
	assert_string_equal(info.paths[2], "/p/2");
	assert_string_equal(info.name, "/p/0");
	/* paths are copies */
	snprintf(path, sizeof(path), "/changed");
	assert_string_equal(info.paths[2], "/p/2");
	dcp_cookie_table_free(t);
}

static void test_specials(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id kid = bid(9, 20);
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	int64_t k, k2, ext4, xfs, vdso, anon, file;

	k = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_KERNEL, NULL,
					    &kid);
	assert_true(k > 0);
	k2 = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_KERNEL,
					     "[kernel.kallsyms]", NULL);
	assert_int_equal(k2, k);
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)k, &info), 0);
	assert_int_equal(info.kind, DCP_COOKIE_KIND_KERNEL);
	assert_string_equal(info.name, "[kernel.kallsyms]");
	assert_int_equal(info.build_id_size, 20);
	assert_memory_equal(info.build_id, kid.build_id, 20);

	ext4 = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_MODULE,
					       "ext4", NULL);
	xfs = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_MODULE, "xfs",
					      NULL);
	assert_true(ext4 > 0 && xfs > 0 && ext4 != xfs && ext4 != k);
	assert_int_equal(dcp_cookie_table_intern_special(
				 t, DCP_COOKIE_KIND_MODULE, "ext4", NULL),
			 ext4);
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)xfs, &info), 0);
	assert_int_equal(info.kind, DCP_COOKIE_KIND_MODULE);
	assert_string_equal(info.name, "xfs");

	vdso = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_VDSO,
					       "[vdso]", NULL);
	anon = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_ANON,
					       "[vdso]", NULL);
	/* same name, other kind: other cookie */
	assert_true(vdso > 0 && anon > 0 && vdso != anon);
	assert_int_equal(dcp_cookie_table_intern_special(
				 t, DCP_COOKIE_KIND_VDSO, NULL, NULL),
			 vdso);
	/* only a JIT cookie of that name holds a Python process's code */
	struct {
		enum dcp_cookie_kind kind;
		const char *name;
		bool python;
	} py[] = {
		{ DCP_COOKIE_KIND_JIT, "[python:12]", true },
		{ DCP_COOKIE_KIND_JIT, "[python:12.3]", true },
		{ DCP_COOKIE_KIND_JIT, "[perf-12.map]", false },
		{ DCP_COOKIE_KIND_ANON, "[python:12]", false },
	};
	for (size_t i = 0; i < sizeof(py) / sizeof(py[0]); i++) {
		int64_t c = dcp_cookie_table_intern_special(t, py[i].kind,
							    py[i].name, NULL);

		assert_true(c > 0);
		assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)c, &info),
				 0);
		assert_int_equal(dcp_cookie_is_python(&info), py[i].python);
	}
	/* a file whose path looks like a special name is still a file */
	struct dcp_file_id fid = inode_id(1, 1, 1, 0);
	file = dcp_cookie_table_intern_file(t, &fid, "[vdso]");
	assert_true(file > 0 && file != vdso);

	assert_int_equal(dcp_cookie_table_intern_special(
				 t, DCP_COOKIE_KIND_MODULE, NULL, NULL),
			 -EINVAL);
	assert_int_equal(dcp_cookie_table_intern_special(
				 t, DCP_COOKIE_KIND_FILE, "x", NULL),
			 -EINVAL);
	assert_int_equal(dcp_cookie_table_size(t), 11);
	dcp_cookie_table_free(t);
}

static void test_marks_by_id(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id before = bid(3, 20), after = bid(4, 20);
	struct dcp_file_id other = bid(5, 20);
	struct dcp_file_id ino = inode_id(8, 1, 55, 0);
	struct dcp_file_id ino_gen = inode_id(8, 1, 55, 9);
	struct dcp_file_id ino_gen2 = inode_id(8, 1, 55, 10);
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	int64_t cb, co, ca, ci, cg, cg2;

	assert_false(dcp_cookie_table_has_marks(t));
	cb = dcp_cookie_table_intern_file(t, &before, "/b");
	co = dcp_cookie_table_intern_file(t, &other, "/o");
	assert_false(dcp_cookie_table_is_marked(t, (uint32_t)cb));

	/* a mark reaches cookies that already exist ... */
	assert_int_equal(dcp_cookie_table_mark_id(t, &before), 0);
	assert_true(dcp_cookie_table_has_marks(t));
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)cb));
	assert_false(dcp_cookie_table_is_marked(t, (uint32_t)co));
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)cb, &info), 0);
	assert_true(info.marked);

	/* ... and those created later */
	assert_int_equal(dcp_cookie_table_mark_id(t, &after), 0);
	assert_true(dcp_cookie_table_id_is_marked(t, &after));
	ca = dcp_cookie_table_intern_file(t, &after, "/a");
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)ca));
	assert_false(dcp_cookie_table_id_is_marked(t, &other));

	/* inode marks: generation only compared when both know it */
	assert_int_equal(dcp_cookie_table_mark_id(t, &ino_gen), 0);
	ci = dcp_cookie_table_intern_file(t, &ino, NULL);
	cg = dcp_cookie_table_intern_file(t, &ino_gen, NULL);
	cg2 = dcp_cookie_table_intern_file(t, &ino_gen2, NULL);
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)ci));
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)cg));
	assert_false(dcp_cookie_table_is_marked(t, (uint32_t)cg2));
	assert_false(dcp_cookie_table_is_marked(t, DCP_COOKIE_UNKNOWN));

	/* specials with a build id can be marked too */
	struct dcp_file_id kid = bid(77, 20);
	int64_t k;

	assert_int_equal(dcp_cookie_table_mark_id(t, &kid), 0);
	k = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_KERNEL, NULL,
					    &kid);
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)k));
	dcp_cookie_table_free(t);
}

static void test_mark_arg_path(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	char bin[PATH_MAX], bin_copy[PATH_MAX], plain[PATH_MAX];
	char plain_copy[PATH_MAX];
	struct dcp_file_id id, id_copy, inode_only, copy_inode_only;
	struct dcp_file_id p, p_copy, other = bid(200, 20);
	int64_t c, c_copy, c_other;

	build("marked", "sha1", bin);
	snprintf(bin_copy, sizeof(bin_copy), "%s/marked-copy", tmpdir);
	copy(bin, bin_copy);
	id = file_id_of(bin, true);
	id_copy = file_id_of(bin_copy, true);
	assert_int_equal(id.build_id_size, 20);
	assert_int_not_equal(id.ino, id_copy.ino);

	/* a cookie seen before the mark */
	c_copy = dcp_cookie_table_intern_file(t, &id_copy, bin_copy);
	assert_int_equal(dcp_cookie_table_mark_arg(t, bin), 0);
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)c_copy));
	c = dcp_cookie_table_intern_file(t, &id, bin);
	/* same build id: the copy is the same object */
	assert_int_equal(c, c_copy);
	assert_true(dcp_cookie_table_id_is_marked(t, &id));
	assert_true(dcp_cookie_table_id_is_marked(t, &id_copy));
	/* the marked file reported by inode only still matches; the copy's
	 * inode, without its build id, is another file */
	inode_only = file_id_of(bin, false);
	copy_inode_only = file_id_of(bin_copy, false);
	assert_true(dcp_cookie_table_id_is_marked(t, &inode_only));
	assert_false(dcp_cookie_table_id_is_marked(t, &copy_inode_only));
	c_other = dcp_cookie_table_intern_file(t, &other, "/other");
	assert_false(dcp_cookie_table_is_marked(t, (uint32_t)c_other));

	/* a file without build id is marked by its inode */
	build("plain", "none", plain);
	snprintf(plain_copy, sizeof(plain_copy), "%s/plain-copy", tmpdir);
	copy(plain, plain_copy);
	p = file_id_of(plain, true);
	p_copy = file_id_of(plain_copy, true);
	assert_int_equal(p.build_id_size, 0);
	assert_int_equal(dcp_cookie_table_mark_arg(t, plain), 0);
	c = dcp_cookie_table_intern_file(t, &p, plain);
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)c));
	c = dcp_cookie_table_intern_file(t, &p_copy, plain_copy);
	assert_false(dcp_cookie_table_is_marked(t, (uint32_t)c));
	dcp_cookie_table_free(t);
}

static void test_mark_arg_hex_and_bogus(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	const char *hex = "00112233445566778899aabbccddeeff01234567";
	struct dcp_file_id id = { .build_id_size = 20 }, other = bid(1, 20);
	int64_t c, co;

	assert_int_equal(dcp_build_id_parse_hex(hex, id.build_id), 20);
	c = dcp_cookie_table_intern_file(t, &id, "/x");
	co = dcp_cookie_table_intern_file(t, &other, "/y");
	assert_int_equal(dcp_cookie_table_mark_arg(t, hex), 0);
	assert_true(dcp_cookie_table_is_marked(t, (uint32_t)c));
	assert_false(dcp_cookie_table_is_marked(t, (uint32_t)co));

	assert_int_equal(dcp_cookie_table_mark_arg(t, "/no/such/file-xyz"),
			 -EINVAL);
	assert_string_equal(dcp_last_error(), "'/no/such/file-xyz' is neither "
					      "a file nor a build id");
	assert_true(dcp_cookie_table_mark_arg(t, "abc") < 0);
	assert_true(dcp_cookie_table_mark_arg(t, "xyzw") < 0);
	dcp_cookie_table_free(t);
}

static size_t take_all(struct dcp_cookie_table *t, uint32_t *out, size_t max)
{
	size_t n = 0, got;

	while ((got = dcp_cookie_table_take_dirty(t, out + n, max - n)) > 0)
		n += got;
	return n;
}

static void test_take_dirty(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id a = inode_id(1, 0, 1, 0), b = inode_id(1, 0, 2, 0);
	uint32_t out[16];
	int64_t ca, cb, k;

	/* cookie 0 is dirty from the start */
	assert_int_equal(take_all(t, out, 16), 1);
	assert_int_equal(out[0], 0);
	assert_int_equal(take_all(t, out, 16), 0);

	ca = dcp_cookie_table_intern_file(t, &a, "/a");
	cb = dcp_cookie_table_intern_file(t, &b, NULL);
	k = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_KERNEL, NULL,
					    NULL);
	/* a new path after creation but before the take: reported once */
	assert_int_equal(dcp_cookie_table_intern_file(t, &a, "/a2"), ca);
	/* a limited take leaves the rest for the next call */
	assert_int_equal(dcp_cookie_table_take_dirty(t, out, 2), 2);
	assert_int_equal(out[0], ca);
	assert_int_equal(out[1], cb);
	assert_int_equal(dcp_cookie_table_take_dirty(t, out, 2), 1);
	assert_int_equal(out[0], k);
	assert_int_equal(dcp_cookie_table_take_dirty(t, out, 2), 0);

	/* lookups and known paths do not dirty */
	assert_int_equal(dcp_cookie_table_intern_file(t, &a, "/a"), ca);
	assert_int_equal(dcp_cookie_table_intern_file(t, &b, NULL), cb);
	assert_int_equal(dcp_cookie_table_intern_special(
				 t, DCP_COOKIE_KIND_KERNEL, NULL, NULL),
			 k);
	assert_int_equal(take_all(t, out, 16), 0);

	/* a new path does, once */
	assert_int_equal(dcp_cookie_table_intern_file(t, &b, "/b"), cb);
	assert_int_equal(dcp_cookie_table_intern_file(t, &b, "/b2"), cb);
	assert_int_equal(take_all(t, out, 16), 1);
	assert_int_equal(out[0], cb);
	dcp_cookie_table_free(t);
}

/* Continuous recording: a new period's file asks again for what it uses. */
static void test_new_period(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id a = inode_id(1, 0, 1, 0), b = inode_id(1, 0, 2, 0);
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	uint32_t out[16];
	int64_t ca, cb;

	ca = dcp_cookie_table_intern_file(t, &a, "/a");
	cb = dcp_cookie_table_intern_file(t, &b, "/b");
	dcp_cookie_table_add_samples(t, (uint32_t)ca, 7);
	assert_int_equal(take_all(t, out, 16), 3);
	/* written in this period's file: not again */
	assert_int_equal(dcp_cookie_table_want(t, (uint32_t)ca), 0);
	assert_int_equal(take_all(t, out, 16), 0);

	dcp_cookie_table_new_period(t);
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)ca, &ci), 0);
	assert_int_equal(ci.samples, 0);
	/* nothing is queued until a stack of the period names it */
	assert_int_equal(take_all(t, out, 16), 0);
	assert_int_equal(dcp_cookie_table_want(t, (uint32_t)cb), 0);
	assert_int_equal(dcp_cookie_table_want(t, (uint32_t)cb), 0);
	assert_int_equal(take_all(t, out, 16), 1);
	assert_int_equal(out[0], cb);
	assert_int_equal(dcp_cookie_table_want(t, (uint32_t)cb), 0);
	assert_int_equal(take_all(t, out, 16), 0);
	/* a cookie that does not exist is no error */
	assert_int_equal(dcp_cookie_table_want(t, 999), 0);
	dcp_cookie_table_free(t);
}

static void test_insert_out_of_order(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	char p1[32] = "/lib/one.so", p2[32] = "/alt/one.so", name[32] = "ext4";
	const char *paths1[] = { p1 };
	const char *paths2[] = { p1, p2 };
	struct dcp_cookie_info in = { 0 }, out = { .sz = sizeof(out) };
	int i;

	in.cookie = 5;
	in.kind = DCP_COOKIE_KIND_FILE;
	in.name = p1;
	in.build_id_size = 4;
	for (i = 0; i < 4; i++)
		in.build_id[i] = (uint8_t)(0xa0 + i);
	in.paths = paths1;
	in.nr_paths = 1;
	in.samples = 12;
	in.marked = true;
	assert_int_equal(dcp_cookie_table_insert(t, &in), 0);
	assert_int_equal(dcp_cookie_table_size(t), 6);

	memset(&in, 0, sizeof(in));
	in.cookie = 2;
	in.kind = DCP_COOKIE_KIND_MODULE;
	in.name = name;
	assert_int_equal(dcp_cookie_table_insert(t, &in), 0);
	assert_int_equal(dcp_cookie_table_size(t), 6);

	/* the holes are not cookies */
	assert_int_equal(dcp_cookie_table_lookup(t, 1, &out), -ENOENT);
	assert_int_equal(dcp_cookie_table_lookup(t, 3, &out), -ENOENT);
	assert_int_equal(dcp_cookie_table_lookup(t, 6, &out), -ENOENT);

	/* strings were copied */
	strcpy(name, "clobbered");
	strcpy(p1, "/clobbered");
	assert_int_equal(dcp_cookie_table_lookup(t, 2, &out), 0);
	assert_int_equal(out.kind, DCP_COOKIE_KIND_MODULE);
	assert_string_equal(out.name, "ext4");
	assert_int_equal(dcp_cookie_table_lookup(t, 5, &out), 0);
	assert_int_equal(out.kind, DCP_COOKIE_KIND_FILE);
	assert_string_equal(out.name, "/lib/one.so");
	assert_int_equal(out.nr_paths, 1);
	assert_string_equal(out.paths[0], "/lib/one.so");
	assert_int_equal(out.build_id_size, 4);
	assert_int_equal(out.build_id[3], 0xa3);
	assert_int_equal(out.samples, 12);
	assert_true(out.marked);

	/* a repeat replaces: later chunks carry more paths */
	strcpy(p1, "/lib/one.so");
	memset(&in, 0, sizeof(in));
	in.cookie = 5;
	in.kind = DCP_COOKIE_KIND_FILE;
	in.name = p1;
	in.build_id_size = 4;
	for (i = 0; i < 4; i++)
		in.build_id[i] = (uint8_t)(0xa0 + i);
	in.paths = paths2;
	in.nr_paths = 2;
	in.samples = 30;
	assert_int_equal(dcp_cookie_table_insert(t, &in), 0);
	assert_int_equal(dcp_cookie_table_size(t), 6);
	assert_int_equal(dcp_cookie_table_lookup(t, 5, &out), 0);
	assert_int_equal(out.nr_paths, 2);
	assert_string_equal(out.paths[1], "/alt/one.so");
	assert_int_equal(out.samples, 30);
	dcp_cookie_table_add_samples(t, 5, 3);
	assert_int_equal(dcp_cookie_table_lookup(t, 5, &out), 0);
	assert_int_equal(out.samples, 33);

	/* the inserted identity is found by interning it */
	struct dcp_file_id id = { .build_id_size = 4 };
	for (i = 0; i < 4; i++)
		id.build_id[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(dcp_cookie_table_intern_file(t, &id, NULL), 5);
	/* and new cookies go after the highest number */
	id.build_id[0] = 0;
	assert_int_equal(dcp_cookie_table_intern_file(t, &id, NULL), 6);

	/* cookie 0 is still there */
	assert_int_equal(dcp_cookie_table_lookup(t, 0, &out), 0);
	assert_string_equal(out.name, "[unknown]");
	dcp_cookie_table_free(t);
}

static void test_samples(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id a = inode_id(1, 0, 1, 0);
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	int64_t c = dcp_cookie_table_intern_file(t, &a, "/a");

	dcp_cookie_table_add_samples(t, (uint32_t)c, 5);
	dcp_cookie_table_add_samples(t, (uint32_t)c, 2);
	dcp_cookie_table_add_samples(t, 0, 1);
	dcp_cookie_table_add_samples(t, 999, 1); /* ignored */
	assert_int_equal(dcp_cookie_table_lookup(t, (uint32_t)c, &info), 0);
	assert_int_equal(info.samples, 7);
	assert_int_equal(dcp_cookie_table_lookup(t, 0, &info), 0);
	assert_int_equal(info.samples, 1);
	dcp_cookie_table_free(t);
}

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

static void test_pin(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_file_id a = inode_id(1, 0, 1, 0), b = inode_id(1, 0, 2, 0);
	int64_t ca = dcp_cookie_table_intern_file(t, &a, "/a");
	int64_t cb = dcp_cookie_table_intern_file(t, &b, "/b");
	int fd1 = open("/dev/null", O_RDONLY),
	    fd2 = open("/dev/null", O_RDONLY);
	int fd3 = open("/dev/null", O_RDONLY);

	assert_true(fd1 >= 0 && fd2 >= 0 && fd3 >= 0);
	assert_false(dcp_cookie_table_pin_tried(t, (uint32_t)ca));
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)ca), -1);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)ca, fd1), 0);
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)ca), fd1);
	assert_true(dcp_cookie_table_pin_tried(t, (uint32_t)ca));
	/* a second pin keeps the first handle and closes the new one */
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)ca, fd2), 0);
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)ca), fd1);
	assert_false(fd_is_open(fd2));
	assert_true(fd_is_open(fd1));

	/* a failed attempt is remembered without a handle */
	assert_false(dcp_cookie_table_pin_tried(t, (uint32_t)cb));
	dcp_cookie_table_set_pin_tried(t, (uint32_t)cb);
	assert_true(dcp_cookie_table_pin_tried(t, (uint32_t)cb));
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)cb), -1);

	/* pinning a cookie that does not exist still takes the fd */
	assert_int_equal(dcp_cookie_table_pin(t, 12345, fd3), -ENOENT);
	assert_false(fd_is_open(fd3));

	dcp_cookie_table_free(t);
	assert_false(fd_is_open(fd1));
}

/* Three files interned in t (cookies below 8) and three handles to pin
 * them with. */
static void three_files(struct dcp_cookie_table *t, uint32_t *ca, uint32_t *cb,
			uint32_t *cc, int *fa, int *fb, int *fc)
{
	struct dcp_file_id a = inode_id(1, 0, 1, 0), b = inode_id(1, 0, 2, 0),
			   c = inode_id(1, 0, 3, 0);
	int64_t ia = dcp_cookie_table_intern_file(t, &a, "/a");
	int64_t ib = dcp_cookie_table_intern_file(t, &b, "/b");
	int64_t ic = dcp_cookie_table_intern_file(t, &c, "/c");

	assert_true(ia > 0 && ib > 0 && ic > 0 && ic < 8);
	*ca = (uint32_t)ia;
	*cb = (uint32_t)ib;
	*cc = (uint32_t)ic;
	*fa = open("/dev/null", O_RDONLY);
	*fb = open("/dev/null", O_RDONLY);
	*fc = open("/dev/null", O_RDONLY);
	assert_true(*fa >= 0 && *fb >= 0 && *fc >= 0);
}

/* The pins a continuous recording no longer needs: closed, and free to be
 * pinned again; the needed ones, and cookies past the array, as told. */
static void test_unpin_unneeded(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	uint32_t ca, cb, cc;
	int fa, fb, fc, again;
	bool has[8] = { false };
	struct dcp_cookie_set needed = { has, 8 };

	three_files(t, &ca, &cb, &cc, &fa, &fb, &fc);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)ca, fa), 0);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)cb, fb), 0);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)cc, fc), 0);
	assert_int_equal(dcp_cookie_table_nr_pinned(t), 3);
	has[cb] = true;
	assert_int_equal(dcp_cookie_table_unpin_unneeded(t, &needed), 2);
	assert_false(fd_is_open(fa));
	assert_false(fd_is_open(fc));
	assert_true(fd_is_open(fb));
	assert_int_equal(dcp_cookie_table_nr_pinned(t), 1);
	assert_false(dcp_cookie_table_pin_tried(t, (uint32_t)ca));
	assert_true(dcp_cookie_table_pin_tried(t, (uint32_t)cb));
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)ca), -1);
	/* pinned again when sampled again */
	again = open("/dev/null", O_RDONLY);
	assert_true(again >= 0);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)ca, again), 0);
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)ca), again);
	/* an array that stops before a cookie: that one is not needed */
	has[ca] = true;
	needed.n = (size_t)cb;
	assert_int_equal(dcp_cookie_table_unpin_unneeded(t, &needed), 1);
	assert_false(fd_is_open(fb));
	assert_true(fd_is_open(again));
	needed.n = 1;
	assert_int_equal(dcp_cookie_table_unpin_unneeded(t, &needed), 1);
	assert_false(fd_is_open(again));
	assert_int_equal(dcp_cookie_table_nr_pinned(t), 0);
	dcp_cookie_table_free(t);
}

static void test_pin_bound(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	uint32_t ca, cb, cc;
	int fa, fb, fc;
	bool has[8] = { false };
	struct dcp_cookie_set needed = { has, 8 };

	three_files(t, &ca, &cb, &cc, &fa, &fb, &fc);
	dcp_cookie_table_set_max_pinned(t, 2);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)ca, fa), 0);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)cb, fb), 0);
	/* past the bound: refused, its handle closed, counted */
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)cc, fc), -EMFILE);
	assert_false(fd_is_open(fc));
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)cc), -1);
	assert_int_equal(dcp_cookie_table_pins_refused(t), 1);
	assert_int_equal(dcp_cookie_table_nr_pinned(t), 2);
	/* a pin let go makes room */
	has[ca] = true;
	assert_int_equal(dcp_cookie_table_unpin_unneeded(t, &needed), 1);
	fc = open("/dev/null", O_RDONLY);
	assert_true(fc >= 0);
	assert_int_equal(dcp_cookie_table_pin(t, (uint32_t)cc, fc), 0);
	assert_int_equal(dcp_cookie_table_pinned_fd(t, (uint32_t)cc), fc);
	assert_int_equal(dcp_cookie_table_pins_refused(t), 1);
	dcp_cookie_table_free(t);
	assert_false(fd_is_open(fa));
	assert_false(fd_is_open(fc));
}

static void test_many_cookies(void **state)
{
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	enum { N = 10000 };
	uint32_t *out = malloc((N + 1) * sizeof(*out));
	char path[64];
	int64_t c;
	uint32_t i;

	assert_non_null(out);
	for (i = 0; i < N; i++) {
		struct dcp_file_id id = inode_id(8, i % 3, 1000 + i, 0);

		if (i % 2) {
			id = bid((uint8_t)i, 20);
			memcpy(id.build_id + 16, &i, sizeof(i));
		}
		snprintf(path, sizeof(path), "/lib/f%u.so", i);
		c = dcp_cookie_table_intern_file(t, &id, path);
		assert_int_equal(c, i + 1);
	}
	assert_int_equal(dcp_cookie_table_size(t), N + 1);
	assert_int_equal(take_all(t, out, N + 1), N + 1);
	for (i = 0; i < N; i++) {
		struct dcp_file_id id = inode_id(8, i % 3, 1000 + i, 0);

		if (i % 2) {
			id = bid((uint8_t)i, 20);
			memcpy(id.build_id + 16, &i, sizeof(i));
		}
		assert_int_equal(dcp_cookie_table_intern_file(t, &id, NULL),
				 i + 1);
	}
	assert_int_equal(dcp_cookie_table_size(t), N + 1);
	assert_int_equal(take_all(t, out, N + 1), 0);
	assert_int_equal(dcp_cookie_table_lookup(t, 7777, &info), 0);
	assert_string_equal(info.name, "/lib/f7776.so");
	free(out);
	dcp_cookie_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cookie_zero),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_build_id_identity),
		cmocka_unit_test(test_find_file),
		cmocka_unit_test(test_paths_accumulate),
		cmocka_unit_test(test_specials),
		cmocka_unit_test(test_marks_by_id),
		cmocka_unit_test(test_mark_arg_path),
		cmocka_unit_test(test_mark_arg_hex_and_bogus),
		cmocka_unit_test(test_take_dirty),
		cmocka_unit_test(test_new_period),
		cmocka_unit_test(test_insert_out_of_order),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_pin),
		cmocka_unit_test(test_unpin_unneeded),
		cmocka_unit_test(test_pin_bound),
		cmocka_unit_test(test_many_cookies),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
