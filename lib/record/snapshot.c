// SPDX-License-Identifier: MIT
/*
 * The live snapshot behind `dcprof top`: a profile object that reads the
 * recorder's own aggregate and cookie table in place (no copy), with the
 * addresses of the stacks seen since the last snapshot named by the
 * naming thread (naming.c: one symbolizer for the session, so the
 * kernel's symbols are read once) into a symbol table the recorder
 * keeps, so that each address is named once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "log_internal.h"
#include "profile_internal.h"
#include "recorder_internal.h"
#include "symtab_internal.h"

struct addr {
	uint32_t cookie;
	uint64_t offset;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct addr *x = a, *y = b;

	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * Whether an address of cookie that its naming left unnamed may be named
 * when asked again: JIT code's perf maps (a Python process's code objects
 * among them) grow while the process runs, and an address sampled before
 * its line was written is named by a later look.
 */
static bool named_later(const struct dcp_recorder *r, uint32_t cookie)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };

	return !dcp_cookie_table_lookup(r->cookies, cookie, &ci) &&
	       ci.kind == DCP_COOKIE_KIND_JIT;
}

/* Every address of the stacks new since the last call not named yet (or
 * unnamed where a later look may name it). */
static int gather_new(struct dcp_recorder *r, struct addr **out, size_t *n)
{
	size_t nr = dcp_aggregate_nr_stacks(r->agg), cap = 0;
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	*out = NULL;
	*n = 0;
	for (size_t id = r->snap_stacks_named; id < nr; id++) {
		uint32_t nf;
		const struct dcp_frame *f =
			dcp_aggregate_stack(r->agg, (uint32_t)id, &nf);

		for (uint32_t i = 0; i < nf; i++) {
			if (f[i].cookie == DCP_COOKIE_UNKNOWN ||
			    f[i].cookie == r->cookie_idle ||
			    (dcp_symtab_lookup(r->snap_symbols, f[i].cookie,
					       f[i].offset, &sym) == 0 &&
			     (sym.name || !named_later(r, f[i].cookie))))
				continue;
			if (*n == cap) {
				struct addr *a;

				cap = cap ? 2 * cap : 256;
				a = realloc(*out, cap * sizeof(*a));
				if (!a)
					return dcp_error(ENOMEM,
							 "out of memory");
				*out = a;
			}
			(*out)[(*n)++] =
				(struct addr){ f[i].cookie, f[i].offset };
		}
	}
	r->snap_stacks_named = nr;
	return 0;
}

/*
 * How long a snapshot waits for the names of its new addresses, and for
 * how long at a time it drains the source meanwhile before it looks at
 * the names again: the rings hold about half a second at the highest
 * rates, so the recorder never stalls behind the files and DWARF being
 * read, and names that come at once are not kept waiting behind a long
 * drain. Names that take longer are in the next snapshot.
 */
#define NAMING_WAIT_NS (1000ull * 1000 * 1000)
#define NAMING_DRAIN_NS (10ull * 1000 * 1000)

/* The new addresses, one object at a time, to the naming thread. */
static int submit_new(struct dcp_recorder *r)
{
	struct naming_batch *b = NULL;
	uint64_t *offsets = NULL;
	struct addr *a;
	size_t n, i = 0;
	int ret;

	ret = gather_new(r, &a, &n);
	if (ret || !n)
		goto out;
	qsort(a, n, sizeof(*a), cmp_addr);
	offsets = malloc(n * sizeof(*offsets));
	b = dcp_naming_batch_new();
	if (!offsets || !b) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto out;
	}
	while (!ret && i < n) {
		struct dcp_cookie_info ci = { .sz = sizeof(ci) };
		uint32_t cookie = a[i].cookie;
		size_t k = 0;

		for (; i < n && a[i].cookie == cookie; i++)
			if (!k || offsets[k - 1] != a[i].offset)
				offsets[k++] = a[i].offset;
		if (dcp_cookie_table_lookup(r->cookies, cookie, &ci) < 0)
			continue;
		ret = dcp_naming_batch_add(
			b, &ci, dcp_cookie_table_pinned_fd(r->cookies, cookie),
			offsets, k);
	}
	if (!ret) {
		ret = dcp_naming_submit(r->snap_naming, b);
		if (!ret)
			b = NULL;
	}
out:
	dcp_naming_batch_free(b);
	free(offsets);
	free(a);
	return ret;
}

/*
 * Wait for the naming thread's batch, its names into snap_symbols: until
 * deadline (0: until it is done). With drain, the wait is the source's:
 * it is drained for NAMING_DRAIN_NS at a time (as long as it has records,
 * or until they come), the batch looked at in between; a wait that
 * drained only between steps of waiting left the source behind at high
 * rates (a 10 ms poll in every 50 ms: a fifth of the wait).
 */
