// SPDX-License-Identifier: MIT
/*
 * Naming a recording's sampled addresses: every distinct (cookie, offset)
 * of the aggregate's stacks, gathered per cookie, sorted and resolved
 * once. The recorder's closing symbolization and report --resymbolize
 * both go through here; they differ only in what they read (pinned
 * handles or recorded paths) and in what they do with each object.
 */
#include <errno.h>
#include <stdlib.h>

#include "grow.h"
#include "log_internal.h"
#include "resolve_internal.h"
#include "sort.h"

struct offsets {
	uint64_t *v;
	size_t n, cap;
};

/* The sampled offsets of every cookie, in the order the stacks hold them. */
static int gather(const struct dcp_aggregate *agg, struct offsets *per,
		  size_t nr_cookies)
{
	for (size_t id = 0; id < dcp_aggregate_nr_stacks(agg); id++) {
		uint32_t n;
		const struct dcp_frame *f =
			dcp_aggregate_stack(agg, (uint32_t)id, &n);

		for (uint32_t i = 0; i < n; i++) {
			struct offsets *o = &per[f[i].cookie];
			uint64_t *v;

			if (f[i].cookie >= nr_cookies)
				continue;
			v = dcp_grow(o->v, &o->cap, o->n + 1, sizeof(*v));
			if (!v)
				return dcp_error(ENOMEM, "out of memory");
			o->v = v;
			o->v[o->n++] = f[i].offset;
		}
	}
	return 0;
}

static bool wanted(const struct dcp_cookie_info *ci,
		   const struct dcp_resolve_opts *o)
{
	if (o->pinned)
		return true;
	switch (ci->kind) {
	case DCP_COOKIE_KIND_FILE:
		return true;
	/* Their symbols hold for the kernel they were sampled on only. */
	case DCP_COOKIE_KIND_KERNEL:
	case DCP_COOKIE_KIND_MODULE:
	case DCP_COOKIE_KIND_VDSO:
		return o->kernel_objects;
	default:
		return false;
	}
}

/* Sort v[0..n) and drop repeats; returns how many are left. */
static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t unique = 0;

	qsort(v, n, sizeof(*v), dcp_cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!unique || v[i] != v[unique - 1])
			v[unique++] = v[i];
	return unique;
}

int dcp_resolve_sampled(const struct dcp_cookie_table *cookies,
			const struct dcp_aggregate *agg, struct dcp_symtab *out,
			const struct dcp_resolve_opts *o)
{
	size_t nr_cookies = dcp_cookie_table_size(cookies);
	struct offsets *per = calloc(nr_cookies + 1, sizeof(*per));
	struct dcp_symbolizer *s = NULL;
	int ret;

	if (!per)
		return dcp_error(ENOMEM, "out of memory");
	ret = gather(agg, per, nr_cookies);
	if (ret < 0)
		goto out;
	s = dcp_symbolizer_new(o->kernel);
	if (!s) {
		ret = -errno;
		goto out;
	}
	if (o->debuginfo_path) {
		ret = dcp_symbolizer_set_debuginfo_path(s, o->debuginfo_path);
		if (ret < 0)
			goto out;
	}
	for (size_t id = 0; id < nr_cookies; id++) {
		struct offsets *c = &per[id];
		struct dcp_cookie_info ci = { .sz = sizeof(ci) };
		size_t unique;
		int fd, resolved;

		if (!c->n ||
		    dcp_cookie_table_lookup(cookies, (uint32_t)id, &ci) < 0 ||
		    !wanted(&ci, o))
			continue;
		unique = sort_unique(c->v, c->n);
		fd = o->pinned ?
			     dcp_cookie_table_pinned_fd(cookies, (uint32_t)id) :
			     -1;
		resolved =
			dcp_symbolizer_resolve(s, &ci, fd, c->v, unique, out);
		if (o->done) {
			ret = o->done(o->ctx, &ci, c->v, unique, resolved);
			if (ret)
				goto out;
		}
	}
	ret = 0;
out:
	for (size_t id = 0; id < nr_cookies; id++)
		free(per[id].v);
	free(per);
	dcp_symbolizer_free(s);
	return ret;
}
