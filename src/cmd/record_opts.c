// SPDX-License-Identifier: MIT
/* dcprof record: the option values checked before anything starts. */
#include <errno.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "record_opts.h"

/* -C: "0-3,6", perf's cpu list */
int record_parse_cpus(const char *arg, int **cpus, size_t *nr_cpus)
{
	const char *p = arg;

	free(*cpus);
	*cpus = NULL;
	*nr_cpus = 0;
	while (*p) {
		char *end;
		unsigned long lo, hi;

		if (*p < '0' || *p > '9')
			goto bad;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				goto bad;
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= 65536)
			goto bad;
		for (unsigned long c = lo; c <= hi; c++) {
			int *grown =
				realloc(*cpus, (*nr_cpus + 1) * sizeof(*grown));

			if (!grown)
				return cmd_error("out of memory");
			*cpus = grown;
			(*cpus)[(*nr_cpus)++] = (int)c;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	if (*nr_cpus)
		return 0;
bad:
	return cmd_usage_error(
		"record", "invalid cpu list '%s': expected e.g. 0-3,6", arg);
}

/* -u: a user name or a numeric uid */
int record_parse_user(const char *arg, uint32_t *uid)
{
	struct passwd *pw = getpwnam(arg);
	char *end;
	unsigned long v;

	if (pw) {
		*uid = (uint32_t)pw->pw_uid;
	} else {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' ||
		    v >= UINT32_MAX)
			return cmd_usage_error("record", "no such user: '%s'",
					       arg);
		*uid = (uint32_t)v;
	}
	return 0;
}

/*
 * A frequency above perf_event_max_sample_rate, which perf_event_open
 * refuses with a bare EINVAL, is refused here before anything starts.
 */
int record_check_frequency(unsigned long hz)
{
	char buf[32];
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	long max = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		max = strtol(buf, NULL, 10);
	fclose(f);
	if (max > 0 && hz > (unsigned long)max)
		return cmd_error(
			"-F %lu is above the kernel's maximum of %ld Hz (kernel.perf_event_max_sample_rate)",
			hz, max);
	return 0;
}

int record_parse_off_cpu_min(const char *arg, uint64_t *ns)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] < '0' || arg[0] > '9' ||
	    v > UINT64_MAX / 1000)
		return cmd_usage_error(
			"record",
			"invalid --off-cpu-min '%s': expected microseconds, 0 or more",
			arg);
	*ns = (uint64_t)v * 1000;
	return 0;
}

/*
 * --only takes an existing file or a whole build id: 40 hex digits (SHA-1,
 * the linkers' default), 32 (md5, uuid) or 16 (lld's fast); anything else
 * would be a build id no file has, filtering every sample away.
 */
int record_check_only(const char *arg)
{
	size_t len = strlen(arg);
	struct stat st;

	if (stat(arg, &st) == 0)
		return 0; /* the recorder says when it is not a regular file */
	if ((len == 16 || len == 32 || len == 40) &&
	    strspn(arg, "0123456789abcdefABCDEF") == len)
		return 0;
	return cmd_error(
		"--only '%s' is neither an existing file nor a build id (40, 32 or 16 hex digits)",
		arg);
}
