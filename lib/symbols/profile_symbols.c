// SPDX-License-Identifier: MIT
/*
 * The profile's public calls that need the symbolizer: opening a profile
 * (names of old files demangled) and naming a profile's addresses again
 * (report --resymbolize); the running kernel they and code.c compare the
 * profile's with.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "elf_fde_internal.h"
#include "log_internal.h"
#include "profile_internal.h"
#include "resolve_internal.h"
#include "symbolize_internal.h"

DCPROF_API struct dcp_profile *dcp_profile_open(const char *path)
{
	return dcp_profile_open_file(path, NULL);
}

DCPROF_API struct dcp_profile *
dcp_profile_open_file(const char *path, const struct dcp_profile_open_opts *o)
{
	bool want_summary = DCP_OPTS_GET(o, summary, false);

	if (!DCP_OPTS_VALID(o)) {
		DCP_OPTS_ERROR(dcp_profile_open_opts);
		return NULL;
	}
	return dcp_profile_read(path, want_summary, dcp_demangle);
}

DCPROF_API struct dcp_profile *
dcp_profile_open_files(const char *const *paths, size_t n,
		       const struct dcp_profile_open_opts *o)
{
	bool want_summary = DCP_OPTS_GET(o, summary, false);
	struct dcp_profile *acc;

	if (!DCP_OPTS_VALID(o)) {
		DCP_OPTS_ERROR(dcp_profile_open_opts);
		return NULL;
	}
	if (!n)
		return dcp_error_null(ENOENT, "no profiles to read");
	acc = dcp_profile_merge_new();
	for (size_t i = 0; acc && i < n; i++) {
		struct dcp_profile *p =
			dcp_profile_read(paths[i], want_summary, dcp_demangle);
		int ret;

		if (!p) {
			ret = -errno;
		} else {
			ret = dcp_profile_merge_add(acc, p);
			dcp_profile_close(p);
		}
		if (ret) {
			dcp_profile_close(acc);
			errno = -ret;
			return NULL;
		}
	}
	return acc;
}

/* Named addresses (those named after themselves, no FDE, are not), and
 * of them those named by a symbol, not by an FDE. */
static void count_resolved(const struct dcp_symtab *t, uint64_t *resolved,
			   uint64_t *by_symbol)
{
	size_t n = dcp_symtab_count(t);
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	uint64_t offset;
	bool alone, made;

	*resolved = *by_symbol = 0;
	for (size_t i = 0; i < n; i++) {
		dcp_symtab_entry(t, i, NULL, &offset, &sym);
		alone = false;
		made = dcp_symbol_name_is_made(sym.name, sym.start, sym.size,
					       offset, &alone);
		*resolved += sym.name && !alone;
		*by_symbol += sym.name && !made;
	}
}

bool dcp_running_kernel(struct dcp_kernel_layout *k,
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

bool dcp_profile_recorded_on(const struct dcp_profile *p,
			     const struct dcp_cookie_info *id)
{
	size_t n = dcp_cookie_table_size(p->cookies);
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };

	for (size_t i = 0; i < n; i++)
		if (!dcp_cookie_table_lookup(p->cookies, (uint32_t)i, &ci) &&
		    ci.kind == DCP_COOKIE_KIND_KERNEL)
			return ci.build_id_size &&
			       ci.build_id_size == id->build_id_size &&
			       !memcmp(ci.build_id, id->build_id,
				       ci.build_id_size);
	return false;
}

struct resymbolize {
	struct dcp_profile *p;
	const struct dcp_symtab *fresh;
	struct dcp_resymbolize_stats *st;
};

/*
 * A name found again replaces the stored one; a name lost is kept, and
 * so is a symbol's name where only an FDE (or nothing) names the address
 * now.
 */
