// SPDX-License-Identifier: MIT
/*
 * OpenTelemetry profiles export, the message: the request around the
 * dictionary of otlp.c (its resource, scope and one Profile per sample
 * type), written whole or in gzipped pieces within a receiver's limits,
 * and the receiver's answer read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "gzip.h"
#include "otlp_internal.h"

/* Everything of the message that points into the tables, freed at once. */
struct pb_parts {
	pb_request req;
	pb_dictionary dict;
	pb_resource_profiles rp, *rp_ptr;
	pb_resource resource;
	pb_key_value *kvs, **kv_ptrs;
	pb_any_value *kv_values;
	pb_scope_profiles sp, *sp_ptr;
	pb_scope scope;
	pb_profile profiles[NR_TYPES], *profile_ptrs[NR_TYPES];
	pb_value_type types[NR_TYPES], period_type;
	pb_sample *samples, **sample_ptrs;
	pb_mapping **mapping_ptrs;
	pb_location *locations, **location_ptrs;
	pb_line **line_ptrs;
	pb_function **function_ptrs;
	pb_stack *stacks, **stack_ptrs;
	pb_attribute *attrs, **attr_ptrs;
	pb_any_value *attr_values;
	pb_link link, *link_ptr;
	uint8_t zero_ids[16];
};

static void parts_free(struct pb_parts *p)
{
	free(p->kvs);
	free(p->kv_ptrs);
	free(p->kv_values);
	free(p->samples);
	free(p->sample_ptrs);
	free(p->mapping_ptrs);
	free(p->locations);
	free(p->location_ptrs);
	free(p->line_ptrs);
	free(p->function_ptrs);
	free(p->stacks);
	free(p->stack_ptrs);
	free(p->attrs);
	free(p->attr_ptrs);
	free(p->attr_values);
}

/* A resource attribute, unless the caller gave its key: theirs wins. */
static void add_kv(struct pb_parts *p, const struct export_otlp_opts *o,
		   const char *key, size_t key_len, const char *value,
		   bool given)
{
	size_t n = p->resource.n_attributes;
	pb_key_value *kv = &p->kvs[n];

	if (!value || !*value)
		return;
	for (size_t i = 0; !given && i < o->nr_attrs; i++)
		if (!strncmp(o->attrs[i], key, key_len) &&
		    o->attrs[i][key_len] == '=')
			return;
	dcprof__otlp__key_value__init(kv);
	dcprof__otlp__any_value__init(&p->kv_values[n]);
	/* the keys are literals or the caller's "key=value" strings, cut
	 * at the '=' by key_len in a copy of their own below */
	kv->key = (char *)key;
	p->kv_values[n].value_case =
		DCPROF__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	p->kv_values[n].string_value = (char *)value;
	kv->value = &p->kv_values[n];
	p->kv_ptrs[n] = kv;
	p->resource.n_attributes++;
}

/* The resource: service.name, the host's attributes, then the caller's.
 * keys: room for the caller's keys, each cut at its '='. */
static int build_resource(struct pb_parts *p, const struct export_otlp_opts *o,
			  const struct dcp_profile_meta *meta, char *keys)
{
	size_t n = 4 + o->nr_attrs;

	p->kvs = calloc(n, sizeof(*p->kvs));
	p->kv_ptrs = calloc(n, sizeof(*p->kv_ptrs));
	p->kv_values = calloc(n, sizeof(*p->kv_values));
	if (!p->kvs || !p->kv_ptrs || !p->kv_values)
		return -ENOMEM;
	dcprof__otlp__resource__init(&p->resource);
	p->resource.attributes = p->kv_ptrs;
	add_kv(p, o, "service.name", 12,
	       o->service_name ? o->service_name : "dcprof", false);
	add_kv(p, o, "host.name", 9, meta->hostname, false);
	add_kv(p, o, "os.type", 7, "linux", false);
	add_kv(p, o, "os.version", 10, meta->kernel_release, false);
	for (size_t i = 0; i < o->nr_attrs; i++) {
		size_t k = strcspn(o->attrs[i], "=");

		if (!o->attrs[i][k])
			continue; /* checked by the caller: KEY=VALUE */
		memcpy(keys, o->attrs[i], k);
		keys[k] = 0;
		add_kv(p, o, keys, k, o->attrs[i] + k + 1, true);
		keys += k + 1;
	}
	return 0;
}

