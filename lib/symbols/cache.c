// SPDX-License-Identifier: MIT
/*
 * The symbol cache. Two things cost a recording tens of milliseconds each
 * time they are derived, always with the same result for the same build
 * id: the kernel's symbol table (the kernel formats /proc/kallsyms line by
 * line on every read) and the DWARF of separate debug files whose sections
 * are compressed (Debian's -dbg packages; libdw inflates every debug
 * section when it opens one). Both are kept here, named by build id, and
 * derived again only when missing or damaged: an entry is a copy, never
 * the only source.
 *
 * The recorder runs as root and reads files of every user, so the cache
 * must be ours alone: the directory belongs to the effective user, is not
 * writable by anyone else and is not a symlink; entries are opened
 * without following symlinks and created 0600 under a temporary name,
 * then renamed into place.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "log_internal.h"

/* Where the cache lives; NULL: nowhere (caching is off). */
static char *cache_path(void)
{
	const char *env = getenv("DCPROF_CACHE_DIR");
	const char *base;
	char *path = NULL;

	if (env)
		return env[0] ? strdup(env) : NULL;
	if (geteuid() == 0)
		return strdup("/var/cache/dcprof");
	base = getenv("XDG_CACHE_HOME");
	if (base && base[0] == '/') {
		if (asprintf(&path, "%s/dcprof", base) < 0)
			return NULL;
		return path;
	}
	base = getenv("HOME");
	if (!base || base[0] != '/')
		return NULL;
	/* ~/.cache itself, as other programs make it. */
	if (asprintf(&path, "%s/.cache", base) < 0)
		return NULL;
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		free(path);
		return NULL;
	}
	free(path);
	if (asprintf(&path, "%s/.cache/dcprof", base) < 0)
		return NULL;
	return path;
}

void dcp_cache_open(struct dcp_cache *c)
{
	struct stat st;
	int fd;

	c->dir_fd = -1;
	c->path = cache_path();
	if (!c->path)
		return;
	if (mkdir(c->path, 0700) < 0 && errno != EEXIST) {
		dcp_log(DCP_LOG_INFO, "no symbol cache: cannot create '%s': %s",
			c->path, strerror(errno));
		goto off;
	}
	fd = open(c->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		dcp_log(DCP_LOG_WARN, "not using the symbol cache '%s': %s",
			c->path,
			lstat(c->path, &st) == 0 && S_ISLNK(st.st_mode) ?
				"it is a symlink" :
				strerror(err));
		goto off;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		dcp_log(DCP_LOG_WARN,
			"not using the symbol cache '%s': it must belong to "
			"uid %u and be writable by no one else",
			c->path, (unsigned)geteuid());
		close(fd);
		goto off;
	}
	c->dir_fd = fd;
	return;
off:
	free(c->path);
	c->path = NULL;
}

void dcp_cache_close(struct dcp_cache *c)
{
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	c->dir_fd = -1;
	free(c->path);
	c->path = NULL;
}

int dcp_cache_entry_open(const struct dcp_cache *c, const char *name)
{
	struct stat st;
	int fd;

	if (c->dir_fd < 0)
		return -ENOENT;
	fd = openat(c->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Bytes held by the directory's regular files. */
static unsigned long long cache_size(const struct dcp_cache *c)
{
	unsigned long long total = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd = openat(c->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d)))
		if (fstatat(c->dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
			    0 &&
		    S_ISREG(st.st_mode))
			total += (unsigned long long)st.st_size;
	closedir(d);
	return total;
}

int dcp_cache_entry_create(const struct dcp_cache *c, char *tmp,
			   size_t tmp_size)
{
	static unsigned serial;
	int fd;

	if (c->dir_fd < 0)
		return -ENOENT;
	if (cache_size(c) >= DCP_CACHE_MAX_BYTES) {
		dcp_log(DCP_LOG_INFO,
			"symbol cache '%s' is full (%llu MiB): nothing added",
			c->path, DCP_CACHE_MAX_BYTES >> 20);
		return -ENOSPC;
	}
	snprintf(tmp, tmp_size, ".new-%ld-%u", (long)getpid(), serial++);
	fd = openat(c->dir_fd, tmp,
		    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

int dcp_cache_entry_commit(const struct dcp_cache *c, int fd, const char *tmp,
			   const char *name)
{
	int err = 0;

	if (fsync(fd) < 0 || renameat(c->dir_fd, tmp, c->dir_fd, name) < 0)
		err = -errno;
	close(fd);
	if (err) {
		unlinkat(c->dir_fd, tmp, 0);
		dcp_log(DCP_LOG_INFO, "cannot add '%s' to the symbol cache: %s",
			name, strerror(-err));
	}
	return err;
}

void dcp_cache_entry_abort(const struct dcp_cache *c, int fd, const char *tmp)
{
	close(fd);
	unlinkat(c->dir_fd, tmp, 0);
}
