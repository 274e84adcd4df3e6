// SPDX-License-Identifier: MIT
/*
 * What the exporters share: UTF-8 checks of the names they write, their
 * string tables and growing arrays, the names of objects, what a sample
 * stands for, and the message they leave for the command when they fail.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "grow.h"
#include "cgroup_label.h"
#include "intern.h"

int export_fail(struct export_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -errnum;
}

size_t export_utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void export_sample_kind_of(const struct dcp_profile_meta *m,
			   struct export_sample_kind *k)
{
	const char *e = m->event && m->event[0] ? m->event : "cpu-clock";
	size_t len = strcspn(e, ":");

	if (len >= sizeof(k->event))
		len = sizeof(k->event) - 1;
	memcpy(k->event, e, len);
	k->event[len] = 0;
	k->time = !strcmp(k->event, "cpu-clock") ||
		  !strcmp(k->event, "task-clock");
	for (char *c = k->event; *c; c++)
		if (!(*c >= 'a' && *c <= 'z') && !(*c >= 'A' && *c <= 'Z') &&
		    !(*c >= '0' && *c <= '9'))
			*c = '_';
	if (m->sample_freq)
		k->period =
			k->time ? (int64_t)(1000000000ull / m->sample_freq) : 0;
	else
		k->period = (int64_t)m->sample_period;
}

int export_reserve(void *p, size_t *cap, size_t n, size_t sz)
{
	void **pp = p;
	void *np = dcp_grow(*pp, cap, n + 1, sz);

	if (!np)
		return -ENOMEM;
	*pp = np;
	return 0;
}

/*
 * s with every byte that is not part of valid UTF-8 written as \xNN, or
 * NULL when s is valid as it is (or memory ran out: *oom).
 */
static char *utf8_escape(const char *s, bool *oom)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), bad = 0, len;
	char *out, *o;

	for (size_t i = 0; i < n; i += len ? len : 1)
		if (!(len = export_utf8_len(p + i, n - i)))
			bad++;
	if (!bad)
		return NULL;
	out = o = malloc(n + 3 * bad + 1);
	if (!out) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < n; i += len ? len : 1) {
		len = export_utf8_len(p + i, n - i);
		if (len) {
			memcpy(o, p + i, len);
			o += len;
		} else {
			o += sprintf(o, "\\x%02x", p[i]);
		}
	}
	*o = 0;
	return out;
}

int64_t export_intern(struct string_table *t, const char *s)
{
	bool oom = false;
	char *escaped;
	int64_t i;

	/* protobuf strings are UTF-8: decoders reject anything else */
	escaped = utf8_escape(s, &oom);
	if (oom)
		return -ENOMEM;
	if (!escaped)
		return string_table_intern(t, s);
	i = string_table_intern(t, escaped);
	free(escaped);
	return i;
}

int export_expand(const struct profile_view *v, const struct dcp_frame *f,
		  struct dcp_expanded_frame *ex)
{
	int n = profile_view_expand(v, f, ex, PROFILE_VIEW_EXPAND_MAX);

	if (n < 1) {
		/* cannot happen: an unresolved frame is one entry */
		ex[0] = (struct dcp_expanded_frame){
			.name = profile_view_symbol(v, f)
		};
		n = 1;
	}
	/* deeper inlining is cut: the function and outer calls stay */
	return n > PROFILE_VIEW_EXPAND_MAX ? PROFILE_VIEW_EXPAND_MAX : n;
}

const char *export_object_name(const struct profile_view *v, uint32_t cookie,
			       char *buf, size_t size)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	const char *name = profile_view_file_name(v, cookie);

	if (!dcp_cookie_table_lookup(v->cookies, cookie, &info) &&
	    info.kind == DCP_COOKIE_KIND_MODULE && name[0] != '[') {
		snprintf(buf, size, "[%s]", name);
		return buf;
	}
	return name;
}

const char *export_cgroup_label_name(int i, bool otlp)
{
	static const char *const pprof[EXPORT_CGROUP_NR_LABELS] = {
		"cgroup", "container_id", "systemd_unit", "pod_uid"
	};
	/* OpenTelemetry's resource conventions where they have one */
	static const char *const otel[EXPORT_CGROUP_NR_LABELS] = {
		"linux.cgroup.path", "container.id", "systemd.unit",
		"k8s.pod.uid"
	};

	return otlp ? otel[i] : pprof[i];
}

/* v, or "other" once the label has max_values others */
static const char *bounded(struct export_cgroup_labels *c, int i, const char *v,
			   int *err)
{
	int64_t id;

	if (!c->max_values)
		return v;
	id = string_table_intern(&c->seen[i], v);
	if (id < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	return (size_t)id < c->max_values ? v : "other";
}

int export_cgroup_label_values(struct export_cgroup_labels *c, unsigned labels,
			       const struct dcp_sample_row *row,
			       const char *values[EXPORT_CGROUP_NR_LABELS],
			       char bufs[EXPORT_CGROUP_NR_LABELS][256])
{
	struct dcp_cgroup_names n = { .sz = sizeof(n) };
	int err = 0;

	memset(values, 0, EXPORT_CGROUP_NR_LABELS * sizeof(*values));
	if (!(labels & EXPORT_LABELS_CGROUP) || !row->cgroup ||
	    dcp_cgroup_parse_path(row->cgroup, &n))
		return 0;
	snprintf(bufs[0], sizeof(bufs[0]), "%s", row->cgroup);
	snprintf(bufs[1], sizeof(bufs[1]), "%s", n.container_id);
	snprintf(bufs[2], sizeof(bufs[2]), "%s", n.unit);
	snprintf(bufs[3], sizeof(bufs[3]), "%s", n.pod_uid);
	for (int i = 0; i < EXPORT_CGROUP_NR_LABELS && !err; i++)
		if ((labels & (EXPORT_LABEL_CGROUP << i)) && bufs[i][0])
			values[i] = bounded(c, i, bufs[i], &err);
	return err;
}

void export_cgroup_labels_free(struct export_cgroup_labels *c)
{
	for (int i = 0; i < EXPORT_CGROUP_NR_LABELS; i++)
		string_table_free(&c->seen[i]);
}
