// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes as a profile file. The reader only
 * takes a path, so the input goes into a memfd opened through /proc; every
 * accessor is then walked so that whatever the reader accepted is also
 * read back in full.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dcprof/dcprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum dcp_log_level level, const char *message, void *ctx)
{
}

/* Touch every byte of a string so that ASan sees a dangling pointer. */
static size_t str_len(const char *s)
{
	return s ? strlen(s) : 0;
}

static void walk(const struct dcp_profile *p)
{
	const struct dcp_profile_meta *m = dcp_profile_get_meta(p);
	const struct dcp_cookie_table *t = dcp_profile_cookies(p);
	volatile size_t sink = 0;
	size_t nrows = dcp_profile_nr_rows(p);
	size_t ncookies;

	sink += str_len(m->event) + str_len(m->cmdline) + str_len(m->hostname) +
		str_len(m->kernel_release);
	sink += dcp_profile_get_stats(p)->samples;
	ncookies = t ? dcp_cookie_table_size(t) : 0;
	for (size_t c = 0; c < ncookies; c++) {
		struct dcp_cookie_info info = { .sz = sizeof(info) };

		if (dcp_cookie_table_lookup(t, (uint32_t)c, &info) < 0)
			continue;
		sink += str_len(info.name) + info.samples;
		for (size_t i = 0; i < info.nr_paths; i++)
			sink += str_len(info.paths[i]);
	}
	for (size_t i = 0; i < nrows; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };

		if (dcp_profile_row(p, i, &row) < 0)
			continue;
		sink += str_len(row.comm) + row.count;
		for (uint32_t f = 0; f < row.nr_frames; f++) {
			struct dcp_symbol sym = { .sz = sizeof(sym) };

			if (dcp_profile_symbol(p, row.frames[f].cookie,
					       row.frames[f].offset, &sym) == 0)
				sink += str_len(sym.name) + sym.size;
		}
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct dcp_profile *p;

	if (fd < 0) {
		dcp_set_log(quiet, NULL);
		fd = memfd_create("fuzz-profile", MFD_CLOEXEC);
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
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* Read whole, then as its summary (the same checks, other chunks). */
	for (int summary = 0; summary < 2; summary++) {
		struct dcp_profile_open_opts o = {
			.sz = sizeof(o),
			.summary = summary,
		};

		p = dcp_profile_open_file(path, &o);
		if (p) {
			walk(p);
			dcp_profile_close(p);
		} else {
			/* A refusal must always say why. */
			const char *e = dcp_last_error();

			if (!e || !*e)
				__builtin_trap();
		}
	}
	return 0;
}