/* The dictionary's tables as the message's arrays of pointers. */
static int build_dictionary(struct otlp *x, struct pb_parts *p)
{
	pb_dictionary *d = &p->dict;

	p->mapping_ptrs = calloc(x->nr_mappings, sizeof(*p->mapping_ptrs));
	p->function_ptrs = calloc(x->nr_functions, sizeof(*p->function_ptrs));
	p->locations = calloc(x->nr_locs, sizeof(*p->locations));
	p->location_ptrs = calloc(x->nr_locs, sizeof(*p->location_ptrs));
	p->line_ptrs = calloc(x->nr_lines + 1, sizeof(*p->line_ptrs));
	p->stacks = calloc(x->nr_stacks, sizeof(*p->stacks));
	p->stack_ptrs = calloc(x->nr_stacks, sizeof(*p->stack_ptrs));
	p->attrs = calloc(x->nr_attrs, sizeof(*p->attrs));
	p->attr_ptrs = calloc(x->nr_attrs, sizeof(*p->attr_ptrs));
	p->attr_values = calloc(x->nr_attrs, sizeof(*p->attr_values));
	if (!p->mapping_ptrs || !p->function_ptrs || !p->locations ||
	    !p->location_ptrs || !p->line_ptrs || !p->stacks ||
	    !p->stack_ptrs || !p->attrs || !p->attr_ptrs || !p->attr_values)
		return -ENOMEM;
	dcprof__otlp__profiles_dictionary__init(d);
	for (size_t i = 0; i < x->nr_mappings; i++) {
		pb_mapping *m = &x->mappings[i];

		if (x->mapping_attr[i]) {
			m->attribute_indices = &x->mapping_attr[i];
			m->n_attribute_indices = 1;
		}
		p->mapping_ptrs[i] = m;
	}
	for (size_t i = 0; i < x->nr_functions; i++)
		p->function_ptrs[i] = &x->functions[i];
	for (size_t i = 0; i < x->nr_lines; i++)
		p->line_ptrs[i] = &x->lines[i];
	for (size_t i = 0; i < x->nr_locs; i++) {
		const struct oloc *l = &x->locs[i];
		const pb_mapping *m = &x->mappings[l->mapping];
		pb_location *loc = &p->locations[i];

		dcprof__otlp__location__init(loc);
		if (i) {
			/* Offsets beyond the range (a kernel address below
			 * _text, an ip in no mapping) wrap inside it. */
			loc->mapping_index = l->mapping;
			loc->address = m->memory_start +
				       (l->offset & (m->memory_limit -
						     m->memory_start - 1));
			loc->lines = &p->line_ptrs[l->first_line];
			loc->n_lines = l->nr_lines;
		}
		p->location_ptrs[i] = loc;
	}
	for (size_t i = 0; i < x->nr_stacks; i++) {
		dcprof__otlp__stack__init(&p->stacks[i]);
		p->stacks[i].location_indices =
			&x->stack_locs[x->stacks[i].first];
		p->stacks[i].n_location_indices = x->stacks[i].n;
		p->stack_ptrs[i] = &p->stacks[i];
	}
	for (size_t i = 0; i < x->nr_attrs; i++) {
		const struct oattr *a = &x->attrs[i];
		pb_attribute *at = &p->attrs[i];
		pb_any_value *v = &p->attr_values[i];

		dcprof__otlp__key_value_and_unit__init(at);
		dcprof__otlp__any_value__init(v);
		if (i) {
			at->key_strindex = a->key;
			if (a->is_int) {
				v->value_case =
					DCPROF__OTLP__ANY_VALUE__VALUE_INT_VALUE;
				v->int_value = a->value;
			} else {
				v->value_case =
					DCPROF__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
				v->string_value = x->strings.strings[a->value];
			}
			at->value = v;
		}
		p->attr_ptrs[i] = at;
	}
	/* the link table's zero entry: ids of their full lengths, zeros */
	dcprof__otlp__link__init(&p->link);
	p->link.trace_id = (ProtobufCBinaryData){ 16, p->zero_ids };
	p->link.span_id = (ProtobufCBinaryData){ 8, p->zero_ids };
	p->link_ptr = &p->link;
	d->mapping_table = p->mapping_ptrs;
	d->n_mapping_table = x->nr_mappings;
	d->location_table = p->location_ptrs;
	d->n_location_table = x->nr_locs;
	d->function_table = p->function_ptrs;
	d->n_function_table = x->nr_functions;
	d->link_table = &p->link_ptr;
	d->n_link_table = 1;
	d->attribute_table = p->attr_ptrs;
	d->n_attribute_table = x->nr_attrs;
	d->stack_table = p->stack_ptrs;
	d->n_stack_table = x->nr_stacks;
	d->string_table = x->strings.strings;
	d->n_string_table = x->strings.nr;
	return 0;
}

