// SPDX-License-Identifier: MIT
/*
 * pprof export: the profile as perftools.profiles.Profile (proto/
 * profile.proto), encoded by protobuf-c and gzipped by zlib on the way out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile.pb-c.h"

#include "export.h"
#include "gzip.h"
#include "intern.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* One (cookie, offset): its lines are lines[first_line, + nr_lines). */
struct loc {
	uint32_t cookie;
	uint64_t offset;
	uint64_t mapping_id;
	size_t first_line;
	uint32_t nr_lines;
};

struct pprof {
	const struct profile_view *v;

	struct string_table strings;

	/* cookie -> mapping id (0: none yet) */
	uint64_t *mapping_of;
	size_t nr_cookies;
	pb_mapping *mappings;
	size_t nr_mappings, cap_mappings;
	unsigned int mapping_shift;

	pb_function *functions;
	size_t nr_functions, cap_functions;
	/* (name << 32 | system_name, file) -> index in functions */
	struct key_map function_index;

	struct loc *locs;
	size_t nr_locs, cap_locs;
	struct key_map loc_index; /* (cookie, offset) -> index in locs */
	pb_line *lines;
	size_t nr_lines, cap_lines;

	struct export_cgroup_labels cgroups;
	char cgroup_bufs[EXPORT_CGROUP_NR_LABELS][256];
};

/* comm, pid, thread, tid and the cgroup's */
#define MAX_LABELS (4 + EXPORT_CGROUP_NR_LABELS)

/* The string table index of s, adding it on first use; -ENOMEM. */
static int64_t intern(struct pprof *pp, const char *s)
{
	return export_intern(&pp->strings, s);
}

/* The mapping id of a cookie, creating its Mapping on first use. */
static int64_t mapping_of(struct pprof *pp, uint32_t cookie)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	char hex[2 * DCP_BUILD_ID_MAX + 1], buf[256];
	pb_mapping *m;
	int64_t name, build_id = 0;
	uint64_t id;

	if (cookie < pp->nr_cookies && pp->mapping_of[cookie])
		return (int64_t)pp->mapping_of[cookie];
	if (cookie >= pp->nr_cookies) {
		/* cookie_table_size covers every cookie a frame can name */
		return -EINVAL;
	}
	if (export_reserve(&pp->mappings, &pp->cap_mappings, pp->nr_mappings,
			   sizeof(*pp->mappings)))
		return -ENOMEM;
	name = intern(pp, export_object_name(pp->v, cookie, buf, sizeof(buf)));
	if (name < 0)
		return name;
	if (!dcp_cookie_table_lookup(pp->v->cookies, cookie, &info) &&
	    info.build_id_size) {
		build_id =
			intern(pp, dcp_build_id_hex(info.build_id,
						    info.build_id_size, hex));
		if (build_id < 0)
			return build_id;
	}
	id = pp->nr_mappings + 1;
	m = &pp->mappings[pp->nr_mappings++];
	perftools__profiles__mapping__init(m);
	m->id = id;
	/* No addresses survive recording: each object gets a range of its
	 * own, in which an address is the start plus the file offset. */
	m->memory_start = id << pp->mapping_shift;
	m->memory_limit = (id + 1) << pp->mapping_shift;
	m->file_offset = 0;
	m->filename = name;
	m->build_id = build_id;
	pp->mapping_of[cookie] = id;
	return (int64_t)id;
}

/* The Function of one (name, spelling in the binary, file). */
static int64_t function_of(struct pprof *pp, const char *name,
			   const char *system_name, int64_t file)
{
	int64_t name_i, system_i;
	pb_function *f;
	uint64_t key;
	uint32_t i;

	name_i = intern(pp, name);
	if (name_i < 0)
		return name_i;
	system_i = system_name ? intern(pp, system_name) : name_i;
	if (system_i < 0)
		return system_i;
	/* string numbers are below 2^32 (string_table_intern) */
	key = (uint64_t)name_i << 32 | (uint64_t)system_i;
	if (!key_map_find(&pp->function_index, key, (uint64_t)file, &i))
		return (int64_t)pp->functions[i].id;
	if (export_reserve(&pp->functions, &pp->cap_functions, pp->nr_functions,
			   sizeof(*pp->functions)) ||
	    key_map_add(&pp->function_index, key, (uint64_t)file,
			(uint32_t)pp->nr_functions) < 0)
		return -ENOMEM;
	f = &pp->functions[pp->nr_functions++];
	perftools__profiles__function__init(f);
	f->id = pp->nr_functions;
	f->name = name_i;
	f->system_name = system_i;
	f->filename = file;
	return (int64_t)f->id;
}

