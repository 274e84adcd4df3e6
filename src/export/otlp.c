// SPDX-License-Identifier: MIT
/*
 * OpenTelemetry profiles export, its dictionary: the strings, mappings
 * (with their build ids), functions, locations, stacks and attributes
 * that the rows of a profile use, each table starting with its zero
 * entry, which stands for "none" (otlp_message.c makes the message).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "hash.h"
#include "otlp_internal.h"

static int32_t intern(struct otlp *x, const char *s)
{
	int64_t i = export_intern(&x->strings, s);

	/* a string table index is an int32 here */
	return i < 0 ? (int32_t)i : i > INT32_MAX ? -E2BIG : (int32_t)i;
}

/* The attribute (key, value), added on first use: its index, -errno. */
static int32_t attr_of(struct otlp *x, const char *key, const char *str,
		       int64_t num)
{
	int32_t k = intern(x, key), s = str ? intern(x, str) : 0;
	int64_t value = str ? s : num;
	uint64_t a;
	uint32_t i;

	if (k < 0 || s < 0)
		return k < 0 ? k : s;
	a = (uint64_t)k << 1 | !str;
	if (!key_map_find(&x->attr_index, a, (uint64_t)value, &i))
		return (int32_t)i;
	if (export_reserve(&x->attrs, &x->cap_attrs, x->nr_attrs,
			   sizeof(*x->attrs)) ||
	    key_map_add(&x->attr_index, a, (uint64_t)value,
			(uint32_t)x->nr_attrs) < 0)
		return -ENOMEM;
	x->attrs[x->nr_attrs] =
		(struct oattr){ .key = k, .is_int = !str, .value = value };
	return (int32_t)x->nr_attrs++;
}

/* The mapping index of a cookie, creating its Mapping on first use. */
static int32_t mapping_of(struct otlp *x, uint32_t cookie)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	char hex[2 * DCP_BUILD_ID_MAX + 1], buf[256];
	int32_t name, build_id = 0;
	uint64_t i = x->nr_mappings;
	pb_mapping *m;

	if (cookie >= x->nr_cookies)
		return -EINVAL; /* cookie_table_size covers every frame's */
	if (x->mapping_of[cookie])
		return x->mapping_of[cookie];
	if (export_reserve(&x->mappings, &x->cap_mappings, x->nr_mappings,
			   sizeof(*x->mappings)) ||
	    export_reserve(&x->mapping_attr, &x->cap_mapping_attr,
			   x->nr_mappings, sizeof(*x->mapping_attr)))
		return -ENOMEM;
	name = intern(x, export_object_name(x->v, cookie, buf, sizeof(buf)));
	if (name < 0)
		return name;
	if (!dcp_cookie_table_lookup(x->v->cookies, cookie, &info) &&
	    info.build_id_size) {
		build_id = attr_of(x, KEY_BUILD_ID,
				   dcp_build_id_hex(info.build_id,
						    info.build_id_size, hex),
				   0);
		if (build_id < 0)
			return build_id;
	}
	m = &x->mappings[x->nr_mappings];
	dcprof__otlp__mapping__init(m);
	/* No addresses survive recording: each object gets a range of its
	 * own, in which an address is the start plus the file offset. */
	m->memory_start = i << x->mapping_shift;
	m->memory_limit = (i + 1) << x->mapping_shift;
	m->filename_strindex = name;
	x->mapping_attr[x->nr_mappings++] = build_id;
	x->mapping_of[cookie] = (int32_t)i;
	return (int32_t)i;
}

