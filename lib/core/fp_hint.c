// SPDX-License-Identifier: MIT
/*
 * The hint for broken frame-pointer chains: one line naming the files
 * where most user stacks of a -g recording lost their chain, and that
 * --call-graph dwarf unwinds them; said only when over 10% broke.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dcprof/dcprof.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

int dcp_fp_hint(const struct dcp_profile_stats *s,
		const struct dcp_cookie_table *cookies, char *buf, size_t len)
{
	size_t used;
	int n;

	if (len)
		buf[0] = '\0';
	if (!s || !s->fp_user_stacks ||
	    s->fp_broken_stacks * 10 <= s->fp_user_stacks || !len)
		return 0;
	n = snprintf(buf, len,
		     "%.0f%% of user stacks lost their frame-pointer chain",
		     100.0 * (double)s->fp_broken_stacks /
			     (double)s->fp_user_stacks);
	used = n > 0 && (size_t)n < len ? (size_t)n : len - 1;
	/* the first file, and the next ones over 1% of the user stacks */
	for (int i = 0; i < 3 && s->fp_broken_in[i] &&
			(!i || s->fp_broken_in[i] * 100 >= s->fp_user_stacks);
	     i++) {
		struct dcp_cookie_info ci = { .sz = sizeof(ci) };
		const char *name = "[unknown]";

		if (cookies &&
		    dcp_cookie_table_lookup(cookies,
					    (uint32_t)s->fp_broken_cookie[i],
					    &ci) == 0 &&
		    ci.name)
			name = base_name(ci.name);
		n = snprintf(buf + used, len - used, "%s %s (%.0f%%)",
			     i ? "," : " in", name,
			     100.0 * (double)s->fp_broken_in[i] /
				     (double)s->fp_user_stacks);
		used = n > 0 && (size_t)n < len - used ? used + (size_t)n :
							 len - 1;
	}
	snprintf(buf + used, len - used, "%s",
		 ", built without frame pointers: "
		 "--call-graph dwarf unwinds them");
	return 1;
}
