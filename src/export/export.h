/* SPDX-License-Identifier: MIT */
/*
 * Writers of a recording in other tools' formats. They never print: each
 * returns 0, else a negative errno and leaves a message for the user in
 * *err (lowercase, no full stop), which the command prints. They write to
 * an open stream and never create files: where the output goes, and what
 * happens to it on failure, is the caller's business.
 */
#ifndef DCPROF_EXPORT_H
#define DCPROF_EXPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "intern.h"
#include "profile_view.h"

/* What went wrong, in words: room for a path and a sentence. */
struct export_error {
	char msg[PATH_MAX + 256];
};

/*
 * pprof's profile.proto, gzipped: one Sample per row of the profile, with
 * comm, pid, thread and tid as labels; sample types samples/count, then
 * cpu/nanoseconds for cpu-clock and task-clock, EVENT/count for another
 * event sampled with -c (none with -F), then off_cpu/nanoseconds with
 * --off-cpu.
 */
int export_pprof(const struct profile_view *v, FILE *out,
		 struct export_error *err);

/* The sample labels of export_pprof_pieces. */
#define EXPORT_LABEL_COMM 1u /* the process's name */
#define EXPORT_LABEL_PID 2u
#define EXPORT_LABEL_THREAD 4u /* the thread's name */
#define EXPORT_LABEL_TID 8u
/* of the thread's cgroup, where it has one: its path, the container's
 * id, the systemd unit, the Kubernetes pod's UID */
#define EXPORT_LABEL_CGROUP 16u
#define EXPORT_LABEL_CONTAINER 32u
#define EXPORT_LABEL_UNIT 64u
#define EXPORT_LABEL_POD 128u
#define EXPORT_LABELS_CGROUP 240u
#define EXPORT_LABELS_ALL 255u

/*
 * The cgroup labels' values of rows, each label with at most max_values
 * distinct values (0: no limit): later values are "other", so that a
 * machine of many short-lived containers makes a bounded number of
 * series in a store that makes one of each label value.
 */
#define EXPORT_CGROUP_NR_LABELS 4
struct export_cgroup_labels {
	size_t max_values;
	struct string_table seen[EXPORT_CGROUP_NR_LABELS];
};

/* Label i's name: pprof's (cgroup, container_id, systemd_unit, pod_uid)
 * or, otlp, OpenTelemetry's attribute. */
const char *export_cgroup_label_name(int i, bool otlp);
/*
 * Row's values of the labels labels asks for, in values[i] (NULL: the
 * label is not asked for, or the row has no such thing), in bufs: 0 or
 * -ENOMEM.
 */
int export_cgroup_label_values(struct export_cgroup_labels *c, unsigned labels,
			       const struct dcp_sample_row *row,
			       const char *values[EXPORT_CGROUP_NR_LABELS],
			       char bufs[EXPORT_CGROUP_NR_LABELS][256]);
void export_cgroup_labels_free(struct export_cgroup_labels *c);

struct export_pprof_opts {
	unsigned labels; /* EXPORT_LABEL_* */
	/* pid and tid as string labels: the stores (Pyroscope, Parca) drop
	 * numeric ones */
	bool ids_as_strings;
	size_t max_label_values; /* of each cgroup label: export_cgroup_labels */
	size_t max_samples; /* samples in a piece, 0: no limit */
	size_t max_bytes; /* a piece's encoding before gzip, 0: no limit */
};

/* One piece: a whole gzipped profile of some of the rows. */
struct export_pprof_piece {
	const void *gz;
	size_t len;
	size_t samples;
	size_t raw_len; /* its encoding before gzip */
	size_t index; /* 0, 1, ... */
};

/* Handed each piece in turn: 0 to go on; else an error, which stops. */
typedef int (*export_pprof_piece_fn)(void *ctx,
				     const struct export_pprof_piece *piece);

/*
 * The profile as pprof pieces, each within the limits of o unless it is a
 * single row: the rows cut into consecutive parts, each part a complete
 * Profile with its own strings, mappings, functions and locations, and
 * the same sample types, time and period. Rows are never cut: every
 * sample is in exactly one piece. A profile without samples is one piece.
 * -ECANCELED when fn returned it (fn says why); else as export_pprof.
 */
int export_pprof_pieces(const struct profile_view *v,
			const struct export_pprof_opts *o,
			export_pprof_piece_fn fn, void *ctx,
			struct export_error *err);

