// SPDX-License-Identifier: MIT
/*
 * The collection's walk of /proc/PID/maps: a snapshot of the executable
 * lines read until it holds still, each line parsed, the mapped file's
 * identity (build id, else dev, inode and generation) read once per
 * inode, and the MMAP2 records.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "collect_walk_internal.h"
#include "file_ident_internal.h"
#include "cookie_internal.h"
#include "log_internal.h"
#include "records_internal.h"

static uint64_t hex(const char **p)
{
	uint64_t v = 0;

	for (;; (*p)++) {
		char ch = **p;

		if (ch >= '0' && ch <= '9')
			v = v * 16 + (uint64_t)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v = v * 16 + (uint64_t)(ch - 'a' + 10);
		else
			return v;
	}
}

/*
 * The kernel writes a newline in a mapped path as "\012" (and escapes
 * nothing else): undo it, so the path matches the one live MMAP2 records
 * carry and one file keeps one name.
 */
static void unescape_newlines(char *path)
{
	char *out = path;

	for (const char *in = path; *in;) {
		if (!strncmp(in, "\\012", 4)) {
			*out++ = '\n';
			in += 4;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
}

/*
 * Parse the line at *pos (NUL-terminating it in place) and advance *pos.
 * Returns 1 for an executable mapping, 0 for another line, -EINVAL.
 */
static int maps_next(char *s, size_t len, size_t *pos, struct dcp_maps_line *l)
{
	char *line = s + *pos, *nl = memchr(line, '\n', len - *pos);
	const char *p = line;

	if (!nl)
		return -EINVAL;
	*nl = 0;
	*pos = (size_t)(nl - s) + 1;
	l->start = hex(&p);
	if (*p++ != '-')
		return -EINVAL;
	l->end = hex(&p);
	if (*p++ != ' ' || strlen(p) < 5 || l->end <= l->start)
		return -EINVAL;
	if (p[2] != 'x')
		return 0;
	l->prot = (p[0] == 'r' ? PROT_READ : 0) |
		  (p[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
	l->flags = p[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	p += 4;
	if (*p++ != ' ')
		return -EINVAL;
	l->pgoff = hex(&p);
	if (*p++ != ' ')
		return -EINVAL;
	l->maj = (uint32_t)hex(&p);
	if (*p++ != ':')
		return -EINVAL;
	l->min = (uint32_t)hex(&p);
	if (*p++ != ' ')
		return -EINVAL;
	l->ino = strtoull(p, (char **)&p, 10);
	while (*p == ' ')
		p++;
	l->path = p;
	unescape_newlines((char *)p);
	return 1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * The file behind a mapping, for its build id: through map_files (the
 * mapped file itself, even deleted; needs privilege), else by path when
 * the file there is still the one mapped.
 */
static int open_mapped(struct dcp_collection *c, int dirfd,
		       const struct dcp_maps_line *l)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "map_files/%llx-%llx",
		 (unsigned long long)l->start, (unsigned long long)l->end);
	fd = dcp_coll_open_at(c, dirfd, name, 0);
	if (fd >= 0 || l->path[0] != '/' || ends_with(l->path, " (deleted)"))
		return fd;
	fd = dcp_coll_open_at(c, AT_FDCWD, l->path, 0);
	if (fd < 0)
		return fd;
	if (!dcp_ident_fd_is(fd, l->maj, l->min, l->ino)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

struct open_mapped_ctx {
	struct dcp_collection *c;
	int dirfd;
	const struct dcp_maps_line *l;
};

static int open_mapped_cb(void *ctx)
{
	struct open_mapped_ctx *o = ctx;

	return open_mapped(o->c, o->dirfd, o->l);
}

/*
 * The identity of a mapped file, read once per (dev, ino). dev and ino come
 * from the maps line: the kernel fills MMAP2 from the same inode fields.
 */
static int file_ident(struct dcp_collection *c, int dirfd,
		      const struct dcp_maps_line *l,
		      const struct dcp_file_id **out)
{
	struct open_mapped_ctx o = { c, dirfd, l };

	return dcp_ident_cache_get(
		c->shared_idents ? c->shared_idents : &c->idents, l->maj,
		l->min, l->ino, open_mapped_cb, &o, out);
}

/* Keep the executable lines of the maps text in src: what we describe. */
static int exec_lines(const struct dcp_coll_buf *src, struct dcp_coll_buf *dst)
{
	const char *p = src->p, *end = src->p + src->len;
	int ret;

	dst->len = 0;
	ret = dcp_coll_buf_reserve(dst, src->len + 1);
	if (ret < 0)
		return ret;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *perms = memchr(p, ' ', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		if (perms && perms + 3 < p + n && perms[3] == 'x') {
			memcpy(dst->p + dst->len, p, n);
			dst->len += n;
		}
		p += n;
	}
	dst->p[dst->len] = 0;
	return 0;
}

/*
 * Read the executable lines of /proc/PID/maps into c->maps as a snapshot.
 * The kernel gives none: the file comes a page per read(), and since Linux
 * 6.17 each map is shown under its own lock, so one read that races with
 * mmap or munmap can mix the states before and after. The file is read
 * again until two reads agree on its executable lines: each of those
 * addresses then showed the same in both, and so for the whole time
 * between, the end of the first read included. (A change undone again
 * between the two reads is the one race this cannot see.) Changes to other
 * maps (malloc's, say) do not matter. After a few tries the process is
 * given up. Returns 0, 1 when it never held still, or a negative errno.
 */
static int read_maps(struct dcp_collection *c, int dirfd)
{
	int fd, ret;

	c->what = "maps";
	fd = dcp_coll_open_at(c, dirfd, "maps", 0);
	if (fd < 0)
		return fd;
	ret = dcp_coll_read_whole(c, fd, &c->rd);
	if (ret == 0)
		ret = exec_lines(&c->rd, &c->maps);
	for (int i = 0; ret == 0 && !c->maps_once; i++) {
		struct dcp_coll_buf t;

		if (i == MAPS_TRIES) {
			ret = 1;
			break;
		}
		ret = dcp_coll_read_whole(c, fd, &c->rd);
		if (ret == 0)
			ret = exec_lines(&c->rd, &c->rd2);
		if (ret < 0 || (c->rd2.len == c->maps.len &&
				!memcmp(c->rd2.p, c->maps.p, c->maps.len)))
			break;
		c->stats.maps_reread++;
		t = c->maps;
		c->maps = c->rd2;
		c->rd2 = t;
	}
	close(fd);
	return ret;
}

static int emit_mmap2(struct dcp_collection *c, pid_t pid,
		      const struct dcp_maps_line *l,
		      const struct dcp_file_id *id, const char *name)
{
	struct dcp_mmap2_record *m;
	uint16_t misc = PERF_RECORD_MISC_USER;

	if (id && id->build_id_size)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	m = dcp_coll_record_new(c, PERF_RECORD_MMAP2, misc,
				sizeof(*m) + dcp_coll_str_space(name) +
					sizeof(struct dcp_sample_id),
				pid, pid);
	if (!m)
		return -ENOMEM;
	m->pid = pid;
	m->tid = pid;
	m->addr = l->start;
	m->len = l->end - l->start;
	m->pgoff = l->pgoff;
	if (id && id->build_id_size) {
		/* as the kernel lays it out: size, 3 bytes zero, 20 bytes */
		m->build_id_size = id->build_id_size;
		memcpy(m->build_id, id->build_id, id->build_id_size);
	} else if (id) {
		m->maj = id->dev_major;
		m->min = id->dev_minor;
		m->ino = id->ino;
		m->ino_generation = id->ino_generation;
	}
	m->prot = l->prot;
	m->flags = l->flags;
	strcpy(m->filename, name);
	return 0;
}

int dcp_coll_load_maps(struct dcp_collection *c, int dirfd, pid_t pid)
{
	struct dcp_maps_line l;
	size_t pos = 0;
	int ret;

	ret = read_maps(c, dirfd);
	if (ret < 0)
		return ret;
	if (ret > 0) {
		dcp_log(DCP_LOG_WARN,
			"maps of process %d kept changing while read: skipped",
			(int)pid);
		return 0;
	}
	while (pos < c->maps.len) {
		const struct dcp_file_id *id = NULL;
		const char *name;

		ret = maps_next(c->maps.p, c->maps.len, &pos, &l);
		if (ret < 0)
			return dcp_error(EINVAL, "cannot parse '/proc/%d/maps'",
					 (int)pid);
		if (ret == 0)
			continue;
		name = l.path;
		if (dcp_record_region(l.path) == DCP_COOKIE_KIND_FILE) {
			ret = file_ident(c, dirfd, &l, &id);
			if (ret < 0)
				return ret;
			if (c->only_marked &&
			    !dcp_cookie_table_id_is_marked(c->cookies, id)) {
				c->stats.maps_skipped_unmarked++;
				continue;
			}
		} else if (!l.path[0]) {
			name = "//anon";
		}
		ret = emit_mmap2(c, pid, &l, id, name);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The first executable mapping of the main executable: maps is read a page
 * at a time only until that line (it is near the start).
 */
int dcp_coll_load_exe_map(struct dcp_collection *c, int dirfd, pid_t pid,
			  const char *exe)
{
	struct dcp_maps_line l;
	size_t pos = 0;
	ssize_t n;
	int fd, ret = 0;

	c->what = "maps";
	fd = dcp_coll_open_at(c, dirfd, "maps", 0);
	if (fd < 0)
		return fd;
	c->rd.len = 0;
	for (;;) {
		ret = dcp_coll_buf_reserve(&c->rd, 4097);
		if (ret < 0)
			break;
		n = pread(fd, c->rd.p + c->rd.len, c->rd.cap - c->rd.len - 1,
			  c->rd.len);
		c->syscalls++;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		c->rd.len += n;
		c->rd.p[c->rd.len] = 0;
		while (memchr(c->rd.p + pos, '\n', c->rd.len - pos)) {
			ret = maps_next(c->rd.p, c->rd.len, &pos, &l);
			if (ret < 0) {
				ret = dcp_error(EINVAL,
						"cannot parse '/proc/%d/maps'",
						(int)pid);
				goto out;
			}
			if (ret > 0 && !strcmp(l.path, exe)) {
				const struct dcp_file_id *id;

				ret = file_ident(c, dirfd, &l, &id);
				if (ret == 0)
					ret = emit_mmap2(c, pid, &l, id, exe);
				goto out;
			}
		}
	}
out:
	close(fd);
	return ret;
}