static int merge_object(void *ctx, const struct dcp_cookie_info *ci,
			const uint64_t *offsets, size_t n, int resolved)
{
	struct resymbolize *x = ctx;
	uint32_t id = ci->cookie;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct dcp_symbol old = { .sz = sizeof(old) };
	int ret;

	x->st->objects++;
	if (resolved < 0) {
		if (resolved == -ENOMEM)
			return resolved;
		if (resolved == -ESTALE)
			x->st->objects_mismatched++;
		else
			x->st->objects_missing++;
		dcp_log(DCP_LOG_WARN, "cannot resymbolize '%s': %s", ci->name,
			dcp_last_error());
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (dcp_symtab_lookup(x->fresh, id, offsets[i], &sym) ||
		    !sym.name)
			continue;
		if (ci->kind == DCP_COOKIE_KIND_FILE &&
		    dcp_symbol_name_is_made(sym.name, sym.start, sym.size,
					    offsets[i], NULL) &&
		    !dcp_symtab_lookup(x->p->symbols, id, offsets[i], &old) &&
		    old.name &&
		    !dcp_symbol_name_is_made(old.name, old.start, old.size,
					     offsets[i], NULL))
			continue;
		ret = dcp_symtab_copy(x->p->symbols, x->fresh, id, offsets[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

DCPROF_API int dcp_profile_resymbolize(struct dcp_profile *p,
				       const struct dcp_resymbolize_opts *opts,
				       struct dcp_resymbolize_stats *stats)
{
	struct dcp_resymbolize_stats st = { 0 };
	struct dcp_symtab *fresh = NULL;
	struct dcp_cookie_table *kernel_cookies = NULL;
	struct dcp_kernel_layout kernel;
	struct dcp_cookie_info kernel_id = { .sz = sizeof(kernel_id) };
	struct resymbolize x = { .p = p, .st = &st };
	struct dcp_resolve_opts ro = { .done = merge_object, .ctx = &x };
	bool kernel_ok = false;
	char *path = NULL;
	int ret;

	if (!DCP_OPTS_VALID(opts))
		return DCP_OPTS_ERROR(dcp_resymbolize_opts);
	if (stats && !dcp_sz_ok(stats, DCP_RESYMBOLIZE_STATS_FIRST_SZ))
		return DCP_SZ_ERROR(dcp_resymbolize_stats, stats);
	/* Its addresses stand for functions: naming them again could split
	 * or merge what the summary merged. */
	if (p->summary)
		return dcp_error(EINVAL, "cannot resymbolize the summary of a "
					 "profile; open it whole");
	ret = dcp_debuginfo_path(DCP_OPTS_GET(opts, debuginfo_dirs, NULL),
				 DCP_OPTS_GET(opts, nr_debuginfo_dirs, 0),
				 &path);
	if (ret < 0)
		goto out;
	count_resolved(p->symbols, &st.resolved_before, &st.symbols_before);
	kernel_ok = dcp_running_kernel(&kernel, &kernel_cookies, &kernel_id);
	/* The kernel image, its modules and its vdso only when it is the
	 * running kernel: its symbols are offsets from _text, the same at
	 * every boot; modules are matched by name and build id; the vdso is
	 * the one this process has. */
	ro.kernel = kernel_ok ? &kernel : NULL;
	ro.kernel_objects = kernel_ok && dcp_profile_recorded_on(p, &kernel_id);
	ro.debuginfo_path = path;
	fresh = dcp_symtab_new();
	if (!fresh) {
		ret = -errno;
		goto out;
	}
	x.fresh = fresh;
	ret = dcp_resolve_sampled(p->cookies, p->agg, fresh, &ro);
	if (ret < 0)
		goto out;
	count_resolved(p->symbols, &st.resolved_after, &st.symbols_after);
	if (st.resolved_after > st.resolved_before) {
		uint64_t d = st.resolved_after - st.resolved_before;

		p->stats.symbols_unresolved =
			p->stats.symbols_unresolved > d ?
				p->stats.symbols_unresolved - d :
				0;
	}
	ret = 0;
out:
	free(path);
	dcp_symtab_free(fresh);
	if (kernel_ok)
		dcp_kernel_layout_free(&kernel);
	dcp_cookie_table_free(kernel_cookies);
	if (stats)
		dcp_sz_copy(stats, &st, sizeof(st));
	return dcp_api_ret(ret);
}
