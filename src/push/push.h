/* SPDX-License-Identifier: MIT */
/*
 * Pushing the periods of record --continuous to a Pyroscope-compatible
 * ingest endpoint: each period, as gzipped pprof, goes into a bounded
 * spool on disk (spool.c) and a thread of its own sends the spool oldest
 * first (push.c): POST {URL}/ingest?name=APP{labels}&from=&until=
 * &sampleRate=&format=pprof, retried with backoff while the server is
 * down, so that recording never waits for the network. Nothing here
 * prints: the thread reports through the caller's log function, the
 * calls return a negative errno with a message in struct push_error.
 */
#ifndef DCPROF_PUSH_H
#define DCPROF_PUSH_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define PUSH_DEFAULT_APP "dcprof"
#define PUSH_DEFAULT_SPOOL_MAX (64ull << 20)
#define PUSH_MAX_LABELS 32

struct push_error {
	char msg[PATH_MAX + 256];
};

struct push_opts {
	const char *url; /* http:// or https://, with a path prefix or not */
	const char *app; /* the application name of name=APP{...} */
	/* "key=value" each; the host name and kernel release are added
	 * unless a label of the same key is given */
	const char *const *labels;
	size_t nr_labels;
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
	uint64_t sent; /* periods the server took (2xx) */
	uint64_t attempts_failed; /* tries that failed and were retried */
	uint64_t dropped_full; /* periods not spooled: the spool was full */
	uint64_t rejected; /* periods the server refused for good (4xx) */
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
 * here) for [from, until) (Unix seconds) sampled at hz. -ENOSPC when the
 * spool has no room: the period is dropped from the push and counted.
 */
int push_enqueue(struct push *p, const char *path, uint64_t from,
		 uint64_t until, uint32_t hz, struct push_error *err);

/*
 * Send what the spool holds for at most grace_s seconds more, then stop
 * the thread (what is left stays in the spool for the next run), and
 * free. counts (may be NULL) receives the totals.
 */
void push_stop(struct push *p, double grace_s, struct push_counts *counts);

/* spool.c, for push.c: the oldest spooled period and its parts. */
struct push_item {
	char name[96]; /* FROM-UNTIL-HZ.pb.gz, zero-padded: oldest first */
	uint64_t from, until;
	uint32_t hz;
	uint64_t size;
};
/* 1 with *item the oldest, 0 when the spool is empty, -errno. */
int push_spool_oldest(const char *dir, struct push_item *item);
/* The spool's total size in bytes (its period files only). */
uint64_t push_spool_size(const char *dir);
/* Write body as the spool file of item (temporary name, then rename). */
int push_spool_write(const char *dir, struct push_item *item, const void *body,
		     size_t len, struct push_error *err);

#endif
