// SPDX-License-Identifier: MIT
/*
 * The collection: processes that existed before recording, described as
 * the same COMM/FORK/MMAP2 records the kernel sends for live ones.
 *
 * The walk is a cursor: a getdents64 position in /proc (or an index in the
 * pid list) and the records of the current process, built in memory. One
 * process is read from /proc completely, checked, and only then emitted,
 * so whatever the caller's buffer size each /proc file is read once and a
 * process is either emitted whole or not at all.
 */
#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "collect_internal.h"
#include "cookie_internal.h"
#include "log_internal.h"
#include "records_internal.h"

#define COMM_MAX 16 /* TASK_COMM_LEN: what live COMM records carry */
#define MAPS_TRIES 4 /* reads of a changing maps file before giving up */
#define DENTS_SIZE 16384

/* A process that disappeared (or was replaced) while it was read. */
#define GONE (-ESRCH)

struct buf {
	char *p;
	size_t len, cap;
};

/* A directory read with getdents64 from a buffer we own. */
struct dents {
	int fd;
	size_t pos, len;
	char *buf;
};

/* File identity by (dev, ino), as /proc/PID/maps shows it. */
struct ident_entry {
	bool used;
	uint32_t maj, min;
	uint64_t ino;
	struct dcp_file_id id;
};

struct target {
	pid_t pid;
	unsigned long long start; /* clock ticks after boot */
};

struct proc_stat {
	char comm[COMM_MAX];
	pid_t ppid;
	long threads;
	unsigned long long start;
};

/* One executable line of /proc/PID/maps. */
struct maps_line {
	uint64_t start, end, pgoff;
	uint32_t prot, flags;
	uint32_t maj, min;
	uint64_t ino;
	const char *path; /* NUL-terminated in place; "" for anonymous */
};

struct dcp_collection {
	enum dcp_collection_kind kind;
	struct dcp_cookie_table *cookies;
	bool own_cookies;
	bool only_marked;

	struct dents proc; /* whole system: the cursor in /proc */
	struct target *targets; /* pid list */
	size_t nr_targets, next_target;
	bool done;

	uint64_t time; /* trailer time: when the collection was opened */
	uint64_t boot_minus_mono; /* CLOCK_BOOTTIME - CLOCK_MONOTONIC */
	long clk_tck;

	/* records of the current process, emitted from out_pos */
	struct buf out;
	size_t out_pos;

	struct buf rd, rd2; /* /proc file contents */
	struct buf maps; /* the executable lines of a maps file */
	char *dents_buf; /* for task directories */
	char *link; /* PATH_MAX */

	struct ident_entry *idents;
	size_t idents_cap, idents_used;

	int deferred_err; /* an error met after records were written */
	char *deferred_msg;

