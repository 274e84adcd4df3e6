// SPDX-License-Identifier: MIT
/*
 * The identities of mapped files, read once per (device, inode) for a
 * collection walk, or while a long-lived cache holds the file open: the
 * build id, else the inode generation, from the mapped file itself. Shared
 * by the /proc walk and the kernel's (bpf_iter) walk. And what makes two
 * identities one file (cookie_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "file_ident_internal.h"
#include "log_internal.h"

void dcp_file_id_from_info(struct dcp_file_id *id,
			   const struct dcp_cookie_info *info)
{
	size_t n = info->build_id_size < DCP_BUILD_ID_MAX ?
			   info->build_id_size :
			   DCP_BUILD_ID_MAX;

	memset(id, 0, sizeof(*id));
	memcpy(id->build_id, info->build_id, n);
	id->build_id_size = (uint8_t)n;
	id->dev_major = info->dev_major;
	id->dev_minor = info->dev_minor;
	id->ino = info->ino;
	id->ino_generation = info->ino_generation;
}

bool dcp_file_id_equal(const struct dcp_file_id *a, const struct dcp_file_id *b)
{
	if (a->build_id_size != b->build_id_size)
		return false;
	if (a->build_id_size)
		return memcmp(a->build_id, b->build_id, a->build_id_size) == 0;
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->ino == b->ino && a->ino_generation == b->ino_generation;
}

static size_t ident_slot(const struct dcp_ident_cache *c, uint32_t maj,
			 uint32_t min, uint64_t ino)
{
	uint64_t h = (ino ^ ((uint64_t)maj << 52) ^ ((uint64_t)min << 32)) *
		     0x9e3779b97f4a7c15ull;
	size_t mask = c->cap - 1;
	size_t i = (size_t)(h >> 20) & mask;

	while (c->e[i].used && !(c->e[i].ino == ino && c->e[i].maj == maj &&
				 c->e[i].min == min))
		i = (i + 1) & mask;
	return i;
}

static int ident_cache_grow(struct dcp_ident_cache *c)
{
	struct dcp_ident_entry *old = c->e;
	size_t old_cap = c->cap;

	c->cap = old_cap ? old_cap * 2 : 256;
	c->e = calloc(c->cap, sizeof(*c->e));
	if (!c->e) {
		c->e = old;
		c->cap = old_cap;
		return dcp_error(ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			c->e[ident_slot(c, old[i].maj, old[i].min,
					old[i].ino)] = old[i];
	free(old);
	return 0;
}

int dcp_ident_cache_get(struct dcp_ident_cache *c, uint32_t maj, uint32_t min,
			uint64_t ino, dcp_ident_open_fn open_file, void *ctx,
			const struct dcp_file_id **out)
{
	struct dcp_ident_entry *e;
	unsigned int gen = 0;
	int fd, ret;

	if (c->held_max && c->held >= c->held_max) {
		dcp_ident_cache_free(c); /* *out of earlier calls is gone */
		c->resets++;
	}
	if (c->used * 2 >= c->cap) {
		ret = ident_cache_grow(c);
		if (ret < 0)
			return ret;
	}
	e = &c->e[ident_slot(c, maj, min, ino)];
	if (e->used && (!c->held_max || e->fd >= 0)) {
		*out = &e->id;
		return 0;
	}
	if (!e->used)
		c->used++;
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->fd = -1;
	e->maj = maj;
	e->min = min;
	e->ino = ino;
	e->id.dev_major = maj;
	e->id.dev_minor = min;
	e->id.ino = ino;
	fd = open_file(ctx);
	if (fd >= 0) {
		ret = dcp_build_id_read_fd(fd, e->id.build_id);
		if (ret > 0) {
			e->id.build_id_size = (uint8_t)ret;
		} else {
			memset(e->id.build_id, 0, sizeof(e->id.build_id));
			/* live records carry the inode generation too */
			if (ioctl(fd, FS_IOC_GETVERSION, &gen) == 0)
				e->id.ino_generation = gen;
		}
		if (c->held_max) {
			e->fd = fd;
			c->held++;
		} else {
			close(fd);
		}
	}
	*out = &e->id;
	return 0;
}

const struct dcp_file_id *dcp_ident_cache_find(const struct dcp_ident_cache *c,
					       uint32_t maj, uint32_t min,
					       uint64_t ino)
{
	const struct dcp_ident_entry *e;

	if (!c->cap)
		return NULL;
	e = &c->e[ident_slot(c, maj, min, ino)];
	return e->used && (!c->held_max || e->fd >= 0) ? &e->id : NULL;
}

bool dcp_ident_fd_is(int fd, uint32_t maj, uint32_t min, uint64_t ino)
{
	struct stat st;

	return fstat(fd, &st) == 0 && major(st.st_dev) == maj &&
	       minor(st.st_dev) == min && st.st_ino == ino;
}

void dcp_ident_cache_free(struct dcp_ident_cache *c)
{
	for (size_t i = 0; c->held && i < c->cap; i++)
		if (c->e[i].used && c->e[i].fd >= 0)
			close(c->e[i].fd);
	free(c->e);
	c->e = NULL;
	c->cap = c->used = c->held = 0;
}
