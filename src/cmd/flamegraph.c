// SPDX-License-Identifier: MIT
/* dcprof flamegraph: a recording as an HTML or SVG flame graph, or a diff. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cgroup_label.h"
#include "cmd.h"
#include "flamegraph.h"
#include "output.h"
#include "read_opts.h"

enum { FORMAT_HTML, FORMAT_SVG };

static const char *const formats[] = { "html", "svg", NULL };

#define NOTE_MAX 512

/* Why a profile is incomplete, for the page's note; "" if it is not. */
static const char *incomplete_note(const struct dcp_profile_meta *m)
{
	if (m->complete)
		return "";
	return m->disk_full ? " (incomplete: the disk was full)" :
			      " (incomplete: the recorder did not finish)";
}

/*
 * samples: the value of every row, samples or (value not cpu) ns; off_ns,
 * for a page that switches values: the ns off the CPU besides the samples.
 */
static void note_profile(char *buf, const char *label,
			 const struct profile_view *v, uint64_t samples,
			 enum view_value value, const uint64_t *off_ns)
{
	const struct dcp_profile_meta *m = dcp_profile_get_meta(v->profile);
	char when[32] = "?";
	time_t t = (time_t)(m->start_realtime_ns / 1000000000ull);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	if (off_ns) {
		snprintf(buf, NOTE_MAX,
			 "%s%s: %" PRIu64 " samples and %.1f ms off the CPU, "
			 "%s on %s, %.1f s, %s at %u Hz%s",
			 label, v->path, samples, (double)*off_ns / 1e6, when,
			 m->hostname ? m->hostname : "?",
			 (double)m->duration_ns / 1e9,
			 m->event ? m->event : "?", m->sample_freq,
			 incomplete_note(m));
		return;
	}
	if (value != VIEW_VALUE_CPU) {
		snprintf(buf, NOTE_MAX,
			 "%s%s: %.1f ms of %s time (frame widths in ns), %s "
			 "on %s, %.1f s%s",
			 label, v->path, (double)samples / 1e6,
			 value == VIEW_VALUE_WALL ? "wall-clock" : "off-CPU",
			 when, m->hostname ? m->hostname : "?",
			 (double)m->duration_ns / 1e9, incomplete_note(m));
		return;
	}
	snprintf(buf, NOTE_MAX,
		 "%s%s: %" PRIu64 " samples, %s on %s, %.1f s, %s at %u Hz%s",
		 label, v->path, samples, when, m->hostname ? m->hostname : "?",
		 (double)m->duration_ns / 1e9, m->event ? m->event : "?",
		 m->sample_freq, incomplete_note(m));
}

static uint64_t profile_samples(const struct profile_view *v,
				enum view_value value)
{
	uint64_t n = 0;

	for (size_t i = 0; i < dcp_profile_nr_rows(v->profile); i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };

		if (!dcp_profile_row(v->profile, i, &row) && row.nr_frames)
			n += profile_view_row_value(v, &row, value);
	}
	return n;
}

