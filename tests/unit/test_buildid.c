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

#include <elf.h>

#include <cmocka.h>

#include "buildid_internal.h"
#include "file_ident_internal.h"

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

/* An id longer than 20 bytes keeps its first 20, as perf does. */
static void test_long_id_is_cut(void **state)
{
	char path[PATH_MAX], want[128], got[2 * DCP_BUILD_ID_MAX + 1];
	uint8_t id[DCP_BUILD_ID_MAX];

	build("long", "0x00112233445566778899aabbccddeeff0011223344556677",
	      path);
	readelf_build_id(path, want, sizeof(want));
	assert_int_equal(strlen(want), 48);
	assert_int_equal(dcp_build_id_read_path(path, id), 20);
	want[40] = '\0';
	assert_string_equal(dcp_build_id_hex(id, 20, got), want);
}

/* A separate debug file still has the note, in a section. */
static void test_debug_file(void **state)
{
	char path[PATH_MAX], dbg[PATH_MAX + 8], cmd[3 * PATH_MAX];
	uint8_t id[DCP_BUILD_ID_MAX], id2[DCP_BUILD_ID_MAX];

	build("dbg", "sha1", path);
	snprintf(dbg, sizeof(dbg), "%s.debug", path);
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s' '%s'", path,
		 dbg);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(dcp_build_id_read_path(path, id), 20);
	assert_int_equal(dcp_build_id_read_path(dbg, id2), 20);
	assert_memory_equal(id, id2, 20);
}

static size_t put_note(uint8_t *p, uint32_t namesz, uint32_t descsz,
		       uint32_t type, const char *name, uint8_t fill)
{
	size_t off = 12;

	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	memset(p + off, 0, (namesz + 3) & ~3u);
	memcpy(p + off, name, namesz);
	off += (namesz + 3) & ~3u;
	memset(p + off, fill, (descsz + 3) & ~3u);
	return off + ((descsz + 3) & ~3u);
}

static void test_from_notes(void **state)
{
	uint8_t buf[256] = { 0 }, id[DCP_BUILD_ID_MAX];
	size_t n = 0;

	assert_int_equal(dcp_build_id_from_notes(buf, 0, id), 0);
	n += put_note(buf + n, 4, 8, 1, "Xen", 0x11);
	n += put_note(buf + n, 4, 3, NT_GNU_BUILD_ID + 1, "GNU", 0x22);
	n += put_note(buf + n, 4, 0, NT_GNU_BUILD_ID, "GNU", 0x33);
	assert_int_equal(dcp_build_id_from_notes(buf, n, id), 0);
	n += put_note(buf + n, 4, 20, NT_GNU_BUILD_ID, "GNU", 0x44);
	assert_int_equal(dcp_build_id_from_notes(buf, n, id), 20);
	assert_int_equal(id[0], 0x44);
	assert_int_equal(id[19], 0x44);
	/* cut short inside the build id's description: malformed */
	assert_int_equal(dcp_build_id_from_notes(buf, n - 4, id), -EINVAL);
	/* a header cut short */
	assert_int_equal(dcp_build_id_from_notes(buf, 5, id), -EINVAL);

	/* the first 20 bytes of a 32-byte id */
	n = put_note(buf, 4, 32, NT_GNU_BUILD_ID, "GNU", 0x55);
	buf[12 + 4 + 19] = 0x66;
	buf[12 + 4 + 20] = 0x77;
	assert_int_equal(dcp_build_id_from_notes(buf, n, id), 20);
	assert_int_equal(id[19], 0x66);

	/* a name size that runs past the end */
	n = put_note(buf, 4, 4, NT_GNU_BUILD_ID, "GNU", 0x55);
	buf[0] = 0xff;
	assert_int_equal(dcp_build_id_from_notes(buf, n, id), -EINVAL);
}

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* A hand-made big-endian 32-bit ELF file with one PT_NOTE segment. */
static void write_be32(const char *path, uint32_t note_off, uint32_t note_len)
{
	uint8_t f[256] = { 0 };
	uint8_t *ph = f + sizeof(Elf32_Ehdr), *note = f + 128;
	size_t i;
	FILE *out;

	memcpy(f, ELFMAG, SELFMAG);
	f[EI_CLASS] = ELFCLASS32;
	f[EI_DATA] = ELFDATA2MSB;
	f[EI_VERSION] = EV_CURRENT;
	put_be(f + offsetof(Elf32_Ehdr, e_type), ET_EXEC, 2);
	put_be(f + offsetof(Elf32_Ehdr, e_phoff), sizeof(Elf32_Ehdr), 4);
	put_be(f + offsetof(Elf32_Ehdr, e_ehsize), sizeof(Elf32_Ehdr), 2);
	put_be(f + offsetof(Elf32_Ehdr, e_phentsize), sizeof(Elf32_Phdr), 2);
	put_be(f + offsetof(Elf32_Ehdr, e_phnum), 1, 2);
	put_be(ph + offsetof(Elf32_Phdr, p_type), PT_NOTE, 4);
	put_be(ph + offsetof(Elf32_Phdr, p_offset), note_off, 4);
	put_be(ph + offsetof(Elf32_Phdr, p_filesz), note_len, 4);
	put_be(ph + offsetof(Elf32_Phdr, p_align), 4, 4);
	put_be(note, 4, 4);
	put_be(note + 4, 8, 4);
	put_be(note + 8, NT_GNU_BUILD_ID, 4);
	memcpy(note + 12, "GNU", 4);
	for (i = 0; i < 8; i++)
		note[16 + i] = (uint8_t)(0xa0 + i);
	out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(f, 1, sizeof(f), out), sizeof(f));
	fclose(out);
}