/*
 * The lines of a location: the function and the calls inlined into it at
 * this address, innermost first as pprof wants them.
 */
static int add_lines(struct pprof *pp, struct loc *l, const struct dcp_frame *f)
{
	struct dcp_expanded_frame ex[PROFILE_VIEW_EXPAND_MAX];
	pb_mapping *m = &pp->mappings[l->mapping_id - 1];
	int n = export_expand(pp->v, f, ex);

	l->first_line = pp->nr_lines;
	for (int k = n; k-- > 0;) {
		const struct dcp_expanded_frame *e = &ex[k];
		/* Without DWARF the object is the best "file" there is. */
		int64_t file = e->file ? intern(pp, e->file) : m->filename;
		int64_t fn;
		pb_line *line;

		if (file < 0)
			return (int)file;
		fn = function_of(pp, e->name, e->raw_name, file);
		if (fn < 0)
			return (int)fn;
		if (export_reserve(&pp->lines, &pp->cap_lines, pp->nr_lines,
				   sizeof(*pp->lines)))
			return -ENOMEM;
		line = &pp->lines[pp->nr_lines++];
		perftools__profiles__line__init(line);
		line->function_id = (uint64_t)fn;
		line->line = e->line;
		if (e->file)
			m->has_filenames = true;
		if (e->line)
			m->has_line_numbers = true;
		if (e->is_inline)
			m->has_inline_frames = true;
	}
	l->nr_lines = (uint32_t)n;
	return 0;
}

/* The location id of a frame, creating it (and its lines) on first use. */
static int64_t location_of(struct pprof *pp, const struct dcp_frame *f)
{
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct loc *l;
	int64_t mid;
	uint32_t i;
	int ret;

	if (!key_map_find(&pp->loc_index, f->cookie, f->offset, &i))
		return (int64_t)i + 1;
	if (export_reserve(&pp->locs, &pp->cap_locs, pp->nr_locs,
			   sizeof(*pp->locs)))
		return -ENOMEM;
	mid = mapping_of(pp, f->cookie);
	if (mid < 0)
		return mid;
	l = &pp->locs[pp->nr_locs];
	memset(l, 0, sizeof(*l));
	l->cookie = f->cookie;
	l->offset = f->offset;
	l->mapping_id = (uint64_t)mid;
	ret = add_lines(pp, l, f);
	if (ret)
		return ret;
	if (key_map_add(&pp->loc_index, f->cookie, f->offset,
			(uint32_t)pp->nr_locs) < 0)
		return -ENOMEM;
	if (!dcp_profile_symbol(pp->v->profile, f->cookie, f->offset, &sym) &&
	    sym.name)
		pp->mappings[mid - 1].has_functions = true;
	return (int64_t)++pp->nr_locs;
}

static void pprof_free(struct pprof *pp)
{
	string_table_free(&pp->strings);
	free(pp->mapping_of);
	free(pp->mappings);
	free(pp->functions);
	key_map_free(&pp->function_index);
	free(pp->locs);
	key_map_free(&pp->loc_index);
	free(pp->lines);
	export_cgroup_labels_free(&pp->cgroups);
}

/* Everything pprof_build allocates for the message, freed at once. */
struct pb_arrays {
	pb_value_type types[4];
	pb_value_type *type_ptrs[3];
	pb_sample *samples;
	pb_sample **sample_ptrs;
	pb_label *labels;
	pb_label **label_ptrs;
	uint64_t *location_ids;
	int64_t *values;
	pb_mapping **mapping_ptrs;
	pb_function **function_ptrs;
	pb_location *locations;
	pb_location **location_ptrs;
	pb_line **line_ptrs;
	int64_t comments[4];
};

static void pb_arrays_free(struct pb_arrays *a)
{
	free(a->samples);
	free(a->sample_ptrs);
	free(a->labels);
	free(a->label_ptrs);
	free(a->location_ids);
	free(a->values);
	free(a->mapping_ptrs);
	free(a->function_ptrs);
	free(a->locations);
	free(a->location_ptrs);
	free(a->line_ptrs);
}

