// SPDX-License-Identifier: MIT
/*
 * The profile object read from a file: its public getters (meta, stats,
 * cookies, rows, stored symbols and inline chains, frames expanded for
 * display), closing it, and saving it again as a compact file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "format_internal.h"
#include "log_internal.h"
#include "profile_internal.h"

DCPROF_API void dcp_profile_close(struct dcp_profile *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < 5; i++)
		free(p->meta_strings[i]);
	dcp_cookie_table_free(p->cookies);
	dcp_aggregate_free(p->agg);
	dcp_symtab_free(p->symbols);
	free(p);
}

DCPROF_API bool dcp_profile_is_summary(const struct dcp_profile *p)
{
	return p->summary;
}

DCPROF_API const struct dcp_profile_meta *
dcp_profile_get_meta(const struct dcp_profile *p)
{
	return &p->meta;
}

DCPROF_API const struct dcp_profile_stats *
dcp_profile_get_stats(const struct dcp_profile *p)
{
	return &p->stats;
}

DCPROF_API const struct dcp_cookie_table *
dcp_profile_cookies(const struct dcp_profile *p)
{
	return p->cookies;
}

DCPROF_API size_t dcp_profile_nr_rows(const struct dcp_profile *p)
{
	return dcp_aggregate_nr_rows(p->agg);
}

DCPROF_API int dcp_profile_row(const struct dcp_profile *p, size_t i,
			       struct dcp_sample_row *out)
{
	struct dcp_sample_row r, *row = &r;
	struct dcp_row_key key;
	struct dcp_agg_thread t = { 0 };
	struct dcp_agg_cgroup c;
	uint64_t count;

	/* the thread came later: older callers do without it */
	if (!dcp_sz_ok(out, offsetof(struct dcp_sample_row, tid)))
		return DCP_SZ_ERROR(dcp_sample_row, out);
	if (i >= dcp_aggregate_nr_rows(p->agg))
		return dcp_error(ERANGE, "no row %zu: the profile has %zu", i,
				 dcp_aggregate_nr_rows(p->agg));
	dcp_aggregate_row(p->agg, i, &key, &count);
	row->comm = dcp_aggregate_string(p->agg, key.comm_id);
	row->pid = key.pid;
	row->frames =
		dcp_aggregate_stack(p->agg, key.stack_id, &row->nr_frames);
	row->count = count;
	dcp_aggregate_row_off_cpu(p->agg, i, false, row->off_cpu_ns);
	row->tid = key.pid;
	row->thread_comm = row->comm;
	row->cgroup = row->container_name = NULL;
	row->cgroup_id = 0;
	if (dcp_aggregate_thread(p->agg, key.thread_id, &t)) {
		row->tid = t.tid;
		row->thread_comm = dcp_aggregate_string(p->agg, t.comm_id);
	}
	if (key.thread_id && dcp_aggregate_cgroup(p->agg, t.cgroup, &c)) {
		row->cgroup = dcp_aggregate_string(p->agg, c.path_id);
		row->cgroup_id = c.kernel_id;
		if (c.name_id != DCP_AGG_NO_STRING)
			row->container_name =
				dcp_aggregate_string(p->agg, c.name_id);
	}
	dcp_sz_copy(out, row, sizeof(*row));
	return 0;
}

DCPROF_API size_t dcp_profile_nr_thread_lifetimes(const struct dcp_profile *p)
{
	return dcp_lives_count(dcp_aggregate_lives(p->agg));
}

DCPROF_API int dcp_profile_thread_lifetime(const struct dcp_profile *p,
					   size_t i,
					   struct dcp_thread_lifetime *out)
{
	const struct dcp_lives *l = dcp_aggregate_lives(p->agg);
	const struct dcp_thread_life *t;
	struct dcp_thread_lifetime life;

	if (!DCP_SZ_VALID(out))
		return DCP_SZ_ERROR(dcp_thread_lifetime, out);
	if (i >= dcp_lives_count(l))
		return dcp_error(ERANGE,
				 "no thread lifetime %zu: the profile "
				 "has %zu",
				 i, dcp_lives_count(l));
	t = dcp_lives_get(l, i);
	life = (struct dcp_thread_lifetime){
		.pid = t->pid,
		.tid = t->tid,
		.start_ns = t->start_ns,
		.end_ns = t->flags & DCP_LIFE_RUNNING ? p->meta.duration_ns :
							t->end_ns,
		.started_before = t->flags & DCP_LIFE_STARTED_BEFORE,
		.running = t->flags & DCP_LIFE_RUNNING,
	};
	/* a thread that began after a working file's last meta was written */
	if (life.end_ns < life.start_ns)
		life.end_ns = life.start_ns;
	dcp_sz_copy(out, &life, sizeof(life));
	return 0;
}

