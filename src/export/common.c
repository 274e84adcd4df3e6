// SPDX-License-Identifier: MIT
/*
 * What the exporters share: UTF-8 checks of the names they write, what a
 * sample stands for, and the message they leave for the command when they
 * fail.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "export.h"

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