static int add_comment(struct pprof *pp, struct pb_arrays *a, pb_profile *prof,
		       const char *key, const char *value)
{
	char *s;
	int64_t i;

	if (!value || !*value)
		return 0;
	if (asprintf(&s, "%s: %s", key, value) < 0)
		return -ENOMEM;
	i = intern(pp, s);
	free(s);
	if (i < 0)
		return (int)i;
	a->comments[prof->n_comment++] = i;
	return 0;
}

/*
 * pprof takes the first mapping for the main binary (its "File:" line).
 * A system-wide profile has none: the file with the most samples of its
 * own stands in, which for a profiled command is usually the command.
 */
static int main_mapping_first(struct pprof *pp)
{
	uint64_t best = 0;
	uint32_t cookie = 0;
	int64_t id;

	for (size_t c = 0; c < pp->nr_cookies; c++) {
		struct dcp_cookie_info info = { .sz = sizeof(info) };

		if (!dcp_cookie_table_lookup(pp->v->cookies, (uint32_t)c,
					     &info) &&
		    info.kind == DCP_COOKIE_KIND_FILE && info.samples > best) {
			best = info.samples;
			cookie = (uint32_t)c;
		}
	}
	if (!best)
		return 0;
	id = mapping_of(pp, cookie);
	return id < 0 ? (int)id : 0;
}

/* A label of a sample: its key, and a string or a number. */
static int add_label(struct pprof *pp, pb_label *l, int64_t key,
		     const char *str, int64_t num, bool as_string)
{
	char buf[24];
	int64_t i;

	perftools__profiles__label__init(l);
	l->key = key;
	if (!str && !as_string) {
		l->num = num;
		return 0;
	}
	if (!str) {
		snprintf(buf, sizeof(buf), "%" PRId64, num);
		str = buf;
	}
	i = intern(pp, str);
	if (i < 0)
		return (int)i;
	l->str = i;
	return 0;
}

/*
 * The Profile of rows [lo, hi) of the profile: only the mappings,
 * locations, functions and strings those rows use.
 */
