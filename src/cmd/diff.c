// SPDX-License-Identifier: MIT
/*
 * dcprof diff OLD NEW: each function's self samples and share in two
 * recordings and how far its share moved, in percentage points, largest
 * move first, as text or JSON (perf diff's baseline and delta columns).
 * Functions are matched across recordings by file path and name.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "grow.h"
#include "intern.h"
#include "read_opts.h"
#include "report.h"

struct diff_fn {
	uint32_t file, symbol; /* in diff.names */
	bool kernel;
	uint64_t count[2]; /* self samples in OLD, NEW */
};

struct diff {
	struct string_table names;
	struct key_map index; /* (file, symbol, kernel) -> fns */
	struct diff_fn *fns;
	size_t nr, cap;
	uint64_t total[2];
};

static double diff_share(const struct diff *d, const struct diff_fn *f,
			 int side)
{
	return report_percent(f->count[side], d->total[side]);
}

static double diff_delta(const struct diff *d, const struct diff_fn *f)
{
	return diff_share(d, f, 1) - diff_share(d, f, 0);
}

/* Largest move first, then by name and file */
static int compare_fns(const void *a, const void *b, void *ctx)
{
	const struct diff *d = ctx;
	const struct diff_fn *x = a, *y = b;
	double dx = fabs(diff_delta(d, x)), dy = fabs(diff_delta(d, y));
	int c;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	c = strcmp(string_table_get(&d->names, x->symbol),
		   string_table_get(&d->names, y->symbol));
	if (c)
		return c;
	return strcmp(string_table_get(&d->names, x->file),
		      string_table_get(&d->names, y->file));
}

/* Add the self samples of one recording's leaf frames */
static int diff_add(struct diff *d, const char *path, int side)
{
	struct profile_view v;
	int ret = cmd_open_profile(&v, path, true);

	if (ret)
		return ret;
	for (size_t i = 0; i < dcp_profile_nr_rows(v.profile); i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		const struct dcp_frame *leaf;
		int64_t file, symbol;
		uint32_t at;
		bool kernel;

		/* rows of off-CPU time alone (no samples) are not here */
		if (dcp_profile_row(v.profile, i, &row) || !row.nr_frames ||
		    !row.count)
			continue;
		leaf = &row.frames[0];
		kernel = leaf->flags & DCP_FRAME_KERNEL;
		file = string_table_intern(
			&d->names, profile_view_file_name(&v, leaf->cookie));
		symbol = string_table_intern(&d->names,
					     profile_view_symbol(&v, leaf));
		if (file < 0 || symbol < 0)
			goto oom;
		if (key_map_find(&d->index, (uint64_t)file << 32 | kernel,
				 (uint64_t)symbol, &at)) {
			struct diff_fn *f = dcp_grow_from(
				d->fns, &d->cap, d->nr + 1, sizeof(*f), 256);

			if (!f)
				goto oom;
			d->fns = f;
			at = (uint32_t)d->nr;
			if (key_map_add(&d->index,
					(uint64_t)file << 32 | kernel,
					(uint64_t)symbol, at) < 0)
				goto oom;
			d->nr++;
			f = &d->fns[at];
			memset(f, 0, sizeof(*f));
			f->file = (uint32_t)file;
			f->symbol = (uint32_t)symbol;
			f->kernel = kernel;
		}
		d->fns[at].count[side] += row.count;
		d->total[side] += row.count;
	}
	profile_view_close(&v);
	return 0;
oom:
	profile_view_close(&v);
	return cmd_error("out of memory");
}

static void diff_print(struct diff *d, const char *const paths[2], bool json,
		       long limit)
{
	size_t shown = 0, left_out = 0;

	if (d->nr)
		qsort_r(d->fns, d->nr, sizeof(*d->fns), compare_fns, d);
	if (json) {
		printf("{\"old\":{\"path\":");
		json_print_string(stdout, paths[0]);
		printf(",\"total\":%" PRIu64 "},\"new\":{\"path\":",
		       d->total[0]);
		json_print_string(stdout, paths[1]);
		printf(",\"total\":%" PRIu64 "},\"functions\":[", d->total[1]);
	} else {
		printf("# dcprof diff of '");
		text_print_safe(stdout, paths[0], 0);
		printf("' (%" PRIu64 " samples) and '", d->total[0]);
		text_print_safe(stdout, paths[1], 0);
		printf("' (%" PRIu64 " samples)\n", d->total[1]);
		printf("# self samples and share of each function in both; "
		       "Delta: the share's move in points\n");
		printf("%10s %7s %10s %7s %8s  %s\n", "Old", "Old%", "New",
		       "New%", "Delta", "Function (file)");
	}
	for (size_t i = 0; i < d->nr; i++) {
		const struct diff_fn *f = &d->fns[i];
		const char *sym = string_table_get(&d->names, f->symbol);
		const char *file = string_table_get(&d->names, f->file);

		if (limit >= 0 && shown >= (size_t)limit) {
			left_out++;
			continue;
		}
		if (json) {
			printf("%s{\"symbol\":", shown ? "," : "");
			json_print_string(stdout, sym);
			printf(",\"file\":");
			json_print_string(stdout, file);
			printf(",\"kernel\":%s,\"old_samples\":%" PRIu64
			       ",\"old_percent\":%.4f,\"new_samples\":%" PRIu64
			       ",\"new_percent\":%.4f,\"delta\":%.4f}",
			       f->kernel ? "true" : "false", f->count[0],
			       diff_share(d, f, 0), f->count[1],
			       diff_share(d, f, 1), diff_delta(d, f));
		} else {
			printf("%10" PRIu64 " %6.2f%% %10" PRIu64
			       " %6.2f%% %+8.2f  %s",
			       f->count[0], diff_share(d, f, 0), f->count[1],
			       diff_share(d, f, 1), diff_delta(d, f),
			       f->kernel ? "[k] " : "[.] ");
			text_print_safe(stdout, sym, 0);
			printf(" (");
			text_print_safe(stdout, file, 0);
			printf(")\n");
		}
		shown++;
	}
	if (json)
		printf("],\"left_out\":%zu}\n", left_out);
	else if (left_out)
		printf("# %zu more functions (--limit)\n", left_out);
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct read_opts ro = READ_OPTS_INIT("diff", read_formats_text_json);
	struct diff d = { 0 };
	const char *paths[2];
	long limit = -1;
	int c, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			ret = read_opts_parse(&ro, c, optarg);
			if (ret)
				return ret;
			break;
		case 'l': {
			char *end;

			limit = strtol(optarg, &end, 10);
			if (*end || end == optarg || limit < 0)
				return cmd_usage_error(
					"diff", "invalid limit '%s'", optarg);
			break;
		}
		case 'h':
			cmd_usage(cmd_find("diff"), stdout);
			return cmd_finish_stdout(0);
		default:
			return cmd_usage_error("diff", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error("diff",
				       "needs two profiles, OLD and NEW");
	paths[0] = argv[optind];
	paths[1] = argv[optind + 1];
	cmd_setup_log(0);
	ret = diff_add(&d, paths[0], 0);
	if (!ret)
		ret = diff_add(&d, paths[1], 1);
	if (!ret) {
		diff_print(&d, paths,
			   ro.formats_given & (1u << READ_FORMAT_JSON), limit);
		ret = cmd_finish_stdout(0);
	}
	free(d.fns);
	key_map_free(&d.index);
	string_table_free(&d.names);
	return ret;
}
