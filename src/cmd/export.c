// SPDX-License-Identifier: MIT
/*
 * dcprof export: a recording in the formats other tools read (pprof,
 * folded stacks, OpenTelemetry profiles). The output appears whole or not
 * at all.
 */
#include <getopt.h>
#include <string.h>

#include "cmd.h"
#include "export.h"
#include "output.h"
#include "read_opts.h"

enum export_format { FORMAT_PPROF, FORMAT_FOLDED, FORMAT_OTLP };

static const char *const formats[] = { "pprof", "folded", "otlp", NULL };

/* The export into out: 0, else the exit status of the error printed. */
static int run_export(const struct profile_view *v, int fmt, FILE *out,
		      bool with_comm, enum view_value value)
{
	struct export_error err;
	int ret;

	if (fmt == FORMAT_PPROF) {
		ret = export_pprof(v, out, &err);
	} else if (fmt == FORMAT_OTLP) {
		const struct export_otlp_opts o = { .labels =
							    EXPORT_LABELS_ALL };

		ret = export_otlp(v, out, &o, &err);
	} else {
		ret = export_folded(v, out, with_comm, value, &err);
	}
	return ret < 0 ? cmd_error("%s", err.msg) : 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		READ_OPTS_LONGOPTS,
		{ "since", required_argument, NULL, READ_OPT_SINCE },
		{ "until", required_argument, NULL, READ_OPT_UNTIL },
		{ "output", required_argument, NULL, 'o' },
		{ "no-comm", no_argument, NULL, 'n' },
		{ "value", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct read_opts ro = READ_OPTS_INIT("export", formats);
	const char *output = NULL;
	enum view_value value = VIEW_VALUE_CPU;
	bool value_given = false;
	bool no_comm = false;
	struct profile_view v;
	struct cmd_output o;
	int c, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
		case 'i':
		case READ_OPT_SINCE:
		case READ_OPT_UNTIL:
			ret = read_opts_parse(&ro, c, optarg);
			if (ret)
				return ret;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			no_comm = true;
			break;
		case 'V':
			if (view_value_parse(optarg, &value))
				return cmd_usage_error(
					"export",
					"unknown value '%s' (cpu, off-cpu, wall)",
					optarg);
			value_given = true;
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
	if (ro.format < 0)
		return cmd_usage_error(
			"export", "--format is needed (pprof, folded, otlp)");
	if (value_given && ro.format != FORMAT_FOLDED)
		return cmd_usage_error(
			"export",
			"--value applies to --format folded only (pprof and otlp have samples, cpu and off_cpu as sample types)");
	if (no_comm && ro.format != FORMAT_FOLDED)
		return cmd_usage_error(
			"export", "--no-comm applies to --format folded only");
	if (!output)
		output = ro.format == FORMAT_PPROF ? "dcprof.pb.gz" :
			 ro.format == FORMAT_OTLP  ? "dcprof.otlp.pb" :
						     "-";

	cmd_setup_log(0);
	ret = cmd_open_input(&v, &ro, false);
	if (ret)
		return ret;
	ret = cmd_check_value(&v, value);
	if (ret) {
		profile_view_close(&v);
		return ret;
	}
	ret = cmd_output_open(&o, output);
	if (!ret)
		ret = cmd_output_close(
			&o, run_export(&v, ro.format, o.f, !no_comm, value));
	profile_view_close(&v);
	return ret;
}