static int pprof_build(struct pprof *pp, struct pb_arrays *a, pb_profile *prof,
		       size_t lo, size_t hi, const struct export_pprof_opts *o)
{
	const struct dcp_profile_meta *meta =
		dcp_profile_get_meta(pp->v->profile);
	size_t nr_rows = hi - lo, nr_frames = 0, ns = 0;
	int64_t s_samples, s_count, s_value_type, s_value_unit, s_comm, s_pid,
		s_thread, s_tid;
	int64_t s_off_cpu = 0, s_cgroup[EXPORT_CGROUP_NR_LABELS];
	struct export_sample_kind kind;
	/* samples/count; then what a sample counts, unless a sample of an
	 * event sampled by frequency, which counts nothing more; then
	 * --off-cpu's off_cpu/nanoseconds */
	size_t nr_values;
	int ret;

	export_sample_kind_of(meta, &kind);
	nr_values = (kind.period ? 2 : 1) + (meta->off_cpu ? 1 : 0);
	if (intern(pp, "") != 0)
		return -ENOMEM;
	ret = main_mapping_first(pp);
	if (ret)
		return ret;
	s_samples = intern(pp, "samples");
	s_count = intern(pp, "count");
	s_value_type = intern(pp, kind.time ? "cpu" : kind.event);
	s_value_unit = intern(pp, kind.time ? "nanoseconds" : "count");
	s_comm = intern(pp, "comm");
	s_pid = intern(pp, "pid");
	s_thread = intern(pp, "thread");
	s_tid = intern(pp, "tid");
	if (meta->off_cpu)
		s_off_cpu = intern(pp, "off_cpu");
	for (int k = 0; k < EXPORT_CGROUP_NR_LABELS; k++)
		if ((s_cgroup[k] = intern(
			     pp, export_cgroup_label_name(k, false))) < 0)
			return -ENOMEM;
	if (s_samples < 0 || s_count < 0 || s_value_type < 0 ||
	    s_value_unit < 0 || s_comm < 0 || s_pid < 0 || s_thread < 0 ||
	    s_tid < 0 || s_off_cpu < 0)
		return -ENOMEM;

	for (size_t i = lo; i < hi; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };

		if (!dcp_profile_row(pp->v->profile, i, &row))
			nr_frames += row.nr_frames;
	}
	a->samples = calloc(nr_rows + 1, sizeof(*a->samples));
	a->sample_ptrs = calloc(nr_rows + 1, sizeof(*a->sample_ptrs));
	a->labels = calloc(MAX_LABELS * nr_rows + 1, sizeof(*a->labels));
	a->label_ptrs =
		calloc(MAX_LABELS * nr_rows + 1, sizeof(*a->label_ptrs));
	a->values = calloc(nr_values * nr_rows + 1, sizeof(*a->values));
	a->location_ids = calloc(nr_frames + 1, sizeof(*a->location_ids));
	if (!a->samples || !a->sample_ptrs || !a->labels || !a->label_ptrs ||
	    !a->values || !a->location_ids)
		return -ENOMEM;

	nr_frames = 0;
	for (size_t i = lo; i < hi; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		pb_sample *s = &a->samples[ns];
		pb_label *l = &a->labels[MAX_LABELS * ns];
		const char *cg[EXPORT_CGROUP_NR_LABELS];
		size_t nl = 0, nv = 0;

		/* rows without frames are not in the report's total either */
		uint64_t off_cpu = 0;

		if (dcp_profile_row(pp->v->profile, i, &row) || !row.nr_frames)
			continue;
		for (int k = 0; k < DCP_OFF_CPU_NR_STATES; k++)
			off_cpu += row.off_cpu_ns[k];
		if (!row.count && !off_cpu)
			continue;
		perftools__profiles__sample__init(s);
		s->location_id = &a->location_ids[nr_frames];
		for (uint32_t k = 0; k < row.nr_frames; k++) {
			int64_t id = location_of(pp, &row.frames[k]);

			if (id < 0)
				return (int)id;
			s->location_id[k] = (uint64_t)id;
		}
		s->n_location_id = row.nr_frames;
		nr_frames += row.nr_frames;
		s->value = &a->values[nr_values * ns];
		s->n_value = nr_values;
		s->value[nv++] = (int64_t)row.count;
		if (kind.period)
			s->value[nv++] = (int64_t)row.count * kind.period;
		if (meta->off_cpu)
			s->value[nv++] = (int64_t)off_cpu;
		if ((o->labels & EXPORT_LABEL_COMM) &&
		    (ret = add_label(pp, &l[nl++], s_comm,
				     row.comm ? row.comm : "", 0, true)))
			return ret;
		if ((o->labels & EXPORT_LABEL_PID) &&
		    (ret = add_label(pp, &l[nl++], s_pid, NULL, row.pid,
				     o->ids_as_strings)))
			return ret;
		/* the thread: its name, and its tid */
		if ((o->labels & EXPORT_LABEL_THREAD) &&
		    (ret = add_label(pp, &l[nl++], s_thread,
				     row.thread_comm ? row.thread_comm : "", 0,
				     true)))
			return ret;
		if ((o->labels & EXPORT_LABEL_TID) &&
		    (ret = add_label(pp, &l[nl++], s_tid, NULL, row.tid,
				     o->ids_as_strings)))
			return ret;
		ret = export_cgroup_label_values(&pp->cgroups, o->labels, &row,
						 cg, pp->cgroup_bufs);
		for (int k = 0; !ret && k < EXPORT_CGROUP_NR_LABELS; k++)
			if (cg[k])
				ret = add_label(pp, &l[nl++], s_cgroup[k],
						cg[k], 0, true);
		if (ret)
			return ret;
		for (size_t k = 0; k < nl; k++)
			a->label_ptrs[MAX_LABELS * ns + k] = &l[k];
		s->label = &a->label_ptrs[MAX_LABELS * ns];
		s->n_label = nl;
		a->sample_ptrs[ns++] = s;
	}

	/* The arrays of structs are final now: point at them. */
	a->mapping_ptrs = calloc(pp->nr_mappings + 1, sizeof(*a->mapping_ptrs));
	a->function_ptrs =
		calloc(pp->nr_functions + 1, sizeof(*a->function_ptrs));
	a->locations = calloc(pp->nr_locs + 1, sizeof(*a->locations));
	a->location_ptrs = calloc(pp->nr_locs + 1, sizeof(*a->location_ptrs));
	a->line_ptrs = calloc(pp->nr_lines + 1, sizeof(*a->line_ptrs));
	if (!a->mapping_ptrs || !a->function_ptrs || !a->locations ||
	    !a->location_ptrs || !a->line_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < pp->nr_mappings; i++)
		a->mapping_ptrs[i] = &pp->mappings[i];
	for (size_t i = 0; i < pp->nr_functions; i++)
		a->function_ptrs[i] = &pp->functions[i];
	for (size_t i = 0; i < pp->nr_lines; i++)
		a->line_ptrs[i] = &pp->lines[i];
	for (size_t i = 0; i < pp->nr_locs; i++) {
		const struct loc *l = &pp->locs[i];
		const pb_mapping *m = &pp->mappings[l->mapping_id - 1];
		uint64_t span = m->memory_limit - m->memory_start;
		pb_location *loc = &a->locations[i];

		perftools__profiles__location__init(loc);
		loc->id = i + 1;
		loc->mapping_id = l->mapping_id;
		/* Offsets beyond the range (a kernel address below _text,
		 * an ip in no mapping) wrap, to stay inside the mapping. */
		loc->address = m->memory_start + (l->offset & (span - 1));
		loc->line = &a->line_ptrs[l->first_line];
		loc->n_line = l->nr_lines;
		a->location_ptrs[i] = loc;
	}

	/* types[0..2]: the sample types; types[3]: the period's */
	for (int k = 0; k < 4; k++)
		a->types[k] =
			(pb_value_type)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	a->types[0].type = s_samples;
	a->types[0].unit = s_count;
	a->types[1].type = s_value_type;
	a->types[1].unit = s_value_unit;
	a->types[2].type = s_off_cpu;
	a->types[2].unit = s_value_unit;
	a->types[3] = a->types[1];
	{
		size_t nt = 0;

		a->type_ptrs[nt++] = &a->types[0];
		if (kind.period)
			a->type_ptrs[nt++] = &a->types[1];
		if (meta->off_cpu)
			a->type_ptrs[nt++] = &a->types[2];
	}

	prof->comment = a->comments;
	if ((ret = add_comment(pp, a, prof, "event", meta->event)) ||
	    (ret = add_comment(pp, a, prof, "host", meta->hostname)) ||
	    (ret = add_comment(pp, a, prof, "kernel", meta->kernel_release)) ||
	    (ret = add_comment(pp, a, prof, "command", meta->cmdline)))
		return ret;

	prof->sample_type = a->type_ptrs;
	prof->n_sample_type = nr_values;
	prof->sample = a->sample_ptrs;
	prof->n_sample = ns;
	prof->mapping = a->mapping_ptrs;
	prof->n_mapping = pp->nr_mappings;
	prof->location = a->location_ptrs;
	prof->n_location = pp->nr_locs;
	prof->function = a->function_ptrs;
	prof->n_function = pp->nr_functions;
	prof->string_table = pp->strings.strings;
	prof->n_string_table = pp->strings.nr;
	prof->time_nanos = (int64_t)meta->start_realtime_ns;
	prof->duration_nanos = (int64_t)meta->duration_ns;
	prof->period_type = &a->types[3];
	prof->period = kind.period;
	return 0;
}

