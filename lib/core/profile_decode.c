// SPDX-License-Identifier: MIT
/*
 * Decoding the records of a profile's chunks (docs/FORMAT.md) into the
 * profile object: META, COOKIES, STRINGS, STACKS, ROWS and STATS, each
 * field bounds-checked, and the dispatch by chunk type.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "profile_reader_internal.h"

int dcp_reader_corrupt(struct reader *r, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return dcp_error(EBADMSG, "'%s' is corrupt: %s", r->path, why);
}

int dcp_reader_malformed(struct reader *r)
{
	return dcp_reader_corrupt(r, "malformed %s chunk at offset %" PRIu64,
				  r->chunk_name, r->chunk_off);
}

int dcp_reader_nomem(void)
{
	return dcp_error(ENOMEM, "out of memory");
}

static int map_add(struct id_map *m, uint32_t agg_id)
{
	uint32_t *id = dcp_grow(m->id, &m->cap, m->n + 1, sizeof(*id));

	if (!id)
		return -ENOMEM;
	m->id = id;
	m->id[m->n++] = agg_id;
	return 0;
}

/* Copy n bytes to the scratch area at *used, NUL-terminated. */
int dcp_reader_scratch_put(struct reader *r, size_t *used, const uint8_t *s,
			   uint32_t n)
{
	char *p = dcp_grow(r->scratch, &r->scratch_cap, *used + n + 1, 1);

	if (!p)
		return -ENOMEM;
	r->scratch = p;
	if (n)
		memcpy(p + *used, s, n);
	p[*used + n] = 0;
	*used += (size_t)n + 1;
	return 0;
}

static char *dup_str(const uint8_t *s, uint32_t n)
{
	char *d = malloc((size_t)n + 1);

	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

/* META: the last one wins; fields added by later versions are skipped. */
static int read_meta(struct reader *r, struct cursor *c)
{
	struct dcp_profile_meta *m = &r->p->meta;
	const char **fields[5] = { &m->event, &m->cmdline, &m->hostname,
				   &m->kernel_release, &m->backend };
	char *copies[5] = { NULL };
	uint32_t flags;
	int i;

	m->start_realtime_ns = get_u64(c);
	m->duration_ns = get_u64(c);
	m->sample_period = get_u64(c);
	m->sample_freq = get_u32(c);
	m->nr_cpus = get_u32(c);
	flags = get_u32(c);
	m->callchain = flags & DCP_FMT_META_CALLCHAIN;
	m->kernel_excluded = flags & DCP_FMT_META_KERNEL_EXCLUDED;
	m->off_cpu = flags & DCP_FMT_META_OFF_CPU;
	m->disk_full = flags & DCP_FMT_META_DISK_FULL;
	for (i = 0; i < 5; i++) {
		const uint8_t *s;
		bool null;
		uint32_t n;

		/* backend (the fifth) was appended: older files end before */
		if (i == 4 && !c->left)
			break;
		n = get_str(c, &s, &null);

		if (c->bad)
			break;
		if (!null && !(copies[i] = dup_str(s, n))) {
			c->bad = true;
			break;
		}
	}
	if (c->bad) {
		for (i = 0; i < 5; i++)
			free(copies[i]);
		return dcp_reader_malformed(r);
	}
	for (i = 0; i < 5; i++) {
		free(r->p->meta_strings[i]);
		r->p->meta_strings[i] = copies[i];
		*fields[i] = copies[i];
	}
	return 0;
}

static int read_cookie(struct reader *r, struct cursor *c)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	const uint8_t *bid, *s;
	size_t used = 0, name_at = 0, *path_at = NULL;
	const char **paths = NULL;
	uint32_t nr_paths, n, i;
	bool null, name_null;
	int ret;

	memset(&ci, 0, sizeof(ci));
	ci.cookie = get_u32(c);
	ci.kind = (enum dcp_cookie_kind)get_u32(c);
	ci.build_id_size = get_u8(c);
	ci.marked = get_u8(c) & DCP_FMT_COOKIE_MARKED;
	get_u16(c);
	bid = take(c, DCP_BUILD_ID_MAX);
	ci.dev_major = get_u32(c);
	ci.dev_minor = get_u32(c);
	ci.ino = get_u64(c);
	ci.ino_generation = get_u64(c);
	n = get_str(c, &s, &name_null);
	if (c->bad || ci.build_id_size > DCP_BUILD_ID_MAX)
		return dcp_reader_malformed(r);
	/* Cookie numbers are dense and every one is written once before a
	 * higher one can be: a number far beyond the records read so far is
	 * damage, and would make the table allocate for all below it. */
	if (ci.cookie > 1024 + 2 * r->cookie_records)
		return dcp_reader_corrupt(r,
					  "cookie %" PRIu32
					  " out of range in chunk at "
					  "offset %" PRIu64,
					  ci.cookie, r->chunk_off);
	r->cookie_records++;
	memcpy(ci.build_id, bid, DCP_BUILD_ID_MAX);
	if (!name_null && dcp_reader_scratch_put(r, &used, s, n) < 0)
		return dcp_reader_nomem();
	nr_paths = get_u32(c);
	if (!room_for(c, nr_paths, 4))
		return dcp_reader_malformed(r);
	if (nr_paths) {
		path_at = calloc(nr_paths, sizeof(*path_at));
		paths = calloc(nr_paths, sizeof(*paths));
		if (!path_at || !paths) {
			ret = dcp_reader_nomem();
			goto out;
		}
	}
	for (i = 0; i < nr_paths; i++) {
		n = get_str(c, &s, &null);
		if (c->bad || null) {
			ret = dcp_reader_malformed(r);
			goto out;
		}
		path_at[i] = used;
		if (dcp_reader_scratch_put(r, &used, s, n) < 0) {
			ret = dcp_reader_nomem();
			goto out;
		}
	}
	/* The scratch area may have moved while it grew: point into it
	 * only now. */
	ci.name = name_null ? NULL : r->scratch + name_at;
	for (i = 0; i < nr_paths; i++)
		paths[i] = r->scratch + path_at[i];
	ci.paths = paths;
	ci.nr_paths = nr_paths;
	ret = dcp_cookie_table_insert(r->p->cookies, &ci);
	if (ret < 0 && ret != -ENOMEM)
		ret = dcp_reader_corrupt(
			r,
			"bad cookie record in chunk at offset %" PRIu64 ": %s",
			r->chunk_off, dcp_last_error());
out:
	free(path_at);
	free(paths);
	return ret < 0 ? ret : 0;
}