	const char *what; /* the /proc file being read, for messages */
	struct dcp_collection_stats stats;
	uint64_t syscalls;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool is_gone(int err)
{
	err = err < 0 ? -err : err;
	return err == ENOENT || err == ESRCH;
}

static int buf_reserve(struct buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->len + n <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return dcp_error(ENOMEM, "out of memory");
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Read a /proc file from offset 0 to its end. */
static int read_whole(struct dcp_collection *c, int fd, struct buf *b)
{
	ssize_t n;
	int ret;

	b->len = 0;
	for (;;) {
		ret = buf_reserve(b, 4097);
		if (ret < 0)
			return ret;
		n = pread(fd, b->p + b->len, b->cap - b->len - 1, b->len);
		c->syscalls++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		b->len += n;
	}
	b->p[b->len] = 0;
	return 0;
}

/* "pid (comm) S ppid ... starttime(22) ..."; comm may hold ')' and ' '. */
static int parse_stat(const char *s, size_t len, struct proc_stat *st)
{
	const char *open = memchr(s, '(', len);
	const char *close = NULL, *p;
	size_t n;
	char *end;

	for (p = s + len; p > s; p--)
		if (p[-1] == ')') {
			close = p - 1;
			break;
		}
	if (!open || !close || close < open)
		return -EINVAL;
	n = close - open - 1;
	if (n >= COMM_MAX)
		n = COMM_MAX - 1; /* kernel threads may show longer names */
	memcpy(st->comm, open + 1, n);
	st->comm[n] = 0;
	p = close + 1;
	/* fields 3 (state) .. 22 (starttime), space-separated */
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return -EINVAL;
		if (field == 4)
			st->ppid = (pid_t)strtol(p, NULL, 10);
		if (field == 20)
			st->threads = strtol(p, NULL, 10);
		if (field == 22) {
			errno = 0;
			st->start = strtoull(p, &end, 10);
			if (end == p || errno)
				return -EINVAL;
			return 0;
		}
		while (*p && *p != ' ')
			p++;
	}
	return -EINVAL;
}

/* Read (or re-read) a stat file open on fd. */
static int read_stat(struct dcp_collection *c, int fd, struct proc_stat *st)
{
	ssize_t n;
	int ret;

	ret = buf_reserve(&c->rd, 4096);
	if (ret < 0)
		return ret;
	/* a stat file is made whole by one read: when it came short of
	 * the buffer, the read that would return 0 is not needed */
	n = pread(fd, c->rd.p, c->rd.cap - 1, 0);
	c->syscalls++;
	if (n < 0)
		return -errno;
	if ((size_t)n < c->rd.cap - 1) {
		c->rd.len = (size_t)n;
		c->rd.p[n] = 0;
	} else {
		ret = read_whole(c, fd, &c->rd);
		if (ret < 0)
			return ret;
	}
	if (c->rd.len == 0)
		return GONE;
	if (parse_stat(c->rd.p, c->rd.len, st) < 0)
		return dcp_error(EINVAL, "cannot parse a stat file in /proc");
	return 0;
}

static int open_at(struct dcp_collection *c, int dirfd, const char *path,
		   int flags)
{
	int fd = openat(dirfd, path, flags | O_RDONLY | O_CLOEXEC);

	c->syscalls++;
	return fd < 0 ? -errno : fd;
}

static int stat_at(struct dcp_collection *c, int dirfd, const char *path,
		   struct proc_stat *st)
{
	int fd = open_at(c, dirfd, path, 0);
	int ret;

