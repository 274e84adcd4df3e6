// SPDX-License-Identifier: MIT
/*
 * The push thread: the spool sent oldest first to Pyroscope's /ingest,
 * Parca's WriteRaw or an OTLP receiver's /v1development/profiles with
 * libcurl (TLS, bearer or basic auth, a tenant), each answer classified
 * as the server's code gives it (push_classify); what goes in the spool
 * (each period exported as pprof or OTLP pieces within the server's
 * limits) and its bound; the checks made before recording.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "curl_load.h"
#include "export.h"
#include "profile_view.h"
#include "push_internal.h"

#define BACKOFF_MAX_S 8
/* a server that refuses the configuration (auth, tenant, not the API) is
 * asked again this often, the periods kept */
#define BACKOFF_CONFIG_S 30

struct push {
	enum push_kind kind;
	char *url; /* http(s)://..., without a trailing '/' */
	char *name_escaped; /* APP{k=v,...}, URL-encoded */
	char *parca_labels; /* Parca: the JSON of the series' labels */
	char *auth_header; /* "Authorization: Bearer ..." or NULL */
	char *tenant_header; /* "X-Scope-OrgID: ..." or NULL */
	struct export_pprof_opts export;
	struct export_otlp_opts otlp; /* its labels: the caller's push_opts' */
	size_t last_pieces;
	/* the configuration refusal last said (HTTP status, or 1 for a
	 * 2xx that is not the API's), 0: none since the last success */
	long config_said;
	char *userpwd; /* "user:password" or NULL */
	char *ca_file; /* CURLOPT_CAINFO, or NULL: the system's CAs */
	char *spool_dir;
	uint64_t spool_max;
	void (*log)(const char *line);

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	struct timespec stop_deadline; /* CLOCK_MONOTONIC */
	struct push_counts counts;
};

static void say(struct push *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct push *p, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (p->log)
		p->log(line);
}

