/* SPDX-License-Identifier: MIT */
/*
 * What the files of src/push share and no one else sees: the checks and
 * labels of the options (check.c), and what a server's answer means
 * (answer.c), for the thread of push.c.
 */
#ifndef DCPROF_PUSH_INTERNAL_H
#define DCPROF_PUSH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "push.h"

/* what is kept of an answer's body, for the log and the classification */
#define PUSH_ANSWER_MAX 1024

int push_fail(struct push_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A secret from a file: its first line, never from the command line. */
int push_read_secret(const char *path, const char *what, char **out,
		     struct push_error *err);
/* http(s):// is Pyroscope; parca+http(s):// Parca, otlp+http(s):// an
 * OTLP receiver, *rest the URL */
enum push_kind push_kind_of(const char *url, const char **rest);
/* The sample labels pushed (EXPORT_LABEL_* and maybe the none bit). */
unsigned push_sample_labels_of(const struct push_opts *o);
/*
 * The series' labels: Pyroscope's name=APP{hostname=...,k=v} URL-encoded,
 * and Parca's WriteRaw LabelSet as JSON with APP its __name__ (both
 * malloc'd; the first curl_free'd).
 */
int push_build_labels(const struct push_opts *o, char **name_escaped,
		      char **parca_json, struct push_error *err);

/*
 * The period of a spooled piece as people read it: its start in UTC,
 * "2026-01-02T03:04:05Z" (the form --since takes), with "(request N)"
 * for a period's later pieces; buf returned.
 */
const char *push_period_name(const struct push_item *item, char *buf,
			     size_t size);

/* What the server answered: its status, content type and body's start. */
struct push_answer {
	long status; /* -1: no answer (why says why) */
	char type[128];
	char body[PUSH_ANSWER_MAX + 1];
	size_t len;
};

/* libcurl's write function: the answer's start into a push_answer. */
size_t push_keep_answer(char *b, size_t size, size_t n, void *ctx);
/* The server's message: the "message" of its JSON error, else the body's
 * first line; one line of at most ~300 bytes, cut ones ending "...",
 * control characters as spaces. */
void push_answer_message(const struct push_answer *a, char *out, size_t size);

enum push_verdict {
	PUSH_TAKEN,
	PUSH_RETRY, /* down, busy, or refused what may pass later */
	PUSH_CONFIG, /* auth, tenant, not the API: kept until it is fixed */
	PUSH_NEVER, /* set aside */
};

/* What an answer to the piece item means, by the server's rules. */
enum push_verdict push_classify(enum push_kind kind,
				const struct push_answer *a,
				const struct push_item *item);

#endif
