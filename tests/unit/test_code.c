// SPDX-License-Identifier: MIT
/*
 * The code of a kernel function as annotate reads it from /proc/kcore:
 * an ELF core whose loadable segments are memory at the addresses they
 * hold, here a small one written by the test, its bytes known.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "code_internal.h"

#define TEXT 0xffffffff81000000ull
#define TEXT_SIZE 0x100
#define DIRECT 0xffff888000000000ull
/* far into a sparse file, as /proc/kcore's segments lie (its size is the
 * address space's): read, not mapped or read whole */
#define TEXT_OFFSET (1ull << 40)

static char path[64];
static uint8_t text[TEXT_SIZE];

/* A core of two PT_LOAD segments: TEXT's bytes at TEXT_OFFSET, and an
 * 8-byte one at DIRECT after them; a PT_NOTE before them. */
static int write_core(void **state)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph[3] = { { 0 } };
	uint8_t direct[8] = { 0 };
	int fd;

	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)(i * 7 + 1);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph[0]);
	eh.e_phnum = 3;
	ph[0].p_type = PT_NOTE;
	ph[0].p_offset = 0x800;
	ph[1].p_type = PT_LOAD;
	ph[1].p_offset = TEXT_OFFSET;
	ph[1].p_vaddr = TEXT;
	ph[1].p_filesz = ph[1].p_memsz = TEXT_SIZE;
	ph[2].p_type = PT_LOAD;
	ph[2].p_offset = TEXT_OFFSET + TEXT_SIZE;
	ph[2].p_vaddr = DIRECT;
	ph[2].p_filesz = ph[2].p_memsz = sizeof(direct);
	snprintf(path, sizeof(path), "/tmp/dcprof-kcore-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(pwrite(fd, ph, sizeof(ph), sizeof(eh)), sizeof(ph));
	assert_int_equal(pwrite(fd, text, sizeof(text), (off_t)TEXT_OFFSET),
			 sizeof(text));
	assert_int_equal(pwrite(fd, direct, sizeof(direct),
				(off_t)(TEXT_OFFSET + TEXT_SIZE)),
			 sizeof(direct));
	close(fd);
	(void)state;
	return 0;
}

static int remove_core(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_at_address(void **state)
{
	struct dcp_code_info info = { .sz = sizeof(info) };
	struct dcp_code *c = dcp_code_open_image(path, TEXT + 0x10, 0x20);

	assert_non_null(c);
	assert_int_equal(dcp_code_get_info(c, &info), 0);
	assert_true(info.address == TEXT + 0x10);
	assert_int_equal(info.size, 0x20);
	assert_int_equal(info.machine, EM_X86_64);
	assert_string_equal(info.path, path);
	assert_memory_equal(info.bytes, text + 0x10, 0x20);
	dcp_code_close(c);
	(void)state;
}

/* a function said to run past its segment: cut at the segment's end */
static void test_cut_at_segment_end(void **state)
{
	struct dcp_code_info info = { .sz = sizeof(info) };
	struct dcp_code *c = dcp_code_open_image(path, TEXT + 0xf0, 0x40);

	assert_non_null(c);
	assert_int_equal(dcp_code_get_info(c, &info), 0);
	assert_int_equal(info.size, 0x10);
	assert_memory_equal(info.bytes, text + 0xf0, 0x10);
	dcp_code_close(c);
	(void)state;
}

static void test_outside_every_segment(void **state)
{
	errno = 0;
	assert_null(dcp_code_open_image(path, TEXT + TEXT_SIZE, 16));
	assert_int_equal(errno, ENOEXEC);
	assert_non_null(strstr(dcp_last_error(), "address 0xffffffff81000100"));
	errno = 0;
	assert_null(dcp_code_open_image("/nonexistent/kcore", TEXT, 16));
	assert_int_equal(errno, ENOENT);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_at_address),
		cmocka_unit_test(test_cut_at_segment_end),
		cmocka_unit_test(test_outside_every_segment),
	};

	return cmocka_run_group_tests(tests, write_core, remove_core);
}
