// SPDX-License-Identifier: MIT
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>
#include <zstd.h>

#include "format_internal.h"
#include "profile_internal.h"

/* ---- helpers ------------------------------------------------------------ */

static int warnings;
static char last_warning[1024];

static void on_log(enum dcp_log_level level, const char *msg, void *ctx)
{
	if (level == DCP_LOG_WARN) {
		warnings++;
		snprintf(last_warning, sizeof(last_warning), "%s", msg);
	}
}

static char dir[64];

static int setup(void **state)
{
	strcpy(dir, "/tmp/dcprof-test-profile.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	warnings = 0;
	dcp_set_log(on_log, NULL);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	dcp_set_log(NULL, NULL);
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *in_dir(const char *name)
{
	/* A few names alive at once per test: enough rotating buffers. */
	static char bufs[8][256];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

static uint8_t *slurp(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*size = st.st_size;
	return buf;
}

static void spit(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	close(fd);
}

static size_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* What the recorder would hold: cookies, aggregate, meta, stats. */
struct rec {
	struct dcp_cookie_table *cookies;
	struct dcp_aggregate *agg;
	struct dcp_symtab *symbols;
	struct dcp_profile_meta meta;
	struct dcp_profile_stats stats;
	uint32_t c_libc, c_app, c_kernel;
	uint64_t total;
};

static const uint8_t libc_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1,	 2, 3,
				     4,	   5,	 6,    7,    8,	 9, 10,
				     11,   12,	 13,   14,   15, 16 };

static void rec_init(struct rec *r)
{
	struct dcp_file_id id = { 0 };
	int64_t c;

	memset(r, 0, sizeof(*r));
	r->stats.sz = sizeof(r->stats);
	r->cookies = dcp_cookie_table_new();
	r->agg = dcp_aggregate_new();
	r->symbols = dcp_symtab_new();
	assert_non_null(r->cookies);
	assert_non_null(r->agg);
	assert_non_null(r->symbols);

	memcpy(id.build_id, libc_id, 20);
	id.build_id_size = 20;
	c = dcp_cookie_table_intern_file(r->cookies, &id,
					 "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_true(c > 0);
	r->c_libc = (uint32_t)c;
	memset(&id, 0, sizeof(id));
	id.dev_major = 8;
	id.dev_minor = 1;
	id.ino = 123456;
	id.ino_generation = 7;
	c = dcp_cookie_table_intern_file(r->cookies, &id, "/opt/app/bin/app");
	assert_true(c > 0);
	r->c_app = (uint32_t)c;
	c = dcp_cookie_table_intern_special(r->cookies, DCP_COOKIE_KIND_KERNEL,
					    "[kernel.kallsyms]", NULL);
	assert_true(c > 0);
	r->c_kernel = (uint32_t)c;

	r->meta.start_realtime_ns = 1700000000123456789ull;
	r->meta.sample_freq = 999;
	r->meta.nr_cpus = 2;
	r->meta.callchain = true;
	r->meta.event = "cpu-clock";
	r->meta.cmdline = "dcprof record -a -g";
	r->meta.hostname = "testhost";
	r->meta.kernel_release = "6.1.0-test";
}

static void rec_free(struct rec *r)
{
	dcp_cookie_table_free(r->cookies);
	dcp_aggregate_free(r->agg);
	dcp_symtab_free(r->symbols);
}

/*
 * Process 102's main thread in one of two cgroups of one path (one made
 * again), as the recorder keeps a thread's cgroup; the others in none.
 */
static uint32_t rec_cgroup_thread(struct rec *r, const struct dcp_row_key *key,
				  int k)
{
	struct dcp_agg_cgroup c = { .kernel_id = 7000 + (uint64_t)(k % 2),
				    .name_id = DCP_AGG_NO_STRING };
	struct dcp_agg_thread t = { .tid = key->pid, .comm_id = key->comm_id };
	int64_t id;

	if (key->pid != 102)
		return 0;
	id = dcp_aggregate_intern_string(r->agg, "/system.slice/app.service");
	assert_true(id >= 0);
	c.path_id = (uint32_t)id;
	id = dcp_aggregate_intern_cgroup(r->agg, &c);
	assert_true(id > 0);
	t.cgroup = (uint32_t)id;
	id = dcp_aggregate_intern_thread(r->agg, &t);
	assert_true(id > 0);
	return (uint32_t)id;
}

/*
 * One round of samples: the same keys each round (so flushes carry only
 * deltas), plus `fresh` keys of its own.
 */
static void rec_round(struct rec *r, int round, int fresh)
{
	static const char *const comms[] = { "bash", "app", "kworker/0:1" };
	struct dcp_frame f[3];
	struct dcp_row_key key = { 0 };
	int i;

	for (i = 0; i < 40 + fresh; i++) {
		int k = i < 40 ? i : 1000 * round + i;

		f[0] = (struct dcp_frame){
			.cookie = k % 3 == 0 ? r->c_libc : r->c_app,
			.offset = 0x1000 + 16 * (uint64_t)(k % 17)
		};
		f[1] = (struct dcp_frame){ .cookie = r->c_app,
					   .offset = 0x2000 + (uint64_t)k };
		f[2] = (struct dcp_frame){ .cookie = r->c_kernel,
					   .flags = DCP_FRAME_KERNEL,
					   .offset = 0xffff00 };
		key.comm_id = (uint32_t)dcp_aggregate_intern_string(
			r->agg, comms[k % 3]);
		key.pid = 100 + (uint32_t)(k % 5);
		key.stack_id = (uint32_t)dcp_aggregate_intern_stack(
			r->agg, f, (uint32_t)(1 + k % 3));
		key.thread_id = rec_cgroup_thread(r, &key, k);
		assert_int_equal(dcp_aggregate_add(r->agg, &key, 1 + k % 4), 0);
		r->total += 1 + k % 4;
	}
	r->stats.samples = r->total + 10;
	r->stats.samples_kept = r->total;
	r->stats.lost_records = (uint64_t)round;
	r->stats.files_unpinned = 42;
	r->meta.duration_ns = (uint64_t)round * 1000000000ull;
}

static void rec_symbols(struct rec *r)
{
	int k;

	for (k = 0; k < 17; k++) {
		char name[32];

		snprintf(name, sizeof(name), "libc_fn_%d", k);
		assert_int_equal(dcp_symtab_add(r->symbols, r->c_libc,
						0x1000 + 16 * (uint64_t)k, name,
						0x1000, 0x200),
				 0);
	}
	assert_int_equal(dcp_symtab_add(r->symbols, r->c_kernel, 0xffff00,
					"do_syscall_64", 0xfffe00, 0x180),
			 0);
	assert_int_equal(
		dcp_symtab_add(r->symbols, r->c_app, 0x2000, NULL, 0, 0), 0);
}

static uint64_t profile_total(const struct dcp_profile *p)
{
	struct dcp_sample_row row = { .sz = sizeof(row) };
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < dcp_profile_nr_rows(p); i++) {
		assert_int_equal(dcp_profile_row(p, i, &row), 0);
		total += row.count;
	}
	return total;
}

/* Every aggregate row is in the profile with the same total, and no other
 * row is. */
static void assert_rows_match(const struct dcp_profile *p,
			      const struct dcp_aggregate *agg)
{
	size_t n = dcp_aggregate_nr_rows(agg), i, j;
	struct dcp_sample_row row = { .sz = sizeof(row) };
	struct dcp_row_key key = { 0 };
	const struct dcp_frame *f;
	struct dcp_agg_thread t;
	struct dcp_agg_cgroup c;
	uint64_t count;
	uint32_t nr;
	bool found;

	assert_int_equal(dcp_profile_nr_rows(p), n);
	for (i = 0; i < n; i++) {
		dcp_aggregate_row(agg, i, &key, &count);
		f = dcp_aggregate_stack(agg, key.stack_id, &nr);
		c.kernel_id = 0;
		if (dcp_aggregate_thread(agg, key.thread_id, &t) &&
		    dcp_aggregate_cgroup(agg, t.cgroup, &c))
			assert_string_equal(
				dcp_aggregate_string(agg, c.path_id),
				"/system.slice/app.service");
		found = false;
		for (j = 0; j < n && !found; j++) {
			assert_int_equal(dcp_profile_row(p, j, &row), 0);
			if (row.cgroup_id != c.kernel_id ||
			    (c.kernel_id &&
			     strcmp(row.cgroup, "/system.slice/app.service")))
				continue;
			if (row.pid != key.pid || row.nr_frames != nr ||
			    strcmp(row.comm,
				   dcp_aggregate_string(agg, key.comm_id)) ||
			    memcmp(row.frames, f, nr * sizeof(*f)))
				continue;
			assert_int_equal(row.count, count);
			found = true;
		}
		assert_true(found);
	}
}

static void assert_cookies(const struct dcp_profile *p, const struct rec *r,
			   size_t libc_paths)
{
	const struct dcp_cookie_table *t = dcp_profile_cookies(p);
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	char hex[2 * DCP_BUILD_ID_MAX + 1];

	assert_int_equal(dcp_cookie_table_lookup(t, r->c_libc, &ci), 0);
	assert_int_equal(ci.kind, DCP_COOKIE_KIND_FILE);
	assert_int_equal(ci.build_id_size, 20);
	assert_memory_equal(ci.build_id, libc_id, 20);
	assert_string_equal(
		dcp_build_id_hex(ci.build_id, ci.build_id_size, hex),
		"deadbeef0102030405060708090a0b0c0d0e0f10");
	assert_int_equal(ci.nr_paths, libc_paths);
	assert_string_equal(ci.paths[0], "/usr/lib/x86_64-linux-gnu/libc.so.6");
	if (libc_paths > 1)
		assert_string_equal(ci.paths[1],
				    "/lib/x86_64-linux-gnu/libc.so.6");

	assert_int_equal(dcp_cookie_table_lookup(t, r->c_app, &ci), 0);
	assert_int_equal(ci.build_id_size, 0);
	assert_int_equal(ci.dev_major, 8);
	assert_int_equal(ci.dev_minor, 1);
	assert_int_equal(ci.ino, 123456);
	assert_int_equal(ci.ino_generation, 7);
	assert_int_equal(ci.nr_paths, 1);
	assert_string_equal(ci.paths[0], "/opt/app/bin/app");

	assert_int_equal(dcp_cookie_table_lookup(t, r->c_kernel, &ci), 0);
	assert_int_equal(ci.kind, DCP_COOKIE_KIND_KERNEL);
	assert_string_equal(ci.name, "[kernel.kallsyms]");
}

/* Leaf-frame sample counts per cookie, summed from the recorder's rows. */
static void assert_cookie_samples(const struct dcp_profile *p,
				  const struct rec *r)
{
	const struct dcp_cookie_table *t = dcp_profile_cookies(p);
	uint64_t want_libc = 0, want_app = 0, count;
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	struct dcp_row_key key = { 0 };
	const struct dcp_frame *f;
	uint32_t nr;
	size_t i;

	for (i = 0; i < dcp_aggregate_nr_rows(r->agg); i++) {
		dcp_aggregate_row(r->agg, i, &key, &count);
		f = dcp_aggregate_stack(r->agg, key.stack_id, &nr);
		if (f[0].cookie == r->c_libc)
			want_libc += count;
		else
			want_app += count;
	}
	assert_true(want_libc > 0 && want_app > 0);
	assert_int_equal(dcp_cookie_table_lookup(t, r->c_libc, &ci), 0);
	assert_int_equal(ci.samples, want_libc);
	assert_int_equal(dcp_cookie_table_lookup(t, r->c_app, &ci), 0);
	assert_int_equal(ci.samples, want_app);
}

static void assert_meta(const struct dcp_profile *p, const struct rec *r,
			bool complete)
{
	const struct dcp_profile_meta *m = dcp_profile_get_meta(p);

	assert_int_equal(m->version, 1);
	assert_int_equal(m->complete, complete);
	assert_int_equal(m->start_realtime_ns, r->meta.start_realtime_ns);
	assert_int_equal(m->duration_ns, r->meta.duration_ns);
	assert_int_equal(m->sample_freq, 999);
	assert_int_equal(m->nr_cpus, 2);
	assert_true(m->callchain);
	assert_string_equal(m->event, "cpu-clock");
	assert_string_equal(m->cmdline, "dcprof record -a -g");
	assert_string_equal(m->hostname, "testhost");
	assert_string_equal(m->kernel_release, "6.1.0-test");
}

static void assert_stats(const struct dcp_profile *p,
			 const struct dcp_profile_stats *want)
{
	assert_memory_equal(dcp_profile_get_stats(p), want, sizeof(*want));
}

/* Open must fail with err and a message that contains text. */
static void assert_open_fails(const char *path, int err, const char *text)
{
	struct dcp_profile *p;

	errno = 0;
	p = dcp_profile_open(path);
	if (p)
		fail_msg("'%s' opened", path);
	if (err)
		assert_int_equal(errno, err);
	else
		assert_int_not_equal(errno, 0);
	if (text && !strstr(dcp_last_error(), text))
		fail_msg("message '%s' lacks '%s'", dcp_last_error(), text);
}

/*
 * A working file of nr_flushes flushes; sizes[k] is its size after flush
 * k and totals[k] the samples in it then.
 */
static void write_working(struct rec *r, const char *path, int nr_flushes,
			  size_t *sizes, uint64_t *totals)
{
	struct dcp_profile_writer *w = dcp_profile_writer_open(path);
	struct dcp_file_id id = { 0 };
	int k;

	assert_non_null(w);
	for (k = 0; k < nr_flushes; k++) {
		rec_round(r, k + 1, 5);
		if (k == 1) {
			/* A second path for libc: the cookie is re-sent. */
			memcpy(id.build_id, libc_id, 20);
			id.build_id_size = 20;
			assert_int_equal(dcp_cookie_table_intern_file(
						 r->cookies, &id,
						 "/lib/x86_64-linux-gnu/"
						 "libc.so.6"),
					 r->c_libc);
		}
		assert_int_equal(dcp_profile_writer_flush(w, &r->meta,
							  r->cookies, r->agg,
							  &r->stats),
				 0);
		if (sizes)
			sizes[k] = file_size(path);
		if (totals)
			totals[k] = r->total;
	}
	dcp_profile_writer_free(w);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_round_trip(void **state)
{
	char *path = in_dir("prof.data");
	struct dcp_profile_writer *w;
	struct dcp_profile *p;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct rec r;
	int k;

	rec_init(&r);
	w = dcp_profile_writer_open(path);
	assert_non_null(w);
	/* Just created: a valid, empty working file. */
	p = dcp_profile_open(path);
	assert_non_null(p);
	assert_int_equal(dcp_profile_nr_rows(p), 0);
	assert_false(dcp_profile_get_meta(p)->complete);
	dcp_profile_close(p);

	for (k = 0; k < 4; k++) {
		struct dcp_file_id id = { 0 };

		rec_round(&r, k + 1, 3);
		if (k == 2) {
			memcpy(id.build_id, libc_id, 20);
			id.build_id_size = 20;
			dcp_cookie_table_intern_file(
				r.cookies, &id,
				"/lib/x86_64-linux-gnu/libc.so.6");
		}
		assert_int_equal(dcp_profile_writer_flush(w, &r.meta, r.cookies,
							  r.agg, &r.stats),
				 0);
		/* Readable after every flush, with everything so far. */
		p = dcp_profile_open(path);
		if (!p)
			fail_msg("%s", dcp_last_error());
		assert_rows_match(p, r.agg);
		assert_int_equal(profile_total(p), r.total);
		assert_meta(p, &r, false);
		assert_stats(p, &r.stats);
		assert_cookies(p, &r, k >= 2 ? 2 : 1);
		assert_cookie_samples(p, &r);
		assert_int_equal(dcp_profile_symbol(p, r.c_libc, 0x1000, &sym),
				 -ENOENT);
		assert_null(sym.name);
		dcp_profile_close(p);
	}
	assert_int_equal(warnings, 0);

	rec_symbols(&r);
	r.stats.symbols_unresolved = 1;
	assert_int_equal(dcp_profile_writer_finish(w, &r.meta, r.cookies, r.agg,
						   r.symbols, &r.stats),
			 0);
	/* No more flushes into a file that is no longer at the path. */
	assert_true(dcp_profile_writer_flush(w, &r.meta, r.cookies, r.agg,
					     &r.stats) < 0);
	dcp_profile_writer_free(w);

	p = dcp_profile_open(path);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_rows_match(p, r.agg);
	assert_int_equal(profile_total(p), r.total);
	assert_meta(p, &r, true);
	assert_stats(p, &r.stats);
	assert_cookies(p, &r, 2);
	assert_cookie_samples(p, &r);
	assert_int_equal(dcp_profile_symbol(p, r.c_libc, 0x1000 + 16 * 5, &sym),
			 0);
	assert_string_equal(sym.name, "libc_fn_5");
	assert_int_equal(sym.start, 0x1000);
	assert_int_equal(sym.size, 0x200);
	assert_int_equal(sym.flags, 0);
	/* a caller built before dcp_symbol.flags: its fields and no more;
	 * a smaller struct is refused */
	memset(&sym, 0xa5, sizeof(sym));
	sym.sz = offsetof(struct dcp_symbol, flags);
	assert_int_equal(dcp_profile_symbol(p, r.c_libc, 0x1000 + 16 * 5, &sym),
			 0);
	assert_string_equal(sym.name, "libc_fn_5");
	assert_int_equal(sym.flags, 0xa5a5a5a5);
	sym.sz--;
	assert_int_equal(dcp_profile_symbol(p, r.c_libc, 0x1000 + 16 * 5, &sym),
			 -EINVAL);
	sym.sz = sizeof(sym);
	assert_int_equal(dcp_profile_symbol(p, r.c_kernel, 0xffff00, &sym), 0);
	assert_string_equal(sym.name, "do_syscall_64");
	/* Stored as unresolved: found, with no name. */
	assert_int_equal(dcp_profile_symbol(p, r.c_app, 0x2000, &sym), 0);
	assert_null(sym.name);
	assert_int_equal(dcp_profile_symbol(p, r.c_app, 0x2001, &sym), -ENOENT);
	assert_null(sym.name);
	assert_int_equal(warnings, 0);
	dcp_profile_close(p);

	/* No temporary file left behind. */
	assert_int_equal(access(in_dir("prof.data.old"), F_OK), -1);
	rec_free(&r);
}

/* The compact file lists a process's rows together (profile_order.c:
 * by process name, then pid), which the reader keeps. */
static void assert_rows_grouped(const struct dcp_profile *p)
{
	struct dcp_sample_row row = { .sz = sizeof(row) };
	char comm[64] = "";
	uint32_t pid = 0;
	size_t i;

	for (i = 0; i < dcp_profile_nr_rows(p); i++) {
		assert_int_equal(dcp_profile_row(p, i, &row), 0);
		if (i && !strcmp(comm, row.comm))
			assert_true(row.pid >= pid);
		snprintf(comm, sizeof(comm), "%s", row.comm);
		pid = row.pid;
	}
}

static void test_compact_smaller(void **state)
{
	char *path = in_dir("prof.data");
	struct dcp_profile_writer *w = dcp_profile_writer_open(path);
	struct dcp_profile *p;
	size_t working;
	struct rec r;
	int k;

	rec_init(&r);
	assert_non_null(w);
	for (k = 0; k < 100; k++) {
		rec_round(&r, k + 1, 0);
		assert_int_equal(dcp_profile_writer_flush(w, &r.meta, r.cookies,
							  r.agg, &r.stats),
				 0);
	}
	working = file_size(path);
	p = dcp_profile_open(path);
	assert_non_null(p);
	assert_int_equal(profile_total(p), r.total);
	assert_int_equal(dcp_profile_nr_rows(p), 40);
	dcp_profile_close(p);

	assert_int_equal(dcp_profile_writer_finish(w, &r.meta, r.cookies, r.agg,
						   r.symbols, &r.stats),
			 0);
	dcp_profile_writer_free(w);
	assert_true(file_size(path) * 10 < working);
	p = dcp_profile_open(path);
	assert_non_null(p);
	assert_int_equal(profile_total(p), r.total);
	assert_rows_match(p, r.agg);
	assert_rows_grouped(p);
	dcp_profile_close(p);
	rec_free(&r);
}

/* A finished profile, read back into memory. */
static uint8_t *finished_profile(struct rec *r, const char *path, size_t *size)
{
	struct dcp_profile_writer *w;

	rec_init(r);
	write_working(r, path, 3, NULL, NULL);
	w = dcp_profile_writer_open(path);
	assert_non_null(w);
	rec_symbols(r);
	assert_int_equal(dcp_profile_writer_finish(w, &r->meta, r->cookies,
						   r->agg, r->symbols,
						   &r->stats),
			 0);
	dcp_profile_writer_free(w);
	return slurp(path, size);
}

static void test_truncated_finished(void **state)
{
	char *path = in_dir("prof.data"), *cut = in_dir("cut.data");
	char want[128];
	size_t size, n;
	struct rec r;
	uint8_t *data = finished_profile(&r, path, &size);

	for (n = 0; n < size; n++) {
		spit(cut, data, n);
		if (n == 0) {
			assert_open_fails(cut, EINVAL, "is empty");
		} else if (n < 64) {
			assert_open_fails(cut, EINVAL, "is truncated");
		} else {
			snprintf(want, sizeof(want),
				 "is truncated (%zu of %zu bytes)", n, size);
			assert_open_fails(cut, EINVAL, want);
		}
	}
	/* And the whole of it still opens. */
	spit(cut, data, size);
	dcp_profile_close(dcp_profile_open(cut));
	assert_int_equal(warnings, 0);
	free(data);
	rec_free(&r);
}

static void test_flipped_finished(void **state)
{
	char *path = in_dir("prof.data"), *bad = in_dir("bad.data");
	struct dcp_profile *p;
	size_t size, i;
	struct rec r;
	uint8_t *data = finished_profile(&r, path, &size);

	/* Every byte, header and every chunk region: header fields, payload
	 * (stored deflated or not), checksums, padding. */
	for (i = 0; i < size; i++) {
		data[i] ^= 0x20;
		spit(bad, data, size);
		data[i] ^= 0x20;
		if (i >= 64) {
			assert_open_fails(bad, EBADMSG, "is corrupt");
		} else {
			errno = 0;
			p = dcp_profile_open(bad);
			if (p)
				fail_msg("flip at %zu opened", i);
			assert_true(errno == EINVAL || errno == EBADMSG ||
				    errno == ENOTSUP);
		}
	}
	/* The message names the chunk. */
	data[64 + 40] ^= 1;
	spit(bad, data, size);
	assert_open_fails(bad, EBADMSG, "bad checksum in chunk at offset 64");
	free(data);
	rec_free(&r);
}

static void test_working_cut_anywhere(void **state)
{
	char *path = in_dir("prof.data"), *cut = in_dir("cut.data");
	size_t sizes[4], size, n;
	uint64_t totals[4], got;
	struct dcp_profile *p;
	struct rec r;
	uint8_t *data;
	int k;

	rec_init(&r);
	write_working(&r, path, 4, sizes, totals);
	data = slurp(path, &size);
	assert_int_equal(size, sizes[3]);
	for (n = 64; n <= size; n++) {
		spit(cut, data, n);
		warnings = 0;
		p = dcp_profile_open(cut);
		if (!p)
			fail_msg("cut at %zu: %s", n, dcp_last_error());
		got = profile_total(p);
		assert_false(dcp_profile_get_meta(p)->complete);
		/* Whole flushes are all there; a torn one adds nothing it
		 * did not complete, so totals only grow with the cut. */
		for (k = 0; k < 4; k++) {
			if (n >= sizes[k])
				assert_true(got >= totals[k]);
			if (n == sizes[k]) {
				assert_int_equal(got, totals[k]);
				assert_int_equal(warnings, 0);
			}
		}
		if (n < sizes[0])
			assert_true(got <= totals[0]);
		if (n > 64 && n < sizes[0] && n % 8)
			assert_int_equal(warnings, 1);
		dcp_profile_close(p);
	}
	free(data);
	rec_free(&r);
}

/* The chunk at off and the offset of the next one. */
static size_t chunk_next(const uint8_t *data, size_t off, uint32_t *type)
{
	struct dcp_fmt_chunk h;

	memcpy(&h, data + off, sizeof(h));
	*type = le32toh(h.type);
	return off + sizeof(h) + dcp_fmt_pad(le64toh(h.payload_size));
}

static void test_working_torn_tail(void **state)
{
	char *path = in_dir("prof.data"), *bad = in_dir("bad.data");
	size_t sizes[3], size, off, next, last = 0, first_rows = 0;
	uint64_t totals[3];
	struct dcp_profile_stats stats3 = { .sz = sizeof(stats3) };
	struct dcp_profile *p;
	uint32_t type;
	struct rec r;
	uint8_t *data;

	rec_init(&r);
	write_working(&r, path, 3, sizes, totals);
	stats3 = r.stats;
	data = slurp(path, &size);
	data = realloc(data, size + 4096);
	for (off = 64; off < size; off = next) {
		next = chunk_next(data, off, &type);
		last = off;
		if (type == DCP_FMT_CHUNK_ROWS && !first_rows)
			first_rows = off;
	}
	assert_int_equal(off, size);
	chunk_next(data, last, &type);
	assert_int_equal(type, DCP_FMT_CHUNK_STATS);

	/* A bad checksum in the final chunk: dropped, with a warning; the
	 * rows of that flush (an earlier chunk) are there, the stats are
	 * the previous flush's. */
	data[size - 9] ^= 0x55;
	spit(bad, data, size);
	warnings = 0;
	p = dcp_profile_open(bad);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_int_equal(warnings, 1);
	assert_non_null(strstr(last_warning, "ignoring"));
	assert_int_equal(profile_total(p), totals[2]);
	assert_int_equal(dcp_profile_get_stats(p)->lost_records, 2);
	dcp_profile_close(p);
	data[size - 9] ^= 0x55;

	/* Zeros after the last flush (blocks allocated, never written). */
	memset(data + size, 0, 4096);
	spit(bad, data, size + 4096);
	warnings = 0;
	p = dcp_profile_open(bad);
	assert_non_null(p);
	assert_int_equal(warnings, 1);
	assert_int_equal(profile_total(p), totals[2]);
	assert_stats(p, &stats3);
	dcp_profile_close(p);

	/* But a bad chunk with good data after it is corruption. */
	data[first_rows + 40] ^= 1;
	spit(bad, data, size);
	assert_open_fails(bad, EBADMSG, "bad checksum in chunk at offset");
	free(data);
	rec_free(&r);
}

/* data with the chunk at [off, end) replaced by a stored one holding raw. */
/* data with the chunk at [off, end) replaced by one of the stored payload
 * (n bytes; raw_size after decompressing as flags say). */
static void spit_with_stored_chunk(const char *path, const uint8_t *data,
				   size_t size, size_t off, size_t end,
				   uint32_t type, uint32_t flags,
				   const uint8_t *raw, size_t n,
				   size_t raw_size)
{
	struct dcp_fmt_chunk h = { 0 };
	static const uint8_t pad[8];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	h.type = htole32(type);
	h.flags = htole32(flags);
	h.payload_size = htole64(n);
	h.raw_size = htole64(raw_size);
	h.crc32 = htole32(dcp_fmt_chunk_crc(&h, raw, n));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, off), (ssize_t)off);
	assert_int_equal(write(fd, &h, sizeof(h)), sizeof(h));
	assert_int_equal(write(fd, raw, n), (ssize_t)n);
	assert_int_equal(write(fd, pad, dcp_fmt_pad(n) - n),
			 (ssize_t)(dcp_fmt_pad(n) - n));
	assert_int_equal(write(fd, data + end, size - end),
			 (ssize_t)(size - end));
	close(fd);
}

static void spit_with_chunk(const char *path, const uint8_t *data, size_t size,
			    size_t off, size_t end, uint32_t type,
			    const uint8_t *raw, size_t n)
{
	spit_with_stored_chunk(path, data, size, off, end, type, 0, raw, n, n);
}

static void open_mutant(const char *path)
{
	struct dcp_profile *p;

	errno = 0;
	p = dcp_profile_open(path);
	if (p) {
		/* Whatever was accepted must be consistent to walk. */
		profile_total(p);
		dcp_profile_close(p);
	} else if (errno != EBADMSG) {
		fail_msg("errno %d: %s", errno, dcp_last_error());
	}
}

static void expect_corrupt(const char *path)
{
	struct dcp_profile *p;

	errno = 0;
	p = dcp_profile_open(path);
	if (p)
		fail_msg("'%s' opened", path);
	assert_int_equal(errno, EBADMSG);
}

/* A zstd chunk whose frame states another size than the chunk, cut short,
 * or also flagged deflated: corrupt, whatever the checksum says. */
static void reject_bad_zstd(const char *bad, const uint8_t *data, size_t size,
			    size_t off, size_t end, uint32_t type,
			    size_t stored, size_t raw_len)
{
	const uint8_t *z = data + off + 32;

	spit_with_stored_chunk(bad, data, size, off, end, type,
			       DCP_FMT_CHUNK_ZSTD, z, stored, raw_len + 1);
	expect_corrupt(bad);
	spit_with_stored_chunk(bad, data, size, off, end, type,
			       DCP_FMT_CHUNK_ZSTD, z, stored - 1, raw_len);
	expect_corrupt(bad);
	spit_with_stored_chunk(bad, data, size, off, end, type,
			       DCP_FMT_CHUNK_ZSTD | DCP_FMT_CHUNK_DEFLATE, z,
			       stored, raw_len);
	expect_corrupt(bad);
}

/*
 * Payloads with valid checksums but damaged contents (every byte flipped,
 * every length cut), chunk by chunk: the decoders' own bounds checks, not
 * the checksums, must stop them. Run under valgrind or ASan to see reads.
 */
static void test_mutated_payloads(void **state)
{
	char *path = in_dir("prof.data"), *bad = in_dir("bad.data");
	size_t size, off, end, raw_len, i;
	struct dcp_fmt_chunk h;
	uint8_t *data, *raw, *mut;
	uint32_t type, nr_chunks = 0, nr_zstd = 0;
	struct dcp_profile *p;
	struct rec r;

	rec_init(&r);
	write_working(&r, path, 2, NULL, NULL);
	data = slurp(path, &size);
	for (off = 64; off < size; off = end) {
		end = chunk_next(data, off, &type);
		memcpy(&h, data + off, sizeof(h));
		raw_len = le64toh(h.raw_size);
		raw = malloc(raw_len + 1);
		mut = malloc(raw_len + 1);
		assert_non_null(raw);
		assert_non_null(mut);
		if (le32toh(h.flags) & DCP_FMT_CHUNK_ZSTD) {
			assert_int_equal(
				ZSTD_decompress(raw, raw_len, data + off + 32,
						le64toh(h.payload_size)),
				raw_len);
			nr_zstd++;
		} else {
			assert_int_equal(le32toh(h.flags), 0);
			memcpy(raw, data + off + 32, raw_len);
		}
		/* Stored instead of compressed: still the same profile. */
		spit_with_chunk(bad, data, size, off, end, type, raw, raw_len);
		p = dcp_profile_open(bad);
		if (!p)
			fail_msg("%s", dcp_last_error());
		assert_int_equal(profile_total(p), r.total);
		dcp_profile_close(p);
		/* Deflated, as files were written before zstd: the same. */
		if (raw_len) {
			uLongf zlen = compressBound(raw_len);
			uint8_t *z = malloc(zlen);

			assert_non_null(z);
			assert_int_equal(compress(z, &zlen, raw, raw_len),
					 Z_OK);
			spit_with_stored_chunk(bad, data, size, off, end, type,
					       DCP_FMT_CHUNK_DEFLATE, z, zlen,
					       raw_len);
			free(z);
			p = dcp_profile_open(bad);
			if (!p)
				fail_msg("%s", dcp_last_error());
			assert_int_equal(profile_total(p), r.total);
			dcp_profile_close(p);
		}
		if (le32toh(h.flags) & DCP_FMT_CHUNK_ZSTD)
			reject_bad_zstd(bad, data, size, off, end, type,
					le64toh(h.payload_size), raw_len);
		for (i = 0; i < raw_len; i++) {
			memcpy(mut, raw, raw_len);
			mut[i] ^= 0xff;
			spit_with_chunk(bad, data, size, off, end, type, mut,
					raw_len);
			open_mutant(bad);
			mut[i] ^= 0xff;
			mut[i] ^= 0x01;
			spit_with_chunk(bad, data, size, off, end, type, mut,
					raw_len);
			open_mutant(bad);
			spit_with_chunk(bad, data, size, off, end, type, raw,
					i);
			open_mutant(bad);
		}
		free(raw);
		free(mut);
		nr_chunks++;
	}
	assert_true(nr_chunks >= 10);
	assert_true(nr_zstd >= 1);
	free(data);
	rec_free(&r);
}

static void test_unknown_chunk_skipped(void **state)
{
	char *path = in_dir("prof.data");
	struct dcp_fmt_chunk h = { 0 };
	const char payload[] = "from the future";
	uint8_t pad[8] = { 0 };
	struct dcp_profile *p;
	struct rec r;
	int fd;

	rec_init(&r);
	write_working(&r, path, 2, NULL, NULL);
	h.type = htole32(0x7777);
	h.payload_size = htole64(sizeof(payload));
	h.raw_size = h.payload_size;
	h.crc32 = htole32(dcp_fmt_chunk_crc(&h, (const uint8_t *)payload,
					    sizeof(payload)));
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, &h, sizeof(h)), sizeof(h));
	assert_int_equal(write(fd, payload, sizeof(payload)), sizeof(payload));
	assert_int_equal(
		write(fd, pad, dcp_fmt_pad(sizeof(payload)) - sizeof(payload)),
		dcp_fmt_pad(sizeof(payload)) - sizeof(payload));
	close(fd);
	p = dcp_profile_open(path);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_int_equal(warnings, 0);
	assert_int_equal(profile_total(p), r.total);
	dcp_profile_close(p);
	rec_free(&r);
}