static void test_big_endian_and_damaged(void **state)
{
	char path[PATH_MAX], got[2 * DCP_BUILD_ID_MAX + 1];
	uint8_t id[DCP_BUILD_ID_MAX];

	snprintf(path, sizeof(path), "%s/be32", tmpdir);
	write_be32(path, 128, 24);
	assert_int_equal(dcp_build_id_read_path(path, id), 8);
	assert_string_equal(dcp_build_id_hex(id, 8, got), "a0a1a2a3a4a5a6a7");
	/* notes past the end of the file: no build id, no crash */
	write_be32(path, 250, 24);
	assert_int_equal(dcp_build_id_read_path(path, id), 0);
	write_be32(path, 0xfffffff0u, 0x20);
	assert_int_equal(dcp_build_id_read_path(path, id), 0);
	/* a note block cut inside the id */
	write_be32(path, 128, 20);
	assert_int_equal(dcp_build_id_read_path(path, id), 0);
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

/* The open callback of the identity cache: counts its opens. */
struct opener {
	const char *path; /* NULL: the file cannot be opened */
	int opens;
};

static int open_counted(void *ctx)
{
	struct opener *o = ctx;

	o->opens++;
	return o->path ? open(o->path, O_RDONLY | O_CLOEXEC) : -ENOENT;
}

static const struct dcp_file_id *ident(struct dcp_ident_cache *c,
				       struct opener *o, const char *inode_of)
{
	const struct dcp_file_id *id = NULL;
	struct stat st;

	assert_int_equal(stat(inode_of, &st), 0);
	assert_int_equal(dcp_ident_cache_get(c, major(st.st_dev),
					     minor(st.st_dev), st.st_ino,
					     open_counted, o, &id),
			 0);
	assert_non_null(id);
	return id;
}

/*
 * A cache that outlives walks (the recorder's) trusts (device, inode) only
 * while it holds the file open: a file it could not open is read again, and
 * at held_max files it starts again; a walk's cache reads each inode once.
 */
static void test_ident_cache_holds_files(void **state)
{
	char a[PATH_MAX], b[PATH_MAX], c3[PATH_MAX], want[128], hex[128];
	struct dcp_ident_cache held = { .held_max = 2 }, walk = { 0 };
	struct opener oa = { 0 }, ob = { 0 }, oc = { 0 }, none = { 0 };
	const struct dcp_file_id *id;

	build("ident_a", "sha1", a);
	build("ident_b", "md5", b);
	build("ident_c", "sha1", c3);
	oa.path = a;
	ob.path = b;
	oc.path = c3;

	readelf_build_id(a, want, sizeof(want));
	id = ident(&held, &oa, a);
	assert_string_equal(
		dcp_build_id_hex(id->build_id, id->build_id_size, hex), want);
	ident(&held, &oa, a);
	assert_int_equal(oa.opens, 1); /* held open: not read again */
	assert_int_equal(held.held, 1);

	/* an inode the cache could not open is not trusted later */
	ident(&held, &none, b);
	ident(&held, &none, b);
	assert_int_equal(none.opens, 2);
	id = ident(&held, &ob, b);
	assert_int_equal(ob.opens, 1);
	assert_int_equal(id->build_id_size, 16);
	assert_int_equal(held.held, 2);

	/* the third file: the cache starts again, a is read anew */
	ident(&held, &oc, c3);
	assert_int_equal(held.held, 1);
	ident(&held, &oa, a);
	assert_int_equal(oa.opens, 2);
	dcp_ident_cache_free(&held);
	assert_int_equal(held.held, 0);

	/* a walk's cache: once per inode, nothing held */
	none.opens = 0;
	ident(&walk, &none, a);
	ident(&walk, &none, a);
	assert_int_equal(none.opens, 1);
	assert_int_equal(walk.held, 0);
	dcp_ident_cache_free(&walk);
}

/* release's keep callback: keeps the identities of one build id size */
static bool keep_size(const struct dcp_file_id *id, void *ctx)
{
	return id->build_id_size == *(const int *)ctx;
}

/*
 * Released files are closed and their entries read again when asked for;
 * the others stay held and are not read again.
 */
static void test_ident_cache_release(void **state)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct dcp_ident_cache held = { .held_max = 8 };
	struct opener oa = { 0 }, ob = { 0 };
	int sha1 = 20;

	build("release_a", "sha1", a);
	build("release_b", "md5", b);
	oa.path = a;
	ob.path = b;
	ident(&held, &oa, a);
	ident(&held, &ob, b);
	assert_int_equal(held.held, 2);
	assert_int_equal(dcp_ident_cache_release(&held, keep_size, &sha1), 1);
	assert_int_equal(held.held, 1);
	ident(&held, &oa, a);
	assert_int_equal(oa.opens, 1); /* still held */
	ident(&held, &ob, b);
	assert_int_equal(ob.opens, 2); /* let go: read again */
	assert_int_equal(held.held, 2);
	dcp_ident_cache_free(&held);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha1_matches_readelf),
		cmocka_unit_test(test_md5_size),
		cmocka_unit_test(test_relocatable_sections),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_long_id_is_cut),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_from_notes),
		cmocka_unit_test(test_big_endian_and_damaged),
		cmocka_unit_test(test_hex_round_trip),
		cmocka_unit_test(test_hex_rejected),
		cmocka_unit_test(test_ident_cache_holds_files),
		cmocka_unit_test(test_ident_cache_release),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