/* The Function of one (name, spelling in the binary, file). */
static int32_t function_of(struct otlp *x, const char *name,
			   const char *system_name, int32_t file)
{
	int32_t name_i = intern(x, name), system_i;
	pb_function *f;
	uint32_t i;

	if (name_i < 0)
		return name_i;
	system_i = system_name ? intern(x, system_name) : name_i;
	if (system_i < 0)
		return system_i;
	if (!key_map_find(&x->function_index,
			  (uint64_t)name_i << 32 | (uint32_t)system_i,
			  (uint64_t)file, &i))
		return (int32_t)i;
	if (export_reserve(&x->functions, &x->cap_functions, x->nr_functions,
			   sizeof(*x->functions)) ||
	    key_map_add(&x->function_index,
			(uint64_t)name_i << 32 | (uint32_t)system_i,
			(uint64_t)file, (uint32_t)x->nr_functions) < 0)
		return -ENOMEM;
	f = &x->functions[x->nr_functions];
	dcprof__otlp__function__init(f);
	f->name_strindex = name_i;
	f->system_name_strindex = system_i;
	f->filename_strindex = file;
	return (int32_t)x->nr_functions++;
}

/* The lines of a new location: the innermost inlined call first, the
 * function that holds them last. */
static int add_lines(struct otlp *x, struct oloc *l, const struct dcp_frame *f)
{
	struct dcp_expanded_frame ex[PROFILE_VIEW_EXPAND_MAX];
	int n = export_expand(x->v, f, ex);

	l->first_line = x->nr_lines;
	for (int k = n; k-- > 0;) {
		const struct dcp_expanded_frame *e = &ex[k];
		/* Without DWARF the object is the best "file" there is. */
		int32_t file =
			e->file ? intern(x, e->file) :
				  x->mappings[l->mapping].filename_strindex;
		int32_t fn = file < 0 ?
				     file :
				     function_of(x, e->name, e->raw_name, file);
		pb_line *line;

		if (fn < 0)
			return fn;
		if (export_reserve(&x->lines, &x->cap_lines, x->nr_lines,
				   sizeof(*x->lines)))
			return -ENOMEM;
		line = &x->lines[x->nr_lines++];
		dcprof__otlp__line__init(line);
		line->function_index = fn;
		line->line = e->line;
	}
	l->nr_lines = (uint32_t)n;
	return 0;
}

/* The location index of a frame, creating it (and its lines) first. */
static int32_t location_of(struct otlp *x, const struct dcp_frame *f)
{
	struct oloc *l;
	int32_t mapping;
	uint32_t i;
	int ret;

	if (!key_map_find(&x->loc_index, f->cookie, f->offset, &i))
		return (int32_t)i;
	mapping = mapping_of(x, f->cookie);
	if (mapping < 0)
		return mapping;
	if (export_reserve(&x->locs, &x->cap_locs, x->nr_locs,
			   sizeof(*x->locs)))
		return -ENOMEM;
	l = &x->locs[x->nr_locs];
	*l = (struct oloc){ .cookie = f->cookie,
			    .offset = f->offset,
			    .mapping = mapping };
	ret = add_lines(x, l, f);
	if (ret)
		return ret;
	if (key_map_add(&x->loc_index, f->cookie, f->offset,
			(uint32_t)x->nr_locs) < 0)
		return -ENOMEM;
	return (int32_t)x->nr_locs++;
}

/*
 * The stack of a row's frames (the leaf first), shared by the rows of the
 * same stack: keyed by a hash and the length, checked frame by frame, and
 * on a collision another entry (the schema allows a duplicate).
 */
static int32_t stack_of(struct otlp *x, const struct dcp_sample_row *row)
{
	size_t first = x->nr_stack_locs;
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i;

	for (uint32_t k = 0; k < row->nr_frames; k++) {
		int32_t loc = location_of(x, &row->frames[k]);

		if (loc < 0)
			return loc;
		if (export_reserve(&x->stack_locs, &x->cap_stack_locs,
				   x->nr_stack_locs, sizeof(*x->stack_locs)))
			return -ENOMEM;
		x->stack_locs[x->nr_stack_locs++] = loc;
		h = dcp_hash_fnv1a(h, &loc, sizeof(loc));
	}
	if (!key_map_find(&x->stack_index, h, row->nr_frames, &i) &&
	    !memcmp(&x->stack_locs[x->stacks[i].first], &x->stack_locs[first],
		    row->nr_frames * sizeof(*x->stack_locs))) {
		x->nr_stack_locs = first;
		return (int32_t)i;
	}
	if (export_reserve(&x->stacks, &x->cap_stacks, x->nr_stacks,
			   sizeof(*x->stacks)))
		return -ENOMEM;
	if (key_map_find(&x->stack_index, h, row->nr_frames, &i) &&
	    key_map_add(&x->stack_index, h, row->nr_frames,
			(uint32_t)x->nr_stacks) < 0)
		return -ENOMEM;
	x->stacks[x->nr_stacks] =
		(struct ostack){ .first = first, .n = row->nr_frames };
	return (int32_t)x->nr_stacks++;
}

