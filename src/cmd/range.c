// SPDX-License-Identifier: MIT
/*
 * Reading a time range of record --continuous: --since and --until parsed
 * (ISO 8601, "YYYY-MM-DD HH:MM[:SS]", or relative to now), the period
 * files of the directory selected by the start time in their names, and
 * read as one profile.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"
#include "continuous.h"
#include "read_opts.h"

#define NS 1000000000ll

/* "-90s", "-30m", "-12h", "-7d", "now" */
static bool parse_relative(const char *arg, int64_t now, int64_t *out)
{
	char *end;
	double v;
	int64_t unit;

	if (!strcmp(arg, "now")) {
		*out = now;
		return true;
	}
	if (arg[0] != '-')
		return false;
	errno = 0;
	v = strtod(arg + 1, &end);
	if (errno || end == arg + 1 || !(v >= 0) || v > 1e8)
		return false;
	if (!strcmp(end, "s") || !*end)
		unit = 1;
	else if (!strcmp(end, "m"))
		unit = 60;
	else if (!strcmp(end, "h"))
		unit = 3600;
	else if (!strcmp(end, "d"))
		unit = 86400;
	else
		return false;
	*out = now - (int64_t)(v * (double)unit * 1e9);
	return true;
}

/* "2026-12-03", "2026-12-03 16:50", "...T16:50:07", then "Z" or +HH:MM */
/* A fraction of a second (".5", ",250"): its ns, and the rest; NULL when
 * the separator has no digit after it. */
static const char *parse_fraction(const char *s, int64_t *ns)
{
	int64_t scale = NS / 10;

	*ns = 0;
	if (*s != '.' && *s != ',')
		return s;
	if (!isdigit((unsigned char)*++s))
		return NULL;
	for (; isdigit((unsigned char)*s); s++, scale /= 10)
		*ns += (*s - '0') * scale;
	return s;
}

/*
 * The basic form, as period files are named: 20261205T113909.930Z (the
 * seconds, their fraction and a zone optional as in the extended form).
 * *rest what follows the seconds; false when arg is not in that form.
 */
static bool parse_basic(const char *arg, struct tm *tm, const char **rest)
{
	int n = 0;

	if (sscanf(arg, "%4d%2d%2dT%2d%2d%n", &tm->tm_year, &tm->tm_mon,
		   &tm->tm_mday, &tm->tm_hour, &tm->tm_min, &n) != 5 ||
	    n != 13)
		return false;
	for (int i = 0; i < n; i++)
		if (i != 8 && !isdigit((unsigned char)arg[i]))
			return false;
	*rest = arg + n;
	if (isdigit((unsigned char)(*rest)[0]) &&
	    isdigit((unsigned char)(*rest)[1])) {
		tm->tm_sec = ((*rest)[0] - '0') * 10 + (*rest)[1] - '0';
		*rest += 2;
	}
	return true;
}

