// SPDX-License-Identifier: MIT
/*
 * The profile's public calls that need the symbolizer: opening a profile
 * (names of old files demangled), opening the file behind a cookie, and
 * naming a profile's addresses again (report --resymbolize).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "sort.h"
#include "log_internal.h"
#include "profile_internal.h"
#include "symbolize_internal.h"

DCPROF_API struct dcp_profile *dcp_profile_open(const char *path)
{
	return dcp_profile_open_opts(path, NULL);
}

DCPROF_API struct dcp_profile *
dcp_profile_open_opts(const char *path, const struct dcp_profile_open_opts *o)
{
	bool want_summary =
		o && o->sz > offsetof(struct dcp_profile_open_opts, summary) &&
		o->summary;

	return dcp_profile_read(path, want_summary, dcp_demangle);
}

DCPROF_API int dcp_profile_object_open(const struct dcp_profile *p,
				       uint32_t cookie, const char **path)
{
	struct dcp_cookie_info ci;

	if (dcp_cookie_table_lookup(p->cookies, cookie, &ci) < 0)
		return dcp_error(ENOENT, "no cookie %" PRIu32 " in the profile",
				 cookie);
	if (ci.kind != DCP_COOKIE_KIND_FILE)
		return dcp_error(ENOENT, "'%s' is not a file", ci.name);
	return dcp_symbolizer_open_object(&ci, path);
}

struct offsets {
	uint64_t *v;
	size_t n, cap;
};

/* libdwfl's debuginfo_path: the given directories before the default. */
static int debuginfo_path(const struct dcp_resymbolize_opts *o, char **out)
{
	size_t nr = o && o->sz > offsetof(struct dcp_resymbolize_opts,
					  nr_debuginfo_dirs) ?
			    o->nr_debuginfo_dirs :
			    0;
	size_t len = sizeof(":.debug:/usr/lib/debug");
	char **abs = calloc(nr + 1, sizeof(*abs));
	int ret = 0;
	char *s;

	*out = NULL;
	if (!abs)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		const char *d = o->debuginfo_dirs[i];

		abs[i] = realpath(d, NULL);
		if (!abs[i]) {
			ret = dcp_error(errno,
					"cannot use debuginfo directory '%s': "
					"%s",
					d, strerror(errno));
			goto out;
		}
		if (strchr(abs[i], ':')) {
			ret = dcp_error(EINVAL,
					"cannot use debuginfo directory '%s': "
					"its path holds a ':'",
					d);
			goto out;
		}
		len += strlen(abs[i]) + 1;
	}
	s = malloc(len);
	if (!s) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto out;
	}
	strcpy(s, ":.debug");
	for (size_t i = 0; i < nr; i++) {
		strcat(s, ":");
		strcat(s, abs[i]);
	}
	strcat(s, ":/usr/lib/debug");
	*out = s;
out:
	for (size_t i = 0; i < nr; i++)
		free(abs[i]);
	free(abs);
	return ret;
}

static uint64_t count_resolved(const struct dcp_symtab *t)
{
	size_t n = dcp_symtab_count(t);
	struct dcp_symbol sym;
	uint64_t resolved = 0;

	for (size_t i = 0; i < n; i++) {
		dcp_symtab_entry(t, i, NULL, NULL, &sym);
		resolved += sym.name != NULL;
	}
	return resolved;
}

/*
 * The running kernel's layout, in a cookie table of its own, and its
 * identity; false when it cannot be read (hidden kernel addresses).
 */
static bool running_kernel(struct dcp_kernel_layout *k,
			   struct dcp_cookie_table **cookies,
			   struct dcp_cookie_info *id)
{
	*cookies = dcp_cookie_table_new();
	if (!*cookies)
		return false;
	if (dcp_kernel_layout_load(k, *cookies) < 0) {
		dcp_log(DCP_LOG_INFO, "kernel frames not named again: %s",
			dcp_last_error());
		return false;
	}
	if (dcp_cookie_table_lookup(*cookies, k->kernel_cookie, id) < 0) {
		dcp_kernel_layout_free(k);
		return false;
	}
	return true;
}

/* Whether the profile's kernel image is the kernel of id, by build id. */
static bool recorded_on(const struct dcp_profile *p,
			const struct dcp_cookie_info *id)
{
	size_t n = dcp_cookie_table_size(p->cookies);
	struct dcp_cookie_info ci;

	for (size_t i = 0; i < n; i++)
		if (!dcp_cookie_table_lookup(p->cookies, (uint32_t)i, &ci) &&
		    ci.kind == DCP_COOKIE_KIND_KERNEL)
			return ci.build_id_size &&
			       ci.build_id_size == id->build_id_size &&
			       !memcmp(ci.build_id, id->build_id,
				       ci.build_id_size);
	return false;
}

