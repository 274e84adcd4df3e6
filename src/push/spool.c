// SPDX-License-Identifier: MIT
/*
 * The push spool: one file per piece of a period waiting to be sent,
 * named FROM-UNTIL-HZ-PART.pb.gz with zero-padded numbers so that the
 * oldest sorts first, written under a temporary name and renamed, so that
 * the sender (and a later run, after a crash) only ever sees whole files.
 * What the server can never take is moved into set-aside/, bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "push_internal.h"

static bool parse_name(const char *name, struct push_item *item)
{
	unsigned long long from, until;
	unsigned hz, part = 0;
	int n = 0;

	if (strlen(name) >= sizeof(item->name))
		return false;
	if (sscanf(name, "%20llu-%20llu-%10u-%4u.pb.gz%n", &from, &until, &hz,
		   &part, &n) != 4 ||
	    name[n]) {
		/* a spool of a dcprof from before pieces */
		n = 0;
		part = 0;
		if (sscanf(name, "%20llu-%20llu-%10u.pb.gz%n", &from, &until,
			   &hz, &n) != 3 ||
		    name[n])
			return false;
	}
	snprintf(item->name, sizeof(item->name), "%s", name);
	item->from = from;
	item->until = until;
	item->hz = hz;
	item->part = part;
	return true;
}

const char *push_period_name(const struct push_item *item, char *buf,
			     size_t size)
{
	time_t t = (time_t)item->from;
	struct tm tm;
	size_t n = 0;

	if (gmtime_r(&t, &tm))
		n = strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!n)
		n = (size_t)snprintf(buf, size, "%" PRIu64, item->from);
	if (item->part && n < size)
		snprintf(buf + n, size - n, " (request %u)", item->part + 1);
	return buf;
}

int push_spool_oldest(const char *dir, struct push_item *item)
{
	struct push_item cand;
	struct dirent *de;
	struct stat st;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!parse_name(de->d_name, &cand) ||
		    (found && strcmp(cand.name, item->name) >= 0) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !S_ISREG(st.st_mode))
			continue;
		cand.size = (uint64_t)st.st_size;
		*item = cand;
		found = true;
	}
	closedir(d);
	return found;
}

uint64_t push_spool_size(const char *dir)
{
	struct push_item item;
	struct dirent *de;
	struct stat st;
	uint64_t total = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (parse_name(de->d_name, &item) &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
			    0 &&
		    S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	closedir(d);
	return total;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int push_spool_write(const char *dir, struct push_item *item, const void *body,
		     size_t len, struct push_error *err)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	int fd, ret;

	item->size = len;
	snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", dir);
	/* mkostemp: O_EXCL, 0600, never a planted link */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err->msg, sizeof(err->msg), "cannot create '%s': %s",
			 tmp, strerror(-ret));
		return ret;
	}
	ret = write_all(fd, body, len);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	/*
	 * Never over another piece: two periods can have the same whole
	 * seconds (a run that starts in the second the last one ended, cuts
	 * less than a second apart). link() fails on a name that exists, so
	 * the piece takes the next free part, after the other's.
	 */
	for (;;) {
		snprintf(item->name, sizeof(item->name),
			 "%020" PRIu64 "-%020" PRIu64 "-%u-%04u.pb.gz",
			 item->from, item->until, item->hz, item->part);
		snprintf(path, sizeof(path), "%s/%s", dir, item->name);
		if (ret || link(tmp, path) == 0)
			break;
		if (errno != EEXIST || item->part >= 9999) {
			ret = -errno;
			break;
		}
		item->part++;
	}
	unlink(tmp);
	if (ret)
		snprintf(err->msg, sizeof(err->msg), "cannot write '%s': %s",
			 path, strerror(-ret));
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int push_spool_set_aside(const char *dir, const struct push_item *item)
{
	char sub[PATH_MAX], from[PATH_MAX + 128], to[PATH_MAX + 512];
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	int removed = 0;
	DIR *d;

	snprintf(sub, sizeof(sub), "%s/%s", dir, PUSH_SET_ASIDE_DIR);
	if (mkdir(sub, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* never a link planted in its place */
	if (lstat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	snprintf(from, sizeof(from), "%s/%s", dir, item->name);
	/* never over a piece set aside before under the same name (a
	 * later run's period of the same seconds): the next free part */
	for (struct push_item it = *item;; it.part++) {
		snprintf(to, sizeof(to),
			 "%s/%020" PRIu64 "-%020" PRIu64 "-%u-%04u.pb.gz", sub,
			 it.from, it.until, it.hz, it.part);
		if (link(from, to) == 0)
			break;
		if (errno != EEXIST || it.part >= 9999)
			return -errno;
	}
	unlink(from);
	d = opendir(sub);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct push_item it;
		char **g;

		if (!parse_name(de->d_name, &it))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			g = realloc(names, cap * sizeof(*g));
			if (!g)
				break;
			names = g;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n > PUSH_SET_ASIDE_MAX) {
		qsort(names, n, sizeof(*names), cmp_names);
		for (size_t i = 0; i < n - PUSH_SET_ASIDE_MAX; i++) {
			snprintf(to, sizeof(to), "%s/%s", sub, names[i]);
			removed += unlink(to) == 0;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return removed;
}