	if (fd < 0)
		return fd;
	ret = read_stat(c, fd, st);
	close(fd);
	return ret;
}

static uint64_t start_ns(const struct dcp_collection *c,
			 unsigned long long ticks)
{
	uint64_t boot = ticks * 1000000000ull / (uint64_t)c->clk_tck;

	/* /proc shows start times after boot; records use CLOCK_MONOTONIC */
	return boot > c->boot_minus_mono ? boot - c->boot_minus_mono : 0;
}

/* ---- directories ------------------------------------------------------- */

/* The next numeric entry of a directory: 1, 0 at its end, or -errno. */
static int dents_next(struct dcp_collection *c, struct dents *d, pid_t *out)
{
	for (;;) {
		struct dirent64 *e;
		char *end;
		long v;

		if (d->pos >= d->len) {
			ssize_t n = getdents64(d->fd, d->buf, DENTS_SIZE);

			c->syscalls++;
			if (n < 0)
				return -errno;
			if (n == 0)
				return 0;
			d->len = n;
			d->pos = 0;
		}
		e = (struct dirent64 *)(d->buf + d->pos);
		d->pos += e->d_reclen;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		v = strtol(e->d_name, &end, 10);
		if (*end || v <= 0)
			continue;
		*out = (pid_t)v;
		return 1;
	}
}

/* ---- records -------------------------------------------------------------- */

static size_t str_space(const char *s)
{
	return (strlen(s) + 1 + 7) & ~(size_t)7;
}

/* Append a zeroed record of size bytes (trailer included) to c->out. */
static void *record_new(struct dcp_collection *c, uint32_t type, uint16_t misc,
			size_t size, uint32_t pid, uint32_t tid)
{
	struct perf_event_header *h;
	struct dcp_sample_id *sid;

	if (size > UINT16_MAX) {
		dcp_error(E2BIG, "record of %zu bytes is too large", size);
		return NULL;
	}
	if (buf_reserve(&c->out, size) < 0)
		return NULL;
	h = (struct perf_event_header *)(c->out.p + c->out.len);
	memset(h, 0, size);
	h->type = type;
	h->misc = misc | DCP_RECORD_MISC_INJECTED;
	h->size = (uint16_t)size;
	sid = (struct dcp_sample_id *)((char *)h + size - sizeof(*sid));
	sid->pid = pid;
	sid->tid = tid;
	sid->time = c->time;
	sid->cpu = (uint32_t)-1;
	c->out.len += size;
	return h;
}

static int emit_task(struct dcp_collection *c, pid_t pid, pid_t ppid, pid_t tid,
		     pid_t ptid, const struct proc_stat *st)
{
	struct dcp_task_record *f;
	struct dcp_comm_record *r;

	f = record_new(c, PERF_RECORD_FORK, 0,
		       sizeof(*f) + sizeof(struct dcp_sample_id), pid, tid);
	if (!f)
		return -ENOMEM;
	f->pid = pid;
	f->ppid = ppid;
	f->tid = tid;
	f->ptid = ptid;
	f->time = start_ns(c, st->start);

	r = record_new(c, PERF_RECORD_COMM, 0,
		       sizeof(*r) + str_space(st->comm) +
			       sizeof(struct dcp_sample_id),
		       pid, tid);
	if (!r)
		return -ENOMEM;
	r->pid = pid;
	r->tid = tid;
	strcpy(r->comm, st->comm);
	return 0;
}

static int emit_mmap2(struct dcp_collection *c, pid_t pid,
		      const struct maps_line *l, const struct dcp_file_id *id,
		      const char *name)
{
	struct dcp_mmap2_record *m;
	uint16_t misc = PERF_RECORD_MISC_USER;

	if (id && id->build_id_size)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	m = record_new(c, PERF_RECORD_MMAP2, misc,
		       sizeof(*m) + str_space(name) +
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

/* ---- maps ------------------------------------------------------------------ */

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
static int maps_next(char *s, size_t len, size_t *pos, struct maps_line *l)
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

static size_t ident_slot(const struct dcp_collection *c, uint32_t maj,
			 uint32_t min, uint64_t ino)
{
	uint64_t h = (ino ^ ((uint64_t)maj << 52) ^ ((uint64_t)min << 32)) *
		     0x9e3779b97f4a7c15ull;
	size_t mask = c->idents_cap - 1;
	size_t i = (size_t)(h >> 20) & mask;

	while (c->idents[i].used &&
	       !(c->idents[i].ino == ino && c->idents[i].maj == maj &&
		 c->idents[i].min == min))
		i = (i + 1) & mask;
	return i;
}

static int idents_grow(struct dcp_collection *c)
{
	struct ident_entry *old = c->idents;
	size_t old_cap = c->idents_cap;

	c->idents_cap = old_cap ? old_cap * 2 : 256;
	c->idents = calloc(c->idents_cap, sizeof(*c->idents));
	if (!c->idents) {
		c->idents = old;
		c->idents_cap = old_cap;
		return dcp_error(ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			c->idents[ident_slot(c, old[i].maj, old[i].min,
					     old[i].ino)] = old[i];
	free(old);
	return 0;
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
		       const struct maps_line *l)
{
	char name[64];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "map_files/%llx-%llx",
		 (unsigned long long)l->start, (unsigned long long)l->end);
	fd = open_at(c, dirfd, name, 0);
	if (fd >= 0 || l->path[0] != '/' || ends_with(l->path, " (deleted)"))
		return fd;
	fd = open_at(c, AT_FDCWD, l->path, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || major(st.st_dev) != l->maj ||
	    minor(st.st_dev) != l->min || st.st_ino != l->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * The identity of a mapped file, read once per (dev, ino). dev and ino come
 * from the maps line: the kernel fills MMAP2 from the same inode fields.
 */
static int file_ident(struct dcp_collection *c, int dirfd,
		      const struct maps_line *l, const struct dcp_file_id **out)
{
	struct ident_entry *e;
	unsigned int gen = 0;
	size_t i;
	int fd, ret;

	if (c->idents_used * 2 >= c->idents_cap) {
		ret = idents_grow(c);
		if (ret < 0)
			return ret;
	}
	i = ident_slot(c, l->maj, l->min, l->ino);
	e = &c->idents[i];
	if (e->used) {
		*out = &e->id;
		return 0;
	}
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->maj = l->maj;
	e->min = l->min;
	e->ino = l->ino;
	c->idents_used++;
	e->id.dev_major = l->maj;
	e->id.dev_minor = l->min;
	e->id.ino = l->ino;
	fd = open_mapped(c, dirfd, l);
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
		close(fd);
	}
	*out = &e->id;
	return 0;
}

/* Keep the executable lines of the maps text in src: what we describe. */
static int exec_lines(const struct buf *src, struct buf *dst)
{
	const char *p = src->p, *end = src->p + src->len;
	int ret;

	dst->len = 0;
	ret = buf_reserve(dst, src->len + 1);
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
	fd = open_at(c, dirfd, "maps", 0);
	if (fd < 0)
		return fd;
	ret = read_whole(c, fd, &c->rd);
	if (ret == 0)
		ret = exec_lines(&c->rd, &c->maps);
	for (int i = 0; ret == 0; i++) {
		struct buf t;

		if (i == MAPS_TRIES) {
			ret = 1;
			break;
		}
		ret = read_whole(c, fd, &c->rd);
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

static int load_maps(struct dcp_collection *c, int dirfd, pid_t pid)
{
	struct maps_line l;
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
static int load_exe_map(struct dcp_collection *c, int dirfd, pid_t pid,
			const char *exe)
{
	struct maps_line l;
	size_t pos = 0;
	ssize_t n;
	int fd, ret = 0;

	c->what = "maps";
	fd = open_at(c, dirfd, "maps", 0);
	if (fd < 0)
		return fd;
	c->rd.len = 0;
	for (;;) {
		ret = buf_reserve(&c->rd, 4097);
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

/* ---- tasks ----------------------------------------------------------------- */

static int load_tasks(struct dcp_collection *c, int dirfd, pid_t pid,
		      const struct proc_stat *st, bool listed)
{
	struct dents d = { .buf = c->dents_buf };
	struct proc_stat ts;
	char name[48];
	ssize_t n;
	pid_t tid;
	int ret;

	ret = emit_task(c, pid, st->ppid, pid, st->ppid, st);
	if (ret < 0)
		return ret;

	c->what = "exe";
	n = readlinkat(dirfd, "exe", c->link, PATH_MAX - 1);
	c->syscalls++;
	if (n > 0) {
		c->link[n] = 0;
		ret = load_exe_map(c, dirfd, pid, c->link);
	} else {
		/* kernel threads and zombies have no exe: not an error, and
		 * a vanished process shows in the final check */
		ret = errno == ENOENT ? 0 : -errno;
	}
	/* another user's process: its tasks without its executable */
	if ((ret == -EACCES || ret == -EPERM) && !listed)
		ret = 0;
	if (ret < 0)
		return ret;

	/* a thread created since is not ours to describe: live FORK and
	 * COMM records, enabled before the walk, carry it */
	if (st->threads == 1)
		return 0;
	c->what = "task";
	ret = open_at(c, dirfd, "task", O_DIRECTORY);
	if (ret < 0)
		return ret;
	d.fd = ret;
	while ((ret = dents_next(c, &d, &tid)) > 0) {
		if (tid == pid)
			continue; /* the leader, described above */
		snprintf(name, sizeof(name), "task/%d/stat", (int)tid);
		ret = stat_at(c, dirfd, name, &ts);
		if (is_gone(ret)) {
			c->stats.tasks_vanished++;
			continue;
		}
		if (ret < 0)
			break;
		/* as perf does: threads are children of the leader */
		ret = emit_task(c, pid, pid, tid, pid, &ts);
		if (ret < 0)
			break;
	}
	close(d.fd);
	return ret;
}

/* ---- processes ------------------------------------------------------------- */

static int proc_error(pid_t pid, const char *what, int err)
{
	return dcp_error(err, "cannot read '/proc/%d/%s': %s", (int)pid, what,
			 strerror(err < 0 ? -err : err));
}

/*
 * Build the records of one process into c->out. The dirfd pins the
 * process: if it exits (and its pid is reused) every later open through it
 * fails instead of reading the new process. Its start time, read before
 * and after, must agree, and match the pid list's (pid reuse since open).
 * Returns 0 (with the records, or none when it vanished or may not be
 * read), or a negative errno.
 */
static int load_process(struct dcp_collection *c, pid_t pid,
			unsigned long long expect_start, bool listed)
{
	struct proc_stat st, st2;
	char path[32];
	int dirfd, statfd = -1, ret;
	c->what = "stat";
	c->out.len = 0;
	c->out_pos = 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dirfd = open_at(c, AT_FDCWD, path, O_DIRECTORY);
	if (dirfd < 0) {
		ret = dirfd;
		goto out;
	}
	statfd = open_at(c, dirfd, "stat", 0);
	if (statfd < 0) {
		ret = statfd;
		goto out;
	}
	ret = read_stat(c, statfd, &st);
	if (ret < 0)
		goto out;
	if (expect_start && st.start != expect_start) {
		ret = GONE;
		goto out;
	}
	if (c->kind == DCP_COLLECTION_TASKS) {
		ret = load_tasks(c, dirfd, pid, &st, listed);
	} else {
		ret = load_maps(c, dirfd, pid);
	}
	if (ret < 0)
		goto out;
	c->what = "stat";
	ret = read_stat(c, statfd, &st2);
	if (ret == 0 && st2.start != st.start)
		ret = GONE;
out:
	if (statfd >= 0)
		close(statfd);
	if (dirfd >= 0)
		close(dirfd);
	if (ret == 0)
		return 0;
	c->out.len = 0;
	if (is_gone(ret)) {
		c->stats.tasks_vanished++;
		return 0;
	}
	if (ret == -EACCES || ret == -EPERM) {
		if (listed)
			return proc_error(pid, c->what, ret);
		dcp_log(DCP_LOG_DEBUG, "cannot read '/proc/%d/%s': %s",
			(int)pid, c->what, strerror(-ret));
		return 0;
	}
	if (ret == -ENOMEM || ret == -E2BIG || ret == -EINVAL)
		return ret; /* the message is set */
	return proc_error(pid, c->what, ret);
}

/* Load the next process: 1, or 0 at the end of the walk, or -errno. */
static int next_process(struct dcp_collection *c)
{
	pid_t pid;
	int ret;

	if (c->targets) {
		if (c->next_target == c->nr_targets)
			return 0;
		struct target *t = &c->targets[c->next_target++];
		ret = load_process(c, t->pid, t->start, true);
		return ret < 0 ? ret : 1;
	}
	ret = dents_next(c, &c->proc, &pid);
	if (ret < 0)
		return dcp_error(ret, "cannot read '/proc': %s",
				 strerror(-ret));
	if (ret == 0)
		return 0;
	ret = load_process(c, pid, 0, false);
	return ret < 0 ? ret : 1;
}

/* ---- the public interface --------------------------------------------------- */

/* The thread group and start time of a listed pid (a tid is accepted). */
static int resolve_target(struct dcp_collection *c, pid_t pid, struct target *t)
{
	char path[48];
	struct proc_stat st;
	const char *p;
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open_at(c, AT_FDCWD, path, 0);
	if (fd < 0)
		goto fail;
	ret = read_whole(c, fd, &c->rd);
	close(fd);
	if (ret < 0) {
		fd = ret;
		goto fail;
	}
	p = strstr(c->rd.p, "\nTgid:");
	if (!p)
		return dcp_error(ESRCH, "no process with pid %d", (int)pid);
	t->pid = (pid_t)strtol(p + 6, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->pid);
	fd = stat_at(c, AT_FDCWD, path, &st);
	if (fd < 0)
		goto fail;
	t->start = st.start;
	return 0;
fail:
	if (is_gone(fd) || fd == -EINVAL)
		return dcp_error(ESRCH, "no process with pid %d", (int)pid);
	return dcp_error(fd, "cannot read '%s': %s", path, strerror(-fd));
}

static int open_targets(struct dcp_collection *c, const pid_t *pids, size_t nr)
{
	c->targets = calloc(nr ? nr : 1, sizeof(*c->targets));
	if (!c->targets)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		struct target t;
		bool dup = false;
		int ret;

		if (pids[i] <= 0)
			return dcp_error(EINVAL, "invalid pid %d",
					 (int)pids[i]);
		ret = resolve_target(c, pids[i], &t);
		if (ret < 0)
			return ret;
		for (size_t j = 0; j < c->nr_targets && !dup; j++)
			dup = c->targets[j].pid == t.pid;
		if (!dup)
			c->targets[c->nr_targets++] = t;
	}
	return 0;
}

struct dcp_collection *dcp_collection_open(enum dcp_collection_kind kind,
					   const struct dcp_collection_opts *o)
{
	struct dcp_collection_opts opts = { 0 };
	struct dcp_collection *c;
	uint64_t tick;
	int ret;

	if (kind != DCP_COLLECTION_TASKS && kind != DCP_COLLECTION_MAPS)
		return dcp_error_null(EINVAL, "unknown collection kind %d",
				      (int)kind);
	if (o) {
		if (o->sz < offsetof(struct dcp_collection_opts, pids))
			return dcp_error_null(EINVAL,
					      "collection options: bad size");
		memcpy(&opts, o, o->sz < sizeof(opts) ? o->sz : sizeof(opts));
	}
	if (opts.nr_pids && !opts.pids)
		return dcp_error_null(EINVAL, "collection pid list is NULL");

	c = calloc(1, sizeof(*c));
	if (!c)
		return dcp_error_null(ENOMEM, "out of memory");
	c->kind = kind;
	c->proc.fd = -1;
	c->only_marked = opts.only_marked;
	c->cookies = opts.cookies;
	c->clk_tck = sysconf(_SC_CLK_TCK);
	if (c->clk_tck <= 0)
		c->clk_tck = 100;
	c->time = clock_ns(CLOCK_MONOTONIC);
	/*
	 * The time spent suspended; rounded to the clock tick that start
	 * times come in, so that it reads the same in every collection.
	 */
	tick = 1000000000ull / (uint64_t)c->clk_tck;
	c->boot_minus_mono = clock_ns(CLOCK_BOOTTIME) - c->time;
	c->boot_minus_mono = (c->boot_minus_mono + tick / 2) / tick * tick;
	c->dents_buf = malloc(DENTS_SIZE);
	c->link = malloc(PATH_MAX);
	if (!c->dents_buf || !c->link) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	if (c->only_marked && !c->cookies) {
		/* no table, no marks: only special regions pass */
		c->cookies = dcp_cookie_table_new();
		if (!c->cookies) {
			ret = -errno;
			goto fail;
		}
		c->own_cookies = true;
	}
	if (opts.pids) {
		ret = open_targets(c, opts.pids, opts.nr_pids);
		if (ret < 0)
			goto fail;
	} else {
		c->proc.buf = malloc(DENTS_SIZE);
		if (!c->proc.buf) {
			ret = dcp_error(ENOMEM, "out of memory");
			goto fail;
		}
		c->proc.fd = open_at(c, AT_FDCWD, "/proc", O_DIRECTORY);
		if (c->proc.fd < 0) {
			ret = dcp_error(c->proc.fd, "cannot open '/proc': %s",
					strerror(-c->proc.fd));
			goto fail;
		}
	}
	return c;
fail:
	dcp_collection_close(c);
	errno = -ret;
	return NULL;
}

ssize_t dcp_collection_read(struct dcp_collection *c, void *buf, size_t size,
			    size_t *needed)
{
	size_t used = 0;
	int ret;

	if (!c || (!buf && size))
		return dcp_error(EINVAL, "collection read: no buffer");
	if (size == 0)
		return dcp_error(
			EINVAL,
			"collection buffer of 0 bytes cannot hold a record");
	c->stats.reads++;
	if (c->deferred_err) {
		ret = dcp_error(c->deferred_err, "%s", c->deferred_msg);
		c->deferred_err = 0;
		free(c->deferred_msg);
		c->deferred_msg = NULL;
		return ret;
	}
	for (;;) {
		const struct perf_event_header *h;

		if (c->out_pos < c->out.len) {
			h = (const void *)(c->out.p + c->out_pos);
			if (h->size > size - used) {
				if (used)
					break;
				if (needed)
					*needed = h->size;
				return dcp_error(
					ENOSPC,
					"buffer of %zu bytes cannot hold the next record of %u bytes",
					size, (unsigned)h->size);
			}
			memcpy((char *)buf + used, h, h->size);
			used += h->size;
			c->out_pos += h->size;
			c->stats.records++;
			c->stats.bytes += h->size;
			if (h->type == PERF_RECORD_FORK)
				c->stats.tasks++;
			else if (h->type == PERF_RECORD_MMAP2)
				c->stats.maps++;
			continue;
		}
		if (c->done)
			break;
		ret = next_process(c);
		if (ret == 0) {
			c->done = true;
			break;
		}
		if (ret < 0) {
			if (!used)
				return ret;
			/* hand over the records first, the error next time */
			c->deferred_err = ret;
			c->deferred_msg = strdup(dcp_last_error());
			break;
		}
	}
	return (ssize_t)used;
}

const struct dcp_collection_stats *
dcp_collection_stats(const struct dcp_collection *c)
{
	return &c->stats;
}

uint64_t dcp_collection_syscalls(const struct dcp_collection *c)
{
	return c->syscalls;
}

void dcp_collection_close(struct dcp_collection *c)
{
	if (!c)
		return;
	if (c->proc.fd >= 0)
		close(c->proc.fd);
	if (c->own_cookies)
		dcp_cookie_table_free(c->cookies);
	free(c->proc.buf);
	free(c->targets);
	free(c->out.p);
	free(c->rd.p);
	free(c->rd2.p);
	free(c->maps.p);
	free(c->dents_buf);
	free(c->link);
	free(c->idents);
	free(c->deferred_msg);
	free(c);
}

/* ---- decoding --------------------------------------------------------------- */

int64_t dcp_record_intern(struct dcp_cookie_table *t,
			  const struct dcp_record_view *v)
{
	const char *name = v->filename;

	if (v->type != PERF_RECORD_MMAP2)
		return dcp_error(EINVAL, "not an mmap record");
	if (v->region == DCP_COOKIE_KIND_FILE)
		return dcp_cookie_table_intern_file(t, &v->id, v->filename);
	if (v->region == DCP_COOKIE_KIND_ANON &&
	    (!name[0] || !strcmp(name, "//anon")))
		name = "[anon:exec]";
	return dcp_cookie_table_intern_special(t, v->region, name, NULL);
}
