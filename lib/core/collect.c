// SPDX-License-Identifier: MIT
/*
 * The collection: processes that existed before recording, described as
 * the same COMM/FORK/MMAP2 records the kernel sends for live ones. This
 * file is the iterator and its public calls.
 *
 * The walk is a cursor: a getdents64 position in /proc (or an index in the
 * pid list) and the records of the current process, built in memory. One
 * process is read from /proc completely, checked, and only then emitted,
 * so whatever the caller's buffer size each /proc file is read once and a
 * process is either emitted whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_internal.h"
#include "collect_internal.h"
#include "collect_walk_internal.h"
#include "cookie_internal.h"
#include "log_internal.h"
#include "records_internal.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int dcp_coll_opts_copy(enum dcp_collection_kind kind,
		       const struct dcp_collection_opts *o,
		       struct dcp_collection_opts *out)
{
	memset(out, 0, sizeof(*out));
	if (kind != DCP_COLLECTION_TASKS && kind != DCP_COLLECTION_MAPS)
		return dcp_error(EINVAL, "unknown collection kind %d",
				 (int)kind);
	if (o) {
		if (o->sz < offsetof(struct dcp_collection_opts, pids) ||
		    !DCP_OPTS_VALID(o))
			return dcp_error(EINVAL,
					 "collection options: bad size");
		memcpy(out, o, o->sz < sizeof(*out) ? o->sz : sizeof(*out));
	}
	if (out->nr_pids && !out->pids)
		return dcp_error(EINVAL, "collection pid list is NULL");
	return 0;
}

void dcp_coll_clock_init(long *clk_tck, uint64_t *time,
			 uint64_t *boot_minus_mono)
{
	uint64_t tick;

	*clk_tck = sysconf(_SC_CLK_TCK);
	if (*clk_tck <= 0)
		*clk_tck = 100;
	*time = clock_ns(CLOCK_MONOTONIC);
	tick = 1000000000ull / (uint64_t)*clk_tck;
	*boot_minus_mono = clock_ns(CLOCK_BOOTTIME) - *time;
	*boot_minus_mono = (*boot_minus_mono + tick / 2) / tick * tick;
}

/* Load the next process: 1, or 0 at the end of the walk, or -errno. */
static int next_process(struct dcp_collection *c)
{
	pid_t pid;
	int ret;

	if (c->targets) {
		if (c->next_target == c->nr_targets)
			return 0;
		struct dcp_coll_target *t = &c->targets[c->next_target++];
		ret = dcp_coll_load_process(c, t->pid, t->start, true);
		return ret < 0 ? ret : 1;
	}
	ret = dcp_coll_dents_next(c, &c->proc, &pid);
	if (ret < 0)
		return dcp_error(ret, "cannot read '/proc': %s",
				 strerror(-ret));
	if (ret == 0)
		return 0;
	ret = dcp_coll_load_process(c, pid, 0, false);
	return ret < 0 ? ret : 1;
}

/* The thread group and start time of a listed pid (a tid is accepted). */
static int resolve_target(struct dcp_collection *c, pid_t pid,
			  struct dcp_coll_target *t)
{
	char path[48];
	struct dcp_proc_stat st;
	const char *p;
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = dcp_coll_open_at(c, AT_FDCWD, path, 0);
	if (fd < 0)
		goto fail;
	ret = dcp_coll_read_whole(c, fd, &c->rd);
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
	fd = dcp_coll_stat_at(c, AT_FDCWD, path, &st);
	if (fd < 0)
		goto fail;
	t->start = st.start;
	return 0;
fail:
	if (dcp_coll_is_gone(fd) || fd == -EINVAL)
		return dcp_error(ESRCH, "no process with pid %d", (int)pid);
	return dcp_error(fd, "cannot read '%s': %s", path, strerror(-fd));
}

