// SPDX-License-Identifier: MIT
/*
 * The push spool: one file per period waiting to be sent, named
 * FROM-UNTIL-HZ.pb.gz with zero-padded numbers so that the oldest sorts
 * first, written under a temporary name and renamed, so that the sender
 * (and a later run, after a crash) only ever sees whole files.
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
#include <unistd.h>

#include "push.h"

static bool parse_name(const char *name, struct push_item *item)
{
	unsigned long long from, until;
	unsigned hz;
	int n = 0;

	if (sscanf(name, "%20llu-%20llu-%10u.pb.gz%n", &from, &until, &hz,
		   &n) != 3 ||
	    name[n] || strlen(name) >= sizeof(item->name))
		return false;
	snprintf(item->name, sizeof(item->name), "%s", name);
	item->from = from;
	item->until = until;
	item->hz = hz;
	return true;
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

	snprintf(item->name, sizeof(item->name),
		 "%020" PRIu64 "-%020" PRIu64 "-%u.pb.gz", item->from,
		 item->until, item->hz);
	item->size = len;
	snprintf(path, sizeof(path), "%s/%s", dir, item->name);
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
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret) {
		unlink(tmp);
		snprintf(err->msg, sizeof(err->msg), "cannot write '%s': %s",
			 path, strerror(-ret));
	}
	return ret;
}