/* A row's sample attributes, as o->labels asks. */
static int row_attrs(struct otlp *x, const struct dcp_sample_row *row,
		     struct orow *r)
{
	const struct export_otlp_opts *o = x->o;
	const char *cg[EXPORT_CGROUP_NR_LABELS];
	char pid[24], tid[24];
	int32_t a[4 + EXPORT_CGROUP_NR_LABELS];
	uint32_t n = 0;
	int ret;

	snprintf(pid, sizeof(pid), "%" PRId32, (int32_t)row->pid);
	snprintf(tid, sizeof(tid), "%" PRId32, (int32_t)row->tid);
	if (o->labels & EXPORT_LABEL_COMM)
		a[n++] = attr_of(x, KEY_COMM, row->comm ? row->comm : "", 0);
	if (o->labels & EXPORT_LABEL_PID)
		a[n++] = attr_of(x, KEY_PID, o->ids_as_strings ? pid : NULL,
				 row->pid);
	if (o->labels & EXPORT_LABEL_THREAD)
		a[n++] = attr_of(x, KEY_THREAD,
				 row->thread_comm ? row->thread_comm : "", 0);
	if (o->labels & EXPORT_LABEL_TID)
		a[n++] = attr_of(x, KEY_TID, o->ids_as_strings ? tid : NULL,
				 row->tid);
	ret = export_cgroup_label_values(&x->cgroups, o->labels, row, cg,
					 x->cgroup_bufs);
	if (ret)
		return ret;
	for (int k = 0; k < EXPORT_CGROUP_NR_LABELS; k++)
		if (cg[k])
			a[n++] = attr_of(x, export_cgroup_label_name(k, true),
					 cg[k], 0);
	for (uint32_t k = 0; k < n; k++)
		if (a[k] < 0)
			return a[k];
	memcpy(r->attrs, a, n * sizeof(a[0]));
	r->nr_attrs = n;
	return 0;
}

/* The zero entry of each table: index 0 stands for "none". */
int otlp_init(struct otlp *x, const struct profile_view *v,
	      const struct export_otlp_opts *o)
{
	*x = (struct otlp){ .v = v, .o = o, .mapping_shift = 40 };
	x->cgroups.max_values = o->max_label_values;
	x->nr_cookies = dcp_cookie_table_size(v->cookies);
	/* The synthetic ranges must not wrap: narrower ones for the
	 * (unheard of) profile with millions of objects. */
	while (x->mapping_shift > 20 &&
	       (uint64_t)(x->nr_cookies + 2) >
		       (1ull << (63 - x->mapping_shift)))
		x->mapping_shift--;
	x->mapping_of = calloc(x->nr_cookies + 1, sizeof(*x->mapping_of));
	if (!x->mapping_of || intern(x, "") != 0 ||
	    export_reserve(&x->mappings, &x->cap_mappings, 0,
			   sizeof(*x->mappings)) ||
	    export_reserve(&x->mapping_attr, &x->cap_mapping_attr, 0,
			   sizeof(*x->mapping_attr)) ||
	    export_reserve(&x->functions, &x->cap_functions, 0,
			   sizeof(*x->functions)) ||
	    export_reserve(&x->locs, &x->cap_locs, 0, sizeof(*x->locs)) ||
	    export_reserve(&x->stacks, &x->cap_stacks, 0, sizeof(*x->stacks)) ||
	    export_reserve(&x->attrs, &x->cap_attrs, 0, sizeof(*x->attrs)))
		return -ENOMEM;
	dcprof__otlp__mapping__init(&x->mappings[0]);
	x->mapping_attr[0] = 0;
	dcprof__otlp__function__init(&x->functions[0]);
	x->locs[0] = (struct oloc){ 0 };
	x->stacks[0] = (struct ostack){ 0 };
	x->attrs[0] = (struct oattr){ 0 };
	x->nr_mappings = x->nr_functions = x->nr_locs = x->nr_stacks =
		x->nr_attrs = 1;
	return 0;
}

