// SPDX-License-Identifier: MIT
/*
 * The push thread: the spool sent oldest first to a Pyroscope-compatible
 * ingest endpoint with libcurl (TLS, bearer or basic auth), retried with
 * backoff while the server is down; what goes in the spool (each period
 * exported as pprof) and its bound; the checks made before recording.
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
#include "push.h"

#define BACKOFF_MAX_S 8

struct push {
	char *url; /* without a trailing '/' */
	char *name_escaped; /* APP{k=v,...}, URL-encoded */
	char *auth_header; /* "Authorization: Bearer ..." or NULL */
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

static int fail(struct push_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct push_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -errnum;
}

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

/* A secret from a file: its first line, never from the command line. */
static int read_secret(const char *path, const char *what, char **out,
		       struct push_error *err)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail(err, errno, "cannot read the %s file '%s': %s",
			    what, path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return fail(err, errno, "cannot read the %s file '%s': %s",
			    what, path, strerror(errno));
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	if (!buf[0])
		return fail(err, EINVAL, "the %s file '%s' is empty", what,
			    path);
	*out = strdup(buf);
	return *out ? 0 : fail(err, ENOMEM, "out of memory");
}

static bool label_ok(const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv || !eq[1] ||
	    !(isalpha((unsigned char)kv[0]) || kv[0] == '_'))
		return false;
	for (const char *c = kv; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	for (const char *c = eq + 1; *c; c++)
		if ((unsigned char)*c < 0x20 || strchr("{},=\"\\", *c))
			return false;
	return true;
}