static bool past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* A transfer still running when the grace after a stop is over ends. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	struct push *p = ctx;
	bool stop;

	pthread_mutex_lock(&p->lock);
	stop = p->stopping && past(&p->stop_deadline);
	pthread_mutex_unlock(&p->lock);
	return stop;
}

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Parca: WriteRawRequest as its gRPC gateway's JSON, the profile in
 * base64 (protobuf's JSON of bytes). */
static char *parca_body(const struct push *p, const char *gz, size_t len,
			size_t *out_len)
{
	static const char head[] = "{\"series\":[{\"labels\":";
	static const char mid[] = ",\"samples\":[{\"rawProfile\":\"";
	static const char tail[] = "\"}]}]}";
	size_t ll = strlen(p->parca_labels);
	size_t n = sizeof(head) - 1 + ll + sizeof(mid) - 1 +
		   4 * ((len + 2) / 3) + sizeof(tail) - 1;
	char *body = malloc(n + 1), *o;
	const unsigned char *in = (const unsigned char *)gz;

	if (!body)
		return NULL;
	o = body;
	o = mempcpy(o, head, sizeof(head) - 1);
	o = mempcpy(o, p->parca_labels, ll);
	o = mempcpy(o, mid, sizeof(mid) - 1);
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	o = mempcpy(o, tail, sizeof(tail) - 1);
	*o = 0;
	*out_len = (size_t)(o - body);
	return body;
}

/* POST one spooled piece; the answer, or status -1 with why. */
static void post(struct push *p, const struct push_item *item, const char *gz,
		 size_t gz_len, struct push_answer *ans, char *why,
		 size_t why_len)
{
	char url[PATH_MAX + 8192], errbuf[CURL_ERROR_SIZE] = "", rate[32] = "";
	struct curl_slist *headers = NULL;
	char *json = NULL, *type = NULL;
	const char *body = gz;
	size_t len = gz_len;
	CURLcode rc;
	CURL *c = push_curl.easy_init();

	memset(ans, 0, sizeof(*ans));
	ans->status = -1;
	if (!c) {
		snprintf(why, why_len, "cannot start libcurl");
		return;
	}
	if (p->kind == PUSH_OTLP) {
		snprintf(url, sizeof(url), "%s/v1development/profiles", p->url);
		headers = push_curl.slist_append(
			headers, "Content-Type: application/x-protobuf");
		headers = push_curl.slist_append(headers,
						 "Content-Encoding: gzip");
	} else if (p->kind == PUSH_PARCA) {
		json = parca_body(p, gz, gz_len, &len);
		if (!json) {
			snprintf(why, why_len, "out of memory");
			push_curl.easy_cleanup(c);
			return;
		}
		body = json;
		snprintf(url, sizeof(url), "%s/api/profiles/writeraw", p->url);
		headers = push_curl.slist_append(
			headers, "Content-Type: application/json");
	} else {
		/* sampleRate is the -F rate; a period sampled every -c events
		 * has none (the profile's period says it) */
		if (item->hz)
			snprintf(rate, sizeof(rate), "&sampleRate=%u",
				 item->hz);
		snprintf(
			url, sizeof(url),
			"%s/ingest?name=%s&from=%llu&until=%llu%s&format=pprof",
			p->url, p->name_escaped, (unsigned long long)item->from,
			(unsigned long long)item->until, rate);
		headers = push_curl.slist_append(
			headers, "Content-Type: application/octet-stream");
	}
	if (p->auth_header)
		headers = push_curl.slist_append(headers, p->auth_header);
	if (p->tenant_header)
		headers = push_curl.slist_append(headers, p->tenant_header);
	push_curl.easy_setopt(c, CURLOPT_URL, url);
	push_curl.easy_setopt(c, CURLOPT_POST, 1L);
	push_curl.easy_setopt(c, CURLOPT_POSTFIELDS, body);
	push_curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	push_curl.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	if (p->userpwd)
		push_curl.easy_setopt(c, CURLOPT_USERPWD, p->userpwd);
	if (p->ca_file)
		push_curl.easy_setopt(c, CURLOPT_CAINFO, p->ca_file);
	push_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	push_curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
	push_curl.easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	push_curl.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	push_curl.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	push_curl.easy_setopt(c, CURLOPT_XFERINFODATA, p);
	push_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, push_keep_answer);
	push_curl.easy_setopt(c, CURLOPT_WRITEDATA, ans);
	push_curl.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	push_curl.easy_setopt(c, CURLOPT_USERAGENT, "dcprof/" DCPROF_VERSION);
	rc = push_curl.easy_perform(c);
	if (rc == CURLE_OK) {
		push_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ans->status);
		if (push_curl.easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type) ==
			    CURLE_OK &&
		    type)
			snprintf(ans->type, sizeof(ans->type), "%s", type);
		/* the log quotes it: no control character of the server's */
		for (char *t = ans->type; *t; t++)
			if ((unsigned char)*t < 0x20 || *t == 0x7f)
				*t = ' ';
	} else {
		ans->status = -1;
		snprintf(why, why_len, "%s",
			 errbuf[0] ? errbuf : push_curl.easy_strerror(rc));
	}
	push_curl.slist_free_all(headers);
	push_curl.easy_cleanup(c);
	free(json);
}

static int read_item(const struct push *p, const struct push_item *item,
		     char **body, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", p->spool_dir, item->name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !(*body = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, *body, (size_t)st.st_size);
	close(fd);
	if (n != st.st_size) {
		free(*body);
		return -EIO;
	}
	*len = (size_t)n;
	return 0;
}

static void drop_item(struct push *p, const struct push_item *item)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", p->spool_dir, item->name);
	unlink(path);
}

/* The configuration refusal, said once until a piece is taken again. */
static void say_config(struct push *p, const struct push_item *item,
		       const struct push_answer *a)
{
	long key = a->status >= 200 && a->status < 300 ? 1 : a->status;
	char msg[512], period[64];

	if (p->config_said == key)
		return;
	p->config_said = key;
	push_answer_message(a, msg, sizeof(msg));
	if (key == 1 && p->kind == PUSH_OTLP)
		say(p,
		    "push: the server answered HTTP %ld with %s, not an OTLP receiver's answer (application/x-protobuf, an ExportProfilesServiceResponse): it is no OTLP/HTTP profiles endpoint: nothing counted as sent, the periods stay in the spool, asked again every %d s",
		    a->status, a->type[0] ? a->type : "no content type",
		    BACKOFF_CONFIG_S);
	else if (key == 1)
		say(p,
		    "push: the server answered HTTP %ld with %s, not the %s API's answer: it is no %s endpoint (Parca's UI answers every unknown path so; for Parca, --push parca+http://HOST:PORT): nothing counted as sent, the periods stay in the spool, asked again every %d s",
		    a->status, a->type[0] ? a->type : "a page",
		    p->kind == PUSH_PARCA ? "WriteRaw" : "/ingest",
		    p->kind == PUSH_PARCA ? "Parca WriteRaw" :
					    "Pyroscope /ingest",
		    BACKOFF_CONFIG_S);
	else
		say(p,
		    "push: the server refused period %s with HTTP %ld%s%s%s: the periods stay in the spool, asked again every %d s",
		    push_period_name(item, period, sizeof(period)), a->status,
		    msg[0] ? " (" : "", msg, msg[0] ? ")" : "",
		    BACKOFF_CONFIG_S);
	if (a->status == 401 && !p->tenant_header)
		say(p,
		    "push: a multi-tenant Pyroscope wants its tenant: --push-tenant ID (X-Scope-OrgID)");
}

