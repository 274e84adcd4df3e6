// SPDX-License-Identifier: MIT
/* dcprof report: the flat profile, grouped by the --sort keys. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "profile_view.h"

enum sort_key { KEY_COMM, KEY_PID, KEY_FILE, KEY_SYMBOL, NR_KEYS };

static const char *const key_names[NR_KEYS] = { "comm", "pid", "file",
						"symbol" };

struct report_line {
	const char *comm;
	uint32_t pid;
	uint32_t cookie;
	const char *file;
	const char *symbol;
	uint64_t count;
};

struct report_args {
	const char *input;
	enum sort_key keys[NR_KEYS];
	size_t nr_keys;
	bool json;
	long limit;
};

static int parse_sort(struct report_args *a, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return cmd_error("out of memory");
	a->nr_keys = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t k;

		for (k = 0; k < NR_KEYS; k++)
			if (!strcmp(tok, key_names[k]))
				break;
		if (k == NR_KEYS) {
			ret = cmd_usage_error("report",
					      "unknown sort key '%s' (comm, pid, file, symbol)",
					      tok);
			break;
		}
		for (size_t i = 0; i < a->nr_keys; i++)
			if (a->keys[i] == k)
				k = NR_KEYS;
		if (k != NR_KEYS)
			a->keys[a->nr_keys++] = (enum sort_key)k;
	}
	free(copy);
	if (!ret && !a->nr_keys)
		ret = cmd_usage_error("report", "--sort needs at least one key");
	return ret;
}

static const struct report_args *sort_args;

static int compare_keys(const struct report_line *x,
			const struct report_line *y)
{
	for (size_t i = 0; i < sort_args->nr_keys; i++) {
		int c = 0;

		switch (sort_args->keys[i]) {
		case KEY_COMM:
			c = strcmp(x->comm, y->comm);
			break;
		case KEY_PID:
			c = x->pid < y->pid ? -1 : x->pid > y->pid;
			break;
		case KEY_FILE:
			c = x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
			break;
		case KEY_SYMBOL:
			c = strcmp(x->symbol, y->symbol);
			break;
		default:
			break;
		}
		if (c)
			return c;
	}
	return 0;
}

static int compare_group(const void *a, const void *b)
{
	return compare_keys(a, b);
}

static int compare_count(const void *a, const void *b)
{
	const struct report_line *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return compare_keys(x, y);
}

static void print_header_text(const struct profile_view *v)
{
	const struct dcp_profile_meta *m = dcp_profile_meta(v->profile);
	const struct dcp_profile_stats *s = dcp_profile_stats(v->profile);
	char when[64] = "?";
	time_t t = (time_t)(m->start_realtime_ns / 1000000000ull);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("# dcprof report of '%s'\n", v->path);
	printf("# recorded %s on ", when);
	text_print_safe(stdout, m->hostname, 0);
	printf(" (%s), %.1f s, %u cpus, event %s at %u Hz%s\n",
	       m->kernel_release ? m->kernel_release : "?",
	       (double)m->duration_ns / 1e9, m->nr_cpus,
	       m->event ? m->event : "?", m->sample_freq,
	       m->callchain ? ", call graphs" : "");
	printf("# command: ");
	text_print_safe(stdout, m->cmdline, 0);
	printf("\n");
	printf("# samples: %" PRIu64 " read, %" PRIu64 " kept (%" PRIu64
	       " idle), %" PRIu64 " filtered by --only, %" PRIu64
	       " of other tasks\n",
	       s->samples, s->samples_kept, s->samples_idle, s->samples_filtered,
	       s->samples_other_tasks);
	printf("# lost: %" PRIu64 " records, %" PRIu64
	       " samples; unattributed: %" PRIu64 " samples, %" PRIu64
	       " frames; unresolved symbols: %" PRIu64 "\n",
	       s->lost_records, s->lost_samples, s->samples_unattributed,
	       s->frames_unattributed, s->symbols_unresolved);
	if (!m->complete)
		printf("# INCOMPLETE: the recorder did not finish; this is the data up to its last flush\n");
	printf("#\n");
}

static void print_json_meta(const struct profile_view *v)
{
	const struct dcp_profile_meta *m = dcp_profile_meta(v->profile);
	const struct dcp_profile_stats *s = dcp_profile_stats(v->profile);

	printf("{\"file\":");
	json_print_string(stdout, v->path);
	printf(",\"meta\":{\"complete\":%s,\"start_realtime_ns\":%" PRIu64
	       ",\"duration_ns\":%" PRIu64 ",\"sample_freq\":%u,\"nr_cpus\":%u"
	       ",\"callchain\":%s,\"event\":",
	       m->complete ? "true" : "false", m->start_realtime_ns,
	       m->duration_ns, m->sample_freq, m->nr_cpus,
	       m->callchain ? "true" : "false");
	json_print_string(stdout, m->event);
	printf(",\"cmdline\":");
	json_print_string(stdout, m->cmdline);
	printf(",\"hostname\":");
	json_print_string(stdout, m->hostname);
	printf(",\"kernel_release\":");
	json_print_string(stdout, m->kernel_release);
	printf("},\"stats\":{\"samples\":%" PRIu64 ",\"samples_kept\":%" PRIu64
	       ",\"samples_idle\":%" PRIu64 ",\"samples_filtered\":%" PRIu64
	       ",\"samples_other_tasks\":%" PRIu64
	       ",\"samples_unattributed\":%" PRIu64
	       ",\"frames_unattributed\":%" PRIu64 ",\"lost_records\":%" PRIu64
	       ",\"lost_samples\":%" PRIu64 ",\"throttle_events\":%" PRIu64
	       ",\"symbols_unresolved\":%" PRIu64 ",\"tasks_injected\":%" PRIu64
	       ",\"tasks_vanished\":%" PRIu64 "}",
	       s->samples, s->samples_kept, s->samples_idle, s->samples_filtered,
	       s->samples_other_tasks, s->samples_unattributed,
	       s->frames_unattributed, s->lost_records, s->lost_samples,
	       s->throttle_events, s->symbols_unresolved, s->tasks_injected,
	       s->tasks_vanished);
}

static bool has_key(const struct report_args *a, enum sort_key k)
{
	for (size_t i = 0; i < a->nr_keys; i++)
		if (a->keys[i] == k)
			return true;
	return false;
}

static void print_lines(const struct report_args *a,
			const struct report_line *lines, size_t n,
			uint64_t total)
{
	size_t shown = a->limit >= 0 && (size_t)a->limit < n ? (size_t)a->limit :
							       n;

	if (a->json) {
		printf(",\"total\":%" PRIu64 ",\"sort\":[", total);
		for (size_t i = 0; i < a->nr_keys; i++)
			printf("%s\"%s\"", i ? "," : "", key_names[a->keys[i]]);
		printf("],\"rows\":[");
	} else {
		printf("%10s %7s", "Samples", "Percent");
		for (size_t i = 0; i < a->nr_keys; i++)
			printf("  %s", key_names[a->keys[i]]);
		printf("\n");
	}
	for (size_t i = 0; i < shown; i++) {
		const struct report_line *l = &lines[i];
		double pct = total ? 100.0 * (double)l->count / (double)total :
				     0;

		if (a->json) {
			printf("%s{\"samples\":%" PRIu64 ",\"percent\":%.4f",
			       i ? "," : "", l->count, pct);
			if (has_key(a, KEY_COMM)) {
				printf(",\"comm\":");
				json_print_string(stdout, l->comm);
			}
			if (has_key(a, KEY_PID))
				printf(",\"pid\":%u", l->pid);
			if (has_key(a, KEY_FILE)) {
				printf(",\"file\":");
				json_print_string(stdout, l->file);
			}
			if (has_key(a, KEY_SYMBOL)) {
				printf(",\"symbol\":");
				json_print_string(stdout, l->symbol);
			}
			printf("}");
			continue;
		}
		printf("%10" PRIu64 " %6.2f%%", l->count, pct);
		for (size_t k = 0; k < a->nr_keys; k++) {
			bool last = k + 1 == a->nr_keys;

			printf("  ");
			switch (a->keys[k]) {
			case KEY_COMM:
				text_print_safe(stdout, l->comm, last ? 0 : 16);
				break;
			case KEY_PID:
				printf(last ? "%u" : "%7u", l->pid);
				break;
			case KEY_FILE:
				text_print_safe(stdout, l->file, last ? 0 : 28);
				break;
			case KEY_SYMBOL:
				text_print_safe(stdout, l->symbol, 0);
				break;
			default:
				break;
			}
		}
		printf("\n");
	}
	if (a->json)
		printf("]}\n");
	else if (shown < n)
		printf("# %zu more rows (--limit)\n", n - shown);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_args a = {
		.input = "dcprof.data",
		.keys = { KEY_COMM, KEY_FILE, KEY_SYMBOL },
		.nr_keys = 3,
		.limit = -1,
	};
	struct profile_view v;
	struct report_line *lines;
	size_t n = 0, groups = 0;
	uint64_t total = 0;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			a.input = optarg;
			break;
		case 's':
			ret = parse_sort(&a, optarg);
			if (ret)
				return ret;
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				a.json = true;
			else if (strcmp(optarg, "text"))
				return cmd_usage_error("report",
						       "unknown format '%s' (text, json)",
						       optarg);
			break;
		case 'l': {
			char *end;

			errno = 0;
			a.limit = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || a.limit < 0)
				return cmd_usage_error("report",
						       "invalid limit '%s'",
						       optarg);
			break;
		}
		case 'h':
			cmd_usage(cmd_find("report"), stdout);
			return cmd_finish_stdout(0);
		default:
			return cmd_usage_error("report", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error("report", "unexpected argument '%s'",
				       argv[optind]);
	cmd_setup_log(0);
	ret = profile_view_open(&v, a.input);
	if (ret)
		return ret;

	lines = calloc(dcp_profile_nr_rows(v.profile) + 1, sizeof(*lines));
	if (!lines) {
		profile_view_close(&v);
		return cmd_error("out of memory");
	}
	for (size_t i = 0; i < dcp_profile_nr_rows(v.profile); i++) {
		struct dcp_sample_row row;
		struct report_line *l = &lines[n];

		if (dcp_profile_row(v.profile, i, &row) || !row.nr_frames)
			continue;
		l->comm = row.comm ? row.comm : "";
		l->pid = row.pid;
		l->cookie = row.frames[0].cookie;
		l->file = profile_view_file_name(&v, l->cookie);
		l->symbol = profile_view_symbol(&v, &row.frames[0]);
		l->count = row.count;
		total += row.count;
		n++;
	}
	sort_args = &a;
	qsort(lines, n, sizeof(*lines), compare_group);
	for (size_t i = 0; i < n; i++) {
		if (groups && !compare_keys(&lines[groups - 1], &lines[i]))
			lines[groups - 1].count += lines[i].count;
		else
			lines[groups++] = lines[i];
	}
	qsort(lines, groups, sizeof(*lines), compare_count);

	if (a.json)
		print_json_meta(&v);
	else
		print_header_text(&v);
	print_lines(&a, lines, groups, total);
	free(lines);
	profile_view_close(&v);
	return cmd_finish_stdout(0);
}
