// SPDX-License-Identifier: MIT
/*
 * dcprof collect: print what recording would inject for the processes that
 * already exist, read through a buffer of a given size, with the same
 * decoder the recorder uses for live records. --backend bpf reads them
 * through the kernel's task iterators instead of /proc.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cmd.h"

struct collect_args {
	enum dcp_collection_kind kind;
	pid_t *pids;
	size_t nr_pids;
	size_t buffer;
	bool json;
	bool bpf; /* --backend bpf */
};

/* The two sources of the same records: /proc, or the kernel's iterators. */
struct source {
	void *c;
	ssize_t (*read)(void *c, void *buf, size_t size, size_t *needed);
	const struct dcp_collection_stats *(*stats)(const void *c);
	void (*close)(void *c);
};

static ssize_t proc_read(void *c, void *buf, size_t size, size_t *needed)
{
	return dcp_collection_read(c, buf, size, needed);
}

static const struct dcp_collection_stats *proc_stats(const void *c)
{
	return dcp_collection_get_stats(c);
}

static void proc_close(void *c)
{
	dcp_collection_close(c);
}

static ssize_t bpf_read(void *c, void *buf, size_t size, size_t *needed)
{
	return dcp_collection_bpf_read(c, buf, size, needed);
}

static const struct dcp_collection_stats *bpf_stats(const void *c)
{
	return dcp_collection_bpf_get_stats(c);
}

static void bpf_close(void *c)
{
	dcp_collection_bpf_close(c);
}

static int source_open(struct source *s, const struct collect_args *a,
		       const struct dcp_collection_opts *opts)
{
	if (a->bpf) {
		*s = (struct source){ .read = bpf_read,
				      .stats = bpf_stats,
				      .close = bpf_close };
		s->c = dcp_collection_bpf_open(a->kind, opts);
	} else {
		*s = (struct source){ .read = proc_read,
				      .stats = proc_stats,
				      .close = proc_close };
		s->c = dcp_collection_open(a->kind, opts);
	}
	return s->c ? 0 : -1;
}

static int parse_pids(struct collect_args *a, const char *arg)
{
	const char *p = arg;

	for (;;) {
		pid_t *pids;
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > INT32_MAX ||
		    (*end && *end != ','))
			return cmd_usage_error("collect",
					       "invalid pid list '%s'", arg);
		pids = realloc(a->pids, (a->nr_pids + 1) * sizeof(*pids));
		if (!pids)
			return cmd_error("out of memory");
		a->pids = pids;
		a->pids[a->nr_pids++] = (pid_t)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* BYTES, or with a K or M suffix (KiB, MiB). */
static int parse_size(const char *arg, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*arg == '-')
		return -1;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg)
		return -1;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v > (1ull << 30))
		return -1;
	*out = (size_t)v;
	return 0;
}

static void prot_string(uint32_t prot, uint32_t flags, char out[5])
{
	out[0] = prot & PROT_READ ? 'r' : '-';
	out[1] = prot & PROT_WRITE ? 'w' : '-';
	out[2] = prot & PROT_EXEC ? 'x' : '-';
	out[3] = flags & MAP_SHARED ? 's' : 'p';
	out[4] = 0;
}

static void print_time(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u,
		ns % 1000000000u);
}

static void print_text(const struct dcp_collection_record *v, int64_t cookie)
{
	char prot[5], hex[2 * DCP_BUILD_ID_MAX + 1];

	switch (v->type) {
	case DCP_RECORD_FORK:
		printf("fork  pid %" PRIu32 " tid %" PRIu32 " ppid %" PRIu32
		       " ptid %" PRIu32 " start ",
		       v->pid, v->tid, v->ppid, v->ptid);
		print_time(stdout, v->time);
		putchar('\n');
		break;
	case DCP_RECORD_COMM:
		printf("comm  pid %" PRIu32 " tid %" PRIu32 " comm ", v->pid,
		       v->tid);
		text_print_safe(stdout, v->comm, 0);
		putchar('\n');
		break;
	case DCP_RECORD_MMAP2:
		prot_string(v->prot, v->flags, prot);
		printf("mmap2 pid %" PRIu32 " tid %" PRIu32 " %016" PRIx64
		       "-%016" PRIx64 " pgoff %08" PRIx64 " %s cookie %" PRId64,
		       v->pid, v->tid, v->addr, v->addr + v->len, v->pgoff,
		       prot, cookie);
		if (v->build_id_size)
			printf(" build-id %s",
			       dcp_build_id_hex(v->build_id, v->build_id_size,
						hex));
		else if (v->kind == DCP_COOKIE_KIND_FILE)
			printf(" dev %02" PRIx32 ":%02" PRIx32 " ino %" PRIu64
			       " gen %" PRIu64,
			       v->dev_major, v->dev_minor, v->ino,
			       v->ino_generation);
		fputs(" path ", stdout);
		text_print_safe(stdout, v->filename, 0);
		putchar('\n');
		break;
	}
}