static bool parse_absolute(const char *arg, int64_t *out)
{
	struct tm tm = { 0 };
	int n = 0, zh, zm;
	char sep;
	const char *rest;
	int64_t t, zone = 0, frac = 0;

	if (parse_basic(arg, &tm, &rest))
		goto seconds_done;
	if (sscanf(arg, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &n) != 3 ||
	    n != 10)
		return false;
	rest = arg + n;
	if (*rest == ' ' || *rest == 'T') {
		n = 0;
		if (sscanf(rest + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min,
			   &n) != 2 ||
		    n != 5)
			return false;
		rest += 1 + n;
		if (*rest == ':') {
			n = 0;
			if (sscanf(rest + 1, "%2d%n", &tm.tm_sec, &n) != 1 ||
			    n != 2)
				return false;
			rest += 1 + n;
		}
	}
seconds_done:
	rest = parse_fraction(rest, &frac);
	if (!rest)
		return false;
	if (*rest == 'Z') {
		rest++;
	} else if (*rest == '+' || *rest == '-') {
		n = 0;
		if (sscanf(rest, "%c%2d:%2d%n", &sep, &zh, &zm, &n) != 3 ||
		    n != 6 || zh > 23 || zm > 59)
			return false;
		zone = (sep == '-' ? -1 : 1) * ((int64_t)zh * 3600 + zm * 60);
		rest += n;
	}
	if (*rest || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = (int64_t)timegm(&tm);
	*out = (t - zone) * NS + frac;
	return true;
}

static int parse_time(const char *cmd, const char *opt, const char *arg,
		      int64_t now, int64_t *out)
{
	if (parse_relative(arg, now, out) || parse_absolute(arg, out))
		return 0;
	return cmd_usage_error(
		cmd,
		"invalid %s '%s': expected 2026-12-03T16:50:00[.5]Z, 20261203T165000.500Z, '2026-12-03 16:50[:SS]' (UTC unless +HH:MM follows), now, or -30m, -12h, -7d",
		opt, arg);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void format_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / NS);
	struct tm tm;

	if (ns == INT64_MAX) {
		snprintf(buf, len, "the end");
		return;
	}
	if (ns == INT64_MIN) {
		snprintf(buf, len, "the start");
		return;
	}
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The period files of dir that start in [since, until), sorted by time. */
static int select_periods(const char *dir, int64_t since, int64_t until,
			  char ***out, size_t *nr)
{
	struct dirent *de;
	char **paths = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir(dir);

	if (!d)
		return cmd_error("cannot read '%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		int64_t start = continuous_name_time(de->d_name);

		if (start < 0 || start < since || start >= until)
			continue;
		if (n == cap) {
			char **g;

			cap = cap ? 2 * cap : 256;
			g = realloc(paths, cap * sizeof(*g));
			if (!g)
				break;
			paths = g;
		}
		if (asprintf(&paths[n], "%s/%s", dir, de->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	if (de) {
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		return cmd_error("out of memory");
	}
	if (n)
		qsort(paths, n, sizeof(*paths), cmp_str);
	*out = paths;
	*nr = n;
	return 0;
}

int cmd_open_input(struct profile_view *v, const struct read_opts *o,
		   bool by_function)
{
	const char *path = read_opts_input(o);
	int64_t since = INT64_MIN, until = INT64_MAX, now;
	struct timespec ts;
	struct stat st;
	char **paths = NULL, from[40], to[40];
	size_t n = 0;
	int ret;

	if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode) &&
	    (o->since || o->until))
		return cmd_usage_error(
			o->cmd,
			"--since and --until read a directory of record --continuous, not '%s'",
			path);
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return cmd_open_profile(v, path, by_function);
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * NS + ts.tv_nsec;
	if (o->since &&
	    (ret = parse_time(o->cmd, "--since", o->since, now, &since)))
		return ret;
	if (o->until &&
	    (ret = parse_time(o->cmd, "--until", o->until, now, &until)))
		return ret;
	if (since > until)
		return cmd_usage_error(
			o->cmd, "--since '%s' is later than --until '%s'",
			o->since, o->until);
	ret = select_periods(path, since, until, &paths, &n);
	if (ret)
		return ret;
	format_time(since, from, sizeof(from));
	format_time(until, to, sizeof(to));
	if (!n && !o->since && !o->until) {
		/* not a range that missed: a directory of something else */
		ret = cmd_error("'%s' is a directory without a period file of "
				"record --continuous: give -i a profile",
				path);
	} else if (!n) {
		ret = cmd_error("no period of '%s' starts between %s and %s",
				path, from, to);
	} else if (profile_view_open_files(v, path, (const char *const *)paths,
					   n, by_function) < 0) {
		ret = cmd_error("%s", dcp_last_error());
	} else if (profile_view_name_unfinished(v) < 0) {
		cmd_warn("%s", dcp_last_error());
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return ret;
}