DCPROF_API int dcp_profile_resymbolize(struct dcp_profile *p,
				       const struct dcp_resymbolize_opts *opts,
				       struct dcp_resymbolize_stats *stats)
{
	size_t nr_cookies = dcp_cookie_table_size(p->cookies);
	struct dcp_resymbolize_stats st = { 0 };
	struct dcp_symbolizer *s = NULL;
	struct dcp_symtab *fresh = NULL;
	struct dcp_cookie_table *kernel_cookies = NULL;
	struct dcp_kernel_layout kernel;
	struct dcp_cookie_info kernel_id;
	bool kernel_ok = false, same_kernel;
	struct offsets *per;
	char *path = NULL;
	int ret;

	/* Its addresses stand for functions: naming them again could split
	 * or merge what the summary merged. */
	if (p->summary)
		return dcp_error(EINVAL, "cannot resymbolize the summary of a "
					 "profile; open it whole");
	per = calloc(nr_cookies + 1, sizeof(*per));
	if (!per)
		return dcp_error(ENOMEM, "out of memory");
	ret = debuginfo_path(opts, &path);
	if (ret < 0)
		goto out;
	for (size_t id = 0; id < dcp_aggregate_nr_stacks(p->agg); id++) {
		uint32_t n;
		const struct dcp_frame *f =
			dcp_aggregate_stack(p->agg, (uint32_t)id, &n);

		for (uint32_t i = 0; i < n; i++) {
			struct offsets *o = &per[f[i].cookie];
			uint64_t *v;

			if (f[i].cookie >= nr_cookies)
				continue;
			v = dcp_grow(o->v, &o->cap, o->n + 1, sizeof(*v));
			if (!v) {
				ret = dcp_error(ENOMEM, "out of memory");
				goto out;
			}
			o->v = v;
			o->v[o->n++] = f[i].offset;
		}
	}
	st.resolved_before = count_resolved(p->symbols);
	kernel_ok = running_kernel(&kernel, &kernel_cookies, &kernel_id);
	same_kernel = kernel_ok && recorded_on(p, &kernel_id);
	s = dcp_symbolizer_new(kernel_ok ? &kernel : NULL);
	fresh = dcp_symtab_new();
	if (!s || !fresh) {
		ret = -errno;
		goto out;
	}
	ret = dcp_symbolizer_set_debuginfo_path(s, path);
	if (ret < 0)
		goto out;
	for (size_t id = 0; id < nr_cookies; id++) {
		struct offsets *o = &per[id];
		struct dcp_cookie_info ci;
		struct dcp_symbol sym;
		size_t unique = 0;
		int r;

		if (!o->n ||
		    dcp_cookie_table_lookup(p->cookies, (uint32_t)id, &ci) < 0)
			continue;
		/* The kernel image, its modules and its vdso only when it is
		 * the running kernel: its symbols are offsets from _text,
		 * the same at every boot; modules are matched by name and
		 * build id; the vdso is the one this process has. */
		if ((ci.kind == DCP_COOKIE_KIND_KERNEL ||
		     ci.kind == DCP_COOKIE_KIND_MODULE ||
		     ci.kind == DCP_COOKIE_KIND_VDSO) &&
		    !same_kernel)
			continue;
		if (ci.kind != DCP_COOKIE_KIND_FILE &&
		    ci.kind != DCP_COOKIE_KIND_KERNEL &&
		    ci.kind != DCP_COOKIE_KIND_MODULE &&
		    ci.kind != DCP_COOKIE_KIND_VDSO)
			continue;
		qsort(o->v, o->n, sizeof(*o->v), dcp_cmp_u64);
		for (size_t i = 0; i < o->n; i++)
			if (!unique || o->v[i] != o->v[unique - 1])
				o->v[unique++] = o->v[i];
		st.objects++;
		r = dcp_symbolizer_resolve(s, &ci, -1, o->v, unique, fresh);
		if (r < 0) {
			if (r == -ENOMEM) {
				ret = r;
				goto out;
			}
			if (r == -ESTALE)
				st.objects_mismatched++;
			else
				st.objects_missing++;
			dcp_log(DCP_LOG_WARN, "cannot resymbolize '%s': %s",
				ci.name, dcp_last_error());
			continue;
		}
		for (size_t i = 0; i < unique; i++) {
			if (dcp_symtab_lookup(fresh, (uint32_t)id, o->v[i],
					      &sym) < 0 ||
			    !sym.name)
				continue;
			ret = dcp_symtab_copy(p->symbols, fresh, (uint32_t)id,
					      o->v[i]);
			if (ret < 0)
				goto out;
		}
	}
	st.resolved_after = count_resolved(p->symbols);
	if (st.resolved_after > st.resolved_before) {
		uint64_t d = st.resolved_after - st.resolved_before;

		p->stats.symbols_unresolved =
			p->stats.symbols_unresolved > d ?
				p->stats.symbols_unresolved - d :
				0;
	}
	ret = 0;
out:
	for (size_t id = 0; id < nr_cookies; id++)
		free(per[id].v);
	free(per);
	free(path);
	dcp_symbolizer_free(s);
	dcp_symtab_free(fresh);
	if (kernel_ok)
		dcp_kernel_layout_free(&kernel);
	dcp_cookie_table_free(kernel_cookies);
	if (stats)
		*stats = st;
	return ret;
}