/* The Profiles, one per sample type (NR_TYPES), of the rows that have its
 * value. */
static int build_profiles(struct otlp *x, struct pb_parts *p,
			  const struct dcp_profile_meta *meta)
{
	struct export_sample_kind kind;
	bool has[NR_TYPES];
	int32_t type[NR_TYPES], unit[NR_TYPES];
	size_t ns = 0, np = 0;

	export_sample_kind_of(meta, &kind);
	has[0] = true;
	has[1] = meta->off_cpu;
	type[0] = export_intern(&x->strings, "samples");
	unit[0] = export_intern(&x->strings, "count");
	type[1] = export_intern(&x->strings, "off_cpu");
	unit[1] = export_intern(&x->strings, "nanoseconds");
	dcprof__otlp__value_type__init(&p->period_type);
	p->period_type.type_strindex =
		export_intern(&x->strings, kind.time ? "cpu" : kind.event);
	p->period_type.unit_strindex =
		export_intern(&x->strings, kind.time ? "nanoseconds" : "count");
	if (p->period_type.type_strindex < 0 ||
	    p->period_type.unit_strindex < 0)
		return -ENOMEM;
	for (int t = 0; t < NR_TYPES; t++)
		if (type[t] < 0 || unit[t] < 0)
			return -ENOMEM;
	p->samples = calloc(NR_TYPES * x->nr_rows + 1, sizeof(*p->samples));
	p->sample_ptrs =
		calloc(NR_TYPES * x->nr_rows + 1, sizeof(*p->sample_ptrs));
	if (!p->samples || !p->sample_ptrs)
		return -ENOMEM;
	for (int t = 0; t < NR_TYPES; t++) {
		pb_profile *prof = &p->profiles[np];

		if (!has[t])
			continue;
		dcprof__otlp__profile__init(prof);
		dcprof__otlp__value_type__init(&p->types[t]);
		p->types[t].type_strindex = type[t];
		p->types[t].unit_strindex = unit[t];
		prof->sample_type = &p->types[t];
		prof->samples = &p->sample_ptrs[ns];
		for (size_t i = 0; i < x->nr_rows; i++) {
			struct orow *r = &x->rows[i];
			pb_sample *s = &p->samples[ns];

			if (!r->values[t])
				continue;
			dcprof__otlp__sample__init(s);
			s->stack_index = r->stack;
			s->attribute_indices = r->attrs;
			s->n_attribute_indices = r->nr_attrs;
			s->values = &r->values[t];
			s->n_values = 1;
			p->sample_ptrs[ns++] = s;
			prof->n_samples++;
		}
		prof->time_unix_nano = meta->start_realtime_ns;
		prof->duration_nano = meta->duration_ns;
		/* what a sample stands for: the event's period, if known
		 * (off-CPU time is measured, not sampled) */
		if (t == 0 && kind.period) {
			prof->period_type = &p->period_type;
			prof->period = kind.period;
		}
		p->profile_ptrs[np++] = prof;
	}
	p->sp.profiles = p->profile_ptrs;
	p->sp.n_profiles = np;
	return 0;
}