/*
 * OpenTelemetry profiles (OTLP, opentelemetry-proto's profiles/
 * v1development): an ExportProfilesServiceRequest of one resource
 * (service.name, host.name, os.type, os.version and the caller's), one
 * scope (dcprof), and one Profile per sample type, over one dictionary
 * whose tables each begin with their zero entry: samples/count, its
 * period_type and period export_pprof's period (cpu/nanoseconds and
 * 1e9 / -F for cpu-clock), then off_cpu/nanoseconds with --off-cpu. Each
 * row is a Sample of one value in each Profile where its value is not 0,
 * its stack shared by the rows of the same stack; its attributes are
 * process.executable.name (comm), process.pid, thread.name and
 * thread.id; a mapping's build id is process.executable.build_id.gnu.
 */
struct export_otlp_opts {
	const char *service_name; /* NULL: "dcprof" */
	const char *const *attrs; /* more resource attributes, "key=value" */
	size_t nr_attrs;
	unsigned labels; /* EXPORT_LABEL_*: the sample attributes */
	bool ids_as_strings; /* process.pid and thread.id as strings */
	size_t max_label_values; /* of each cgroup label: export_cgroup_labels */
	size_t max_samples; /* samples in a Profile of a piece, 0: no limit */
	size_t max_bytes; /* a piece's encoding before gzip, 0: no limit */
};

/* The request, not compressed (protobuf binary), as export_pprof. */
int export_otlp(const struct profile_view *v, FILE *out,
		const struct export_otlp_opts *o, struct export_error *err);

/* The request in pieces within the limits of o, each gzipped, as
 * export_pprof_pieces cuts the rows. */
int export_otlp_pieces(const struct profile_view *v,
		       const struct export_otlp_opts *o,
		       export_pprof_piece_fn fn, void *ctx,
		       struct export_error *err);

/*
 * An answer's body read as an ExportProfilesServiceResponse (an empty
 * body is one): 0 with *rejected its partial success's rejected profiles
 * and msg its error message; -EBADMSG when it is not one.
 */
int export_otlp_answer(const void *body, size_t len, int64_t *rejected,
		       char *msg, size_t size);

/*
 * Folded stacks, one "comm;root;...;leaf count" line per distinct stack
 * (rows that differ only in pid are merged); with_comm false drops the
 * comm frame. value: what each line counts, samples or ns (--value).
 */
int export_folded(const struct profile_view *v, FILE *out, bool with_comm,
		  enum view_value value, struct export_error *err);

/*
 * Length of the valid UTF-8 sequence at p, n bytes left (0: none starts
 * there). Names from /proc and binaries are bytes; readers want UTF-8.
 */
size_t export_utf8_len(const unsigned char *p, size_t n);

/*
 * What a sample stands for. cpu-clock and task-clock count time: a
 * sample is the period in nanoseconds (1e9 / -F, or -c N), and the
 * profile carries cpu/nanoseconds. Another event counts events: with
 * -c N a sample is N of them (EVENT/count); with -F the kernel varies
 * the period to reach the frequency, so a sample is a sample and no
 * more is claimed. The event's name loses its :u or :k and has '_' for
 * '-': Pyroscope refuses a sample type with a '-' in it.
 */
struct export_sample_kind {
	bool time; /* cpu-clock or task-clock */
	char event[64]; /* "cycles", "page_faults", ... */
	int64_t period; /* ns of a time event, events with -c, else 0 */
};

void export_sample_kind_of(const struct dcp_profile_meta *m,
			   struct export_sample_kind *k);

/* Room in the array *p (of *cap elements of size sz) for n + 1: 0, or
 * -ENOMEM with the array as it was. */
int export_reserve(void *p, size_t *cap, size_t n, size_t sz);

struct string_table;
/* The index of s in t, added on first use, with each byte that is not
 * part of valid UTF-8 written as \xNN: protobuf decoders refuse strings
 * that are not UTF-8. -ENOMEM. */
int64_t export_intern(struct string_table *t, const char *s);

/*
 * A frame as ex[0..n) (ex has room for PROFILE_VIEW_EXPAND_MAX): the
 * calls inlined at its address and the function that holds them, the
 * function first; n, at least 1.
 */
int export_expand(const struct profile_view *v, const struct dcp_frame *f,
		  struct dcp_expanded_frame *ex);

/*
 * The name an object carries in a profile. Module names are bare
 * ("ext4"): bracketed like perf shows them, so that pprof does not look
 * for a file of that name in the current directory.
 */
const char *export_object_name(const struct profile_view *v, uint32_t cookie,
			       char *buf, size_t size);

/* Leave the message in err (when not NULL) and return -errnum. */
int export_fail(struct export_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