static int wait_names(struct dcp_recorder *r, uint64_t deadline, bool drain)
{
	int ret = 0;

	while (!ret && dcp_naming_busy(r->snap_naming)) {
		uint64_t now = dcp_now_ns(CLOCK_MONOTONIC);
		uint64_t step = NAMING_DRAIN_NS;

		if (deadline && now >= deadline)
			break;
		if (deadline && deadline - now < step)
			step = deadline - now;
		if (drain) {
			ret = dcp_recorder_poll(r, (int)(step / 1000000));
			if (!ret)
				ret = dcp_naming_wait(r->snap_naming, 0,
						      r->snap_symbols);
		} else {
			ret = dcp_naming_wait(r->snap_naming, step,
					      r->snap_symbols);
		}
	}
	/* the names of a batch done since */
	return ret ? ret : dcp_naming_wait(r->snap_naming, 0, r->snap_symbols);
}

static int setup_naming(struct dcp_recorder *r)
{
	if (!r->snap_symbols) {
		r->snap_symbols = dcp_symtab_new();
		if (!r->snap_symbols)
			return dcp_error(ENOMEM, "out of memory");
	}
	if (!r->snap_naming) {
		r->snap_naming =
			dcp_naming_new(&r->kernel, r->naming_files,
				       DCP_NAMING_BYTES(r->memory_limit));
		if (!r->snap_naming)
			return -errno;
	}
	return 0;
}

static void fill_info(struct dcp_recorder *r, struct dcp_snapshot_info *info,
		      uint64_t start)
{
	struct dcp_snapshot_info full = { .sz = sizeof(full) };
	uint64_t now = dcp_now_ns(CLOCK_MONOTONIC);
	uint64_t since = r->source ? r->source->behind_since : 0;

	if (!info)
		return;
	dcp_naming_times(r->snap_naming, &full.naming_ns, &full.last_naming_ns);
	full.addresses_named = dcp_symtab_count(r->snap_symbols);
	full.wait_ns = now - start;
	full.behind_ns = since && since < now ? now - since : 0;
	full.delivered_ns = r->source ? r->source->delivered_until : 0;
	dcp_sz_copy(info, &full, sizeof(full));
}

/*
 * The live view's naming: the new addresses to the naming thread, their
 * names waited for up to NAMING_WAIT_NS while the source is drained.
 * Every address asked gets an entry, named or not: each is asked once.
 */
static int name_new(struct dcp_recorder *r, struct dcp_snapshot_info *info)
{
	uint64_t start = dcp_now_ns(CLOCK_MONOTONIC);
	int ret = setup_naming(r);

	/* the names of a batch that outlasted the last snapshot's wait */
	if (!ret)
		ret = wait_names(r, start, false);
	if (!ret && !dcp_naming_busy(r->snap_naming))
		ret = submit_new(r);
	if (!ret)
		ret = wait_names(r, start + NAMING_WAIT_NS, true);
	if (ret == -EINTR)
		ret = 0; /* a signal during a drain: the caller sees it */
	fill_info(r, info, start);
	return ret;
}

/*
 * A period's naming (period.c): every address not named yet, and the
 * period waits for all of them; nothing is drained meanwhile, so that no
 * new stack comes into the period while it is being written.
 */
int dcp_snapshot_name_new(struct dcp_recorder *r,
			  struct dcp_snapshot_info *info)
{
	uint64_t start = dcp_now_ns(CLOCK_MONOTONIC);
	int ret = setup_naming(r);

	if (!ret)
		ret = wait_names(r, 0, false);
	if (!ret)
		ret = submit_new(r);
	if (!ret)
		ret = wait_names(r, 0, false);
	fill_info(r, info, start);
	return ret;
}

DCPROF_API struct dcp_profile *
dcp_recorder_snapshot(struct dcp_recorder *r, struct dcp_snapshot_info *info)
{
	struct dcp_profile *p;
	int ret;

	if (info && !dcp_sz_ok(info, DCP_SNAPSHOT_INFO_FIRST_SZ))
		return (void)DCP_SZ_ERROR(dcp_snapshot_info, info), NULL;
	if (!r)
		return dcp_error_null(EINVAL, "no recorder");
	if (r->finished)
		return dcp_error_null(EINVAL, "the recording is finished");
	if (!r->snap) {
		r->snap = calloc(1, sizeof(*r->snap));
		if (!r->snap)
			return dcp_error_null(ENOMEM, "out of memory");
	}
	ret = name_new(r, info);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	dcp_recorder_fill_meta(r);
	p = r->snap;
	p->meta = r->meta;
	p->stats = r->stats;
	p->cookies = r->cookies;
	p->agg = r->agg;
	p->symbols = r->snap_symbols;
	return p;
}

void dcp_snapshot_free(struct dcp_recorder *r)
{
	/* the snapshot borrows the recorder's tables: not dcp_profile_close */
	free(r->snap);
	dcp_naming_free(r->snap_naming);
	dcp_symtab_free(r->snap_symbols);
	r->snap_naming = NULL;
	r->snap = NULL;
	r->snap_symbols = NULL;
}