static int build(struct otlp *x, struct pb_parts *p,
		 const struct export_otlp_opts *o, char *keys)
{
	const struct dcp_profile_meta *meta =
		dcp_profile_get_meta(x->v->profile);
	int ret;

	memset(p, 0, sizeof(*p));
	dcprof__otlp__export_profiles_service_request__init(&p->req);
	dcprof__otlp__resource_profiles__init(&p->rp);
	dcprof__otlp__scope_profiles__init(&p->sp);
	dcprof__otlp__instrumentation_scope__init(&p->scope);
	/* the strings are all interned before the table is pointed at */
	if ((ret = build_resource(p, o, meta, keys)) ||
	    (ret = build_profiles(x, p, meta)) ||
	    (ret = build_dictionary(x, p)))
		return ret;
	p->scope.name = "dcprof";
	p->scope.version = DCPROF_VERSION;
	p->sp.scope = &p->scope;
	p->sp_ptr = &p->sp;
	p->rp.resource = &p->resource;
	p->rp.scope_profiles = &p->sp_ptr;
	p->rp.n_scope_profiles = 1;
	p->rp_ptr = &p->rp;
	p->req.resource_profiles = &p->rp_ptr;
	p->req.n_resource_profiles = 1;
	p->req.dictionary = &p->dict;
	return 0;
}

/* One piece being built: everything it allocates, freed at once. */
struct piece {
	struct otlp x;
	struct pb_parts p;
	char *keys;
	size_t samples; /* the most of any of its Profiles */
};

static void piece_free(struct piece *pc)
{
	parts_free(&pc->p);
	otlp_free(&pc->x);
	free(pc->keys);
}

static int piece_build(struct piece *pc, const struct profile_view *v,
		       const struct export_otlp_opts *o, size_t lo, size_t hi)
{
	size_t keys = 1;
	int ret;

	memset(pc, 0, sizeof(*pc));
	for (size_t i = 0; i < o->nr_attrs; i++)
		keys += strlen(o->attrs[i]) + 1;
	pc->keys = malloc(keys);
	if (!pc->keys)
		return -ENOMEM;
	if ((ret = otlp_init(&pc->x, v, o)) ||
	    (ret = otlp_add_rows(&pc->x, lo, hi)) ||
	    (ret = build(&pc->x, &pc->p, o, pc->keys)))
		return ret;
	for (size_t i = 0; i < pc->p.sp.n_profiles; i++)
		if (pc->p.profile_ptrs[i]->n_samples > pc->samples)
			pc->samples = pc->p.profile_ptrs[i]->n_samples;
	return 0;
}

static int fail(const struct profile_view *v, int ret, struct export_error *err)
{
	if (ret == -EINVAL)
		return export_fail(
			err, EINVAL,
			"'%s' names an object its cookie table lacks", v->path);
	if (ret == -ECANCELED)
		return ret; /* the caller's callback said why */
	return export_fail(err, -ret,
			   "cannot build the OpenTelemetry profile: %s",
			   strerror(-ret));
}