/* Self samples per (process name, leaf function name) of a profile. */
struct leaf_count {
	char key[96];
	uint64_t count;
};

static size_t leaf_counts(const struct dcp_profile *p, struct leaf_count *out,
			  size_t max)
{
	struct dcp_sample_row row = { .sz = sizeof(row) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	size_t n = 0, i, j;
	char key[96];

	for (i = 0; i < dcp_profile_nr_rows(p); i++) {
		assert_int_equal(dcp_profile_row(p, i, &row), 0);
		assert_true(row.nr_frames > 0);
		if (dcp_profile_symbol(p, row.frames[0].cookie,
				       row.frames[0].offset, &sym))
			sym.name = NULL;
		snprintf(key, sizeof(key), "%s %u %s", row.comm,
			 row.frames[0].cookie, sym.name ? sym.name : "?");
		for (j = 0; j < n && strcmp(out[j].key, key); j++)
			;
		if (j == n) {
			assert_true(n < max);
			strcpy(out[n].key, key);
			out[n++].count = 0;
		}
		out[j].count += row.count;
	}
	return n;
}

/*
 * The summary: rows summed over pids, each frame one address of its
 * function (same symbol, same inlined calls; unnamed addresses one per
 * file), with the same counts per function as the whole profile.
 */
#define SUMMARY_PIDS 300

static void test_summary(void **state)
{
	char *path = in_dir("prof.data");
	struct dcp_profile_open_opts o = { .sz = sizeof(o), .summary = true };
	const struct dcp_inline_frame inl = { .name = "inlined_helper" };
	struct leaf_count full[16], sum[16];
	size_t nr_full, nr_sum, i;
	struct dcp_sample_row row = { .sz = sizeof(row) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct dcp_profile *p;
	struct rec r;
	int64_t app;

	rec_init(&r);
	app = dcp_aggregate_intern_string(r.agg, "app");
	assert_true(app >= 0);
	/* 300 pids x 8 addresses of app_main x 2 addresses of the syscall
	 * entry: 4,800 rows of one function-level stack (a profile smaller
	 * than 64 KiB of rows and stacks gets no summary). */
	for (uint32_t pid = 100; pid < 100 + SUMMARY_PIDS; pid++)
		for (uint64_t k = 0; k < 16; k++) {
			struct dcp_frame f[2] = {
				{ .cookie = r.c_app,
				  .offset = 0x2000 + 4 * (k % 8) },
				{ .cookie = r.c_kernel,
				  .flags = DCP_FRAME_KERNEL,
				  .offset = 0xffff00 + 8 * (k / 8) },
			};
			struct dcp_row_key key = {
				.comm_id = (uint32_t)app,
				.pid = pid,
				.stack_id =
					(uint32_t)dcp_aggregate_intern_stack(
						r.agg, f, 2),
			};

			assert_int_equal(dcp_aggregate_add(r.agg, &key, 1 + k),
					 0);
		}
	/* Two addresses of libc_fn, one in an inlined call: two functions
	 * to a reader; two unnamed addresses of the app: one. */
	for (uint64_t k = 0; k < 4; k++) {
		struct dcp_frame f = {
			.cookie = k < 2 ? r.c_libc : r.c_app,
			.offset = k < 2 ? 0x1000 + 16 * k : 0x4000 + k,
		};
		struct dcp_row_key key = {
			.comm_id = (uint32_t)app,
			.pid = 200 + (uint32_t)k,
			.stack_id = (uint32_t)dcp_aggregate_intern_stack(r.agg,
									 &f, 1),
		};

		assert_int_equal(dcp_aggregate_add(r.agg, &key, 1000), 0);
	}
	for (uint64_t k = 0; k < 8; k++)
		assert_int_equal(dcp_symtab_add(r.symbols, r.c_app,
						0x2000 + 4 * k, "app_main",
						0x2000, 0x100),
				 0);
	for (uint64_t k = 0; k < 2; k++)
		assert_int_equal(
			dcp_symtab_add(r.symbols, r.c_kernel, 0xffff00 + 8 * k,
				       "do_syscall_64", 0xfffe00, 0x180),
			0);
	for (uint64_t k = 0; k < 2; k++)
		assert_int_equal(dcp_symtab_add(r.symbols, r.c_libc,
						0x1000 + 16 * k, "libc_fn",
						0x1000, 0x200),
				 0);
	assert_int_equal(dcp_symtab_set_detail(r.symbols, r.c_libc, 0x1010,
					       NULL, "x.c", 3, &inl, 1),
			 0);
	assert_int_equal(dcp_profile_write_compact(path, 1, &r.meta, r.cookies,
						   r.agg, r.symbols, &r.stats),
			 0);

	/* Read whole, as before. */
	p = dcp_profile_open(path);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_false(dcp_profile_is_summary(p));
	assert_rows_match(p, r.agg);
	nr_full = leaf_counts(p, full, 16);
	dcp_profile_close(p);

	p = dcp_profile_open_file(path, &o);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_true(dcp_profile_is_summary(p));
	/* app_main + syscall; libc_fn; libc_fn with its inlined call;
	 * the app's unnamed code */
	assert_int_equal(dcp_profile_nr_rows(p), 4);
	for (i = 0; i < dcp_profile_nr_rows(p); i++) {
		assert_int_equal(dcp_profile_row(p, i, &row), 0);
		assert_int_equal(row.pid, 0);
		assert_string_equal(row.comm, "app");
		if (row.nr_frames == 2) {
			/* the first address met of each function */
			assert_int_equal(row.frames[0].offset, 0x2000);
			assert_int_equal(row.frames[1].offset, 0xffff00);
			assert_int_equal(row.count,
					 SUMMARY_PIDS * (16 * 17 / 2));
		} else if (row.frames[0].cookie == r.c_libc) {
			assert_int_equal(
				dcp_profile_symbol(p, r.c_libc,
						   row.frames[0].offset, &sym),
				0);
			assert_string_equal(sym.name, "libc_fn");
			assert_int_equal(sym.nr_inline,
					 row.frames[0].offset == 0x1010);
			assert_int_equal(row.count, 1000);
		} else {
			assert_int_equal(row.frames[0].offset, 0x4002);
			assert_int_equal(row.count, 2000);
		}
	}
	assert_int_equal(profile_total(p),
			 r.total + SUMMARY_PIDS * (16 * 17 / 2) + 4000);
	nr_sum = leaf_counts(p, sum, 16);
	assert_int_equal(nr_sum, nr_full);
	for (i = 0; i < nr_full; i++) {
		size_t j;

		for (j = 0; j < nr_sum && strcmp(sum[j].key, full[i].key); j++)
			;
		assert_true(j < nr_sum);
		assert_int_equal(sum[j].count, full[i].count);
	}
	/* A summary is not a profile to rewrite. */
	assert_int_equal(dcp_profile_save(p, in_dir("copy.data")), -EINVAL);
	assert_int_equal(dcp_profile_resymbolize(p, NULL, NULL), -EINVAL);
	dcp_profile_close(p);
	assert_int_equal(warnings, 0);
	rec_free(&r);
}

/* Files without a summary are read whole when one is asked for: working
 * files, compact files whose summary would not have been smaller (every
 * address its own function, one pid), and small compact files, which are
 * written without. */
static void test_summary_absent(void **state)
{
	char *path = in_dir("prof.data");
	struct dcp_profile_open_opts o = { .sz = sizeof(o), .summary = true };
	struct dcp_profile *p;
	struct rec r;
	int64_t comm;

	rec_init(&r);
	write_working(&r, path, 2, NULL, NULL);
	p = dcp_profile_open_file(path, &o);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_false(dcp_profile_is_summary(p));
	assert_rows_match(p, r.agg);
	dcp_profile_close(p);
	rec_free(&r);

	rec_init(&r);
	comm = dcp_aggregate_intern_string(r.agg, "app");
	assert_true(comm >= 0);
	for (uint64_t k = 0; k < 20; k++) {
		struct dcp_frame f = { .cookie = r.c_libc,
				       .offset = 0x1000 + 16 * k };
		struct dcp_row_key key = {
			.comm_id = (uint32_t)comm,
			.pid = 100,
			.stack_id = (uint32_t)dcp_aggregate_intern_stack(r.agg,
									 &f, 1),
		};
		char name[32];

		snprintf(name, sizeof(name), "fn_%" PRIu64, k);
		assert_int_equal(dcp_symtab_add(r.symbols, r.c_libc, f.offset,
						name, f.offset, 16),
				 0);
		assert_int_equal(dcp_aggregate_add(r.agg, &key, 1), 0);
	}
	assert_int_equal(dcp_profile_write_compact(path, 1, &r.meta, r.cookies,
						   r.agg, r.symbols, &r.stats),
			 0);
	p = dcp_profile_open_file(path, &o);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_false(dcp_profile_is_summary(p));
	assert_true(dcp_profile_get_meta(p)->complete);
	assert_rows_match(p, r.agg);
	dcp_profile_close(p);
	assert_int_equal(warnings, 0);
	rec_free(&r);

	/* 10 pids x 16 addresses of one function: a summary of a quarter
	 * of it, but the whole is small */
	rec_init(&r);
	comm = dcp_aggregate_intern_string(r.agg, "app");
	assert_true(comm >= 0);
	for (uint32_t pid = 100; pid < 110; pid++)
		for (uint64_t k = 0; k < 16; k++) {
			struct dcp_frame f = { .cookie = r.c_app,
					       .offset = 0x2000 + 4 * k };
			struct dcp_row_key key = {
				.comm_id = (uint32_t)comm,
				.pid = pid,
				.stack_id =
					(uint32_t)dcp_aggregate_intern_stack(
						r.agg, &f, 1),
			};

			assert_int_equal(dcp_aggregate_add(r.agg, &key, 1), 0);
		}
	for (uint64_t k = 0; k < 16; k++)
		assert_int_equal(dcp_symtab_add(r.symbols, r.c_app,
						0x2000 + 4 * k, "app_main",
						0x2000, 0x100),
				 0);
	assert_int_equal(dcp_profile_write_compact(path, 1, &r.meta, r.cookies,
						   r.agg, r.symbols, &r.stats),
			 0);
	p = dcp_profile_open_file(path, &o);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_false(dcp_profile_is_summary(p));
	assert_rows_match(p, r.agg);
	dcp_profile_close(p);
	rec_free(&r);
}

static void test_foreign(void **state)
{
	char *path = in_dir("x.data");
	uint8_t data[4096];
	size_t size;
	struct dcp_fmt_header h;
	uint8_t *ls;

	assert_open_fails("/bin/ls", EINVAL,
			  "'/bin/ls' is not a dcprof profile");
	ls = slurp("/bin/ls", &size);
	spit(path, ls, 100);
	free(ls);
	assert_open_fails(path, EINVAL, "is not a dcprof profile");

	spit(path, "", 0);
	assert_open_fails(path, EINVAL, "is empty");
	spit(path, "DCPR", 4);
	assert_open_fails(path, EINVAL, "is truncated");
	assert_open_fails(in_dir("missing.data"), ENOENT,
			  "No such file or directory");
	assert_open_fails(dir, EISDIR, "cannot read");

	/* A later version is refused by name. */
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, DCP_FMT_MAGIC, 8);
	h.version = htole32(2);
	h.header_size = htole32(64);
	h.header_crc32 = htole32(dcp_fmt_header_crc(&h, NULL, 0));
	spit(path, &h, sizeof(h));
	assert_open_fails(path, ENOTSUP, "version 2");

	/* Random bytes after a good header are corrupt, not a crash. */
	h.version = htole32(1);
	h.header_crc32 = 0;
	h.header_crc32 = htole32(dcp_fmt_header_crc(&h, NULL, 0));
	memcpy(data, &h, sizeof(h));
	for (size = 64; size < sizeof(data); size++)
		data[size] = (uint8_t)(size * 2654435761u >> 13);
	spit(path, data, sizeof(data));
	assert_open_fails(path, EBADMSG, "is corrupt");
	assert_int_equal(warnings, 0);
}

static void test_old_renamed(void **state)
{
	char *path = in_dir("prof.data"), *old = in_dir("prof.data.old");
	struct dcp_profile_writer *w;
	char buf[16] = { 0 };
	int fd;

	spit(path, "previous", 8);
	w = dcp_profile_writer_open(path);
	assert_non_null(w);
	fd = open(old, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 8);
	close(fd);
	assert_string_equal(buf, "previous");
	assert_int_equal(file_size(path), 64);
	dcp_profile_writer_free(w);

	/* A directory at the path is refused, not moved aside. */
	assert_int_equal(mkdir(in_dir("d.data"), 0700), 0);
	assert_null(dcp_profile_writer_open(in_dir("d.data")));
	assert_int_equal(errno, EISDIR);
	assert_non_null(strstr(dcp_last_error(), "cannot create"));
	assert_int_equal(access(in_dir("d.data.old"), F_OK), -1);

	assert_null(dcp_profile_writer_open(in_dir("nodir/prof.data")));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(dcp_last_error(), "cannot create '"));
}