int push_check(const struct push_opts *o, struct push_error *err)
{
	char *scheme = NULL, *host = NULL, *secret = NULL;
	int ret = push_curl_load(err);
	CURLU *u;

	if (ret)
		return ret;
	u = push_curl.url();
	if (!u)
		return fail(err, ENOMEM, "out of memory");
	if (push_curl.url_set(u, CURLUPART_URL, o->url, 0) ||
	    push_curl.url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    push_curl.url_get(u, CURLUPART_HOST, &host, 0) ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https")) || !host[0] ||
	    strchr(o->url, '?') || strchr(o->url, '#'))
		ret = fail(
			err, EINVAL,
			"invalid --push URL '%s': expected http(s)://HOST[:PORT][/PATH]",
			o->url);
	push_curl.free(scheme);
	push_curl.free(host);
	push_curl.url_cleanup(u);
	for (size_t i = 0; !ret && i < o->nr_labels; i++)
		if (!label_ok(o->labels[i]))
			ret = fail(
				err, EINVAL,
				"invalid --push-label '%s': expected KEY=VALUE (KEY of letters, digits and _, VALUE without {},=\" or \\)",
				o->labels[i]);
	if (!ret && o->nr_labels > PUSH_MAX_LABELS)
		ret = fail(err, EINVAL, "at most %d --push-label",
			   PUSH_MAX_LABELS);
	for (const char *c = o->app; !ret && c && *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
			ret = fail(
				err, EINVAL,
				"invalid --push-app '%s': letters, digits, '_', '.' and '-' only",
				o->app);
	if (!ret && o->app && !o->app[0])
		ret = fail(err, EINVAL, "the --push-app name is empty");
	if (!ret && o->token_file)
		ret = read_secret(o->token_file, "token", &secret, err);
	free(secret);
	secret = NULL;
	if (!ret && o->basic_auth_file) {
		ret = read_secret(o->basic_auth_file, "basic auth", &secret,
				  err);
		if (!ret && !strchr(secret, ':'))
			ret = fail(
				err, EINVAL,
				"the basic auth file '%s' holds no USER:PASSWORD line",
				o->basic_auth_file);
	}
	free(secret);
	if (!ret && o->ca_file && access(o->ca_file, R_OK) < 0)
		ret = fail(err, errno, "cannot read the CA file '%s': %s",
			   o->ca_file, strerror(errno));
	return ret;
}

/* APP{hostname=...,kernel_release=...,k=v}: given labels win. */
static int build_name(struct push *p, const struct push_opts *o,
		      struct push_error *err)
{
	struct utsname uts;
	char name[4096];
	size_t len;
	bool host = false, kernel = false;
	CURL *c;

	for (size_t i = 0; i < o->nr_labels; i++) {
		host |= !strncmp(o->labels[i], "hostname=", 9);
		kernel |= !strncmp(o->labels[i], "kernel_release=", 15);
	}
	if (uname(&uts) < 0)
		memset(&uts, 0, sizeof(uts));
	len = (size_t)snprintf(name, sizeof(name), "%s{",
			       o->app ? o->app : PUSH_DEFAULT_APP);
	if (!host && uts.nodename[0] && len < sizeof(name))
		len += (size_t)snprintf(name + len, sizeof(name) - len,
					"hostname=%s,", uts.nodename);
	if (!kernel && uts.release[0] && len < sizeof(name))
		len += (size_t)snprintf(name + len, sizeof(name) - len,
					"kernel_release=%s,", uts.release);
	for (size_t i = 0; i < o->nr_labels && len < sizeof(name); i++)
		len += (size_t)snprintf(name + len, sizeof(name) - len, "%s,",
					o->labels[i]);
	if (len >= sizeof(name))
		return fail(err, E2BIG, "the push labels are too long");
	if (name[len - 1] == ',')
		len--;
	snprintf(name + len, sizeof(name) - len, "}");
	c = push_curl.easy_init();
	if (!c)
		return fail(err, ENOMEM, "cannot start libcurl");
	p->name_escaped = push_curl.easy_escape(c, name, 0);
	push_curl.easy_cleanup(c);
	return p->name_escaped ? 0 : fail(err, ENOMEM, "out of memory");
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

static size_t discard(char *b, size_t size, size_t n, void *ctx)
{
	return size * n;
}

/* POST one spooled period: the HTTP status, or -1 with why. */
static long post(struct push *p, const struct push_item *item, const char *body,
		 size_t len, char *why, size_t why_len)
{
	char url[PATH_MAX + 8192], errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL;
	long status = -1;
	CURLcode rc;
	CURL *c = push_curl.easy_init();

	if (!c) {
		snprintf(why, why_len, "cannot start libcurl");
		return -1;
	}
	snprintf(
		url, sizeof(url),
		"%s/ingest?name=%s&from=%llu&until=%llu&sampleRate=%u&format=pprof",
		p->url, p->name_escaped, (unsigned long long)item->from,
		(unsigned long long)item->until, item->hz);
	headers = push_curl.slist_append(
		headers, "Content-Type: application/octet-stream");
	if (p->auth_header)
		headers = push_curl.slist_append(headers, p->auth_header);
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
	push_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	push_curl.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	push_curl.easy_setopt(c, CURLOPT_USERAGENT, "dcprof/" DCPROF_VERSION);
	rc = push_curl.easy_perform(c);
	if (rc == CURLE_OK)
		push_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(why, why_len, "%s",
			 errbuf[0] ? errbuf : push_curl.easy_strerror(rc));
	push_curl.slist_free_all(headers);
	push_curl.easy_cleanup(c);
	return status;
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

/*
 * The thread: the oldest spooled period until the server takes it (2xx)
 * or refuses it for good (4xx but 408 and 429: dropped, counted), waiting
 * 1, 2, 4 up to BACKOFF_MAX_S seconds between failed tries, so that the
 * periods arrive in order and each once.
 */
static void *push_thread(void *arg)
{
	struct push *p = arg;
	unsigned backoff = 0;
	uint64_t failed_run = 0;

	for (;;) {
		struct push_item item;
		char why[CURL_ERROR_SIZE + 64] = "", *body = NULL;
		size_t len = 0;
		long status;
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
		status = post(p, &item, body, len, why, sizeof(why));
		free(body);
		pthread_mutex_lock(&p->lock);
		if (status >= 200 && status < 300) {
			drop_item(p, &item);
			p->counts.sent++;
			if (failed_run)
				say(p,
				    "push: sent again after %llu failed tries",
				    (unsigned long long)failed_run);
			failed_run = 0;
			backoff = 0;
		} else if (status >= 400 && status < 500 && status != 408 &&
			   status != 429) {
			drop_item(p, &item);
			p->counts.rejected++;
			say(p,
			    "push: the server refused period %s with HTTP %ld: dropped (%llu refused so far)",
			    item.name, status,
			    (unsigned long long)p->counts.rejected);
		} else {
			struct timespec t;

			p->counts.attempts_failed++;
			failed_run++;
			backoff = backoff ? backoff * 2 : 1;
			if (backoff > BACKOFF_MAX_S)
				backoff = BACKOFF_MAX_S;
			if (status >= 0)
				snprintf(why, sizeof(why), "HTTP %ld", status);
			say(p,
			    "push: cannot send period %s: %s; retrying in %u s",
			    item.name, why, backoff);
			if (p->stopping) {
				pthread_mutex_unlock(&p->lock);
				break;
			}
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_sec += backoff;
			while (!p->stopping &&
			       pthread_cond_timedwait(&p->wake, &p->lock, &t) !=
				       ETIMEDOUT)
				;
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
	free(p->auth_header);
	free(p->userpwd);
	free(p->ca_file);
	free(p->spool_dir);
	free(p);
}

struct push *push_start(const struct push_opts *o, struct push_error *err)
{
	struct push *p;
	char *token = NULL;
	sigset_t all, old;
	struct stat st;
	size_t len;
	int ret;

	ret = push_check(o, err);
	if (ret)
		return NULL;
	if (mkdir(o->spool_dir, 0700) < 0 && errno != EEXIST) {
		fail(err, errno, "cannot create the push spool '%s': %s",
		     o->spool_dir, strerror(errno));
		return NULL;
	}
	/* never a link planted in its place */
	if (lstat(o->spool_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fail(err, ENOTDIR, "the push spool '%s' is not a directory",
		     o->spool_dir);
		return NULL;
	}
	if (push_curl.global_init(CURL_GLOBAL_DEFAULT)) {
		fail(err, EIO, "cannot start libcurl");
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->url = strdup(o->url)) ||
	    !(p->spool_dir = strdup(o->spool_dir))) {
		push_free(p);
		fail(err, ENOMEM, "out of memory");
		return NULL;
	}
	len = strlen(p->url);
	while (len && p->url[len - 1] == '/')
		p->url[--len] = 0;
	p->spool_max = o->spool_max ? o->spool_max : PUSH_DEFAULT_SPOOL_MAX;
	p->log = o->log;
	ret = build_name(p, o, err);
	if (!ret && o->token_file) {
		ret = read_secret(o->token_file, "token", &token, err);
		if (!ret && asprintf(&p->auth_header,
				     "Authorization: Bearer %s", token) < 0) {
			p->auth_header = NULL;
			ret = fail(err, ENOMEM, "out of memory");
		}
		free(token);
	}
	if (!ret && o->basic_auth_file)
		ret = read_secret(o->basic_auth_file, "basic auth", &p->userpwd,
				  err);
	if (!ret && o->ca_file && !(p->ca_file = strdup(o->ca_file)))
		ret = fail(err, ENOMEM, "out of memory");
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
		fail(err, ret, "cannot start the push thread: %s",
		     strerror(ret));
		push_free(p);
		return NULL;
	}
	return p;
}

int push_enqueue(struct push *p, const char *path, uint64_t from,
		 uint64_t until, uint32_t hz, struct push_error *err)
{
	struct push_item item = { .from = from, .until = until, .hz = hz };
	struct export_error xerr;
	struct profile_view v;
	char *body = NULL;
	size_t len = 0;
	FILE *mem;
	int ret;

	if (profile_view_open(&v, path, false) < 0)
		return fail(err, EIO, "cannot read '%s' to push it: %s", path,
			    dcp_last_error());
	mem = open_memstream(&body, &len);
	ret = mem ? export_pprof(&v, mem, &xerr) : -ENOMEM;
	if (mem && fclose(mem) && !ret)
		ret = -ENOMEM;
	profile_view_close(&v);
	if (ret) {
		free(body);
		return fail(err, -ret, "cannot export '%s' to push it: %s",
			    path, mem ? xerr.msg : "out of memory");
	}
	pthread_mutex_lock(&p->lock);
	if (push_spool_size(p->spool_dir) + len > p->spool_max) {
		p->counts.dropped_full++;
		ret = fail(
			err, ENOSPC,
			"the push spool '%s' is full (%llu bytes at most): period dropped from the push (%llu so far)",
			p->spool_dir, (unsigned long long)p->spool_max,
			(unsigned long long)p->counts.dropped_full);
	} else {
		ret = push_spool_write(p->spool_dir, &item, body, len, err);
		if (!ret)
			pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
	free(body);
	return ret;
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