void otlp_free(struct otlp *x)
{
	string_table_free(&x->strings);
	free(x->mapping_of);
	free(x->mappings);
	free(x->mapping_attr);
	free(x->functions);
	key_map_free(&x->function_index);
	free(x->locs);
	key_map_free(&x->loc_index);
	free(x->lines);
	free(x->stack_locs);
	free(x->stacks);
	key_map_free(&x->stack_index);
	free(x->attrs);
	key_map_free(&x->attr_index);
	free(x->rows);
	key_map_free(&x->row_index);
	export_cgroup_labels_free(&x->cgroups);
}

/*
 * A sample's identity is its stack and attributes: rows that differ only
 * in what is not exported (a pid, with comm the only attribute) are one
 * Sample, their values added. 0 when r went into an earlier row, 1 when
 * it is a new one, -ENOMEM.
 */
static int merge_row(struct otlp *x, struct orow *r)
{
	uint64_t h = dcp_hash_fnv1a(0xcbf29ce484222325ull, r->attrs,
				    r->nr_attrs * sizeof(r->attrs[0]));
	uint64_t a = (uint64_t)(uint32_t)r->stack << 32 | r->nr_attrs;
	uint32_t i;

	if (key_map_find(&x->row_index, a, h, &i))
		return key_map_add(&x->row_index, a, h, (uint32_t)x->nr_rows) <
				       0 ?
			       -ENOMEM :
			       1;
	/* a hash shared by other attributes: a row of its own */
	if (memcmp(x->rows[i].attrs, r->attrs,
		   r->nr_attrs * sizeof(r->attrs[0])))
		return 1;
	for (int t = 0; t < NR_TYPES; t++)
		x->rows[i].values[t] += r->values[t];
	return 0;
}

/* Rows [lo, hi) into x->rows: those with frames and a value, as the
 * report counts them. */
int otlp_add_rows(struct otlp *x, size_t lo, size_t hi)
{
	const struct dcp_profile_meta *meta =
		dcp_profile_get_meta(x->v->profile);
	struct export_sample_kind kind;
	int ret;

	export_sample_kind_of(meta, &kind);
	x->rows = calloc(hi - lo + 1, sizeof(*x->rows));
	if (!x->rows)
		return -ENOMEM;
	for (size_t i = lo; i < hi; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		struct orow *r = &x->rows[x->nr_rows];
		uint64_t off_cpu = 0;
		int32_t stack;

		if (dcp_profile_row(x->v->profile, i, &row) || !row.nr_frames)
			continue;
		for (int k = 0; k < DCP_OFF_CPU_NR_STATES; k++)
			off_cpu += row.off_cpu_ns[k];
		if (!row.count && !off_cpu)
			continue;
		stack = stack_of(x, &row);
		if (stack < 0)
			return stack;
		ret = row_attrs(x, &row, r);
		if (ret)
			return ret;
		r->stack = stack;
		r->values[0] = (int64_t)row.count;
		r->values[1] = (int64_t)off_cpu;
		ret = merge_row(x, r);
		if (ret < 0)
			return ret;
		x->nr_rows += (size_t)ret;
	}
	return 0;
}
