// SPDX-License-Identifier: MIT
/* The options every reading command shares, and opening its profile. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "read_opts.h"

const char *const read_formats_text_json[] = { "text", "json", NULL };

/* "unknown format 'X' (a, b, ...)" with the values --format takes. */
static int unknown_format(const struct read_opts *o, const char *arg)
{
	char list[128] = "";
	size_t len = 0;

	for (size_t i = 0; o->formats[i] && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i ? ", " : "", o->formats[i]);
	return cmd_usage_error(o->cmd, "unknown format '%s' (%s)", arg, list);
}

int read_opts_parse(struct read_opts *o, int c, const char *arg)
{
	if (c == 'i') {
		o->input = arg;
		return 0;
	}
	if (c == READ_OPT_SINCE || c == READ_OPT_UNTIL) {
		*(c == READ_OPT_SINCE ? &o->since : &o->until) = arg;
		return 0;
	}
	for (int i = 0; o->formats[i]; i++) {
		if (!strcmp(arg, o->formats[i])) {
			o->format = i;
			o->formats_given |= 1u << i;
			return 0;
		}
	}
	return unknown_format(o, arg);
}

const char *read_opts_input(const struct read_opts *o)
{
	return o->input ? o->input : CMD_DEFAULT_PROFILE;
}

int cmd_check_value(const struct profile_view *v, enum view_value value)
{
	if (value == VIEW_VALUE_CPU ||
	    dcp_profile_get_meta(v->profile)->off_cpu)
		return 0;
	/* wall-clock time without the off-CPU part is CPU time under
	 * another name */
	return cmd_error("'%s' was recorded without --off-cpu: it has no "
			 "off-CPU time for --value %s",
			 v->path,
			 value == VIEW_VALUE_WALL ? "wall" : "off-cpu");
}

int cmd_open_profile(struct profile_view *v, const char *path, bool by_function)
{
	if (profile_view_open(v, path, by_function) < 0)
		return cmd_error("%s", dcp_last_error());
	if (profile_view_name_unfinished(v) < 0)
		cmd_warn("%s", dcp_last_error());
	return 0;
}
