// SPDX-License-Identifier: MIT
/*
 * The process table: address spaces rebuilt from sync records (fork, exec,
 * mmap, munmap, exit) and the lookup of a sampled address in them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "log_internal.h"
#include "process_internal.h"

/*
 * Chained hash table, not a dcp_index: for_each survives the removal of
 * the process it visits, a removed process is unlinked and freed at once
 * and the buckets shrink after a burst, so memory follows the number of
 * live processes, never the number of pids seen.
 */
struct node {
	struct dcp_process p; /* first: callers hold &node->p */
	struct node *next;
};

struct dcp_process_table {
	struct node **buckets;
	size_t nr_buckets; /* power of two */
	size_t count;
	/* Resizing is held off while for_each walks the buckets. */
	unsigned int walking;
};

#define MIN_BUCKETS 64

static size_t bucket_of(const struct dcp_process_table *t, pid_t pid)
{
	return (size_t)dcp_hash_fmix64((uint32_t)pid) & (t->nr_buckets - 1);
}

struct dcp_process_table *dcp_process_table_new(void)
{
	struct dcp_process_table *t = calloc(1, sizeof(*t));

	if (!t)
		return dcp_error_null(ENOMEM, "out of memory");
	t->nr_buckets = MIN_BUCKETS;
	t->buckets = calloc(t->nr_buckets, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	return t;
}

static void node_free(struct node *n)
{
	free(n->p.maps);
	free(n->p.threads);
	free(n);
}

void dcp_process_table_free(struct dcp_process_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr_buckets; i++) {
		struct node *n = t->buckets[i], *next;

		for (; n; n = next) {
			next = n->next;
			node_free(n);
		}
	}
	free(t->buckets);
	free(t);
}

/* Failure to resize only costs speed, never correctness. */
static void rehash(struct dcp_process_table *t, size_t nr_buckets)
{
	struct node **old = t->buckets;
	size_t old_n = t->nr_buckets, i;

	if (t->walking)
		return;
	t->buckets = calloc(nr_buckets, sizeof(*t->buckets));
	if (!t->buckets) {
		t->buckets = old;
		return;
	}
	t->nr_buckets = nr_buckets;
	for (i = 0; i < old_n; i++) {
		struct node *n = old[i], *next;

		for (; n; n = next) {
			size_t b = bucket_of(t, n->p.pid);

			next = n->next;
			n->next = t->buckets[b];
			t->buckets[b] = n;
		}
	}
	free(old);
}

struct dcp_process *dcp_process_table_find(struct dcp_process_table *t,
					   pid_t pid)
{
	struct node *n;

	for (n = t->buckets[bucket_of(t, pid)]; n; n = n->next)
		if (n->p.pid == pid)
			return &n->p;
	return NULL;
}

static struct dcp_process *add(struct dcp_process_table *t, pid_t pid)
{
	struct node *n = calloc(1, sizeof(*n));
	size_t b;

	if (!n)
		return dcp_error_null(ENOMEM, "out of memory");
	n->p.pid = pid;
	if (t->count >= t->nr_buckets)
		rehash(t, t->nr_buckets * 2);
	b = bucket_of(t, pid);
	n->next = t->buckets[b];
	t->buckets[b] = n;
	t->count++;
	return &n->p;
}

struct dcp_process *dcp_process_table_get(struct dcp_process_table *t,
					  pid_t pid)
{
	struct dcp_process *p = dcp_process_table_find(t, pid);

	return p ? p : add(t, pid);
}

void dcp_process_table_remove(struct dcp_process_table *t, pid_t pid)
{
	struct node **link = &t->buckets[bucket_of(t, pid)], *n;

	for (; (n = *link) != NULL; link = &n->next) {
		if (n->p.pid != pid)
			continue;
		*link = n->next;
		node_free(n);
		t->count--;
		/* Shrink so that a burst of processes does not pin memory. */
		if (t->nr_buckets > MIN_BUCKETS && t->count < t->nr_buckets / 8)
			rehash(t, t->nr_buckets / 2);
		return;
	}
}

struct dcp_process *dcp_process_table_fork(struct dcp_process_table *t,
					   pid_t parent, pid_t child)
{
	struct dcp_process *pp, *c;
	struct dcp_map *maps = NULL;
	size_t nr_maps = 0;
	char comm[sizeof(pp->comm)] = "";
	bool target = false;

	if (parent == child)
		return dcp_process_table_get(t, child);
	pp = dcp_process_table_find(t, parent);
	if (pp) {
		nr_maps = pp->nr_maps;
		if (nr_maps) {
			maps = malloc(nr_maps * sizeof(*maps));
			if (!maps)
				return dcp_error_null(ENOMEM, "out of memory");
			memcpy(maps, pp->maps, nr_maps * sizeof(*maps));
		}
		memcpy(comm, pp->comm, sizeof(comm));
		target = pp->target;
	}
	dcp_process_table_remove(t, child);
	c = add(t, child);
	if (!c) {
		free(maps);
		return NULL;
	}
	c->ppid = parent;
	memcpy(c->comm, comm, sizeof(comm));
	c->target = target;
	c->maps = maps;
	c->nr_maps = c->cap_maps = nr_maps;
	return c;
}