/* OTLP: the profiles of a taken request that the receiver dropped (its
 * partial_success), counted and said; the request is not sent again, as
 * OTLP/HTTP asks. */
static void otlp_partial(struct push *p, const struct push_item *item,
			 const struct push_answer *a)
{
	int64_t rejected = 0;
	char msg[512], period[64];

	if (export_otlp_answer(a->body, a->len, &rejected, msg, sizeof(msg)) ||
	    rejected <= 0)
		return;
	p->counts.profiles_rejected += (uint64_t)rejected;
	say(p,
	    "push: the receiver took period %s but dropped %lld of its profiles%s%s%s (%llu dropped so far)",
	    push_period_name(item, period, sizeof(period)), (long long)rejected,
	    msg[0] ? " (" : "", msg, msg[0] ? ")" : "",
	    (unsigned long long)p->counts.profiles_rejected);
}

/* Wait s seconds or until stopped; called and returns with the lock. */
static void wait_locked(struct push *p, unsigned s)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += s;
	while (!p->stopping &&
	       pthread_cond_timedwait(&p->wake, &p->lock, &t) != ETIMEDOUT)
		;
}

/*
 * The thread: the oldest spooled piece until the server takes it, or it is
 * set aside as never acceptable (counted, said, kept in set-aside/), so
 * that the pieces arrive in order and each once. A failure that may pass
 * later (the server down or busy, 5xx, 408, 429, a 422 that is not the
 * profile's fault) is retried 1, 2, 4 up to BACKOFF_MAX_S seconds apart;
 * one of the configuration (401, 403, 404, 405, a 2xx that is not the
 * API's) every BACKOFF_CONFIG_S seconds, said once.
 */