static int open_targets(struct dcp_collection *c, const pid_t *pids, size_t nr)
{
	c->targets = calloc(nr ? nr : 1, sizeof(*c->targets));
	if (!c->targets)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		struct dcp_coll_target t;
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

DCPROF_API struct dcp_collection *
dcp_collection_open(enum dcp_collection_kind kind,
		    const struct dcp_collection_opts *o)
{
	struct dcp_collection_opts opts = { 0 };
	struct dcp_collection *c;
	int ret;

	ret = dcp_coll_opts_copy(kind, o, &opts);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}

	c = calloc(1, sizeof(*c));
	if (!c)
		return dcp_error_null(ENOMEM, "out of memory");
	c->kind = kind;
	c->proc.fd = -1;
	c->only_marked = opts.only_marked;
	c->cookies = opts.cookies;
	dcp_coll_clock_init(&c->clk_tck, &c->time, &c->boot_minus_mono);
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
		c->proc.fd =
			dcp_coll_open_at(c, AT_FDCWD, "/proc", O_DIRECTORY);
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

ssize_t dcp_coll_queue_read(struct dcp_coll_queue *q,
			    struct dcp_collection_stats *stats, void *buf,
			    size_t size, size_t *needed,
			    dcp_coll_refill_fn refill, void *ctx)
{
	size_t used = 0;
	int ret;

	if (!buf && size)
		return dcp_error(EINVAL, "collection read: no buffer");
	if (size == 0)
		return dcp_error(
			EINVAL,
			"collection buffer of 0 bytes cannot hold a record");
	stats->reads++;
	if (q->deferred_err) {
		ret = dcp_error(q->deferred_err, "%s", q->deferred_msg);
		q->deferred_err = 0;
		free(q->deferred_msg);
		q->deferred_msg = NULL;
		return dcp_api_ret(ret);
	}
	for (;;) {
		const struct perf_event_header *h;

		if (q->out_pos < q->out.len) {
			h = (const void *)(q->out.p + q->out_pos);
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
			q->out_pos += h->size;
			stats->records++;
			stats->bytes += h->size;
			if (h->type == PERF_RECORD_FORK)
				stats->tasks++;
			else if (h->type == PERF_RECORD_MMAP2)
				stats->maps++;
			continue;
		}
		q->out.len = 0;
		q->out_pos = 0;
		ret = refill(ctx, size);
		if (ret == 0)
			break;
		if (ret < 0) {
			if (!used)
				return dcp_api_ret(ret);
			/* hand over the records first, the error next time */
			q->deferred_err = ret;
			q->deferred_msg = strdup(dcp_last_error());
			break;
		}
	}
	return (ssize_t)used;
}

void dcp_coll_queue_free(struct dcp_coll_queue *q)
{
	free(q->out.p);
	free(q->deferred_msg);
}

/* The /proc walk's refill: the records of the next process. */
static int proc_refill(void *ctx, size_t size)
{
	struct dcp_collection *c = ctx;
	int ret;

	if (c->done)
		return 0;
	ret = next_process(c);
	if (ret == 0)
		c->done = true;
	return ret;
}

DCPROF_API ssize_t dcp_collection_read(struct dcp_collection *c, void *buf,
				       size_t size, size_t *needed)
{
	if (!c)
		return dcp_error(EINVAL, "collection read: no buffer");
	return dcp_coll_queue_read(&c->q, &c->stats, buf, size, needed,
				   proc_refill, c);
}

DCPROF_API const struct dcp_collection_stats *
dcp_collection_get_stats(const struct dcp_collection *c)
{
	return &c->stats;
}

uint64_t dcp_collection_syscalls(const struct dcp_collection *c)
{
	return c->syscalls;
}

void dcp_collection_for_recorder(struct dcp_collection *c,
				 struct dcp_ident_cache *idents)
{
	c->maps_once = true;
	c->shared_idents = idents;
}

DCPROF_API void dcp_collection_close(struct dcp_collection *c)
{
	if (!c)
		return;
	if (c->proc.fd >= 0)
		close(c->proc.fd);
	if (c->own_cookies)
		dcp_cookie_table_free(c->cookies);
	free(c->proc.buf);
	free(c->targets);
	dcp_coll_queue_free(&c->q);
	free(c->rd.p);
	free(c->rd2.p);
	free(c->maps.p);
	free(c->dents_buf);
	free(c->link);
	dcp_ident_cache_free(&c->idents);
	free(c);
}

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