int cmd_flamegraph(int argc, char **argv)
{
	static const struct option longopts[] = {
		READ_OPTS_LONGOPTS,
		{ "since", required_argument, NULL, READ_OPT_SINCE },
		{ "until", required_argument, NULL, READ_OPT_UNTIL },
		{ "output", required_argument, NULL, 'o' },
		{ "diff", required_argument, NULL, 'd' },
		{ "group", required_argument, NULL, 'g' },
		{ "by", required_argument, NULL, 'b' },
		{ "value", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct read_opts ro = READ_OPTS_INIT("flamegraph", formats);
	const char *output = NULL, *before = NULL, *after = NULL;
	struct profile_view views[2];
	size_t nr_views = 0;
	char notes[2][NOTE_MAX];
	const char *note_ptrs[2] = { notes[0], notes[1] };
	struct fg_output_opts fo = { 0 };
	struct fg_tree *tree = NULL;
	struct export_error err;
	struct cmd_output out;
	enum view_value value = VIEW_VALUE_CPU;
	int cgroups = -1;
	bool threads = false, switchable = false;
	int c, ret = 0;

	opterr = 0;
	/* '+': no reordering, so that --diff can take the operand after it. */
	while ((c = getopt_long(argc, argv, "+:i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case 'f':
		case READ_OPT_SINCE:
		case READ_OPT_UNTIL:
			ret = read_opts_parse(&ro, c, optarg);
			if (ret)
				return ret;
			break;
		case 'o':
			output = optarg;
			break;
		case 'g':
			if (!strcmp(optarg, "thread"))
				threads = true;
			else if (!strcmp(optarg, "process"))
				threads = false;
			else
				return cmd_usage_error(
					"flamegraph",
					"unknown --group '%s' (process or thread)",
					optarg);
			break;
		case 'b':
			cgroups = view_cgroup_key_parse(optarg);
			if (cgroups < 0)
				return cmd_usage_error(
					"flamegraph",
					"unknown --by '%s' (cgroup, unit, "
					"container, pod)",
					optarg);
			break;
		case 'V':
			if (view_value_parse(optarg, &value))
				return cmd_usage_error(
					"flamegraph",
					"unknown value '%s' (cpu, off-cpu, wall)",
					optarg);
			break;
		case 'd':
			if (optind >= argc)
				return cmd_usage_error(
					"flamegraph",
					"--diff needs two profiles, BEFORE and AFTER");
			before = optarg;
			after = argv[optind++];
			break;
		case 'h':
			cmd_usage(cmd_find("flamegraph"), stdout);
			return cmd_finish_stdout(0);
		case ':':
			return cmd_usage_error("flamegraph",
					       "option '%s' needs an argument",
					       argv[optind - 1]);
		default:
			return cmd_usage_error("flamegraph",
					       "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error("flamegraph", "unexpected argument '%s'",
				       argv[optind]);
	if (before && (ro.input || ro.since || ro.until))
		return cmd_usage_error(
			"flamegraph",
			"--diff takes its two profiles instead of -i, --since and --until");
	/* -o NAME.svg without --format: the picture its name asks for, not
	 * an HTML page under an .svg name */
	if (!ro.formats_given && output && strlen(output) > 4 &&
	    !strcasecmp(output + strlen(output) - 4, ".svg"))
		ro.format = FORMAT_SVG;
	fo.svg = ro.format == FORMAT_SVG;
	if (!output)
		output = fo.svg ? "flamegraph.svg" : "flamegraph.html";
	cmd_setup_log(0);

	if (before) {
		ret = cmd_open_profile(&views[nr_views], before, true);
		if (!ret)
			nr_views++;
	}
	if (!ret) {
		ret = before ? cmd_open_profile(&views[nr_views], after, true) :
			       cmd_open_input(&views[nr_views], &ro, true);
		if (!ret)
			nr_views++;
	}
	for (size_t i = 0; !ret && i < nr_views; i++)
		ret = cmd_check_value(&views[i], value);
	if (!ret) {
		tree = fg_tree_new();
		if (!tree)
			ret = cmd_error("out of memory");
		else
			fg_tree_group_threads(tree, threads);
		if (tree)
			fg_tree_group_cgroups(tree, cgroups);
		if (tree)
			fg_tree_set_value(tree, value);
	}
	/* A page of one profile with off-CPU time switches between the
	 * values on its own; --value says which it shows first. */
	if (!ret && !before && !fo.svg &&
	    dcp_profile_get_meta(views[0].profile)->off_cpu) {
		switchable = true;
		fg_tree_keep_off_cpu(tree, true);
	}
	if (!ret && before &&
	    fg_tree_add_profile(tree, &views[0], FG_BEFORE, &err) < 0)
		ret = cmd_error("%s", err.msg);
	if (!ret &&
	    fg_tree_add_profile(tree, &views[nr_views - 1], FG_AFTER, &err) < 0)
		ret = cmd_error("%s", err.msg);
	if (!ret) {
		if (before) {
			note_profile(notes[0], "before ", &views[0],
				     profile_samples(&views[0], value), value,
				     NULL);
			note_profile(notes[1], "after ", &views[1],
				     profile_samples(&views[1], value), value,
				     NULL);
			fo.nr_notes = 2;
			fo.title = "dcprof differential flame graph";
			fo.diff = true;
		} else if (switchable) {
			uint64_t off_ns =
				profile_samples(&views[0], VIEW_VALUE_OFF_CPU);

			note_profile(notes[0], "", &views[0],
				     profile_samples(&views[0], VIEW_VALUE_CPU),
				     VIEW_VALUE_CPU, &off_ns);
			fo.nr_notes = 1;
			fo.title = "dcprof flame graph";
		} else {
			note_profile(notes[0], "", &views[0],
				     profile_samples(&views[0], value), value,
				     NULL);
			fo.nr_notes = 1;
			fo.title = value == VIEW_VALUE_OFF_CPU ?
					   "dcprof off-CPU flame graph" :
				   value == VIEW_VALUE_WALL ?
					   "dcprof wall-clock flame graph" :
					   "dcprof flame graph";
		}
		fo.notes = note_ptrs;
		ret = cmd_output_open(&out, output);
	}
	if (!ret) {
		int status = 0;

		if (fg_write(tree, &fo, out.f, &err) < 0)
			status = cmd_error("%s", err.msg);
		ret = cmd_output_close(&out, status);
	}
	fg_tree_free(tree);
	while (nr_views)
		profile_view_close(&views[--nr_views]);
	return ret;
}