size_t dcp_process_table_count(const struct dcp_process_table *t)
{
	return t->count;
}

int dcp_process_table_for_each(struct dcp_process_table *t,
			       int (*fn)(struct dcp_process *p, void *ctx),
			       void *ctx)
{
	size_t i;
	int ret = 0;

	t->walking++;
	for (i = 0; i < t->nr_buckets && !ret; i++) {
		struct node *n = t->buckets[i], *next;

		/* next is read first, so fn may remove the process it gets */
		for (; n && !ret; n = next) {
			next = n->next;
			ret = fn(&n->p, ctx);
		}
	}
	t->walking--;
	return ret;
}

void dcp_process_exec(struct dcp_process *p)
{
	free(p->maps);
	p->maps = NULL;
	p->nr_maps = p->cap_maps = 0;
	free(p->threads);
	p->threads = NULL;
	p->nr_threads = p->cap_threads = 0;
}

static struct dcp_thread_name *thread_find(const struct dcp_process *p,
					   pid_t tid)
{
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

int dcp_process_thread_set(struct dcp_process *p, pid_t tid, const char *comm)
{
	struct dcp_thread_name *t = thread_find(p, tid);

	if (!t) {
		t = dcp_grow_from(p->threads, &p->cap_threads,
				  p->nr_threads + 1, sizeof(*t), 4);
		if (!t)
			return dcp_error(ENOMEM, "out of memory");
		p->threads = t;
		t = &p->threads[p->nr_threads++];
		t->tid = tid;
	}
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return 0;
}

const char *dcp_process_thread_comm(const struct dcp_process *p, pid_t tid)
{
	const struct dcp_thread_name *t = thread_find(p, tid);

	return t ? t->comm : NULL;
}

void dcp_process_thread_remove(struct dcp_process *p, pid_t tid)
{
	struct dcp_thread_name *t = thread_find(p, tid);

	if (t)
		*t = p->threads[--p->nr_threads];
}

static int reserve_maps(struct dcp_process *p, size_t n)
{
	/* Small: a table may hold thousands of processes. */
	struct dcp_map *m =
		dcp_grow_from(p->maps, &p->cap_maps, n, sizeof(*m), 8);

	if (!m)
		return dcp_error(ENOMEM, "out of memory");
	p->maps = m;
	return 0;
}

/* Index of the first map ending after addr (nr_maps if none). */
static size_t first_ending_after(const struct dcp_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Cut [start, end) out; the caller made room for one more map. */
static void cut(struct dcp_process *p, uint64_t start, uint64_t end)
{
	size_t i = first_ending_after(p, start), j;
	struct dcp_map *m;

	if (i == p->nr_maps)
		return;
	m = &p->maps[i];
	if (m->start < start && m->end > end) {
		/* Strictly inside one map: split it in two. */
		struct dcp_map right = *m;

		right.pgoff += end - m->start;
		right.start = end;
		m->end = start;
		memmove(&p->maps[i + 2], &p->maps[i + 1],
			(p->nr_maps - i - 1) * sizeof(*m));
		p->maps[i + 1] = right;
		p->nr_maps++;
		return;
	}
	if (m->start < start) {
		m->end = start;
		i++;
	}
	for (j = i; j < p->nr_maps && p->maps[j].end <= end; j++)
		;
	if (j > i) {
		memmove(&p->maps[i], &p->maps[j],
			(p->nr_maps - j) * sizeof(*m));
		p->nr_maps -= j - i;
	}
	if (i < p->nr_maps && p->maps[i].start < end) {
		m = &p->maps[i];
		m->pgoff += end - m->start;
		m->start = end;
	}
}

static uint64_t range_end(uint64_t start, uint64_t len)
{
	/* A range reaching past the top of the address space is clipped. */
	return len > UINT64_MAX - start ? UINT64_MAX : start + len;
}

int dcp_process_map_insert(struct dcp_process *p, uint64_t start, uint64_t len,
			   uint64_t pgoff, uint32_t cookie, uint32_t prot)
{
	uint64_t end = range_end(start, len);
	size_t i;
	int ret;

	if (end == start)
		return 0;
	/* Room for a split and the new map, before anything changes. */
	ret = reserve_maps(p, p->nr_maps + 2);
	if (ret < 0)
		return ret;
	cut(p, start, end);
	i = first_ending_after(p, start);
	memmove(&p->maps[i + 1], &p->maps[i],
		(p->nr_maps - i) * sizeof(*p->maps));
	p->maps[i] = (struct dcp_map){ .start = start,
				       .end = end,
				       .pgoff = pgoff,
				       .cookie = cookie,
				       .prot = prot };
	p->nr_maps++;
	return 0;
}

int dcp_process_map_remove(struct dcp_process *p, uint64_t start, uint64_t len)
{
	uint64_t end = range_end(start, len);
	int ret;

	if (end == start)
		return 0;
	ret = reserve_maps(p, p->nr_maps + 1);
	if (ret < 0)
		return ret;
	cut(p, start, end);
	return 0;
}

const struct dcp_map *dcp_process_map_find(const struct dcp_process *p,
					   uint64_t addr)
{
	size_t i = first_ending_after(p, addr);

	if (i < p->nr_maps && p->maps[i].start <= addr)
		return &p->maps[i];
	return NULL;
}
