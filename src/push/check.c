// SPDX-License-Identifier: MIT
/*
 * The push options checked before recording, as the servers take them
 * (Pyroscope's labelset and ValidateLabels, its tenant middleware; Parca's
 * profile type), and the series' labels built from them.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "curl_load.h"
#include "export.h"
#include "push_internal.h"

int push_fail(struct push_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -errnum;
}

/* A secret from a file: its first line, never from the command line. */
int push_read_secret(const char *path, const char *what, char **out,
		     struct push_error *err)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return push_fail(err, errno, "cannot read the %s file '%s': %s",
				 what, path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return push_fail(err, errno, "cannot read the %s file '%s': %s",
				 what, path, strerror(errno));
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	if (!buf[0])
		return push_fail(err, EINVAL, "the %s file '%s' is empty", what,
				 path);
	*out = strdup(buf);
	return *out ? 0 : push_fail(err, ENOMEM, "out of memory");
}

enum push_kind push_kind_of(const char *url, const char **rest)
{
	if (!strncmp(url, "parca+", 6)) {
		*rest = url + 6;
		return PUSH_PARCA;
	}
	if (!strncmp(url, "otlp+", 5)) {
		*rest = url + 5;
		return PUSH_OTLP;
	}
	*rest = url;
	return PUSH_PYROSCOPE;
}

/*
 * KEY=VALUE as both stores take it: the key a Prometheus label name that
 * neither begins with "__" (Pyroscope drops those silently, Parca keeps
 * them for itself), the value without the characters that end one in
 * Pyroscope's name=APP{...} (',' and '}') or that need quoting.
 */
static bool label_ok(const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv || !eq[1] ||
	    !(isalpha((unsigned char)kv[0]) || kv[0] == '_') ||
	    !strncmp(kv, "__", 2))
		return false;
	for (const char *c = kv; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	for (const char *c = eq + 1; *c; c++)
		if ((unsigned char)*c < 0x20 || strchr("{},=\"\\", *c))
			return false;
	return (size_t)(eq - kv) <= PUSH_MAX_LABEL_NAME &&
	       strlen(eq + 1) <= PUSH_MAX_LABEL_VALUE;
}

static bool same_key(const char *a, const char *b)
{
	size_t n = strcspn(a, "=");

	return n == strcspn(b, "=") && !strncmp(a, b, n);
}

static bool has_key(const struct push_opts *o, const char *key)
{
	size_t n = strlen(key);

	for (size_t i = 0; i < o->nr_labels; i++)
		if (!strncmp(o->labels[i], key, n) && o->labels[i][n] == '=')
			return true;
	return false;
}

unsigned push_sample_labels_of(const struct push_opts *o)
{
	return o->sample_labels ? o->sample_labels : PUSH_DEFAULT_SAMPLE_LABELS;
}

/*
 * The label names of each series Pyroscope makes of a pushed profile:
 * its own four (__name__, __delta__, pyroscope_spy, service_name; a
 * service_name label stands for the last), hostname and kernel_release
 * unless given, the --push-labels, and each sample label (pprofsplit
 * makes a series label of every string label of a sample).
 */
static size_t series_label_names(const struct push_opts *o)
{
	unsigned sl = push_sample_labels_of(o) & EXPORT_LABELS_ALL;
	size_t n = PUSH_SERVER_LABELS + o->nr_labels;

	n += !has_key(o, "hostname") + !has_key(o, "kernel_release");
	n -= has_key(o, "service_name");
	for (; sl; sl &= sl - 1)
		n++;
	return n;
}

int push_parse_sample_labels(const char *list, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
		{ "comm", EXPORT_LABEL_COMM },
		{ "pid", EXPORT_LABEL_PID },
		{ "thread", EXPORT_LABEL_THREAD },
		{ "tid", EXPORT_LABEL_TID },
		{ "cgroup", EXPORT_LABEL_CGROUP },
		{ "container", EXPORT_LABEL_CONTAINER },
		{ "unit", EXPORT_LABEL_UNIT },
		{ "pod", EXPORT_LABEL_POD },
	};
	unsigned bits = 0;

	if (!strcmp(list, "none")) {
		/* 0 is the default: none is a bit past the labels' */
		*out = EXPORT_LABELS_ALL + 1;
		return 0;
	}
	for (const char *c = list; *c;) {
		size_t len = strcspn(c, ","), i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
			    !strncmp(c, names[i].name, len))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -EINVAL;
		bits |= names[i].bit;
		c += len;
		if (*c == ',' && *++c == 0)
			return -EINVAL;
	}
	if (!bits)
		return -EINVAL;
	*out = bits;
	return 0;
}

