// SPDX-License-Identifier: MIT
/*
 * Output files of the reading commands, written whole or not at all: a
 * temporary file beside the destination, renamed over it once complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "output.h"

/* Whether path is a device or a FIFO (not through a symlink). */
static bool is_device(const char *path)
{
	struct stat st;

	return !lstat(path, &st) &&
	       (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

static int open_device(struct cmd_output *o)
{
	struct stat st;
	int fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);

	/* replaced by something else between the two looks: refused */
	if (fd >= 0 && (fstat(fd, &st) ||
			!(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))) {
		close(fd);
		fd = -1;
		errno = EEXIST;
	}
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		return cmd_error("cannot write '%s': %s", o->path,
				 strerror(err));
	}
	o->device = true;
	return 0;
}

int cmd_output_open(struct cmd_output *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	int fd = -1, err = EEXIST;

	o->path = path;
	o->tmp = NULL;
	o->f = NULL;
	o->device = false;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (is_device(path))
		return open_device(o);
	if (!*base)
		return cmd_error("cannot write '%s': %s", path,
				 strerror(EISDIR));
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		uint64_t r = 0;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = ((uint64_t)getpid() << 32) ^ (uint64_t)tries;
		free(o->tmp);
		if (asprintf(&o->tmp, "%.*s.%s.%016" PRIx64 ".tmp", dir_len,
			     path, base, r) < 0) {
			o->tmp = NULL;
			return cmd_error("out of memory");
		}
		fd = open(o->tmp,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd < 0 && (err = errno) != EEXIST)
			break;
	}
	if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		unlink(o->tmp);
		fd = -1;
	}
	if (fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return cmd_error("cannot create '%s': %s", path, strerror(err));
	}
	return 0;
}

int cmd_output_close(struct cmd_output *o, int status)
{
	int err = 0;

	if (o->device) {
		if ((fflush(o->f) || ferror(o->f)) && !status)
			status = cmd_error("cannot write '%s': %s", o->path,
					   strerror(errno ? errno : EIO));
		if (fclose(o->f) && !status)
			status = cmd_error("cannot write '%s': %s", o->path,
					   strerror(errno ? errno : EIO));
		o->f = NULL;
		o->device = false;
		return status;
	}
	if (!o->tmp)
		return status ? status : cmd_finish_stdout(0);
	if (fflush(o->f) || ferror(o->f))
		err = errno ? errno : EIO;
	if (!err && fsync(fileno(o->f)))
		err = errno;
	if (fclose(o->f) && !err)
		err = errno ? errno : EIO;
	o->f = NULL;
	if (!status && err)
		status = cmd_error("cannot write '%s': %s", o->path,
				   strerror(err));
	if (!status && rename(o->tmp, o->path))
		status = cmd_error("cannot write '%s': %s", o->path,
				   strerror(errno));
	if (status)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return status;
}