static void print_json(const struct dcp_collection_record *v, int64_t cookie,
		       bool first)
{
	char prot[5], hex[2 * DCP_BUILD_ID_MAX + 1];

	fputs(first ? "\n    " : ",\n    ", stdout);
	switch (v->type) {
	case DCP_RECORD_FORK:
		printf("{\"type\": \"fork\", \"pid\": %" PRIu32
		       ", \"tid\": %" PRIu32 ", \"ppid\": %" PRIu32
		       ", \"ptid\": %" PRIu32 ", \"start_ns\": %" PRIu64,
		       v->pid, v->tid, v->ppid, v->ptid, v->time);
		break;
	case DCP_RECORD_COMM:
		printf("{\"type\": \"comm\", \"pid\": %" PRIu32
		       ", \"tid\": %" PRIu32 ", \"comm\": ",
		       v->pid, v->tid);
		json_print_string(stdout, v->comm);
		break;
	case DCP_RECORD_MMAP2:
		prot_string(v->prot, v->flags, prot);
		/* addresses as strings: they do not fit a JSON double */
		printf("{\"type\": \"mmap2\", \"pid\": %" PRIu32
		       ", \"tid\": %" PRIu32 ", \"start\": \"0x%" PRIx64
		       "\", \"end\": \"0x%" PRIx64 "\", \"pgoff\": \"0x%" PRIx64
		       "\", \"prot\": \"%s\", \"cookie\": %" PRId64,
		       v->pid, v->tid, v->addr, v->addr + v->len, v->pgoff,
		       prot, cookie);
		if (v->build_id_size)
			printf(", \"build_id\": \"%s\"",
			       dcp_build_id_hex(v->build_id, v->build_id_size,
						hex));
		else
			printf(", \"build_id\": null");
		if (v->kind == DCP_COOKIE_KIND_FILE && !v->build_id_size)
			printf(", \"dev\": \"%02" PRIx32 ":%02" PRIx32
			       "\", \"ino\": %" PRIu64
			       ", \"ino_generation\": %" PRIu64,
			       v->dev_major, v->dev_minor, v->ino,
			       v->ino_generation);
		fputs(", \"path\": ", stdout);
		json_print_string(stdout, v->filename);
		break;
	}
	fputs(", \"injected\": ", stdout);
	fputs(v->injected ? "true}" : "false}", stdout);
}

static int print_records(const char *buf, size_t len,
			 struct dcp_cookie_table *cookies, bool json,
			 bool *first)
{
	size_t pos = 0;

	while (pos < len) {
		struct dcp_collection_record v = { .sz = sizeof(v) };
		int64_t cookie = 0;
		int ret;

		ret = dcp_collection_record_decode(buf + pos, len - pos,
						   cookies, &v);
		if (ret < 0)
			return cmd_error("%s", dcp_last_error());
		if (v.type == DCP_RECORD_MMAP2)
			cookie = v.cookie;
		if (json)
			print_json(&v, cookie, *first);
		else
			print_text(&v, cookie);
		*first = false;
		pos += (size_t)ret;
	}
	return 0;
}

