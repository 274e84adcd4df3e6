/* SPDX-License-Identifier: MIT */
/*
 * Pushing the periods of record --continuous to a profile store: each
 * period, as gzipped pprof cut into pieces within the server's limits,
 * goes into a bounded spool on disk (spool.c) and a thread of its own
 * sends the spool oldest first (push.c), so that recording never waits
 * for the network:
 *   Pyroscope  POST {URL}/ingest?name=APP{labels}&from=&until=
 *              [&sampleRate=]&format=pprof (X-Scope-OrgID with a tenant)
 *   Parca      POST {URL}/api/profiles/writeraw, its gRPC gateway's JSON
 *              of ProfileStoreService/WriteRaw (--push parca+http://...)
 *   OTLP       POST {URL}/v1development/profiles, an OpenTelemetry
 *              profiles ExportProfilesServiceRequest, protobuf, gzipped
 *              (--push otlp+http://...): a collector's OTLP/HTTP
 *              receiver, Pyroscope's
 * What the server answers decides: taken (and only an answer of the API
 * counts: a 2xx HTML page does not), kept and retried with backoff (the
 * server down, busy, or refusing what may pass later), or set aside in
 * the spool's set-aside/ (what the server can never take), each counted
 * and said. Nothing here prints: the thread reports through the caller's
 * log function, the calls return a negative errno with a message in
 * struct push_error.
 */
#ifndef DCPROF_PUSH_H
#define DCPROF_PUSH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PUSH_DEFAULT_APP "dcprof"
#define PUSH_DEFAULT_SPOOL_MAX (64ull << 20)
/* Pyroscope's default limits (pkg/validation/limits.go) */
#define PUSH_DEFAULT_MAX_SAMPLES 16000 /* max-profile-stacktrace-samples */
/* the process's name, the container and the systemd unit: a series each
 * in the store, at most PUSH_MAX_LABEL_VALUES values of the cgroup labels
 * a request */
#define PUSH_DEFAULT_SAMPLE_LABELS \
	(EXPORT_LABEL_COMM | EXPORT_LABEL_CONTAINER | EXPORT_LABEL_UNIT)
#define PUSH_MAX_LABEL_VALUES 64
/* max-profile-size-bytes is 4 MiB, but a profile is also taken whole by
 * the ingestion rate limiter, whose burst is 2 MiB by default: a piece
 * larger than that is refused (429) forever */
#define PUSH_DEFAULT_MAX_BYTES (1ull << 20)
#define PUSH_MAX_SERIES_LABELS 30 /* max-label-names-per-series */
#define PUSH_MAX_LABEL_NAME 1024 /* max-length-label-name */
#define PUSH_MAX_LABEL_VALUE 2048 /* max-length-label-value */
/* the series labels that Pyroscope adds to a pushed profile: __name__,
 * __delta__, pyroscope_spy and service_name */
#define PUSH_SERVER_LABELS 4

enum push_kind {
	PUSH_PYROSCOPE, /* http(s)://: /ingest */
	PUSH_PARCA, /* parca+http(s)://: /api/profiles/writeraw */
	PUSH_OTLP, /* otlp+http(s)://: /v1development/profiles */
};

struct push_error {
	char msg[PATH_MAX + 256];
};

struct push_opts {
	/* http(s):// (Pyroscope), parca+http(s):// or otlp+http(s)://,
	 * with a path prefix or not */
	const char *url;
	/* the application name of name=APP{...}, OTLP's service.name */
	const char *app;
	/* "key=value" each; the host name and kernel release are added
	 * unless a label of the same key is given; OTLP: resource
	 * attributes. OTLP exports each period with app and labels, which
	 * must live until push_stop() */
	const char *const *labels;
	size_t nr_labels;
	/* the sample labels (EXPORT_LABEL_*): each of their values makes a
	 * series of its own in the store; 0: the default, comm */
	unsigned sample_labels;
	const char *tenant; /* X-Scope-OrgID, or NULL */
	size_t max_samples; /* a request's samples, 0: the default */
	uint64_t max_bytes; /* a request's pprof before gzip, 0: default */
	const char *token_file; /* a bearer token, or NULL */
	const char *basic_auth_file; /* "user:password", or NULL */
	const char *ca_file; /* https: the CAs to trust, NULL: the system's */
	const char *spool_dir; /* created 0700 when missing */
	uint64_t spool_max; /* bytes */
	/* what the thread has to say, one line without "dcprof: " */
	void (*log)(const char *line);
};