DCPROF_API int dcp_profile_symbol(const struct dcp_profile *p, uint32_t cookie,
				  uint64_t offset, struct dcp_symbol *out)
{
	struct dcp_symbol sym;
	int ret = 0;

	if (!dcp_sz_ok(out, DCP_SYMBOL_FIRST_SZ))
		return DCP_SZ_ERROR(dcp_symbol, out);
	if (dcp_symtab_lookup(p->symbols, cookie, offset, &sym) < 0)
		ret = dcp_error(ENOENT,
				"no symbol stored for cookie %" PRIu32
				" offset 0x%" PRIx64,
				cookie, offset);
	dcp_sz_copy(out, &sym, sizeof(sym));
	return ret;
}

DCPROF_API int dcp_profile_symbol_inline(const struct dcp_profile *p,
					 uint32_t cookie, uint64_t offset,
					 uint32_t i,
					 struct dcp_inline_frame *out)
{
	struct dcp_inline_frame inl;
	int ret = 0;

	if (!DCP_SZ_VALID(out))
		return DCP_SZ_ERROR(dcp_inline_frame, out);
	if (dcp_symtab_inline(p->symbols, cookie, offset, i, &inl) < 0)
		ret = dcp_error(ENOENT,
				"no inlined call %" PRIu32 " at cookie %" PRIu32
				" offset 0x%" PRIx64,
				i, cookie, offset);
	dcp_sz_copy(out, &inl, sizeof(inl));
	return ret;
}

/* Entry k of the caller's array, whose entries are out[0].sz bytes apart. */
static struct dcp_expanded_frame *expanded_at(struct dcp_expanded_frame *out,
					      size_t k)
{
	return (struct dcp_expanded_frame *)((char *)out + k * out[0].sz);
}

DCPROF_API int dcp_profile_frame_expand(const struct dcp_profile *p,
					const struct dcp_frame *f,
					struct dcp_expanded_frame *out,
					size_t max)
{
	struct dcp_inline_frame inl = { .sz = sizeof(inl) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct dcp_expanded_frame e;
	uint32_t k;

	if (max && !DCP_SZ_VALID(out))
		return DCP_SZ_ERROR(dcp_expanded_frame, out);
	if (dcp_symtab_lookup(p->symbols, f->cookie, f->offset, &sym) < 0 ||
	    !sym.name) {
		if (max) {
			memset(&e, 0, sizeof(e));
			dcp_sz_copy(out, &e, sizeof(e));
		}
		return 1;
	}
	if (max) {
		e = (struct dcp_expanded_frame){
			.name = sym.demangled ? sym.demangled : sym.name,
			.raw_name = sym.name,
			.file = sym.file,
			.line = sym.line,
			.is_inline = false,
		};
		dcp_sz_copy(out, &e, sizeof(e));
	}
	/* Stored innermost first; expanded outermost first. */
	for (k = 1; k <= sym.nr_inline && k < max; k++) {
		struct dcp_expanded_frame *o = expanded_at(out, k);

		dcp_symtab_inline(p->symbols, f->cookie, f->offset,
				  sym.nr_inline - k, &inl);
		e = (struct dcp_expanded_frame){
			.raw_name = inl.name,
			.name = inl.demangled ? inl.demangled : inl.name,
			.file = inl.file,
			.line = inl.line,
			.is_inline = true,
		};
		o->sz = out[0].sz;
		dcp_sz_copy(o, &e, sizeof(e));
	}
	return (int)(1 + sym.nr_inline);
}

DCPROF_API int dcp_profile_save(const struct dcp_profile *p, const char *path)
{
	if (p->summary)
		return dcp_error(EINVAL,
				 "cannot write '%s': only the profile's "
				 "summary was read",
				 path);
	/* A compact file says the recorder finished: an incomplete profile
	 * must not be turned into one. */
	if (!p->meta.complete)
		return dcp_error(EINVAL,
				 "cannot write '%s': the profile is incomplete "
				 "(its recorder did not finish)",
				 path);
	return dcp_api_ret(dcp_profile_write_compact(
		path, p->created_ns, &p->meta, p->cookies, p->agg, p->symbols,
		&p->stats));
}
