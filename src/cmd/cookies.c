// SPDX-License-Identifier: MIT
/* dcprof cookies: the cookie table of a recording. */
#include <getopt.h>
#include <inttypes.h>

#include "cmd.h"
#include "read_opts.h"

static const char *kind_name(enum dcp_cookie_kind kind)
{
	switch (kind) {
	case DCP_COOKIE_KIND_FILE:
		return "file";
	case DCP_COOKIE_KIND_KERNEL:
		return "kernel";
	case DCP_COOKIE_KIND_MODULE:
		return "module";
	case DCP_COOKIE_KIND_ANON:
		return "anon";
	case DCP_COOKIE_KIND_VDSO:
		return "vdso";
	case DCP_COOKIE_KIND_VSYSCALL:
		return "vsyscall";
	case DCP_COOKIE_KIND_JIT:
		return "jit";
	case DCP_COOKIE_KIND_IDLE:
		return "idle";
	default:
		return "unknown";
	}
}

static void print_identity(const struct dcp_cookie_info *info, bool json)
{
	char hex[2 * DCP_BUILD_ID_MAX + 1];

	if (info->build_id_size) {
		dcp_build_id_hex(info->build_id, info->build_id_size, hex);
		printf(json ? ",\"build_id\":\"%s\"" : "%-40s", hex);
	} else if (info->ino) {
		if (json)
			printf(",\"dev\":\"%u:%u\",\"ino\":%" PRIu64,
			       info->dev_major, info->dev_minor, info->ino);
		else
			printf("dev %u:%u ino %-24" PRIu64, info->dev_major,
			       info->dev_minor, info->ino);
	} else if (!json) {
		printf("%-40s", "-");
	}
}

int cmd_cookies(int argc, char **argv)
{
	static const struct option longopts[] = {
		READ_OPTS_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct read_opts ro = READ_OPTS_INIT("cookies", read_formats_text_json);
	struct profile_view v;
	bool json;
	size_t n;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case 'f':
			ret = read_opts_parse(&ro, c, optarg);
			if (ret)
				return ret;
			break;
		case 'h':
			cmd_usage(cmd_find("cookies"), stdout);
			return cmd_finish_stdout(0);
		default:
			return cmd_usage_error("cookies", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error("cookies", "unexpected argument '%s'",
				       argv[optind]);
	/* JSON once asked for: a later "--format text" does not undo it */
	json = ro.formats_given & (1u << READ_FORMAT_JSON);
	cmd_setup_log(0);
	ret = cmd_open_profile(&v, read_opts_input(&ro), false);
	if (ret)
		return ret;

	n = dcp_cookie_table_size(v.cookies);
	if (json)
		printf("{\"cookies\":[");
	else
		printf("%6s %-8s %-40s %10s  %s\n", "cookie", "kind",
		       "build id / identity", "samples", "path(s)");
	for (size_t i = 0, shown = 0; i < n; i++) {
		struct dcp_cookie_info info = { .sz = sizeof(info) };

		if (dcp_cookie_table_lookup(v.cookies, (uint32_t)i, &info))
			continue;
		if (json) {
			printf("%s{\"cookie\":%u,\"kind\":\"%s\",\"name\":",
			       shown ? "," : "", info.cookie,
			       kind_name(info.kind));
			json_print_string(stdout, info.name);
			print_identity(&info, true);
			printf(",\"samples\":%" PRIu64
			       ",\"marked\":%s,\"paths\":[",
			       info.samples, info.marked ? "true" : "false");
			for (size_t p = 0; p < info.nr_paths; p++) {
				if (p)
					printf(",");
				json_print_string(stdout, info.paths[p]);
			}
			printf("]}");
		} else {
			printf("%6u %-8s ", info.cookie, kind_name(info.kind));
			print_identity(&info, false);
			printf(" %10" PRIu64 "  ", info.samples);
			if (!info.nr_paths)
				text_print_safe(stdout, info.name, 0);
			for (size_t p = 0; p < info.nr_paths; p++) {
				if (p)
					printf(", ");
				text_print_safe(stdout, info.paths[p], 0);
			}
			printf("\n");
		}
		shown++;
	}
	if (json)
		printf("]}\n");
	profile_view_close(&v);
	return cmd_finish_stdout(0);
}