static int read_cookies(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i;
	int ret;

	if (!room_for(c, count, sizeof(struct dcp_fmt_cookie) + 8))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		ret = read_cookie(r, c);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int read_strings(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, id, n;
	const uint8_t *s;
	size_t used;
	bool null;
	int64_t agg_id;

	if (!room_for(c, count, 8))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		id = get_u32(c);
		n = get_str(c, &s, &null);
		if (c->bad || null)
			return dcp_reader_malformed(r);
		if (id != r->strings.n)
			return dcp_reader_corrupt(
				r,
				"string id %" PRIu32 " where %zu was "
				"expected, in chunk at offset %" PRIu64,
				id, r->strings.n, r->chunk_off);
		used = 0;
		if (dcp_reader_scratch_put(r, &used, s, n) < 0)
			return dcp_reader_nomem();
		agg_id = dcp_aggregate_intern_string(r->p->agg, r->scratch);
		if (agg_id < 0)
			return (int)agg_id;
		if (map_add(&r->strings, (uint32_t)agg_id) < 0)
			return dcp_reader_nomem();
	}
	return 0;
}

static int read_stacks(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, j, id, nr;
	struct dcp_frame *f;
	int64_t agg_id;

	if (!room_for(c, count, sizeof(struct dcp_fmt_stack)))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		id = get_u32(c);
		nr = get_u32(c);
		if (!room_for(c, nr, sizeof(struct dcp_fmt_frame)))
			return dcp_reader_malformed(r);
		if (id != r->stacks.n)
			return dcp_reader_corrupt(
				r,
				"stack id %" PRIu32 " where %zu was "
				"expected, in chunk at offset %" PRIu64,
				id, r->stacks.n, r->chunk_off);
		f = dcp_grow(r->frames, &r->frames_cap, nr ? nr : 1,
			     sizeof(*f));
		if (!f)
			return dcp_reader_nomem();
		r->frames = f;
		for (j = 0; j < nr; j++) {
			f[j].cookie = get_u32(c);
			f[j].flags = get_u32(c);
			f[j].offset = get_u64(c);
		}
		agg_id = dcp_aggregate_intern_stack(r->p->agg, f, nr);
		if (agg_id < 0)
			return (int)agg_id;
		if (map_add(&r->stacks, (uint32_t)agg_id) < 0)
			return dcp_reader_nomem();
	}
	return 0;
}

/* Cgroups name strings of earlier chunks. */
static int read_cgroups(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, id, path, name;
	struct dcp_agg_cgroup cg;
	int64_t agg_id;

	if (!room_for(c, count, sizeof(struct dcp_fmt_cgroup)))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		id = get_u32(c);
		path = get_u32(c);
		name = get_u32(c);
		get_u32(c);
		cg.kernel_id = get_u64(c);
		if (c->bad)
			return dcp_reader_malformed(r);
		if (id != r->cgroups.n + 1 || path >= r->strings.n ||
		    (name != DCP_AGG_NO_STRING && name >= r->strings.n))
			return dcp_reader_corrupt(
				r,
				"cgroup %" PRIu32 " is out of order or names "
				"an unknown string, in chunk at offset %" PRIu64,
				id, r->chunk_off);
		cg.path_id = r->strings.id[path];
		cg.name_id =
			name == DCP_AGG_NO_STRING ? name : r->strings.id[name];
		agg_id = dcp_aggregate_intern_cgroup(r->p->agg, &cg);
		if (agg_id < 0)
			return (int)agg_id;
		if (map_add(&r->cgroups, (uint32_t)agg_id) < 0)
			return dcp_reader_nomem();
	}
	return 0;
}

