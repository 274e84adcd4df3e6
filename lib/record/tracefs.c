// SPDX-License-Identifier: MIT
/*
 * tracefs: tracepoints' ids and record formats (the munmap tracepoint of the
 * rings, sched_switch for --off-cpu), mounting tracefs when it is not, and
 * the small /proc and /sys files the rings read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "log_internal.h"
#include "ring_internal.h"

int dcp_read_small_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

static const char *const tracefs_dirs[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };

/* "field:unsigned long addr;	offset:16;	size:8;	signed:0;" */
static int find_field_offset(const char *format, const char *field,
			     uint32_t *offset)
{
	const char *line = format;

	while ((line = strstr(line, "field:"))) {
		const char *semi = strchr(line, ';');
		const char *name_end = semi;
		const char *off;
		size_t len = strlen(field);

		if (!semi)
			break;
		/* the field name is the last word before the ';' */
		while (name_end > line && name_end[-1] == ']')
			name_end--;
		if ((size_t)(name_end - line) > len &&
		    !strncmp(name_end - len, field, len) &&
		    (name_end[-len - 1] == ' ' || name_end[-len - 1] == '*')) {
			off = strstr(semi, "offset:");
			if (!off)
				break;
			*offset = (uint32_t)strtoul(off + 7, NULL, 10);
			return 0;
		}
		line = semi;
	}
	return -ENOENT;
}

/*
 * Of the errors reading a tracepoint under the directories tried, the one
 * to say: a refusal (EACCES, EPERM: tracefs is there, not for this user)
 * over a directory that is not there, which the fallback path gives.
 */
static int tracefs_error(int so_far, int ret)
{
	if (so_far == -EACCES || so_far == -EPERM)
		return so_far;
	return ret == -ENOENT ? so_far : ret;
}

int dcp_munmap_tracepoint_find(struct dcp_munmap_tracepoint *tp)
{
	char path[256], buf[4096];
	int ret = -ENOENT, err = -ENOENT;

	memset(tp, 0, sizeof(*tp));
	for (int attempt = 0; attempt < 2; attempt++) {
		for (size_t i = 0; i < 2; i++) {
			snprintf(path, sizeof(path),
				 "%s/events/syscalls/sys_enter_munmap/id",
				 tracefs_dirs[i]);
			ret = dcp_read_small_file(path, buf, sizeof(buf));
			if (ret < 0) {
				err = tracefs_error(err, ret);
				continue;
			}
			tp->id = strtoull(buf, NULL, 10);
			snprintf(path, sizeof(path),
				 "%s/events/syscalls/sys_enter_munmap/format",
				 tracefs_dirs[i]);
			ret = dcp_read_small_file(path, buf, sizeof(buf));
			if (ret >= 0 &&
			    !find_field_offset(buf, "addr", &tp->addr_offset) &&
			    !find_field_offset(buf, "len", &tp->len_offset))
				return 0;
			tp->id = 0;
			return dcp_error(
				EINVAL,
				"cannot parse the format of syscalls:sys_enter_munmap");
		}
		/* tracefs is often not mounted: mount it once and retry */
		if (attempt == 0 &&
		    mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL) < 0)
			break;
	}
	return dcp_error(
		-err,
		"the syscalls:sys_enter_munmap tracepoint is not available (tracefs at %s: %s)",
		tracefs_dirs[0], strerror(-err));
}

int dcp_tracefs_event(const char *event, uint64_t *id, char *format,
		      size_t size)
{
	char path[256];
	int ret = -ENOENT, err = -ENOENT;

	for (int attempt = 0; attempt < 2; attempt++) {
		for (size_t i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s/events/%s/id",
				 tracefs_dirs[i], event);
			ret = dcp_read_small_file(path, format, size);
			if (ret < 0) {
				err = tracefs_error(err, ret);
				continue;
			}
			*id = strtoull(format, NULL, 10);
			snprintf(path, sizeof(path), "%s/events/%s/format",
				 tracefs_dirs[i], event);
			ret = dcp_read_small_file(path, format, size);
			return ret < 0 ? dcp_error(-ret,
						   "cannot read the format of "
						   "%s: %s",
						   event, strerror(-ret)) :
					 0;
		}
		if (attempt == 0 &&
		    mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL) < 0)
			break;
	}
	return dcp_error(-err,
			 "the %s tracepoint cannot be read (tracefs at %s: "
			 "%s)%s",
			 event, tracefs_dirs[0], strerror(-err),
			 err == -EACCES || err == -EPERM ?
				 ": run as root or with CAP_PERFMON" :
				 "");
}

int dcp_tracefs_field_offset(const char *format, const char *field,
			     uint32_t *offset)
{
	return find_field_offset(format, field, offset);
}
