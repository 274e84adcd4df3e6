/* SPDX-License-Identifier: MIT */
/* Names for what a profile holds, as the reading commands print them. */
#ifndef DCPROF_PROFILE_VIEW_H
#define DCPROF_PROFILE_VIEW_H

#include "dcprof/dcprof.h"

struct profile_view {
	const char *path;
	struct dcp_profile *profile;
	const struct dcp_cookie_table *cookies;
};

/* Open path; on failure print one error line and return the exit code. */
int profile_view_open(struct profile_view *v, const char *path);
void profile_view_close(struct profile_view *v);

/* The display name of a cookie's object (a path, "[vdso]", ...). */
const char *profile_view_file_name(const struct profile_view *v,
				   uint32_t cookie);
/*
 * The symbol of a frame; frames without one are grouped by what they lack:
 * "[unresolved]" in a file, "[unknown]" in no mapping, "[idle]".
 */
const char *profile_view_symbol(const struct profile_view *v,
				const struct dcp_frame *f);

#endif
