// SPDX-License-Identifier: MIT
/*
 * A test aid: the stacks of a profile in folded form, root first, one
 * "comm;frame;...;frame count" line per row, read through the public API.
 * usage: folded [-u] [-l] PROFILE   (-u: user frames only; -l: a frame
 * with a source line as "name:LINE")
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dcprof/dcprof.h"

static bool with_lines;

static void print_frame(const struct dcp_profile *p, const struct dcp_frame *f)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	if (dcp_profile_symbol(p, f->cookie, f->offset, &sym) == 0 &&
	    sym.name) {
		printf("%s", sym.name);
		if (with_lines && sym.line)
			printf(":%" PRIu32, sym.line);
	} else if (dcp_cookie_table_lookup(dcp_profile_cookies(p), f->cookie,
					   &info) == 0) {
		const char *slash = strrchr(info.name, '/');

		printf("[%s+0x%" PRIx64 "]", slash ? slash + 1 : info.name,
		       f->offset);
	} else {
		printf("[?]");
	}
	if (f->flags & DCP_FRAME_KERNEL)
		printf("_[k]");
}

int main(int argc, char **argv)
{
	const char *path = argv[argc - 1];
	bool user_only = false;
	struct dcp_profile *p;

	for (int i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "-u"))
			user_only = true;
		else if (!strcmp(argv[i], "-l"))
			with_lines = true;
	}

	if (argc < 2) {
		fprintf(stderr, "usage: folded [-u] [-l] PROFILE\n");
		return 2;
	}
	p = dcp_profile_open(path);
	if (!p) {
		fprintf(stderr, "folded: %s\n", dcp_last_error());
		return 1;
	}
	for (size_t i = 0; i < dcp_profile_nr_rows(p); i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };

		if (dcp_profile_row(p, i, &row))
			continue;
		printf("%s", row.comm);
		for (uint32_t j = row.nr_frames; j-- > 0;) {
			if (user_only &&
			    (row.frames[j].flags & DCP_FRAME_KERNEL))
				continue;
			printf(";");
			print_frame(p, &row.frames[j]);
		}
		printf(" %" PRIu64 "\n", row.count);
	}
	dcp_profile_close(p);
	return 0;
}