/* Threads name strings and cgroups of earlier chunks. */
static int read_threads(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i, id;
	struct dcp_agg_thread t;
	int64_t agg_id;

	if (!room_for(c, count, sizeof(struct dcp_fmt_thread)))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		id = get_u32(c);
		t.tid = get_u32(c);
		t.comm_id = get_u32(c);
		t.cgroup = get_u32(c);
		if (c->bad)
			return dcp_reader_malformed(r);
		if (id != r->threads.n + 1 || t.comm_id >= r->strings.n ||
		    t.cgroup > r->cgroups.n)
			return dcp_reader_corrupt(
				r,
				"thread %" PRIu32 " is out of order or names "
				"unknown string %" PRIu32 " or cgroup %" PRIu32
				", in chunk at offset %" PRIu64,
				id, t.comm_id, t.cgroup, r->chunk_off);
		t.comm_id = r->strings.id[t.comm_id];
		if (t.cgroup)
			t.cgroup = r->cgroups.id[t.cgroup - 1];
		agg_id = dcp_aggregate_intern_thread(r->p->agg, &t);
		if (agg_id < 0)
			return (int)agg_id;
		if (map_add(&r->threads, (uint32_t)agg_id) < 0)
			return dcp_reader_nomem();
	}
	return 0;
}

/* Lifetimes name no other record: a later one of the same thread (a
 * working file's later flush) replaces the earlier. */
static int read_lives(struct reader *r, struct cursor *c)
{
	uint32_t count = get_u32(c), i;
	struct dcp_thread_life t;

	if (!room_for(c, count, sizeof(struct dcp_fmt_thread_life)))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		t.pid = get_u32(c);
		t.tid = get_u32(c);
		t.flags = get_u32(c);
		get_u32(c);
		t.start_ns = get_u64(c);
		t.end_ns = get_u64(c);
		if (c->bad)
			return dcp_reader_malformed(r);
		if ((t.flags & ~DCP_LIFE_KNOWN_FLAGS) ||
		    (!(t.flags & DCP_LIFE_RUNNING) && t.end_ns < t.start_ns))
			return dcp_reader_corrupt(r,
						  "thread %" PRIu32
						  "'s lifetime is malformed, "
						  "in chunk at offset %" PRIu64,
						  t.tid, r->chunk_off);
		if (dcp_lives_put(dcp_aggregate_lives(r->p->agg), &t))
			return dcp_reader_nomem();
	}
	return 0;
}

/* Rows may only name strings and stacks of earlier chunks: the writer
 * puts those first, so even a torn file keeps to this. ROWS and
 * OFF_CPU_ROWS share their key. */
