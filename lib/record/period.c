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
#include "symtab_internal.h"

/*
 * The names of every address of the period's stacks, copied from the
 * names the recorder keeps (dcp_snapshot_name_new(): the files, the
 * kernel's symbols and debug files are read once for the recorder's
 * life, not once per period). Addresses left unnamed are counted.
 */
static int name_period(struct dcp_recorder *r, struct dcp_symtab *out)
{
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	size_t nr = dcp_aggregate_nr_stacks(r->agg);
	int ret;

	r->snap_stacks_named = 0;
	ret = dcp_snapshot_name_new(r, NULL);
	for (size_t id = 0; !ret && id < nr; id++) {
		uint32_t nf;
		const struct dcp_frame *f =
			dcp_aggregate_stack(r->agg, (uint32_t)id, &nf);

		for (uint32_t i = 0; !ret && i < nf; i++) {
			if (f[i].cookie == DCP_COOKIE_UNKNOWN ||
			    f[i].cookie == r->cookie_idle ||
			    dcp_symtab_lookup(out, f[i].cookie, f[i].offset,
					      &sym) == 0)
				continue;
			ret = dcp_symtab_copy(out, r->snap_symbols, f[i].cookie,
					      f[i].offset);
			if (ret == -ENOENT) {
				ret = 0;
				continue;
			}
			if (!ret && (dcp_symtab_lookup(out, f[i].cookie,
						       f[i].offset, &sym) ||
				     !sym.name))
				r->stats.symbols_unresolved++;
		}
	}
	return ret;
}

/*
 * The period's compact profile at r->output. A flush that failed during
 * the period (a full disk) only cut its working file short: the whole
 * period is still in memory and written now if there is room again.
 */
int dcp_recorder_write_period(struct dcp_recorder *r)
{
	struct dcp_symtab *symtab = dcp_symtab_new();
	int ret;

	if (!symtab)
		return dcp_error(ENOMEM, "out of memory");
	dcp_recorder_fill_meta(r);
	ret = name_period(r, symtab);
	if (!ret) {
		r->meta.complete = true;
		/* over the working file, if any: the caller frees its writer */
		ret = dcp_profile_write_period(
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
	dcp_recorder_start_clock(r);
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

	if (stats && !dcp_sz_ok(stats, DCP_PROFILE_STATS_FIRST_SZ))
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
	/* the names stay (snap_symbols): the next period asks its stacks */
	r->snap_stacks_named = 0;
	dcp_aggregate_free(r->agg);
	r->agg = agg;
	if (r->cgroups)
		dcp_cgroup_table_new_aggregate(r->cgroups);
	dcp_cookie_table_new_period(r->cookies);
	r->period_stacks_wanted = 0;
	reset_period_stats(r);
	/* a next period that cannot start its working file is written whole
	 * at its cut, or reported by it */
	(void)start_period(r, next_output);
	return dcp_api_ret(ret);
}
