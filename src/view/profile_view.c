// SPDX-License-Identifier: MIT
/*
 * Naming what a profile holds for the reading commands: files, symbols and
 * inlined calls, with placeholders for what is unresolved.
 */
#include <errno.h>

#include "profile_view.h"

int profile_view_open(struct profile_view *v, const char *path,
		      bool by_function)
{
	struct dcp_profile_open_opts o = {
		.sz = sizeof(o),
		.summary = by_function,
	};

	v->path = path;
	v->raw_names = false;
	v->profile = dcp_profile_open_file(path, &o);
	if (!v->profile)
		return errno ? -errno : -EIO;
	v->cookies = dcp_profile_cookies(v->profile);
	return 0;
}

int profile_view_name_unfinished(struct profile_view *v)
{
	int ret;

	if (dcp_profile_get_meta(v->profile)->complete)
		return 0;
	ret = dcp_profile_resymbolize(v->profile, NULL, NULL);
	return ret < 0 ? ret : 0;
}

void profile_view_close(struct profile_view *v)
{
	dcp_profile_close(v->profile);
	v->profile = NULL;
}

const char *profile_view_file_name(const struct profile_view *v,
				   uint32_t cookie)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };

	if (dcp_cookie_table_lookup(v->cookies, cookie, &info) || !info.name)
		return "[unknown]";
	return info.name;
}

const char *profile_view_symbol(const struct profile_view *v,
				const struct dcp_frame *f)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	if (dcp_profile_symbol(v->profile, f->cookie, f->offset, &sym) == 0 &&
	    sym.name)
		return sym.demangled && !v->raw_names ? sym.demangled :
							sym.name;
	if (dcp_cookie_table_lookup(v->cookies, f->cookie, &info))
		return "[unknown]";
	switch (info.kind) {
	case DCP_COOKIE_KIND_UNKNOWN:
		return "[unknown]";
	case DCP_COOKIE_KIND_IDLE:
		return "[idle]";
	case DCP_COOKIE_KIND_ANON:
		return "[anon:exec]";
	default:
		return "[unresolved]";
	}
}

int profile_view_expand(const struct profile_view *v, const struct dcp_frame *f,
			struct dcp_expanded_frame *out, size_t max)
{
	int n;

	if (max)
		out[0].sz = sizeof(*out);
	n = dcp_profile_frame_expand(v->profile, f, out, max);

	for (int i = 0; i < n && (size_t)i < max; i++) {
		if (!out[i].name)
			out[i].name = profile_view_symbol(v, f);
		else if (v->raw_names && out[i].raw_name)
			out[i].name = out[i].raw_name;
	}
	return n;
}
