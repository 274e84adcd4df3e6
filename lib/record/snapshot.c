// SPDX-License-Identifier: MIT
/*
 * The live snapshot behind `dcprof top`: a profile object that reads the
 * recorder's own aggregate and cookie table in place (no copy), with the
 * addresses of the stacks seen since the last snapshot named into a
 * symbol table the recorder keeps (by a symbolizer it keeps too, so the
 * kernel's symbols are read once), so that each address is named once.
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

/* Every address of the stacks new since the last call not named yet. */
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
			    dcp_symtab_lookup(r->snap_symbols, f[i].cookie,
					      f[i].offset, &sym) == 0)
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
 * Name the new addresses, one object at a time, with the symbolizer the
 * snapshots keep (the kernel's symbols are read once). Every address
 * asked gets an entry, named or not: each is asked once.
 */
static int name_new(struct dcp_recorder *r, struct dcp_snapshot_info *info)
{
	uint64_t t0 = dcp_now_ns(CLOCK_MONOTONIC), *offsets = NULL;
	struct addr *a;
	size_t n, i = 0;
	int ret;

	ret = gather_new(r, &a, &n);
	if (!ret && n) {
		qsort(a, n, sizeof(*a), cmp_addr);
		offsets = malloc(n * sizeof(*offsets));
		if (!offsets)
			ret = dcp_error(ENOMEM, "out of memory");
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
		/* an object that cannot be read is not an error */
		dcp_symbolizer_resolve(
			r->snap_symbolizer, &ci,
			dcp_cookie_table_pinned_fd(r->cookies, cookie), offsets,
			k, r->snap_symbols);
	}
	free(offsets);
	free(a);
	r->snap_naming_ns += dcp_now_ns(CLOCK_MONOTONIC) - t0;
	if (info) {
		info->naming_ns = r->snap_naming_ns;
		info->addresses_named = dcp_symtab_count(r->snap_symbols);
		info->last_naming_ns = dcp_now_ns(CLOCK_MONOTONIC) - t0;
	}
	return ret;
}

int dcp_snapshot_name_new(struct dcp_recorder *r,
			  struct dcp_snapshot_info *info)
{
	if (!r->snap_symbols) {
		r->snap_symbols = dcp_symtab_new();
		if (!r->snap_symbols)
			return dcp_error(ENOMEM, "out of memory");
	}
	if (!r->snap_symbolizer) {
		r->snap_symbolizer = dcp_symbolizer_new(&r->kernel);
		if (!r->snap_symbolizer)
			return -errno;
	}
	return name_new(r, info);
}

DCPROF_API struct dcp_profile *
dcp_recorder_snapshot(struct dcp_recorder *r, struct dcp_snapshot_info *info)
{
	struct dcp_profile *p;
	int ret;

	if (info && !DCP_SZ_VALID(info))
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
	ret = dcp_snapshot_name_new(r, info);
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
	dcp_symtab_free(r->snap_symbols);
	dcp_symbolizer_free(r->snap_symbolizer);
	r->snap_symbolizer = NULL;
	r->snap = NULL;
	r->snap_symbols = NULL;
}