static void test_symlink_not_followed(void **state)
{
	char *path = in_dir("prof.data"), *target = in_dir("precious");
	char *old = in_dir("prof.data.old"), *nowhere = in_dir("nowhere");
	struct dcp_profile_writer *w;
	char buf[64] = { 0 };
	struct stat st;
	int fd;

	spit(target, "precious data", 13);
	assert_int_equal(symlink(target, path), 0);
	w = dcp_profile_writer_open(path);
	assert_non_null(w);
	dcp_profile_writer_free(w);

	/* The link itself moved aside, the target untouched, and the new
	 * profile a regular file of its own. */
	assert_int_equal(lstat(old, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	fd = open(target, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 13);
	close(fd);
	assert_string_equal(buf, "precious data");

	/* A dangling link is moved aside too, and nothing is created at
	 * its target. */
	unlink(old);
	unlink(path);
	assert_int_equal(symlink(nowhere, path), 0);
	w = dcp_profile_writer_open(path);
	assert_non_null(w);
	dcp_profile_writer_free(w);
	assert_int_equal(access(nowhere, F_OK), -1);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void test_mode(void **state)
{
	char *path = in_dir("prof.data");
	struct dcp_profile_writer *w;
	mode_t old_mask = umask(0);
	struct stat st;
	struct rec r;

	rec_init(&r);
	w = dcp_profile_writer_open(path);
	assert_non_null(w);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	rec_round(&r, 1, 1);
	assert_int_equal(dcp_profile_writer_flush(w, &r.meta, r.cookies, r.agg,
						  &r.stats),
			 0);
	assert_int_equal(dcp_profile_writer_finish(w, &r.meta, r.cookies, r.agg,
						   r.symbols, &r.stats),
			 0);
	dcp_profile_writer_free(w);
	umask(old_mask);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	rec_free(&r);
}

/* Many distinct stacks: chunks are split and the reader joins them. */
static void test_large(void **state)
{
	char *path = in_dir("prof.data");
	struct dcp_profile_writer *w = dcp_profile_writer_open(path);
	struct dcp_frame f[64];
	struct dcp_row_key key = { 0 };
	struct dcp_profile *p;
	struct rec r;
	uint32_t i, j;

	rec_init(&r);
	assert_non_null(w);
	key.comm_id = (uint32_t)dcp_aggregate_intern_string(r.agg, "big");
	for (i = 0; i < 20000; i++) {
		for (j = 0; j < 64; j++)
			f[j] = (struct dcp_frame){
				.cookie = r.c_app,
				.offset = (uint64_t)i * 2654435761u + j * 977
			};
		key.pid = i;
		key.stack_id =
			(uint32_t)dcp_aggregate_intern_stack(r.agg, f, 64);
		assert_int_equal(dcp_aggregate_add(r.agg, &key, 1), 0);
	}
	r.total = 20000;
	assert_int_equal(dcp_profile_writer_flush(w, &r.meta, r.cookies, r.agg,
						  &r.stats),
			 0);
	p = dcp_profile_open(path);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_int_equal(dcp_profile_nr_rows(p), 20000);
	assert_int_equal(profile_total(p), 20000);
	dcp_profile_close(p);
	assert_int_equal(dcp_profile_writer_finish(w, &r.meta, r.cookies, r.agg,
						   r.symbols, &r.stats),
			 0);
	dcp_profile_writer_free(w);
	p = dcp_profile_open(path);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_rows_match(p, r.agg);
	dcp_profile_close(p);
	rec_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_compact_smaller, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_truncated_finished, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_flipped_finished, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_working_cut_anywhere,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_working_torn_tail, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mutated_payloads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unknown_chunk_skipped,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_absent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_foreign, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_renamed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_symlink_not_followed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