/* What was pushed and what was not, since push_start(). */
struct push_counts {
	uint64_t sent; /* requests the server took */
	uint64_t attempts_failed; /* tries that failed and were retried */
	uint64_t dropped_full; /* periods not spooled: the spool was full */
	uint64_t rejected; /* requests set aside: never acceptable */
	uint64_t split; /* periods cut in pieces for the server's limits */
	/* OTLP: profiles a taken request carried that the receiver said it
	 * dropped (its partial_success) */
	uint64_t profiles_rejected;
};

/* The checks made before recording starts (URL, labels, files). */
int push_check(const struct push_opts *o, struct push_error *err);

struct push;

/*
 * Start the sending thread on the spool (periods left there by an earlier
 * run go first). NULL with err filled on failure.
 */
struct push *push_start(const struct push_opts *o, struct push_error *err);

/*
 * Spool the period profile at path (a dcprof profile, exported as pprof
 * pieces here) for [from, until) (Unix seconds) sampled at hz (0: by -c).
 * -ENOSPC when the spool has no room for all its pieces: the period is
 * dropped from the push and counted.
 */
int push_enqueue(struct push *p, const char *path, uint64_t from,
		 uint64_t until, uint32_t hz, struct push_error *err);
/* How many pieces the last push_enqueue cut its period into. */
size_t push_last_pieces(const struct push *p);

/*
 * Send what the spool holds for at most grace_s seconds more, then stop
 * the thread (what is left stays in the spool for the next run), and
 * free. counts (may be NULL) receives the totals.
 */
void push_stop(struct push *p, double grace_s, struct push_counts *counts);

/* spool.c, for push.c: the oldest spooled period and its parts. */
struct push_item {
	/* FROM-UNTIL-HZ-PART.pb.gz, zero-padded: oldest first, then its
	 * pieces in order (FROM-UNTIL-HZ.pb.gz from before pieces: part 0);
	 * HZ 0: sampled every -c events, no sampleRate */
	char name[96];
	uint64_t from, until;
	uint32_t hz;
	uint32_t part;
	uint64_t size;
};
/* 1 with *item the oldest, 0 when the spool is empty, -errno. */
int push_spool_oldest(const char *dir, struct push_item *item);
/* The spool's total size in bytes (its period files only). */
uint64_t push_spool_size(const char *dir);
/* The subdirectory of the spool where what is set aside goes. */
#define PUSH_SET_ASIDE_DIR "set-aside"
#define PUSH_SET_ASIDE_MAX 256 /* files kept there, the oldest removed */
/* Move item into DIR/set-aside/ (created 0700), keeping at most
 * PUSH_SET_ASIDE_MAX files there: the number removed to make room
 * (>= 0), or -errno. */
int push_spool_set_aside(const char *dir, const struct push_item *item);
/*
 * Whether a refusal (HTTP status and the server's message) of a period
 * starting at from (Unix seconds) means the server can never take it, by
 * the servers' own rules; now: the time. Exposed for the tests.
 */
bool push_never_acceptable(int status, const char *message, uint64_t from,
			   uint64_t now);

/* The sample labels of a --push-sample-labels list ("comm,pid", "none"):
 * 0, or -EINVAL. */
int push_parse_sample_labels(const char *list, unsigned *out);

/* Write body as the spool file of item (temporary name, then a link
 * that never replaces a file: item->part is raised past names taken). */
int push_spool_write(const char *dir, struct push_item *item, const void *body,
		     size_t len, struct push_error *err);

#endif
