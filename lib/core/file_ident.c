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
#include "grow.h"
#include "hash.h"
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

static uint64_t ident_hash(uint32_t maj, uint32_t min, uint64_t ino)
{
	return dcp_hash_mix((uint64_t)maj << 32 | min, ino);
}

static uint64_t ident_hash_of(const void *ctx, uint32_t i)
{
	const struct dcp_ident_entry *e =
		&((const struct dcp_ident_cache *)ctx)->e[i];

	return ident_hash(e->maj, e->min, e->ino);
}

/* The entry of (maj, min, ino), else NULL; *end gets its slot, else the
 * free slot where it would go. */
static struct dcp_ident_entry *ident_find(const struct dcp_ident_cache *c,
					  uint32_t maj, uint32_t min,
					  uint64_t ino, uint64_t h, size_t *end)
{
	size_t pos;
	uint32_t i;

	dcp_index_for_each(&c->index, h, pos, i) {
		struct dcp_ident_entry *e = &c->e[i];

		if (e->ino == ino && e->maj == maj && e->min == min) {
			*end = pos;
			return e;
		}
	}
	*end = pos;
	return NULL;
}

/* A new entry of (maj, min, ino) at the end of the array, found through
 * the index; NULL with a message when out of memory. */
static struct dcp_ident_entry *ident_add(struct dcp_ident_cache *c,
					 uint32_t maj, uint32_t min,
					 uint64_t ino, uint64_t h, size_t pos)
{
	struct dcp_ident_entry *e;

	if (c->nr >= DCP_INDEX_MAX_ID)
		return dcp_error_null(ENOMEM, "out of memory");
	e = dcp_grow(c->e, &c->cap, c->nr + 1, sizeof(*e));
	if (!e)
		return dcp_error_null(ENOMEM, "out of memory");
	c->e = e;
	if (dcp_index_add(&c->index, pos, h, (uint32_t)c->nr, ident_hash_of,
			  c) < 0)
		return dcp_error_null(ENOMEM, "out of memory");
	e = &c->e[c->nr++];
	e->maj = maj;
	e->min = min;
	e->ino = ino;
	return e;
}

int dcp_ident_cache_get(struct dcp_ident_cache *c, uint32_t maj, uint32_t min,
			uint64_t ino, dcp_ident_open_fn open_file, void *ctx,
			const struct dcp_file_id **out)
{
	uint64_t h = ident_hash(maj, min, ino);
	struct dcp_ident_entry *e;
	unsigned int gen = 0;
	size_t pos;
	int fd, ret;

	if (c->held_max && c->held >= c->held_max) {
		dcp_ident_cache_free(c); /* *out of earlier calls is gone */
		c->resets++;
	}
	if (!c->index.slots && dcp_index_init(&c->index, 256) < 0)
		return dcp_error(ENOMEM, "out of memory");
	e = ident_find(c, maj, min, ino, h, &pos);
	if (e && (!c->held_max || e->fd >= 0)) {
		*out = &e->id;
		return 0;
	}
	/* an entry not trusted is read again in place */
	if (!e && !(e = ident_add(c, maj, min, ino, h, pos)))
		return -ENOMEM;
	memset(&e->id, 0, sizeof(e->id));
	e->fd = -1;
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
	size_t pos;

	if (!c->index.slots)
		return NULL;
	e = ident_find(c, maj, min, ino, ident_hash(maj, min, ino), &pos);
	return e && (!c->held_max || e->fd >= 0) ? &e->id : NULL;
}

int dcp_ident_cache_dup(const struct dcp_ident_cache *c, uint32_t maj,
			uint32_t min, uint64_t ino)
{
	const struct dcp_ident_entry *e;
	size_t pos;
	int fd;

	if (!c->index.slots)
		return -ENOENT;
	e = ident_find(c, maj, min, ino, ident_hash(maj, min, ino), &pos);
	if (!e || e->fd < 0)
		return -ENOENT;
	fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

bool dcp_ident_fd_is(int fd, uint32_t maj, uint32_t min, uint64_t ino)
{
	struct stat st;

	return fstat(fd, &st) == 0 && major(st.st_dev) == maj &&
	       minor(st.st_dev) == min && st.st_ino == ino;
}

size_t dcp_ident_cache_release(struct dcp_ident_cache *c,
			       bool (*keep)(const struct dcp_file_id *id,
					    void *ctx),
			       void *ctx)
{
	size_t closed = 0;

	for (size_t i = 0; c->held && i < c->nr; i++) {
		struct dcp_ident_entry *e = &c->e[i];

		if (e->fd < 0 || keep(&e->id, ctx))
			continue;
		close(e->fd);
		e->fd = -1;
		c->held--;
		closed++;
	}
	return closed;
}

void dcp_ident_cache_free(struct dcp_ident_cache *c)
{
	for (size_t i = 0; c->held && i < c->nr; i++)
		if (c->e[i].fd >= 0)
			close(c->e[i].fd);
	free(c->e);
	c->e = NULL;
	c->nr = c->cap = c->held = 0;
	dcp_index_free(&c->index);
}
