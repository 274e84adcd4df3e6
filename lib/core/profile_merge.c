// SPDX-License-Identifier: MIT
/*
 * Several profiles read as one (a time range of continuous recording's
 * periods): cookies matched by file identity, strings, stacks and threads
 * interned again, counts added, stored symbols copied under the merged
 * cookies, stats summed. Each profile is added and can be closed at once,
 * so memory follows the distinct stacks, not the number of files.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cookie_internal.h"
#include "log_internal.h"
#include "profile_internal.h"

struct dcp_profile *dcp_profile_merge_new(void)
{
	struct dcp_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return dcp_error_null(ENOMEM, "out of memory");
	p->stats.sz = sizeof(p->stats);
	p->cookies = dcp_cookie_table_new();
	p->agg = dcp_aggregate_new();
	p->symbols = dcp_symtab_new();
	if (!p->cookies || !p->agg || !p->symbols) {
		dcp_profile_close(p);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	p->summary = true;
	return p;
}

/* The merged table's cookie for src's cookie ci; negative errno. */
static int64_t merge_cookie(struct dcp_cookie_table *t,
			    const struct dcp_cookie_info *ci)
{
	struct dcp_file_id id;
	int64_t c;

	dcp_file_id_from_info(&id, ci);
	if (ci->kind == DCP_COOKIE_KIND_UNKNOWN)
		return 0;
	if (ci->kind != DCP_COOKIE_KIND_FILE)
		return dcp_cookie_table_intern_special(
			t, ci->kind, ci->name, ci->build_id_size ? &id : NULL);
	c = dcp_cookie_table_intern_file(
		t, &id, ci->nr_paths ? ci->paths[0] : ci->name);
	for (size_t i = 1; c > 0 && i < ci->nr_paths; i++) {
		int64_t again =
			dcp_cookie_table_intern_file(t, &id, ci->paths[i]);

		if (again < 0)
			c = again;
	}
	return c;
}

static int merge_strings(struct dcp_profile *acc, const char *const *src)
{
	for (int i = 0; i < 5; i++) {
		if (acc->meta_strings[i] || !src[i])
			continue;
		acc->meta_strings[i] = strdup(src[i]);
		if (!acc->meta_strings[i])
			return dcp_error(ENOMEM, "out of memory");
	}
	acc->meta.event = acc->meta_strings[0];
	acc->meta.cmdline = acc->meta_strings[1];
	acc->meta.hostname = acc->meta_strings[2];
	acc->meta.kernel_release = acc->meta_strings[3];
	acc->meta.backend = acc->meta_strings[4];
	return 0;
}

/* From the earliest start to the latest end; complete when all are. */
static int merge_meta(struct dcp_profile *acc, const struct dcp_profile *p,
		      bool first)
{
	const struct dcp_profile_meta *m = &p->meta;
	const char *strings[5] = { m->event, m->cmdline, m->hostname,
				   m->kernel_release, m->backend };
	uint64_t end = m->start_realtime_ns + m->duration_ns;
	uint64_t acc_end = acc->meta.start_realtime_ns + acc->meta.duration_ns;

	if (first) {
		acc->meta = *m;
		acc->created_ns = p->created_ns;
		memset(acc->meta_strings, 0, sizeof(acc->meta_strings));
		return merge_strings(acc, strings);
	}
	if (m->start_realtime_ns < acc->meta.start_realtime_ns)
		acc->meta.start_realtime_ns = m->start_realtime_ns;
	if (end > acc_end)
		acc_end = end;
	acc->meta.duration_ns = acc_end - acc->meta.start_realtime_ns;
	acc->meta.complete &= m->complete;
	acc->meta.callchain |= m->callchain;
	acc->meta.kernel_excluded |= m->kernel_excluded;
	acc->meta.off_cpu |= m->off_cpu;
	if (m->nr_cpus > acc->meta.nr_cpus)
		acc->meta.nr_cpus = m->nr_cpus;
	return merge_strings(acc, strings);
}

/* Every count of the stats adds up; the files with most broken
 * frame-pointer chains are per profile and are not kept. */
static void merge_stats(struct dcp_profile_stats *acc,
			const struct dcp_profile_stats *s)
{
	uint64_t *a = &acc->samples;
	const uint64_t *b = &s->samples;
	size_t n = (offsetof(struct dcp_profile_stats, fp_broken_cookie) -
		    offsetof(struct dcp_profile_stats, samples)) /
		   sizeof(uint64_t);

	for (size_t i = 0; i < n; i++)
		a[i] += b[i];
	/* the off-CPU counts follow the files' broken chains */
	a = &acc->off_cpu_switches;
	b = &s->off_cpu_switches;
	n = (sizeof(*s) -
	     offsetof(struct dcp_profile_stats, off_cpu_switches)) /
	    sizeof(uint64_t);
	for (size_t i = 0; i < n; i++)
		a[i] += b[i];
}

/* from's string id s in to: negative errno */
static int64_t merge_string(struct dcp_aggregate *to,
			    const struct dcp_aggregate *from, uint32_t s)
{
	if (s == DCP_AGG_NO_STRING)
		return s;
	return dcp_aggregate_intern_string(to, dcp_aggregate_string(from, s));
}

