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

static int need_mapped(struct dcp_process *p, void *ctx)
{
	for (size_t i = 0; i < p->nr_maps; i++)
		dcp_cookie_set_add(ctx, p->maps[i].cookie);
	/* its JIT map (dcp_samples_jit_cookie()) */
	dcp_cookie_set_add(ctx, p->user_id);
	return 0;
}

/*
 * The period's names that fit in the names' share of memory_limit, in the
 * order they were named; those past it are counted and named again when
 * sampled again. Takes *named.
 */
static struct dcp_symtab *names_within(struct dcp_recorder *r,
				       struct dcp_symtab **named)
{
	struct dcp_symtab *all = *named, *fit;
	size_t budget = DCP_NAMES_BYTES(r->memory_limit), bytes = 0, n = 0;
	size_t count = dcp_symtab_count(all);

	*named = NULL;
	if (dcp_symtab_bytes(all) <= budget)
		return all;
	fit = dcp_symtab_new();
	for (; fit && n < count; n++) {
		struct dcp_symbol sym = { .sz = sizeof(sym) };
		uint32_t cookie;
		uint64_t offset;

		bytes += dcp_symtab_entry_bytes(all, n);
		if (bytes > budget)
			break;
		dcp_symtab_entry(all, n, &cookie, &offset, &sym);
		if (dcp_symtab_copy(fit, all, cookie, offset) < 0)
			break;
	}
	r->names_evicted += count - (fit ? dcp_symtab_count(fit) : 0);
	dcp_symtab_free(all);
	return fit;
}

/*
 * What the next period needs of what the recorder holds, once this one is
 * written: the names of this period's addresses (named becomes what the
 * recorder keeps), the naming thread's open files of the files its stacks
 * named, and the pins of those and of the files a known process maps,
 * with the files the source holds to know them. The rest is let go: a
 * machine that keeps building and running new programs would otherwise
 * grow the names and the open files without bound. A file sampled again
 * is pinned again through the process that maps it, its addresses named
 * again.
 */
static void keep_needed(struct dcp_recorder *r, struct dcp_symtab **named)
{
	size_t nr = dcp_aggregate_nr_stacks(r->agg);
	size_t kept = dcp_symtab_count(r->snap_symbols);
	size_t used = dcp_symtab_count(*named);
	struct dcp_cookie_set needed;

	r->names_dropped += kept > used ? kept - used : 0;
	dcp_symtab_free(r->snap_symbols);
	r->snap_symbols = names_within(r, named);
	needed.n = dcp_cookie_table_size(r->cookies);
	needed.has = calloc(needed.n ? needed.n : 1, sizeof(*needed.has));
	if (!needed.has)
		return; /* the pins stay until a cut with memory to spare */
	for (size_t id = 0; id < nr; id++) {
		uint32_t nf;
		const struct dcp_frame *f =
			dcp_aggregate_stack(r->agg, (uint32_t)id, &nf);

		for (uint32_t i = 0; i < nf; i++)
			dcp_cookie_set_add(&needed, f[i].cookie);
	}
	/* the naming thread's open files: of what the period sampled, a
	 * cache of reading, not of what may run */
	if (r->snap_naming)
		r->files_closed += dcp_naming_forget(r->snap_naming, &needed);
	dcp_process_table_for_each(r->procs, need_mapped, &needed);
	if (r->source && r->source->ops->need)
		r->source->ops->need(r->source, &needed);
	r->pins_closed += dcp_cookie_table_unpin_unneeded(r->cookies, &needed);
	if (r->source && r->source->ops->forget)
		r->files_closed += r->source->ops->forget(r->source, &needed);
	free(needed.has);
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
	if (!ret)
		keep_needed(r, &symtab);
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

DCPROF_API int dcp_recorder_memory(struct dcp_recorder *r,
				   struct dcp_recorder_memory *m)
{
	struct dcp_recorder_memory full = { .sz = sizeof(full) };

	if (!DCP_SZ_VALID(m))
		return DCP_SZ_ERROR(dcp_recorder_memory, m);
	if (!r)
		return dcp_api_ret(dcp_error(EINVAL, "no recorder"));
	full.names = r->snap_symbols ? dcp_symtab_count(r->snap_symbols) : 0;
	full.files_pinned = dcp_cookie_table_nr_pinned(r->cookies);
	full.cookies = dcp_cookie_table_size(r->cookies);
	full.processes = dcp_process_table_count(r->procs);
	full.names_dropped = r->names_dropped;
	full.pins_closed = r->pins_closed;
	full.files_closed = r->files_closed;
	full.memory_limit = r->memory_limit;
	full.max_open_files = r->max_open_files;
	full.names_bytes =
		r->snap_symbols ? dcp_symtab_bytes(r->snap_symbols) : 0;
	full.names_evicted = r->names_evicted;
	full.pins_refused = dcp_cookie_table_pins_refused(r->cookies);
	if (r->snap_naming) {
		struct dcp_symbolizer_kept_stats kept;

		dcp_naming_kept_stats(r->snap_naming, &kept);
		full.naming_files = kept.files;
		full.naming_bytes = kept.bytes;
		full.naming_hits = kept.hits;
		full.naming_misses = kept.misses;
		full.naming_evicted = kept.evicted;
	}
	dcp_sz_copy(m, &full, sizeof(full));
	return 0;
}