static int run(const struct collect_args *a)
{
	struct dcp_collection_opts opts = {
		.sz = sizeof(opts),
		.pids = a->pids,
		.nr_pids = a->nr_pids,
	};
	const struct dcp_collection_stats *st;
	struct source src = { .close = proc_close };
	bool first = true;
	char *buf = NULL;
	int ret = 0;

	opts.cookies = dcp_cookie_table_new();
	if (!opts.cookies)
		return cmd_error("%s", dcp_last_error());
	/* uint64_t elements: records are read in place, 8-byte aligned */
	buf = malloc(a->buffer ? (a->buffer + 7) & ~(size_t)7 : 8);
	if (!buf) {
		ret = cmd_error("out of memory");
		goto out;
	}
	if (source_open(&src, a, &opts) < 0) {
		ret = cmd_error("%s", dcp_last_error());
		goto out;
	}
	if (a->json)
		fputs("{\n  \"records\": [", stdout);
	for (;;) {
		size_t needed = 0;
		ssize_t n = src.read(src.c, buf, a->buffer, &needed);

		if (n == 0)
			break;
		if (n < 0) {
			ret = cmd_error("%s", dcp_last_error());
			goto out;
		}
		ret = print_records(buf, (size_t)n, opts.cookies, a->json,
				    &first);
		if (ret)
			goto out;
	}
	st = src.stats(src.c);
	if (a->json) {
		printf("\n  ],\n  \"summary\": {\"records\": %" PRIu64
		       ", \"bytes\": %" PRIu64 ", \"reads\": %" PRIu64
		       ", \"tasks\": %" PRIu64 ", \"maps\": %" PRIu64
		       ", \"tasks_vanished\": %" PRIu64
		       ", \"maps_reread\": %" PRIu64
		       ", \"maps_skipped_unmarked\": %" PRIu64 "}\n}\n",
		       st->records, st->bytes, st->reads, st->tasks, st->maps,
		       st->tasks_vanished, st->maps_reread,
		       st->maps_skipped_unmarked);
	}
	ret = cmd_finish_stdout(0);
	fprintf(stderr,
		"%" PRIu64 " records in %" PRIu64 " reads, %" PRIu64
		" tasks vanished\n",
		st->records, st->reads, st->tasks_vanished);
out:
	if (ret)
		fflush(stdout);
	if (src.c)
		src.close(src.c);
	dcp_cookie_table_free(opts.cookies);
	free(buf);
	return ret;
}

int cmd_collect(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "backend", required_argument, NULL, 'B' },
		{ "pid", required_argument, NULL, 'p' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct collect_args a = {
		.kind = DCP_COLLECTION_TASKS,
		.buffer = 65536,
	};
	int c, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (!strcmp(optarg, "tasks"))
				a.kind = DCP_COLLECTION_TASKS;
			else if (!strcmp(optarg, "maps"))
				a.kind = DCP_COLLECTION_MAPS;
			else
				ret = cmd_usage_error(
					"collect",
					"unknown kind '%s' (tasks, maps)",
					optarg);
			break;
		case 'B':
			if (!strcmp(optarg, "bpf"))
				a.bpf = true;
			else if (!strcmp(optarg, "proc"))
				a.bpf = false;
			else
				ret = cmd_usage_error(
					"collect",
					"unknown backend '%s' (proc, bpf)",
					optarg);
			break;
		case 'p':
			ret = parse_pids(&a, optarg);
			break;
		case 'b':
			if (parse_size(optarg, &a.buffer) < 0)
				ret = cmd_usage_error(
					"collect", "invalid buffer size '%s'",
					optarg);
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				a.json = true;
			else if (!strcmp(optarg, "text"))
				a.json = false;
			else
				ret = cmd_usage_error(
					"collect",
					"unknown format '%s' (text, json)",
					optarg);
			break;
		case 'h':
			free(a.pids);
			cmd_usage(cmd_find("collect"), stdout);
			return cmd_finish_stdout(0);
		case ':':
			ret = cmd_usage_error("collect",
					      "option '%s' needs an argument",
					      argv[optind - 1]);
			break;
		default:
			ret = cmd_usage_error("collect", "unknown option '%s'",
					      argv[optind - 1]);
			break;
		}
		if (ret)
			goto out;
	}
	if (optind < argc) {
		ret = cmd_usage_error("collect", "unexpected argument '%s'",
				      argv[optind]);
		goto out;
	}
	cmd_setup_log(0);
	ret = run(&a);
out:
	free(a.pids);
	return ret;
}