/* A tenant as Pyroscope's tenant middleware (dskit's ValidTenantID)
 * takes it: at most 150 of [A-Za-z0-9!-_.*'()], neither "." nor "..". */
static bool tenant_ok(const char *t)
{
	size_t n = strlen(t);

	if (!n || n > 150 || !strcmp(t, ".") || !strcmp(t, ".."))
		return false;
	for (const char *c = t; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("!-_.*'()", *c))
			return false;
	return true;
}

/* Parca's profile type NAME:TYPE:UNIT:...{} must parse as a PromQL
 * selector: the application name is a metric name. */
static bool metric_name_ok(const char *n)
{
	if (!n[0] || isdigit((unsigned char)n[0]))
		return false;
	for (const char *c = n; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != ':')
			return false;
	return true;
}

int push_check(const struct push_opts *o, struct push_error *err)
{
	char *scheme = NULL, *host = NULL, *secret = NULL;
	const char *url;
	enum push_kind kind = push_kind_of(o->url, &url);
	int ret = push_curl_load(err);
	CURLU *u;

	if (ret)
		return ret;
	u = push_curl.url();
	if (!u)
		return push_fail(err, ENOMEM, "out of memory");
	if (push_curl.url_set(u, CURLUPART_URL, url, 0) ||
	    push_curl.url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    push_curl.url_get(u, CURLUPART_HOST, &host, 0) ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https")) || !host[0] ||
	    strchr(url, '?') || strchr(url, '#'))
		ret = push_fail(
			err, EINVAL,
			"invalid --push URL '%s': expected http(s)://HOST[:PORT][/PATH] (Pyroscope), parca+http(s)://... (Parca) or otlp+http(s)://... (OpenTelemetry)",
			o->url);
	push_curl.free(scheme);
	push_curl.free(host);
	push_curl.url_cleanup(u);
	for (size_t i = 0; !ret && i < o->nr_labels; i++) {
		if (!label_ok(o->labels[i]))
			ret = push_fail(
				err, EINVAL,
				"invalid --push-label '%s': expected KEY=VALUE (KEY of letters, digits and _, not beginning with __, at most %d; VALUE without {},=\" or \\, at most %d)",
				o->labels[i], PUSH_MAX_LABEL_NAME,
				PUSH_MAX_LABEL_VALUE);
		for (size_t j = 0; !ret && j < i; j++)
			if (same_key(o->labels[i], o->labels[j]))
				ret = push_fail(
					err, EINVAL,
					"--push-label '%.*s' given twice",
					(int)strcspn(o->labels[i], "="),
					o->labels[i]);
	}
	if (!ret && kind == PUSH_PYROSCOPE &&
	    series_label_names(o) > PUSH_MAX_SERIES_LABELS)
		ret = push_fail(
			err, EINVAL,
			"too many --push-label: Pyroscope refuses a series of more than %d label names, and these make %zu (its own 4, hostname, kernel_release, the sample labels and yours): fewer --push-label or --push-sample-labels",
			PUSH_MAX_SERIES_LABELS, series_label_names(o));
	for (const char *c = o->app; !ret && c && *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
			ret = push_fail(
				err, EINVAL,
				"invalid --push-app '%s': letters, digits, '_', '.' and '-' only",
				o->app);
	if (!ret && o->app && !o->app[0])
		ret = push_fail(err, EINVAL, "the --push-app name is empty");
	if (!ret && kind == PUSH_PARCA &&
	    !metric_name_ok(o->app ? o->app : PUSH_DEFAULT_APP))
		ret = push_fail(
			err, EINVAL,
			"invalid --push-app '%s' for Parca: letters, digits and '_' only (Parca refuses a profile type that is not a PromQL metric name)",
			o->app);
	if (!ret && o->tenant && !tenant_ok(o->tenant))
		ret = push_fail(
			err, EINVAL,
			"invalid --push-tenant '%s': at most 150 letters, digits and !-_.*'() (not . or ..)",
			o->tenant);
	if (!ret && o->token_file)
		ret = push_read_secret(o->token_file, "token", &secret, err);
	free(secret);
	secret = NULL;
	if (!ret && o->basic_auth_file) {
		ret = push_read_secret(o->basic_auth_file, "basic auth",
				       &secret, err);
		if (!ret && !strchr(secret, ':'))
			ret = push_fail(
				err, EINVAL,
				"the basic auth file '%s' holds no USER:PASSWORD line",
				o->basic_auth_file);
	}
	free(secret);
	if (!ret && o->ca_file && access(o->ca_file, R_OK) < 0)
		ret = push_fail(err, errno, "cannot read the CA file '%s': %s",
				o->ca_file, strerror(errno));
	return ret;
}

/* s as a JSON string's inside (the labels hold no '"' or '\\', but the
 * host name is the system's) */
static size_t json_str(char *out, size_t size, const char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];
		int k = c < 0x20 || c == '"' || c == '\\' ?
				snprintf(esc, sizeof(esc), "\\u%04x", c) :
				snprintf(esc, sizeof(esc), "%c", c);

		if (n + (size_t)k < size)
			memcpy(out + n, esc, (size_t)k);
		n += (size_t)k;
	}
	if (n < size)
		out[n] = 0;
	else if (size)
		out[size - 1] = 0;
	return n;
}