/* One piece being built: everything it allocates, freed at once. */
struct piece {
	pb_profile prof;
	struct pprof pp;
	struct pb_arrays a;
};

static void piece_free(struct piece *p)
{
	pb_arrays_free(&p->a);
	pprof_free(&p->pp);
}

static int piece_build(struct piece *p, const struct profile_view *v, size_t lo,
		       size_t hi, const struct export_pprof_opts *o)
{
	*p = (struct piece){ .prof = PERFTOOLS__PROFILES__PROFILE__INIT,
			     .pp = { .v = v, .mapping_shift = 40 } };
	p->pp.nr_cookies = dcp_cookie_table_size(v->cookies);
	p->pp.cgroups.max_values = o->max_label_values;
	/* The synthetic ranges must not wrap: narrower ones for the
	 * (unheard of) profile with millions of objects. */
	while (p->pp.mapping_shift > 20 &&
	       (uint64_t)(p->pp.nr_cookies + 2) >
		       (1ull << (63 - p->pp.mapping_shift)))
		p->pp.mapping_shift--;
	p->pp.mapping_of =
		calloc(p->pp.nr_cookies + 1, sizeof(*p->pp.mapping_of));
	if (!p->pp.mapping_of)
		return -ENOMEM;
	return pprof_build(&p->pp, &p->a, &p->prof, lo, hi, o);
}

struct pieces {
	const struct profile_view *v;
	const struct export_pprof_opts *o;
	export_pprof_piece_fn fn;
	void *ctx;
	size_t emitted;
};