int export_otlp(const struct profile_view *v, FILE *out,
		const struct export_otlp_opts *o, struct export_error *err)
{
	struct piece pc;
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret = piece_build(&pc, v, o, 0, dcp_profile_nr_rows(v->profile));

	if (!ret) {
		len = protobuf_c_message_get_packed_size(&pc.p.req.base);
		buf = malloc(len ? len : 1);
		if (!buf)
			ret = -ENOMEM;
		else
			protobuf_c_message_pack(&pc.p.req.base, buf);
	}
	piece_free(&pc);
	if (ret) {
		free(buf);
		return fail(v, ret, err);
	}
	ret = fwrite(buf, 1, len, out) == len ?
		      0 :
		      export_fail(err, EIO,
				  "cannot write the OpenTelemetry profile: %s",
				  strerror(errno));
	free(buf);
	return ret;
}

struct pieces {
	const struct profile_view *v;
	const struct export_otlp_opts *o;
	export_pprof_piece_fn fn;
	void *ctx;
	size_t emitted;
};

/*
 * Rows [lo, hi) as gzipped pieces: whole when within o's limits or one
 * row, else its two halves, each again. A piece without samples is left
 * out unless it is the profile's only one.
 */
static int emit_rows(struct pieces *ps, size_t lo, size_t hi, bool only)
{
	const struct export_otlp_opts *o = ps->o;
	struct piece pc;
	char *gz = NULL;
	size_t raw = 0, len = 0;
	int ret = piece_build(&pc, ps->v, o, lo, hi);

	if (!ret)
		raw = protobuf_c_message_get_packed_size(&pc.p.req.base);
	if (!ret && hi - lo > 1 &&
	    ((o->max_samples && pc.samples > o->max_samples) ||
	     (o->max_bytes && raw > o->max_bytes))) {
		piece_free(&pc);
		ret = emit_rows(ps, lo, lo + (hi - lo) / 2, false);
		if (!ret)
			ret = emit_rows(ps, lo + (hi - lo) / 2, hi,
					only && !ps->emitted);
		return ret;
	}
	if (!ret && (pc.samples || only))
		ret = gzip_pack_mem(&pc.p.req.base, &gz, &len);
	if (!ret && gz) {
		struct export_pprof_piece info = { .gz = gz,
						   .len = len,
						   .samples = pc.samples,
						   .raw_len = raw,
						   .index = ps->emitted };

		ret = ps->fn(ps->ctx, &info);
		ps->emitted++;
	}
	free(gz);
	piece_free(&pc);
	return ret;
}

int export_otlp_pieces(const struct profile_view *v,
		       const struct export_otlp_opts *o,
		       export_pprof_piece_fn fn, void *ctx,
		       struct export_error *err)
{
	struct pieces ps = { .v = v, .o = o, .fn = fn, .ctx = ctx };
	size_t rows = dcp_profile_nr_rows(v->profile), n = 1;
	int ret = 0;

	/* a part per limit's worth of rows first: each row is at most a
	 * sample of each Profile, so most parts fit as they are */
	if (o->max_samples && rows > o->max_samples)
		n = (rows + o->max_samples - 1) / o->max_samples;
	for (size_t k = 0; k < n && !ret; k++)
		ret = emit_rows(&ps, rows * k / n, rows * (k + 1) / n,
				k == n - 1 && !ps.emitted);
	return ret ? fail(v, ret, err) : 0;
}

int export_otlp_answer(const void *body, size_t len, int64_t *rejected,
		       char *msg, size_t size)
{
	pb_response *r = dcprof__otlp__export_profiles_service_response__unpack(
		NULL, len, body);

	*rejected = 0;
	if (size)
		msg[0] = 0;
	if (!r)
		return -EBADMSG;
	if (r->partial_success) {
		*rejected = r->partial_success->rejected_profiles;
		if (size && r->partial_success->error_message)
			snprintf(msg, size, "%s",
				 r->partial_success->error_message);
	}
	dcprof__otlp__export_profiles_service_response__free_unpacked(r, NULL);
	return 0;
}