/* APP{hostname=...,kernel_release=...,k=v}: given labels win; Parca: the
 * same as WriteRaw's LabelSet JSON, APP its __name__. */
int push_build_labels(const struct push_opts *o, char **name_escaped,
		      char **parca_json, struct push_error *err)
{
	struct utsname uts;
	char name[4096], json[16384];
	size_t len, jl;
	bool host = has_key(o, "hostname"),
	     kernel = has_key(o, "kernel_release");
	const char *app = o->app ? o->app : PUSH_DEFAULT_APP;
	CURL *c;

	if (uname(&uts) < 0)
		memset(&uts, 0, sizeof(uts));
	len = (size_t)snprintf(name, sizeof(name), "%s{", app);
	jl = (size_t)snprintf(
		json, sizeof(json),
		"{\"labels\":[{\"name\":\"__name__\",\"value\":\"%s\"}", app);
#define JSON_LABEL(k, klen, v)                                               \
	do {                                                                 \
		if (jl < sizeof(json))                                       \
			jl += (size_t)snprintf(                              \
				json + jl, sizeof(json) - jl,                \
				",{\"name\":\"%.*s\",\"value\":\"",          \
				(int)(klen), k);                             \
		if (jl < sizeof(json))                                       \
			jl += json_str(json + jl, sizeof(json) - jl, v);     \
		if (jl < sizeof(json))                                       \
			jl += (size_t)snprintf(json + jl, sizeof(json) - jl, \
					       "\"}");                       \
	} while (0)
	if (!host && uts.nodename[0] && len < sizeof(name)) {
		len += (size_t)snprintf(name + len, sizeof(name) - len,
					"hostname=%s,", uts.nodename);
		JSON_LABEL("hostname", 8, uts.nodename);
	}
	if (!kernel && uts.release[0] && len < sizeof(name)) {
		len += (size_t)snprintf(name + len, sizeof(name) - len,
					"kernel_release=%s,", uts.release);
		JSON_LABEL("kernel_release", 14, uts.release);
	}
	for (size_t i = 0; i < o->nr_labels && len < sizeof(name); i++) {
		size_t k = strcspn(o->labels[i], "=");

		len += (size_t)snprintf(name + len, sizeof(name) - len, "%s,",
					o->labels[i]);
		JSON_LABEL(o->labels[i], k, o->labels[i] + k + 1);
	}
#undef JSON_LABEL
	if (jl < sizeof(json))
		jl += (size_t)snprintf(json + jl, sizeof(json) - jl, "]}");
	if (len >= sizeof(name) || jl >= sizeof(json))
		return push_fail(err, E2BIG, "the push labels are too long");
	if (name[len - 1] == ',')
		len--;
	snprintf(name + len, sizeof(name) - len, "}");
	if (!(*parca_json = strdup(json)))
		return push_fail(err, ENOMEM, "out of memory");
	c = push_curl.easy_init();
	if (!c)
		return push_fail(err, ENOMEM, "cannot start libcurl");
	*name_escaped = push_curl.easy_escape(c, name, 0);
	push_curl.easy_cleanup(c);
	return *name_escaped ? 0 : push_fail(err, ENOMEM, "out of memory");
}
