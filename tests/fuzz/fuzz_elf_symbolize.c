// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes as an ELF file, given to the build-id
 * reader and to the symbolizer as a pinned handle, the way the recorder
 * hands over a sampled file when recording ends. The first 8 input bytes
 * pick the sampled offsets, so the lookup paths are fuzzed too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dcprof/dcprof.h"
#include "buildid_internal.h"
#include "symbolize_internal.h"
#include "symtab_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum dcp_log_level level, const char *message, void *ctx)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static struct dcp_kernel_layout k;
	uint8_t id[DCP_BUILD_ID_MAX];
	uint64_t offsets[8];
	const char *paths[1] = { "/nonexistent/fuzz.elf" };
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbolizer *s;
	struct dcp_symtab *out;
	uint64_t seed = 0;
	int n;

	if (fd < 0) {
		dcp_set_log(quiet, NULL);
		fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			_exit(2);
		}
	}
	if (ftruncate(fd, 0) < 0 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size) {
		perror("memfd write");
		_exit(2);
	}

	n = dcp_build_id_read_fd(fd, id);
	if (n > DCP_BUILD_ID_MAX)
		__builtin_trap();

	memcpy(&seed, data, size < sizeof(seed) ? size : sizeof(seed));
	for (size_t i = 0; i < 8; i++)
		offsets[i] = (seed >> (8 * i) & 0xff) * 0x40 + i;
	offsets[7] = seed;

	memset(&info, 0, sizeof(info));
	info.cookie = 1;
	info.kind = DCP_COOKIE_KIND_FILE;
	info.name = paths[0];
	info.paths = paths;
	info.nr_paths = 1;
	if (n > 0) {
		memcpy(info.build_id, id, (size_t)n);
		info.build_id_size = (uint8_t)n;
	}

	/* Nor into the symbol cache: fuzzed files are not to be kept. */
	setenv("DCPROF_CACHE_DIR", "", 1);
	s = dcp_symbolizer_new(&k);
	out = dcp_symtab_new();
	if (!s || !out)
		_exit(2);
	/* Never wander into the machine's debug files. */
	dcp_symbolizer_set_debuginfo_path(s, "/nonexistent");
	dcp_symbolizer_resolve(s, &info, fd, offsets, 8, out);
	for (size_t i = 0; i < dcp_symtab_count(out); i++) {
		struct dcp_symbol sym = { .sz = sizeof(sym) };
		uint32_t cookie;
		uint64_t off;
		volatile size_t sink;

		dcp_symtab_entry(out, i, &cookie, &off, &sym);
		sink = sym.name ? strlen(sym.name) : 0;
		(void)sink;
	}
	/* Every offset gets its entry, resolved or not (duplicates fold). */
	if (dcp_symtab_count(out) < 1 || dcp_symtab_count(out) > 8)
		__builtin_trap();
	dcp_symtab_free(out);
	dcp_symbolizer_free(s);
	return 0;
}
