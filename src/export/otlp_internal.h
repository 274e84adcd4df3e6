/* SPDX-License-Identifier: MIT */
/*
 * What otlp.c (the dictionary of the rows) and otlp_message.c (the
 * request around it, its pieces, the answer) share.
 */
#ifndef DCPROF_EXPORT_OTLP_INTERNAL_H
#define DCPROF_EXPORT_OTLP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "otlp_profiles.pb-c.h"

#include "export.h"
#include "intern.h"

typedef Dcprof__Otlp__ExportProfilesServiceRequest pb_request;
typedef Dcprof__Otlp__ExportProfilesServiceResponse pb_response;
typedef Dcprof__Otlp__ProfilesDictionary pb_dictionary;
typedef Dcprof__Otlp__ResourceProfiles pb_resource_profiles;
typedef Dcprof__Otlp__ScopeProfiles pb_scope_profiles;
typedef Dcprof__Otlp__InstrumentationScope pb_scope;
typedef Dcprof__Otlp__Resource pb_resource;
typedef Dcprof__Otlp__KeyValue pb_key_value;
typedef Dcprof__Otlp__AnyValue pb_any_value;
typedef Dcprof__Otlp__Profile pb_profile;
typedef Dcprof__Otlp__ValueType pb_value_type;
typedef Dcprof__Otlp__Sample pb_sample;
typedef Dcprof__Otlp__Mapping pb_mapping;
typedef Dcprof__Otlp__Location pb_location;
typedef Dcprof__Otlp__Line pb_line;
typedef Dcprof__Otlp__Function pb_function;
typedef Dcprof__Otlp__Stack pb_stack;
typedef Dcprof__Otlp__Link pb_link;
typedef Dcprof__Otlp__KeyValueAndUnit pb_attribute;

/* OpenTelemetry's semantic conventions for what dcprof knows */
#define KEY_BUILD_ID "process.executable.build_id.gnu"
#define KEY_COMM "process.executable.name"
#define KEY_PID "process.pid"
#define KEY_THREAD "thread.name"
#define KEY_TID "thread.id"

/*
 * The sample types: samples/count, whose period_type and period say what
 * a sample stands for (cpu/nanoseconds and 1e9 / -F, as OpenTelemetry's
 * profiler sends CPU samples), and off_cpu/nanoseconds. pprof's second
 * type, count x period, is no Profile of its own: a receiver that turns
 * samples/count with a period into time (Pyroscope's process_cpu) would
 * count the CPU twice.
 */
#define NR_TYPES 2

/* One (cookie, offset): its lines are lines[first_line, + nr_lines). */
struct oloc {
	uint32_t cookie;
	uint64_t offset;
	int32_t mapping;
	size_t first_line;
	uint32_t nr_lines;
};

struct ostack {
	size_t first; /* in stack_locs */
	uint32_t n;
};

/* An attribute: a key and a string (a string index) or a number. */
struct oattr {
	int32_t key;
	bool is_int;
	int64_t value;
};

/* A row of the profile as its samples refer to it. */
struct orow {
	int32_t stack;
	uint32_t nr_attrs;
	int32_t attrs[4 + EXPORT_CGROUP_NR_LABELS];
	int64_t values[NR_TYPES];
};

struct otlp {
	const struct profile_view *v;
	const struct export_otlp_opts *o;
	struct string_table strings;

	int32_t *mapping_of; /* cookie -> mapping index (0: none yet) */
	size_t nr_cookies;
	unsigned int mapping_shift;
	pb_mapping *mappings;
	int32_t *mapping_attr; /* its build id attribute, 0: none */
	size_t nr_mappings, cap_mappings, cap_mapping_attr;

	pb_function *functions;
	size_t nr_functions, cap_functions;
	struct key_map function_index;

	struct oloc *locs;
	size_t nr_locs, cap_locs;
	struct key_map loc_index;
	pb_line *lines;
	size_t nr_lines, cap_lines;

	int32_t *stack_locs;
	size_t nr_stack_locs, cap_stack_locs;
	struct ostack *stacks;
	size_t nr_stacks, cap_stacks;
	struct key_map stack_index; /* (hash, length) -> first of the kind */

	struct oattr *attrs;
	size_t nr_attrs, cap_attrs;
	struct key_map attr_index;

	/* the samples: rows of the same stack and attributes as one */
	struct orow *rows;
	size_t nr_rows;
	struct key_map row_index; /* (stack, attributes' hash) -> first */

	struct export_cgroup_labels cgroups;
	char cgroup_bufs[EXPORT_CGROUP_NR_LABELS][256];
};

/* The tables of rows [lo, hi) of v's profile, each from its zero entry:
 * otlp_init, then otlp_add_rows; 0 or -errno (-EINVAL: a frame names a
 * cookie the table lacks). otlp_free frees, also after a failure. */
int otlp_init(struct otlp *x, const struct profile_view *v,
	      const struct export_otlp_opts *o);
int otlp_add_rows(struct otlp *x, size_t lo, size_t hi);
void otlp_free(struct otlp *x);

#endif