static int read_rows(struct reader *r, struct cursor *c, bool off_cpu)
{
	uint32_t count = get_u32(c), i;
	uint64_t ns[DCP_OFF_CPU_NR_STATES];
	struct dcp_row_key key;
	uint64_t n = 0;
	int ret;

	if (!room_for(c, count,
		      off_cpu ? sizeof(struct dcp_fmt_off_cpu_row) :
				sizeof(struct dcp_fmt_row)))
		return dcp_reader_malformed(r);
	for (i = 0; i < count; i++) {
		key.comm_id = get_u32(c);
		key.pid = get_u32(c);
		key.stack_id = get_u32(c);
		key.thread_id = get_u32(c);
		if (off_cpu)
			for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
				ns[s] = get_u64(c);
		else
			n = get_u64(c);
		if (c->bad)
			return dcp_reader_malformed(r);
		if (key.thread_id > r->threads.n)
			return dcp_reader_corrupt(
				r,
				"row refers to unknown thread %" PRIu32
				", in chunk at offset %" PRIu64,
				key.thread_id, r->chunk_off);
		if (key.thread_id)
			key.thread_id = r->threads.id[key.thread_id - 1];
		if (key.comm_id >= r->strings.n || key.stack_id >= r->stacks.n)
			return dcp_reader_corrupt(
				r,
				"row refers to unknown %s %" PRIu32
				", in chunk at offset %" PRIu64,
				key.comm_id >= r->strings.n ? "string" :
							      "stack",
				key.comm_id >= r->strings.n ? key.comm_id :
							      key.stack_id,
				r->chunk_off);
		key.comm_id = r->strings.id[key.comm_id];
		key.stack_id = r->stacks.id[key.stack_id];
		ret = off_cpu ? dcp_aggregate_add_off_cpu(r->p->agg, &key, ns) :
				dcp_aggregate_add(r->p->agg, &key, n);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* STATS: fields beyond the ones known here are skipped, missing ones are
 * zero; the last chunk wins. */
static int read_stats(struct reader *r, struct cursor *c)
{
	uint64_t v[DCP_FMT_NR_STATS] = { 0 };
	uint32_t n = get_u32(c), i;

	if (!room_for(c, n, 8))
		return dcp_reader_malformed(r);
	for (i = 0; i < n && i < DCP_FMT_NR_STATS; i++)
		v[i] = get_u64(c);
	memcpy(DCP_FMT_STATS_FIRST(&r->p->stats), v, sizeof(v));
	return 0;
}

const char *dcp_fmt_chunk_name(uint32_t type)
{
	switch (type) {
	case DCP_FMT_CHUNK_META:
		return "META";
	case DCP_FMT_CHUNK_COOKIES:
		return "COOKIES";
	case DCP_FMT_CHUNK_STRINGS:
		return "STRINGS";
	case DCP_FMT_CHUNK_STACKS:
		return "STACKS";
	case DCP_FMT_CHUNK_ROWS:
		return "ROWS";
	case DCP_FMT_CHUNK_STATS:
		return "STATS";
	case DCP_FMT_CHUNK_SYMBOLS:
		return "SYMBOLS";
	case DCP_FMT_CHUNK_END:
		return "END";
	case DCP_FMT_CHUNK_SYMBOL_DETAILS:
		return "SYMBOL_DETAILS";
	case DCP_FMT_CHUNK_SUMMARY_STACKS:
		return "SUMMARY_STACKS";
	case DCP_FMT_CHUNK_SUMMARY_ROWS:
		return "SUMMARY_ROWS";
	case DCP_FMT_CHUNK_SUMMARY_SYMBOLS:
		return "SUMMARY_SYMBOLS";
	case DCP_FMT_CHUNK_SUMMARY_SYMBOL_DETAILS:
		return "SUMMARY_SYMBOL_DETAILS";
	case DCP_FMT_CHUNK_THREADS:
		return "THREADS";
	case DCP_FMT_CHUNK_SUMMARY_THREADS:
		return "SUMMARY_THREADS";
	case DCP_FMT_CHUNK_OFF_CPU_ROWS:
		return "OFF_CPU_ROWS";
	case DCP_FMT_CHUNK_SUMMARY_OFF_CPU_ROWS:
		return "SUMMARY_OFF_CPU_ROWS";
	case DCP_FMT_CHUNK_THREAD_LIFETIMES:
		return "THREAD_LIFETIMES";
	case DCP_FMT_CHUNK_CGROUPS:
		return "CGROUPS";
	}
	return "unknown";
}

int dcp_reader_decode_chunk(struct reader *r, uint32_t type, const uint8_t *p,
			    size_t n)
{
	struct cursor c = { .p = p, .left = n };
	int ret;

	switch (type) {
	case DCP_FMT_CHUNK_META:
		return read_meta(r, &c);
	case DCP_FMT_CHUNK_COOKIES:
		ret = read_cookies(r, &c);
		break;
	case DCP_FMT_CHUNK_STRINGS:
		ret = read_strings(r, &c);
		break;
	case DCP_FMT_CHUNK_STACKS:
		ret = read_stacks(r, &c);
		break;
	case DCP_FMT_CHUNK_ROWS:
		ret = read_rows(r, &c, false);
		break;
	case DCP_FMT_CHUNK_OFF_CPU_ROWS:
		ret = read_rows(r, &c, true);
		break;
	case DCP_FMT_CHUNK_THREADS:
		ret = read_threads(r, &c);
		break;
	case DCP_FMT_CHUNK_CGROUPS:
		ret = read_cgroups(r, &c);
		break;
	case DCP_FMT_CHUNK_THREAD_LIFETIMES:
		ret = read_lives(r, &c);
		break;
	case DCP_FMT_CHUNK_SYMBOLS:
		ret = dcp_reader_read_symbols(r, &c);
		break;
	case DCP_FMT_CHUNK_SYMBOL_DETAILS:
		ret = dcp_reader_read_symbol_details(r, &c);
		break;
	case DCP_FMT_CHUNK_STATS:
		return read_stats(r, &c);
	case DCP_FMT_CHUNK_END:
		r->end_seen = true;
		ret = 0;
		break;
	default:
		/* A later version's chunk: skipped, by design. */
		return 0;
	}
	/* Record chunks end with their last record. */
	if (ret == 0 && c.left)
		return dcp_reader_malformed(r);
	return ret;
}
