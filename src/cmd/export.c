// SPDX-License-Identifier: MIT
/*
 * dcprof export: a recording in the formats other tools read (pprof,
 * folded stacks). The output appears whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cmd.h"
#include "output.h"
#include "profile_view.h"
#include "../export/export.h"

enum export_format { FORMAT_NONE, FORMAT_PPROF, FORMAT_FOLDED };

static int run_export(const struct profile_view *v, enum export_format fmt,
		      FILE *out, bool with_comm)
{
	if (fmt == FORMAT_PPROF)
		return export_pprof(v, out);
	return export_folded(v, out, with_comm);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-comm", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	enum export_format fmt = FORMAT_NONE;
	const char *input = "dcprof.data", *output = NULL;
	bool no_comm = false;
	struct profile_view v;
	struct cmd_output o;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "pprof"))
				fmt = FORMAT_PPROF;
			else if (!strcmp(optarg, "folded"))
				fmt = FORMAT_FOLDED;
			else
				return cmd_usage_error(
					"export",
					"unknown format '%s' (pprof, folded)",
					optarg);
			break;
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			no_comm = true;
			break;
		case 'h':
			cmd_usage(cmd_find("export"), stdout);
			return cmd_finish_stdout(0);
		case '?':
			if (optopt && strchr("fio", optopt))
				return cmd_usage_error(
					"export",
					"option '%s' needs an argument",
					argv[optind - 1]);
			/* fall through */
		default:
			return cmd_usage_error("export", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error("export", "unexpected argument '%s'",
				       argv[optind]);
	if (fmt == FORMAT_NONE)
		return cmd_usage_error("export",
				       "--format is needed (pprof, folded)");
	if (no_comm && fmt != FORMAT_FOLDED)
		return cmd_usage_error(
			"export", "--no-comm applies to --format folded only");
	if (!output)
		output = fmt == FORMAT_PPROF ? "dcprof.pb.gz" : "-";

	cmd_setup_log(0);
	ret = profile_view_open(&v, input, false);
	if (ret)
		return ret;
	ret = cmd_output_open(&o, output);
	if (!ret)
		ret = cmd_output_close(&o, run_export(&v, fmt, o.f, !no_comm));
	profile_view_close(&v);
	return ret;
}
