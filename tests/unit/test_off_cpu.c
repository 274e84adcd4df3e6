// SPDX-License-Identifier: MIT
/*
 * Off-CPU time in the aggregate and the profile file: rows with time and
 * no samples, deltas at every flush and totals in the compact file, the
 * summary's sums, and a profile without off-CPU time written as before
 * (no OFF_CPU_ROWS chunk, the 30 STATS fields of CPU profiles).
 */
#include <endian.h>
#include <errno.h>
#include <ftw.h>
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
#include <zstd.h>

#include "format_internal.h"
#include "profile_internal.h"

static char dir[64];

static int setup(void **state)
{
	strcpy(dir, "/tmp/dcprof-test-offcpu.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_aggregate(void **state)
{
	struct dcp_aggregate *a = dcp_aggregate_new();
	struct dcp_row_key k1 = { .comm_id = 0, .pid = 7, .stack_id = 0 };
	struct dcp_row_key k2 = { .comm_id = 0, .pid = 7, .stack_id = 1 };
	uint64_t ns[DCP_OFF_CPU_NR_STATES] = { 10, 20, 30 }, got[3];
	uint64_t count;

	assert_non_null(a);
	assert_false(dcp_aggregate_has_off_cpu(a));
	assert_int_equal(dcp_aggregate_add(a, &k1, 5), 0);
	assert_false(dcp_aggregate_row_off_cpu(a, 0, false, got));
	assert_int_equal(got[0] + got[1] + got[2], 0);
	/* time alone makes a row with no samples */
	assert_int_equal(dcp_aggregate_add_off_cpu(a, &k2, ns), 0);
	assert_true(dcp_aggregate_has_off_cpu(a));
	assert_int_equal(dcp_aggregate_nr_rows(a), 2);
	dcp_aggregate_row(a, 1, NULL, &count);
	assert_int_equal(count, 0);
	/* samples and time on one row; time sums by state */
	assert_int_equal(dcp_aggregate_add_off_cpu(a, &k1, ns), 0);
	assert_int_equal(dcp_aggregate_add_off_cpu(a, &k1, ns), 0);
	assert_true(dcp_aggregate_row_off_cpu(a, 0, false, got));
	assert_int_equal(got[0], 20);
	assert_int_equal(got[1], 40);
	assert_int_equal(got[2], 60);
	dcp_aggregate_row(a, 0, NULL, &count);
	assert_int_equal(count, 5);
	/* flushing marks time as it marks counts */
	dcp_aggregate_mark_flushed(a);
	assert_false(dcp_aggregate_row_off_cpu(a, 0, true, got));
	ns[1] = 0;
	assert_int_equal(dcp_aggregate_add_off_cpu(a, &k1, ns), 0);
	assert_true(dcp_aggregate_row_off_cpu(a, 0, true, got));
	assert_int_equal(got[0], 10);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 30);
	assert_true(dcp_aggregate_row_off_cpu(a, 0, false, got));
	assert_int_equal(got[1], 40);
	dcp_aggregate_free(a);
}

/* The chunk types of a file, and its STATS field count. */
static size_t chunk_types(const char *path, uint32_t *types, size_t max,
			  uint32_t *nr_stats)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 20];
	size_t size, off = 64, n = 0;

	assert_non_null(f);
	size = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + 32 <= size && n < max) {
		struct dcp_fmt_chunk h;

		memcpy(&h, buf + off, sizeof(h));
		types[n++] = le32toh(h.type);
		/* STATS: its field count leads */
		if (le32toh(h.type) == DCP_FMT_CHUNK_STATS) {
			static uint8_t raw[4096];

			if (le32toh(h.flags) & DCP_FMT_CHUNK_ZSTD)
				assert_int_equal(
					ZSTD_decompress(
						raw, sizeof(raw),
						buf + off + 32,
						le64toh(h.payload_size)),
					le64toh(h.raw_size));
			else
				memcpy(raw, buf + off + 32, 4);
			memcpy(nr_stats, raw, 4);
		}
		off += 32 + ((le64toh(h.payload_size) + 7) & ~(uint64_t)7);
	}
	return n;
}

static bool has_type(const uint32_t *types, size_t n, uint32_t type)
{
	for (size_t i = 0; i < n; i++)
		if (types[i] == type)
			return true;
	return false;
}

