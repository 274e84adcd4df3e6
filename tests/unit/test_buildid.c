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
#include <unistd.h>

#include <cmocka.h>

#include "buildid_internal.h"

static char tmpdir[] = "/tmp/dcp-buildid-XXXXXX";

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

/* Compile a tiny program into tmpdir/name with the given build id style. */
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

/* The build id readelf -n prints for path, as a hex string. */
static void readelf_build_id(const char *path, char *hex, size_t size)
{
	char cmd[PATH_MAX + 32], line[512];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && sscanf(s + 10, "%127s", hex) == 1)
			break;
	}
	pclose(p);
	assert_true(strlen(hex) < size);
}

static void test_sha1_matches_readelf(void **state)
{
	char path[PATH_MAX], want[128], got[2 * DCP_BUILD_ID_MAX + 1];
	uint8_t id[DCP_BUILD_ID_MAX], id2[DCP_BUILD_ID_MAX];
	int fd;

	build("sha1", "sha1", path);
	readelf_build_id(path, want, sizeof(want));
	assert_int_equal(strlen(want), 40);

	assert_int_equal(dcp_build_id_read_path(path, id), 20);
	assert_string_equal(dcp_build_id_hex(id, 20, got), want);

	/* The fd's file position does not matter. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 100, SEEK_SET), 100);
	assert_int_equal(dcp_build_id_read_fd(fd, id2), 20);
	assert_memory_equal(id, id2, 20);
	close(fd);
}

static void test_md5_size(void **state)
{
	char path[PATH_MAX], want[128], got[2 * DCP_BUILD_ID_MAX + 1];
	uint8_t id[DCP_BUILD_ID_MAX];

	build("md5", "md5", path);
	readelf_build_id(path, want, sizeof(want));
	assert_int_equal(dcp_build_id_read_path(path, id), 16);
	assert_string_equal(dcp_build_id_hex(id, 16, got), want);
}

/* No program headers: the note is found through the section table. */
static void test_relocatable_sections(void **state)
{
	char src[PATH_MAX], obj[PATH_MAX], rel[PATH_MAX], cmd[5 * PATH_MAX];
	char want[128], got[2 * DCP_BUILD_ID_MAX + 1];
	uint8_t id[DCP_BUILD_ID_MAX];
	FILE *f;

	snprintf(src, sizeof(src), "%s/rel.c", tmpdir);
	snprintf(obj, sizeof(obj), "%s/rel.o", tmpdir);
	snprintf(rel, sizeof(rel), "%s/rel-id.o", tmpdir);
	f = fopen(src, "w");
	assert_non_null(f);
	fprintf(f, "int f(void) { return 1; }\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "gcc -c -o '%s' '%s' && ld -r --build-id=sha1 -o '%s' '%s'",
		 obj, src, rel, obj);
	assert_int_equal(system(cmd), 0);
	readelf_build_id(rel, want, sizeof(want));
	assert_int_equal(strlen(want), 40);
	assert_int_equal(dcp_build_id_read_path(rel, id), 20);
	assert_string_equal(dcp_build_id_hex(id, 20, got), want);
	/* a plain object has no note at all */
	assert_int_equal(dcp_build_id_read_path(obj, id), 0);
}

static void test_no_build_id(void **state)
{
	char path[PATH_MAX], want[128];
	uint8_t id[DCP_BUILD_ID_MAX];

	build("none", "none", path);
	readelf_build_id(path, want, sizeof(want));
	assert_string_equal(want, "");
	assert_int_equal(dcp_build_id_read_path(path, id), 0);
}

static void test_not_elf(void **state)
{
	char path[PATH_MAX];
	uint8_t id[DCP_BUILD_ID_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/text", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\necho this is not an elf file at all\n");
	fclose(f);
	assert_int_equal(dcp_build_id_read_path(path, id), -ENOEXEC);
	assert_non_null(strstr(dcp_last_error(), "text"));

	snprintf(path, sizeof(path), "%s/empty", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(dcp_build_id_read_path(path, id), -ENOEXEC);

	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	assert_int_equal(dcp_build_id_read_path(path, id), -ENOENT);
	assert_non_null(strstr(dcp_last_error(), "cannot open"));
	assert_int_equal(dcp_build_id_read_fd(-1, id), -EBADF);
}

static void test_hex_round_trip(void **state)
{
	const char *hex = "0123456789abcdef0011223344556677fedcba98";
	uint8_t id[DCP_BUILD_ID_MAX];
	char buf[2 * DCP_BUILD_ID_MAX + 1];

	assert_int_equal(dcp_build_id_parse_hex(hex, id), 20);
	assert_int_equal(id[0], 0x01);
	assert_int_equal(id[19], 0x98);
	assert_string_equal(dcp_build_id_hex(id, 20, buf), hex);

	assert_int_equal(dcp_build_id_parse_hex("ABcd", id), 2);
	assert_int_equal(id[0], 0xab);
	assert_int_equal(id[1], 0xcd);
	assert_string_equal(dcp_build_id_hex(id, 2, buf), "abcd");
	assert_string_equal(dcp_build_id_hex(id, 0, buf), "");
}

static void test_hex_rejected(void **state)
{
	uint8_t id[DCP_BUILD_ID_MAX];

	assert_int_equal(dcp_build_id_parse_hex("", id), -EINVAL);
	assert_int_equal(dcp_build_id_parse_hex("a", id), -EINVAL);
	assert_int_equal(dcp_build_id_parse_hex("abc", id), -EINVAL);
	assert_int_equal(dcp_build_id_parse_hex("zz", id), -EINVAL);
	assert_int_equal(dcp_build_id_parse_hex("12 4", id), -EINVAL);
	assert_int_equal(dcp_build_id_parse_hex("0x12", id), -EINVAL);
	/* 42 digits: longer than any build id we store */
	assert_int_equal(
		dcp_build_id_parse_hex(
			"0123456789abcdef0123456789abcdef0123456789", id),
		-EINVAL);
	assert_non_null(strstr(dcp_last_error(), "not a hex build id"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha1_matches_readelf),
		cmocka_unit_test(test_md5_size),
		cmocka_unit_test(test_relocatable_sections),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_hex_round_trip),
		cmocka_unit_test(test_hex_rejected),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