/* The gzipped encoding of a built piece, handed to the caller. */
static int piece_emit(struct pieces *ps, struct piece *p, size_t raw)
{
	char *gz = NULL;
	size_t len = 0;
	int ret = gzip_pack_mem(&p->prof.base, &gz, &len);

	if (!ret) {
		struct export_pprof_piece info = {
			.gz = gz,
			.len = len,
			.samples = p->prof.n_sample,
			.raw_len = raw,
			.index = ps->emitted,
		};

		ret = ps->fn(ps->ctx, &info);
		ps->emitted++;
	}
	free(gz);
	return ret;
}

static bool over(const struct export_pprof_opts *o, size_t samples, size_t raw)
{
	return (o->max_samples && samples > o->max_samples) ||
	       (o->max_bytes && raw > o->max_bytes);
}

/*
 * Rows [lo, hi) as pieces within the limits: the whole range when it fits,
 * else n parts (n from how far over it is), each split again in halves
 * until it fits or is one row. A piece without samples is left out unless
 * it is the profile's only one.
 */
static int emit_range(struct pieces *ps, size_t lo, size_t hi, bool only)
{
	struct piece p;
	size_t raw, samples, n = 2;
	int ret = piece_build(&p, ps->v, lo, hi, ps->o);

	if (ret) {
		piece_free(&p);
		return ret;
	}
	raw = protobuf_c_message_get_packed_size(&p.prof.base);
	samples = p.prof.n_sample;
	if (!over(ps->o, samples, raw) || hi - lo <= 1) {
		ret = samples || only ? piece_emit(ps, &p, raw) : 0;
		piece_free(&p);
		return ret;
	}
	piece_free(&p);
	/* a part per limit's worth, a tenth more for what parts repeat
	 * (each has its own strings, functions and locations) */
	if (ps->o->max_samples)
		n = samples / ps->o->max_samples + 1 > n ?
			    samples / ps->o->max_samples + 1 :
			    n;
	if (ps->o->max_bytes && (raw + raw / 10) / ps->o->max_bytes + 1 > n)
		n = (raw + raw / 10) / ps->o->max_bytes + 1;
	if (n > hi - lo)
		n = hi - lo;
	for (size_t k = 0; k < n && !ret; k++) {
		size_t a = lo + (hi - lo) * k / n,
		       b = lo + (hi - lo) * (k + 1) / n;

		if (a < b)
			ret = emit_range(ps, a, b, false);
	}
	/* every row was in a part with no samples: the period still goes */
	if (!ret && only && !ps->emitted) {
		ret = piece_build(&p, ps->v, lo, lo, ps->o);
		if (!ret)
			ret = piece_emit(ps, &p,
					 protobuf_c_message_get_packed_size(
						 &p.prof.base));
		piece_free(&p);
	}
	return ret;
}

int export_pprof_pieces(const struct profile_view *v,
			const struct export_pprof_opts *o,
			export_pprof_piece_fn fn, void *ctx,
			struct export_error *err)
{
	struct pieces ps = { .v = v, .o = o, .fn = fn, .ctx = ctx };
	int ret = emit_range(&ps, 0, dcp_profile_nr_rows(v->profile), true);

	if (ret == -EINVAL)
		return export_fail(
			err, EINVAL,
			"'%s' names an object its cookie table lacks", v->path);
	if (ret == -ECANCELED)
		return -ECANCELED; /* the caller's callback said why */
	if (ret)
		return export_fail(err, -ret,
				   "cannot build the pprof profile: %s",
				   strerror(-ret));
	return 0;
}

int export_pprof(const struct profile_view *v, FILE *out,
		 struct export_error *err)
{
	const struct export_pprof_opts o = { .labels = EXPORT_LABELS_ALL };
	struct piece p;
	int ret = piece_build(&p, v, 0, dcp_profile_nr_rows(v->profile), &o);

	if (ret == -EINVAL)
		ret = export_fail(err, EINVAL,
				  "'%s' names an object its cookie table lacks",
				  v->path);
	else if (ret)
		ret = export_fail(err, -ret,
				  "cannot build the pprof profile: %s",
				  strerror(-ret));
	else if ((ret = gzip_pack(&p.prof.base, out)))
		ret = export_fail(err, -ret,
				  "cannot write the pprof profile: %s",
				  strerror(-ret));
	piece_free(&p);
	return ret;
}
