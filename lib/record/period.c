// SPDX-License-Identifier: MIT
/*
 * Continuous recording in periods: dcp_recorder_cut() writes the samples
 * of the period that ends as a profile of its own and starts the next one
 * from the same live state (events, process table, cookies, pinned
 * files), so that every sample lands in exactly one period.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_internal.h"
#include "format_internal.h"
#include "log_internal.h"
#include "profile_internal.h"
#include "recorder_internal.h"
#include "resolve_internal.h"
#include "symtab_internal.h"

/* The closing symbolization's account of one object, as finish keeps it. */
static int count_unresolved(void *ctx, const struct dcp_cookie_info *ci,
			    const uint64_t *offsets, size_t n, int resolved)
{
	struct dcp_recorder *r = ctx;

	if (resolved < 0)
		resolved = 0;
	if (ci->kind != DCP_COOKIE_KIND_IDLE)
		r->stats.symbols_unresolved += n - (size_t)resolved;
	return 0;
}

/*
 * The period's compact profile at r->output. A flush that failed during
 * the period (a full disk) only cut its working file short: the whole
 * period is still in memory and written now if there is room again.
 */
int dcp_recorder_write_period(struct dcp_recorder *r)
{
	struct dcp_resolve_opts ro = { .pinned = true,
				       .kernel = &r->kernel,
				       .done = count_unresolved,
				       .ctx = r };
	struct dcp_symtab *symtab = dcp_symtab_new();
	int ret;

	if (!symtab)
		return dcp_error(ENOMEM, "out of memory");
	dcp_recorder_fill_meta(r);
	ret = dcp_resolve_sampled(r->cookies, r->agg, symtab, &ro);
	if (!ret) {
		r->meta.complete = true;
		if (r->writer)
			ret = dcp_profile_writer_finish(r->writer, &r->meta,
							r->cookies, r->agg,
							symtab, &r->stats);
		else
			ret = dcp_profile_write_compact(
				r->output, r->meta.start_realtime_ns, &r->meta,
				r->cookies, r->agg, symtab, &r->stats);
	}
	dcp_symtab_free(symtab);
	if (ret) {
		char why[512];

		/* never leave the period half written: it is dropped */
		snprintf(why, sizeof(why), "%s", dcp_last_error());
		unlink(r->output);
		dcp_error(-ret, "%s", why);
	}
	return ret;
}

/* Zero what a period counts; what the recorder holds for its life stays. */
static void reset_period_stats(struct dcp_recorder *r)
{
	struct dcp_profile_stats keep = r->stats;

	memset(&r->stats, 0, sizeof(r->stats));
	r->stats.sz = sizeof(r->stats);
	r->stats.tasks_injected = keep.tasks_injected;
	r->stats.tasks_vanished = keep.tasks_vanished;
	r->stats.maps_injected = keep.maps_injected;
	r->stats.processes_seen = keep.processes_seen;
	r->stats.files_pinned = keep.files_pinned;
	r->stats.files_unpinned = keep.files_unpinned;
	r->counts_base = r->source->counts;
}

/* The next period's working file; on failure the period goes on in
 * memory and its cut tries the compact file once more. */
static int start_period(struct dcp_recorder *r, const char *next_output)
{
	char *output = strdup(next_output);

	if (!output)
		return dcp_error(ENOMEM, "out of memory");
	free(r->output);
	r->output = output;
	r->write_error = 0;
	r->start_mono_ns = dcp_now_ns(CLOCK_MONOTONIC);
	r->meta.start_realtime_ns = dcp_now_ns(CLOCK_REALTIME);
	r->next_flush_ns =
		r->start_mono_ns + (uint64_t)r->flush_interval_ms * 1000000ull;
	r->writer = dcp_profile_writer_open(r->output);
	if (!r->writer)
		return -errno;
	return dcp_recorder_flush(r);
}

DCPROF_API int dcp_recorder_cut(struct dcp_recorder *r, const char *next_output,
				struct dcp_profile_stats *stats)
{
	struct dcp_aggregate *agg;
	int ret;

	if (stats && !DCP_SZ_VALID(stats))
		return DCP_SZ_ERROR(dcp_profile_stats, stats);
	if (!r || !next_output)
		return dcp_api_ret(dcp_error(EINVAL, "no recorder or output"));
	if (!r->periods)
		return dcp_api_ret(dcp_error(
			EINVAL, "the recorder was not started in periods"));
	if (r->finished)
		return dcp_api_ret(
			dcp_error(EINVAL, "the recording is finished"));
	agg = dcp_aggregate_new();
	if (!agg)
		return dcp_api_ret(dcp_error(ENOMEM, "out of memory"));
	ret = dcp_recorder_write_period(r);
	if (stats)
		dcp_sz_copy(stats, &r->stats, sizeof(r->stats));

	dcp_profile_writer_free(r->writer);
	r->writer = NULL;
	/* top's live view reads the aggregate being replaced */
	dcp_snapshot_free(r);
	r->snap_stacks_named = 0;
	dcp_aggregate_free(r->agg);
	r->agg = agg;
	dcp_cookie_table_new_period(r->cookies);
	reset_period_stats(r);
	/* a next period that cannot start its working file is written whole
	 * at its cut, or reported by it */
	(void)start_period(r, next_output);
	return dcp_api_ret(ret);
}
