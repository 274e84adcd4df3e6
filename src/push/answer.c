// SPDX-License-Identifier: MIT
/*
 * What a server's answer means: taken, to try again, a refusal of the
 * configuration, or never acceptable, by the rules of the servers' own
 * code (grafana/pyroscope's ingest handler and pkg/validation; Parca's UI
 * fallback and WriteRaw gateway; OTLP/HTTP's, which Pyroscope's and the
 * collector's receivers follow).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "export.h"
#include "push_internal.h"

size_t push_keep_answer(char *b, size_t size, size_t n, void *ctx)
{
	struct push_answer *a = ctx;
	size_t len = size * n, room = PUSH_ANSWER_MAX - a->len;

	if (room) {
		memcpy(a->body + a->len, b, len < room ? len : room);
		a->len += len < room ? len : room;
		a->body[a->len] = 0;
	}
	return size * n;
}

/*
 * The server's message: the "message" of its JSON error, else the body's
 * first line, for one log line: at most ~300 bytes cut at a character's
 * start and marked "...", control characters as spaces, so that no answer
 * can break the line or drive the terminal.
 */
void push_answer_message(const struct push_answer *a, char *out, size_t size)
{
	const char *m = strstr(a->body, "\"message\":");
	size_t n = 0, max = size - 1 < 300 ? size - 1 : 300;

	if (m) {
		m += 10;
		while (*m == ' ')
			m++;
		if (*m == '"')
			m++;
	} else {
		m = a->body;
	}
	for (; *m && n < max; m++) {
		unsigned char c = (unsigned char)*m;

		if (c == '\n' || c == '\r' ||
		    (m > a->body && c == '"' && m[-1] != '\\'))
			break;
		out[n++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	if (*m && *m != '\n' && *m != '\r' && *m != '"' && max > 3) {
		/* cut: back to a character's first byte, room for "..." */
		n = n + 3 > max ? max - 3 : n;
		while (n && ((unsigned char)out[n] & 0xc0) == 0x80)
			n--;
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = 0;
}

/* A 2xx whose body is a web page: a UI fallback (Parca's answers every
 * unknown path so), not an ingest API. */
static bool html_answer(const struct push_answer *a)
{
	const char *b = a->body;

	while (*b == ' ' || *b == '\t' || *b == '\r' || *b == '\n')
		b++;
	return strncasecmp(a->type, "text/html", 9) == 0 || *b == '<';
}

/* A 2xx of an OTLP receiver: protobuf, an ExportProfilesServiceResponse
 * (an empty body is one; one longer than what is kept is taken for one,
 * its start having been read as protobuf). */
static bool otlp_answer(const struct push_answer *a)
{
	int64_t rejected;
	char msg[8];

	if (strncasecmp(a->type, "application/x-protobuf", 22) &&
	    strncasecmp(a->type, "application/protobuf", 20))
		return false;
	return a->len >= PUSH_ANSWER_MAX ||
	       !export_otlp_answer(a->body, a->len, &rejected, msg,
				   sizeof(msg));
}

/* Any of the needles in hay. */
static bool any_of(const char *hay, const char *const *needles)
{
	for (; *needles; needles++)
		if (strstr(hay, *needles))
			return true;
	return false;
}

bool push_never_acceptable(int status, const char *message, uint64_t from,
			   uint64_t now)
{
	/*
	 * Pyroscope answers 422 for everything its ingestion refuses, and
	 * for its own failures (an ingester down) too; what the profile
	 * itself can never pass is told by the message: pkg/validation's
	 * (ValidateProfile, ValidateLabels), pkg/pprof's, the parser's.
	 */
	static const char *const never[] = {
		"exceeds the size limit",
		"exceeds the samples count limit",
		"exceeds the sample labels limit",
		"payload size exceeds limit",
		"decompressed size exceeds",
		"label names; limit",
		"label name too long",
		"label value too long",
		"duplicate label name",
		"invalid labels",
		"invalid label name",
		"invalid metric name",
		"service name is not provided",
		"at least one label pair is required",
		"nil profile",
		"empty profile",
		"nil sample",
		"location id is 0",
		"function id is 0",
		"sample value length mismatch",
		"string index out of range",
		"index string out of range",
		"string 0 should be empty",
		"sample type contains -",
		"invalid utf8",
		"failed to parse",
		"unknown profile type",
		"gzip",
		"proto:",
		"unexpected EOF",
		"invalid profile",
		"missing __name__",
		NULL,
	};

	/* the request itself: Pyroscope's name=, Parca's InvalidArgument;
	 * 413: a body over the server's limit, as it will stay */
	if (status == 400 || status == 413)
		return true;
	if (status == 422 || status == 500) {
		/* too old only grows older; too new (a clock ahead) passes
		 * later: Pyroscope's window is now-1h..now+10m by default */
		if (strstr(message, "outside of ingestion window"))
			return from + 600 < now;
		/* Parca's gateway: a plain error of WriteRaw is a 500, most
		 * of them its storage's; these two are the profile's */
		if (status == 500)
			return strstr(message, "invalid profile type") ||
			       strstr(message, "decompressing profile");
		return any_of(message, never);
	}
	/* other 4xx but those of the configuration and of load */
	return status >= 400 && status < 500 && status != 401 &&
	       status != 403 && status != 404 && status != 405 &&
	       status != 408 && status != 409 && status != 425 && status != 429;
}

enum push_verdict push_classify(enum push_kind kind,
				const struct push_answer *a,
				const struct push_item *item)
{
	char msg[512];

	if (a->status < 0)
		return PUSH_RETRY;
	if (a->status >= 200 && a->status < 300) {
		if (html_answer(a))
			return PUSH_CONFIG;
		/* Parca's gateway answers {} as application/json */
		if (kind == PUSH_PARCA &&
		    strncasecmp(a->type, "application/json", 16))
			return PUSH_CONFIG;
		if (kind == PUSH_OTLP && !otlp_answer(a))
			return PUSH_CONFIG;
		return PUSH_TAKEN;
	}
	if (a->status == 401 || a->status == 403 || a->status == 404 ||
	    a->status == 405)
		return PUSH_CONFIG;
	/* OTLP/HTTP: a receiver that does not take protobuf */
	if (kind == PUSH_OTLP && a->status == 415)
		return PUSH_CONFIG;
	push_answer_message(a, msg, sizeof(msg));
	if (push_never_acceptable((int)a->status, msg, item->from,
				  (uint64_t)time(NULL)))
		return PUSH_NEVER;
	return PUSH_RETRY;
}