/* A profile of one process with two stacks: a samples only, b off-CPU. */
static void write_profile(const char *path, bool off_cpu)
{
	struct dcp_profile_writer *w = dcp_profile_writer_open(path);
	struct dcp_cookie_table *cookies = dcp_cookie_table_new();
	struct dcp_aggregate *agg = dcp_aggregate_new();
	struct dcp_profile_meta meta = { .version = 1,
					 .event = "cpu-clock",
					 .sample_freq = 999,
					 .nr_cpus = 2,
					 .callchain = true,
					 .off_cpu = off_cpu };
	struct dcp_profile_stats stats = { .sz = sizeof(stats) };
	struct dcp_frame fa = { .cookie = 0, .offset = 0x10 };
	struct dcp_frame fb = { .cookie = 0, .offset = 0x20 };
	struct dcp_row_key k = { .pid = 7 };
	uint64_t ns[DCP_OFF_CPU_NR_STATES] = { 1000, 2000000, 3 };

	assert_non_null(w);
	assert_non_null(cookies);
	assert_non_null(agg);
	assert_int_equal(dcp_aggregate_intern_string(agg, "app"), 0);
	assert_int_equal(dcp_aggregate_intern_stack(agg, &fa, 1), 0);
	assert_int_equal(dcp_aggregate_intern_stack(agg, &fb, 1), 1);
	assert_int_equal(dcp_aggregate_add(agg, &k, 3), 0);
	if (off_cpu) {
		k.stack_id = 1;
		assert_int_equal(dcp_aggregate_add_off_cpu(agg, &k, ns), 0);
		stats.off_cpu_blocks = 1;
		stats.off_cpu_ns = 2001003;
	}
	assert_int_equal(
		dcp_profile_writer_flush(w, &meta, cookies, agg, &stats), 0);
	/* a second flush adds its deltas only */
	if (off_cpu)
		assert_int_equal(dcp_aggregate_add_off_cpu(agg, &k, ns), 0);
	assert_int_equal(
		dcp_profile_writer_flush(w, &meta, cookies, agg, &stats), 0);
	if (off_cpu) {
		/* the working file: the flushes' deltas add up */
		struct dcp_sample_row row = { .sz = sizeof(row) };
		struct dcp_profile *p = dcp_profile_open(path);

		assert_non_null(p);
		assert_int_equal(dcp_profile_row(p, 1, &row), 0);
		assert_int_equal(row.off_cpu_ns[1], 4000000);
		dcp_profile_close(p);
	}
	assert_int_equal(
		dcp_profile_writer_finish(w, &meta, cookies, agg, NULL, &stats),
		0);
	dcp_profile_writer_free(w);
	dcp_aggregate_free(agg);
	dcp_cookie_table_free(cookies);
}

static void test_file(void **state)
{
	char path[128];
	struct dcp_profile *p;
	struct dcp_sample_row row = { .sz = sizeof(row) };
	uint32_t types[64], nr_stats = 0;
	size_t n;

	snprintf(path, sizeof(path), "%s/off.data", dir);
	write_profile(path, true);
	n = chunk_types(path, types, 64, &nr_stats);
	assert_true(has_type(types, n, DCP_FMT_CHUNK_OFF_CPU_ROWS));
	assert_int_equal(nr_stats, DCP_FMT_NR_STATS);
	p = dcp_profile_open(path);
	if (!p)
		fail_msg("%s", dcp_last_error());
	assert_true(dcp_profile_get_meta(p)->off_cpu);
	assert_int_equal(dcp_profile_get_stats(p)->off_cpu_ns, 2001003);
	assert_int_equal(dcp_profile_nr_rows(p), 2);
	assert_int_equal(dcp_profile_row(p, 0, &row), 0);
	assert_int_equal(row.count, 3);
	assert_int_equal(row.off_cpu_ns[1], 0);
	assert_int_equal(dcp_profile_row(p, 1, &row), 0);
	assert_int_equal(row.count, 0);
	/* totals: twice the block, whatever flushes carried it */
	assert_int_equal(row.off_cpu_ns[0], 2000);
	assert_int_equal(row.off_cpu_ns[1], 4000000);
	assert_int_equal(row.off_cpu_ns[2], 6);
	dcp_profile_close(p);

	/* without off-CPU time: no new chunk, the CPU profile's STATS */
	snprintf(path, sizeof(path), "%s/cpu.data", dir);
	write_profile(path, false);
	n = chunk_types(path, types, 64, &nr_stats);
	assert_false(has_type(types, n, DCP_FMT_CHUNK_OFF_CPU_ROWS));
	assert_false(has_type(types, n, DCP_FMT_CHUNK_SUMMARY_OFF_CPU_ROWS));
	assert_int_equal(nr_stats, DCP_FMT_NR_STATS_CPU);
	p = dcp_profile_open(path);
	assert_non_null(p);
	assert_false(dcp_profile_get_meta(p)->off_cpu);
	assert_int_equal(dcp_profile_nr_rows(p), 1);
	dcp_profile_close(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aggregate),
		cmocka_unit_test_setup_teardown(test_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
