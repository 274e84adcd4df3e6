// SPDX-License-Identifier: MIT
/*
 * Path matching: which of a cookie's paths still holds the sampled file,
 * by build id, else by device and inode, for reading after the recording
 * (and its pinned handles) ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "log_internal.h"
#include "symbolize_internal.h"

/* The identity check for a path that is not the pinned handle. */
static bool file_matches(int fd, const struct dcp_cookie_info *info)
{
	if (info->build_id_size) {
		uint8_t id[DCP_BUILD_ID_MAX];
		int n = dcp_build_id_read_fd(fd, id);

		return n == info->build_id_size &&
		       memcmp(id, info->build_id, (size_t)n) == 0;
	} else {
		struct stat st;

		return fstat(fd, &st) == 0 &&
		       st.st_dev == makedev(info->dev_major, info->dev_minor) &&
		       (uint64_t)st.st_ino == info->ino;
	}
}

/* Open the first of the cookie's paths that still holds its file. */
static int open_matching_path(const struct dcp_cookie_info *info,
			      const char **path)
{
	size_t nr = info->nr_paths;
	bool opened = false;

	for (size_t i = 0; i < (nr ? nr : 1); i++) {
		const char *p = nr ? info->paths[i] : info->name;
		int fd;

		if (!p || p[0] != '/')
			continue;
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		opened = true;
		if (file_matches(fd, info)) {
			*path = p;
			return fd;
		}
		close(fd);
	}
	if (opened)
		return dcp_error(ESTALE,
				 "'%s' was replaced: no path holds the sampled "
				 "file any more",
				 info->name);
	return dcp_error(ENOENT, "cannot open '%s': no path of it is left",
			 info->name);
}

int dcp_symbolizer_open_object(const struct dcp_cookie_info *info,
			       const char **path)
{
	const char *used = NULL;
	int fd = open_matching_path(info, &used);

	if (path)
		*path = used;
	return fd;
}