static void *push_thread(void *arg)
{
	struct push *p = arg;
	unsigned backoff = 0;
	uint64_t failed_run = 0;

	for (;;) {
		struct push_item item;
		struct push_answer ans;
		char why[CURL_ERROR_SIZE + 600] = "", *body = NULL;
		char msg[512], period[64];
		size_t len = 0;
		enum push_verdict v;
		int have;

		pthread_mutex_lock(&p->lock);
		have = push_spool_oldest(p->spool_dir, &item);
		while (!p->stopping && have <= 0) {
			struct timespec t;

			/* a period spooled wakes it; a second at most */
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_sec += 1;
			pthread_cond_timedwait(&p->wake, &p->lock, &t);
			have = push_spool_oldest(p->spool_dir, &item);
		}
		if (p->stopping && (have <= 0 || past(&p->stop_deadline))) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		pthread_mutex_unlock(&p->lock);

		if (read_item(p, &item, &body, &len)) {
			drop_item(p, &item); /* unreadable: never sendable */
			continue;
		}
		post(p, &item, body, len, &ans, why, sizeof(why));
		free(body);
		v = push_classify(p->kind, &ans, &item);
		pthread_mutex_lock(&p->lock);
		if (v == PUSH_TAKEN) {
			drop_item(p, &item);
			p->counts.sent++;
			if (p->kind == PUSH_OTLP)
				otlp_partial(p, &item, &ans);
			if (failed_run)
				say(p,
				    "push: sent again after %llu failed tries",
				    (unsigned long long)failed_run);
			failed_run = 0;
			backoff = 0;
			p->config_said = 0;
		} else if (v == PUSH_NEVER) {
			int removed = push_spool_set_aside(p->spool_dir, &item);

			if (removed < 0)
				drop_item(p, &item);
			p->counts.rejected++;
			push_answer_message(&ans, msg, sizeof(msg));
			say(p,
			    "push: the server refused period %s with HTTP %ld (%s): it can never take it, %s (%llu set aside so far)",
			    push_period_name(&item, period, sizeof(period)),
			    ans.status, msg,
			    removed < 0 ? "dropped" :
					  "set aside in " PUSH_SET_ASIDE_DIR
					  "/",
			    (unsigned long long)p->counts.rejected);
			if (removed > 0)
				say(p,
				    "push: removed the %d oldest of " PUSH_SET_ASIDE_DIR
				    "/ to keep %d there",
				    removed, PUSH_SET_ASIDE_MAX);
		} else if (v == PUSH_CONFIG) {
			p->counts.attempts_failed++;
			failed_run++;
			say_config(p, &item, &ans);
			if (p->stopping) {
				pthread_mutex_unlock(&p->lock);
				break;
			}
			wait_locked(p, BACKOFF_CONFIG_S);
		} else {
			p->counts.attempts_failed++;
			failed_run++;
			backoff = backoff ? backoff * 2 : 1;
			if (backoff > BACKOFF_MAX_S)
				backoff = BACKOFF_MAX_S;
			if (ans.status >= 0) {
				push_answer_message(&ans, msg, sizeof(msg));
				snprintf(why, sizeof(why), "HTTP %ld%s%s%s",
					 ans.status, msg[0] ? " (" : "", msg,
					 msg[0] ? ")" : "");
			}
			say(p,
			    "push: cannot send period %s: %s; retrying in %u s",
			    push_period_name(&item, period, sizeof(period)),
			    why, backoff);
			if (p->stopping) {
				pthread_mutex_unlock(&p->lock);
				break;
			}
			wait_locked(p, backoff);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

static void push_free(struct push *p)
{
	if (!p)
		return;
	free(p->url);
	push_curl.free(p->name_escaped);
	free(p->parca_labels);
	free(p->auth_header);
	free(p->tenant_header);
	free(p->userpwd);
	free(p->ca_file);
	free(p->spool_dir);
	free(p);
}

struct push *push_start(const struct push_opts *o, struct push_error *err)
{
	struct push *p;
	char *token = NULL;
	const char *url;
	sigset_t all, old;
	struct stat st;
	size_t len;
	int ret;

	ret = push_check(o, err);
	if (ret)
		return NULL;
	if (mkdir(o->spool_dir, 0700) < 0 && errno != EEXIST) {
		push_fail(err, errno, "cannot create the push spool '%s': %s",
			  o->spool_dir, strerror(errno));
		return NULL;
	}
	/* never a link planted in its place */
	if (lstat(o->spool_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		push_fail(err, ENOTDIR,
			  "the push spool '%s' is not a directory",
			  o->spool_dir);
		return NULL;
	}
	if (push_curl.global_init(CURL_GLOBAL_DEFAULT)) {
		push_fail(err, EIO, "cannot start libcurl");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p)
		p->kind = push_kind_of(o->url, &url);
	if (!p || !(p->url = strdup(url)) ||
	    !(p->spool_dir = strdup(o->spool_dir))) {
		push_free(p);
		push_fail(err, ENOMEM, "out of memory");
		return NULL;
	}
	len = strlen(p->url);
	while (len && p->url[len - 1] == '/')
		p->url[--len] = 0;
	p->spool_max = o->spool_max ? o->spool_max : PUSH_DEFAULT_SPOOL_MAX;
	p->log = o->log;
	p->export.labels = push_sample_labels_of(o) & EXPORT_LABELS_ALL;
	p->export.ids_as_strings = true;
	p->export.max_label_values = PUSH_MAX_LABEL_VALUES;
	p->export.max_samples =
		o->max_samples ? o->max_samples : PUSH_DEFAULT_MAX_SAMPLES;
	p->export.max_bytes = o->max_bytes ? (size_t)o->max_bytes :
					     (size_t)PUSH_DEFAULT_MAX_BYTES;
	p->otlp = (struct export_otlp_opts){
		.service_name = o->app ? o->app : PUSH_DEFAULT_APP,
		.attrs = o->labels,
		.nr_attrs = o->nr_labels,
		.labels = p->export.labels,
		.ids_as_strings = true,
		.max_label_values = PUSH_MAX_LABEL_VALUES,
		.max_samples = p->export.max_samples,
		.max_bytes = p->export.max_bytes,
	};
	ret = push_build_labels(o, &p->name_escaped, &p->parca_labels, err);
	if (!ret && o->tenant &&
	    asprintf(&p->tenant_header, "X-Scope-OrgID: %s", o->tenant) < 0) {
		p->tenant_header = NULL;
		ret = push_fail(err, ENOMEM, "out of memory");
	}
	if (!ret && o->token_file) {
		ret = push_read_secret(o->token_file, "token", &token, err);
		if (!ret && asprintf(&p->auth_header,
				     "Authorization: Bearer %s", token) < 0) {
			p->auth_header = NULL;
			ret = push_fail(err, ENOMEM, "out of memory");
		}
		free(token);
	}
	if (!ret && o->basic_auth_file)
		ret = push_read_secret(o->basic_auth_file, "basic auth",
				       &p->userpwd, err);
	if (!ret && o->ca_file && !(p->ca_file = strdup(o->ca_file)))
		ret = push_fail(err, ENOMEM, "out of memory");
	if (ret) {
		push_free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	/* the recorder's signals are the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&p->thread, NULL, push_thread, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		push_fail(err, ret, "cannot start the push thread: %s",
			  strerror(ret));
		push_free(p);
		return NULL;
	}
	return p;
}

/* The pieces of a period, gathered before any is spooled. */
struct gathered {
	struct {
		void *gz;
		size_t len;
	} * v;
	size_t n, cap;
	uint64_t total;
};

static int gather(void *ctx, const struct export_pprof_piece *piece)
{
	struct gathered *g = ctx;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 4;
		void *v = realloc(g->v, cap * sizeof(*g->v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n].gz = malloc(piece->len ? piece->len : 1);
	if (!g->v[g->n].gz)
		return -ENOMEM;
	memcpy(g->v[g->n].gz, piece->gz, piece->len);
	g->v[g->n].len = piece->len;
	g->total += piece->len;
	g->n++;
	return 0;
}

static void gathered_free(struct gathered *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].gz);
	free(g->v);
}

int push_enqueue(struct push *p, const char *path, uint64_t from,
		 uint64_t until, uint32_t hz, struct push_error *err)
{
	struct push_item item = { .from = from, .until = until, .hz = hz };
	struct export_error xerr;
	struct profile_view v;
	struct gathered g = { 0 };
	int ret;

	if (profile_view_open(&v, path, false) < 0)
		return push_fail(err, EIO, "cannot read '%s' to push it: %s",
				 path, dcp_last_error());
	/* in pieces within the server's limits: the period whole, never a
	 * part of it refused for its size */
	ret = p->kind == PUSH_OTLP ?
		      export_otlp_pieces(&v, &p->otlp, gather, &g, &xerr) :
		      export_pprof_pieces(&v, &p->export, gather, &g, &xerr);
	profile_view_close(&v);
	if (ret) {
		gathered_free(&g);
		return push_fail(err, -ret, "cannot export '%s' to push it: %s",
				 path,
				 ret == -ENOMEM ? "out of memory" : xerr.msg);
	}
	pthread_mutex_lock(&p->lock);
	p->last_pieces = g.n;
	if (push_spool_size(p->spool_dir) + g.total > p->spool_max) {
		char period[64];

		p->counts.dropped_full++;
		ret = push_fail(
			err, ENOSPC,
			"the push spool '%s' is full (%llu bytes at most): period %s dropped from the push (%llu so far)",
			p->spool_dir, (unsigned long long)p->spool_max,
			push_period_name(&item, period, sizeof(period)),
			(unsigned long long)p->counts.dropped_full);
	} else {
		if (g.n > 1)
			p->counts.split++;
		/* each piece after the last: push_spool_write moves a
		 * piece past a name taken */
		for (size_t i = 0; !ret && i < g.n; i++, item.part++)
			ret = push_spool_write(p->spool_dir, &item, g.v[i].gz,
					       g.v[i].len, err);
		if (!ret)
			pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
	gathered_free(&g);
	return ret;
}

size_t push_last_pieces(const struct push *p)
{
	return p->last_pieces;
}

void push_stop(struct push *p, double grace_s, struct push_counts *counts)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	clock_gettime(CLOCK_MONOTONIC, &p->stop_deadline);
	p->stop_deadline.tv_sec += (time_t)grace_s;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (counts)
		*counts = p->counts;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	push_free(p);
	push_curl.global_cleanup();
}