/* from's thread t (its name and cgroup still from's) in to */
static int64_t merge_thread(struct dcp_aggregate *to,
			    const struct dcp_aggregate *from,
			    struct dcp_agg_thread *t)
{
	struct dcp_agg_cgroup c;
	int64_t id = merge_string(to, from, t->comm_id);

	if (id < 0)
		return id;
	t->comm_id = (uint32_t)id;
	if (dcp_aggregate_cgroup(from, t->cgroup, &c)) {
		id = merge_string(to, from, c.path_id);
		if (id >= 0)
			c.path_id = (uint32_t)id;
		if (id >= 0)
			id = merge_string(to, from, c.name_id);
		if (id >= 0) {
			c.name_id = (uint32_t)id;
			id = dcp_aggregate_intern_cgroup(to, &c);
		}
		if (id < 0)
			return id;
		t->cgroup = (uint32_t)id;
	}
	return dcp_aggregate_intern_thread(to, t);
}

static int merge_rows(struct dcp_profile *acc, const struct dcp_profile *p,
		      const int64_t *cookie_map, size_t nr_cookies)
{
	struct dcp_frame *frames = NULL;
	size_t cap = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < dcp_aggregate_nr_rows(p->agg); i++) {
		struct dcp_row_key key, out = { 0 };
		uint64_t count, ns[DCP_OFF_CPU_NR_STATES];
		const struct dcp_frame *f;
		struct dcp_agg_thread t;
		uint32_t nf;
		int64_t id;

		dcp_aggregate_row(p->agg, i, &key, &count);
		f = dcp_aggregate_stack(p->agg, key.stack_id, &nf);
		if (nf > cap) {
			struct dcp_frame *g = realloc(frames, nf * sizeof(*g));

			if (!g) {
				ret = dcp_error(ENOMEM, "out of memory");
				break;
			}
			frames = g;
			cap = nf;
		}
		for (uint32_t j = 0; j < nf; j++) {
			frames[j] = f[j];
			frames[j].cookie =
				f[j].cookie < nr_cookies &&
						cookie_map[f[j].cookie] >= 0 ?
					(uint32_t)cookie_map[f[j].cookie] :
					0;
		}
		id = dcp_aggregate_intern_stack(acc->agg, frames, nf);
		if (id >= 0) {
			out.stack_id = (uint32_t)id;
			id = dcp_aggregate_intern_string(
				acc->agg,
				dcp_aggregate_string(p->agg, key.comm_id));
		}
		if (id >= 0) {
			out.comm_id = (uint32_t)id;
			out.pid = key.pid;
		}
		if (id >= 0 && key.thread_id &&
		    dcp_aggregate_thread(p->agg, key.thread_id, &t)) {
			id = merge_thread(acc->agg, p->agg, &t);
			if (id >= 0)
				out.thread_id = (uint32_t)id;
		}
		ret = id < 0 ? (int)id :
		      count  ? dcp_aggregate_add(acc->agg, &out, count) :
			       0;
		/* --off-cpu periods: the time off the CPU adds up too */
		if (!ret && dcp_aggregate_row_off_cpu(p->agg, i, false, ns))
			ret = dcp_aggregate_add_off_cpu(acc->agg, &out, ns);
	}
	free(frames);
	return ret;
}

int dcp_profile_merge_add(struct dcp_profile *acc, const struct dcp_profile *p)
{
	size_t nr_cookies = dcp_cookie_table_size(p->cookies);
	int64_t *map = calloc(nr_cookies ? nr_cookies : 1, sizeof(*map));
	bool first = !acc->meta.version;
	int ret = 0;

	if (!map)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; !ret && i < nr_cookies; i++) {
		struct dcp_cookie_info ci = { .sz = sizeof(ci) };

		map[i] = -1;
		if (dcp_cookie_table_lookup(p->cookies, (uint32_t)i, &ci) < 0)
			continue;
		map[i] = merge_cookie(acc->cookies, &ci);
		if (map[i] < 0)
			ret = (int)map[i];
		else
			dcp_cookie_table_add_samples(
				acc->cookies, (uint32_t)map[i], ci.samples);
	}
	if (!ret)
		ret = merge_meta(acc, p, first);
	if (!ret)
		ret = merge_rows(acc, p, map, nr_cookies);
	for (size_t i = 0;
	     !ret && p->symbols && i < dcp_symtab_count(p->symbols); i++) {
		struct dcp_symbol sym = { .sz = sizeof(sym) };
		uint32_t cookie;
		uint64_t offset;

		dcp_symtab_entry(p->symbols, i, &cookie, &offset, &sym);
		if (cookie >= nr_cookies || map[cookie] < 0 ||
		    !dcp_symtab_lookup(acc->symbols, (uint32_t)map[cookie],
				       offset, &sym))
			continue;
		ret = dcp_symtab_copy_as(acc->symbols, p->symbols, cookie,
					 offset, (uint32_t)map[cookie]);
	}
	if (!ret) {
		merge_stats(&acc->stats, &p->stats);
		acc->summary &= p->summary;
	}
	free(map);
	return ret;
}
