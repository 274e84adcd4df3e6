// SPDX-License-Identifier: MIT
/*
 * The collection's walk of processes and tasks: reading /proc files and
 * directories (each system call counted), stat parsing, one process read
 * whole and checked against pid reuse, and its FORK and COMM records.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect_internal.h"
#include "collect_walk_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "records_internal.h"
#include "sort.h"

int dcp_coll_buf_reserve(struct dcp_coll_buf *b, size_t n)
{
	char *p;

	if (b->len + n <= b->cap)
		return 0;
	p = dcp_grow_from(b->p, &b->cap, b->len + n, 1, 4096);
	if (!p)
		return dcp_error(ENOMEM, "out of memory");
	b->p = p;
	return 0;
}

/* Read a /proc file from offset 0 to its end. */
int dcp_coll_read_whole(struct dcp_collection *c, int fd,
			struct dcp_coll_buf *b)
{
	ssize_t n;
	int ret;

	b->len = 0;
	for (;;) {
		ret = dcp_coll_buf_reserve(b, 4097);
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
static int parse_stat(const char *s, size_t len, struct dcp_proc_stat *st)
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
static int read_stat(struct dcp_collection *c, int fd, struct dcp_proc_stat *st)
{
	ssize_t n;
	int ret;

	ret = dcp_coll_buf_reserve(&c->rd, 4096);
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
		ret = dcp_coll_read_whole(c, fd, &c->rd);
		if (ret < 0)
			return ret;
	}
	if (c->rd.len == 0)
		return GONE;
	if (parse_stat(c->rd.p, c->rd.len, st) < 0)
		return dcp_error(EINVAL, "cannot parse a stat file in /proc");
	return 0;
}

int dcp_coll_open_at(struct dcp_collection *c, int dirfd, const char *path,
		     int flags)
{
	int fd = openat(dirfd, path, flags | O_RDONLY | O_CLOEXEC);

	c->syscalls++;
	return fd < 0 ? -errno : fd;
}

int dcp_coll_stat_at(struct dcp_collection *c, int dirfd, const char *path,
		     struct dcp_proc_stat *st)
{
	int fd = dcp_coll_open_at(c, dirfd, path, 0);
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

/* The next numeric entry of a directory: 1, 0 at its end, or -errno. */
int dcp_coll_dents_next(struct dcp_collection *c, struct dcp_coll_dents *d,
			pid_t *out)
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

size_t dcp_coll_str_space(const char *s)
{
	return (strlen(s) + 1 + 7) & ~(size_t)7;
}

void *dcp_coll_buf_record(struct dcp_coll_buf *b, uint64_t time, uint32_t type,
			  uint16_t misc, size_t size, uint32_t pid,
			  uint32_t tid)
{
	struct perf_event_header *h;
	struct dcp_sample_id *sid;

	if (size > UINT16_MAX) {
		dcp_error(E2BIG, "record of %zu bytes is too large", size);
		return NULL;
	}
	if (dcp_coll_buf_reserve(b, size) < 0)
		return NULL;
	h = (struct perf_event_header *)(b->p + b->len);
	memset(h, 0, size);
	h->type = type;
	h->misc = misc | DCP_RECORD_MISC_INJECTED;
	h->size = (uint16_t)size;
	sid = (struct dcp_sample_id *)((char *)h + size - sizeof(*sid));
	sid->pid = pid;
	sid->tid = tid;
	sid->time = time;
	sid->cpu = (uint32_t)-1;
	b->len += size;
	return h;
}

/* Append a zeroed record of size bytes (trailer included) to c->q.out. */
void *dcp_coll_record_new(struct dcp_collection *c, uint32_t type,
			  uint16_t misc, size_t size, uint32_t pid,
			  uint32_t tid)
{
	return dcp_coll_buf_record(&c->q.out, c->time, type, misc, size, pid,
				   tid);
}

static int emit_task(struct dcp_collection *c, pid_t pid, pid_t ppid, pid_t tid,
		     pid_t ptid, const struct dcp_proc_stat *st)
{
	struct dcp_task_record *f;
	struct dcp_comm_record *r;

	f = dcp_coll_record_new(c, PERF_RECORD_FORK, 0,
				sizeof(*f) + sizeof(struct dcp_sample_id), pid,
				tid);
	if (!f)
		return -ENOMEM;
	f->pid = pid;
	f->ppid = ppid;
	f->tid = tid;
	f->ptid = ptid;
	f->time = start_ns(c, st->start);

	r = dcp_coll_record_new(c, PERF_RECORD_COMM, 0,
				sizeof(*r) + dcp_coll_str_space(st->comm) +
					sizeof(struct dcp_sample_id),
				pid, tid);
	if (!r)
		return -ENOMEM;
	r->pid = pid;
	r->tid = tid;
	strcpy(r->comm, st->comm);
	return 0;
}

static int load_tasks(struct dcp_collection *c, int dirfd, pid_t pid,
		      const struct dcp_proc_stat *st, bool listed)
{
	struct dcp_coll_dents d = { .buf = c->dents_buf };
	struct dcp_proc_stat ts;
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
		ret = dcp_coll_load_exe_map(c, dirfd, pid, c->link);
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
	ret = dcp_coll_open_at(c, dirfd, "task", O_DIRECTORY);
	if (ret < 0)
		return ret;
	d.fd = ret;
	while ((ret = dcp_coll_dents_next(c, &d, &tid)) > 0) {
		if (tid == pid)
			continue; /* the leader, described above */
		snprintf(name, sizeof(name), "task/%d/stat", (int)tid);
		ret = dcp_coll_stat_at(c, dirfd, name, &ts);
		if (dcp_coll_is_gone(ret)) {
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

static int proc_error(pid_t pid, const char *what, int err)
{
	return dcp_error(err, "cannot read '/proc/%d/%s': %s", (int)pid, what,
			 strerror(err < 0 ? -err : err));
}

/*
 * Build the records of one process into c->q.out. The dirfd pins the
 * process: if it exits (and its pid is reused) every later open through it
 * fails instead of reading the new process. Its start time, read before
 * and after, must agree, and match the pid list's (pid reuse since open).
 * Returns 0 (with the records, or none when it vanished or may not be
 * read), or a negative errno.
 */
int dcp_coll_load_process(struct dcp_collection *c, pid_t pid,
			  unsigned long long expect_start, bool listed)
{
	struct dcp_proc_stat st, st2;
	char path[32];
	int dirfd, statfd = -1, ret;
	c->what = "stat";
	c->q.out.len = 0;
	c->q.out_pos = 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dirfd = dcp_coll_open_at(c, AT_FDCWD, path, O_DIRECTORY);
	if (dirfd < 0) {
		ret = dirfd;
		goto out;
	}
	statfd = dcp_coll_open_at(c, dirfd, "stat", 0);
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
		ret = dcp_coll_load_maps(c, dirfd, pid);
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
	c->q.out.len = 0;
	if (dcp_coll_is_gone(ret)) {
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

/* A (parent, child) link of the process tree, sortable as one number. */
static uint64_t tree_link(pid_t ppid, pid_t pid)
{
	return (uint64_t)(uint32_t)ppid << 32 | (uint32_t)pid;
}

/* Every process's (parent, child) link, sorted by parent. */
static int read_tree_links(uint64_t **links, size_t *nr)
{
	DIR *d = opendir("/proc");
	uint64_t *l = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	char buf[1024];

	if (!d)
		return dcp_error(errno, "cannot open '/proc': %s",
				 strerror(errno));
	while ((de = readdir(d))) {
		struct dcp_proc_stat st;
		char path[64], *state;
		uint64_t *grown;
		ssize_t len;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		int fd;

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* exited meanwhile */
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		if (parse_stat(buf, (size_t)len, &st) < 0 || st.ppid <= 0)
			continue;
		/* a zombie runs nothing more, and a walk refuses it */
		state = strrchr(buf, ')');
		if (state && (state[2] == 'Z' || state[2] == 'X'))
			continue;
		grown = dcp_grow(l, &cap, n + 1, sizeof(*l));
		if (!grown) {
			closedir(d);
			free(l);
			return dcp_error(ENOMEM, "out of memory");
		}
		l = grown;
		l[n++] = tree_link(st.ppid, (pid_t)pid);
	}
	closedir(d);
	qsort(l, n, sizeof(*l), dcp_cmp_u64);
	*links = l;
	*nr = n;
	return 0;
}

int dcp_proc_descendants(const pid_t *roots, size_t nr_roots, pid_t **out,
			 size_t *nr_out)
{
	uint64_t *links = NULL;
	size_t nr_links = 0, n = 0, cap = 0;
	pid_t *list = NULL;
	int ret = read_tree_links(&links, &nr_links);

	if (ret)
		return ret;
	/* breadth first from the roots; a root below another is one pid */
	for (size_t i = 0; i < nr_roots + n && !ret; i++) {
		pid_t pid = i < nr_roots ? roots[i] : list[i - nr_roots];
		size_t lo = 0, hi = nr_links;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (links[mid] < tree_link(pid, 0))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nr_links && links[lo] >> 32 == (uint32_t)pid;
		     lo++) {
			pid_t child = (pid_t)(uint32_t)links[lo];
			bool root = false;
			pid_t *grown;

			for (size_t j = 0; j < nr_roots && !root; j++)
				root = roots[j] == child;
			if (root)
				continue;
			grown = dcp_grow(list, &cap, n + 1, sizeof(*list));
			if (!grown) {
				ret = dcp_error(ENOMEM, "out of memory");
				break;
			}
			list = grown;
			list[n++] = child;
		}
	}
	free(links);
	if (ret) {
		free(list);
		return ret;
	}
	*out = list;
	*nr_out = n;
	return 0;
}
