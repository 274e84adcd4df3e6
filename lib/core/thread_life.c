// SPDX-License-Identifier: MIT
/*
 * Thread lifetimes (thread_life_internal.h): a dense array in order of
 * first sight, with an index from tid to the latest lifetime of that tid
 * (tids are reused: a later thread of the same tid is a new lifetime).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "thread_life_internal.h"

struct life_entry {
	struct dcp_thread_life t;
	bool dirty; /* changed since the last flush */
};

struct dcp_lives {
	struct life_entry *v;
	size_t n, cap;
	/* open addressing by tid, linear probing: index + 1, 0 free; at
	 * most half full */
	uint32_t *slots;
	size_t mask;
};

struct dcp_lives *dcp_lives_new(void)
{
	return calloc(1, sizeof(struct dcp_lives));
}

void dcp_lives_free(struct dcp_lives *l)
{
	if (!l)
		return;
	free(l->v);
	free(l->slots);
	free(l);
}

static size_t slot_of(const struct dcp_lives *l, uint32_t tid)
{
	size_t i = dcp_hash_fmix64(tid) & l->mask;

	while (l->slots[i] && l->v[l->slots[i] - 1].t.tid != tid)
		i = (i + 1) & l->mask;
	return i;
}

static struct life_entry *latest(const struct dcp_lives *l, uint32_t tid)
{
	size_t i;

	if (!l->slots)
		return NULL;
	i = slot_of(l, tid);
	return l->slots[i] ? &l->v[l->slots[i] - 1] : NULL;
}

static int grow_index(struct dcp_lives *l)
{
	size_t nr = l->slots ? 2 * (l->mask + 1) : 64;
	uint32_t *old = l->slots;
	size_t old_nr = old ? l->mask + 1 : 0;

	l->slots = calloc(nr, sizeof(*l->slots));
	if (!l->slots) {
		l->slots = old;
		return -ENOMEM;
	}
	l->mask = nr - 1;
	for (size_t i = 0; i < old_nr; i++)
		if (old[i])
			l->slots[slot_of(l, l->v[old[i] - 1].t.tid)] = old[i];
	free(old);
	return 0;
}

static int add(struct dcp_lives *l, const struct dcp_thread_life *t)
{
	struct life_entry *v;
	size_t i;

	if ((!l->slots || 2 * (l->n + 1) > l->mask + 1) && grow_index(l))
		return -ENOMEM;
	v = dcp_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	v[l->n] = (struct life_entry){ .t = *t, .dirty = true };
	i = slot_of(l, t->tid);
	l->slots[i] = (uint32_t)++l->n; /* the latest of its tid */
	return 0;
}

int dcp_lives_start(struct dcp_lives *l, uint32_t pid, uint32_t tid,
		    uint64_t start_ns, uint32_t flags)
{
	struct life_entry *e = latest(l, tid);

	if (e && e->t.pid == pid && (e->t.flags & DCP_LIFE_RUNNING))
		return 0;
	return add(l, &(struct dcp_thread_life){ .pid = pid,
						 .tid = tid,
						 .flags = flags,
						 .start_ns = start_ns });
}

void dcp_lives_end(struct dcp_lives *l, uint32_t tid, uint64_t end_ns)
{
	struct life_entry *e = latest(l, tid);

	if (!e || !(e->t.flags & DCP_LIFE_RUNNING))
		return;
	e->t.flags &= ~DCP_LIFE_RUNNING;
	e->t.end_ns = end_ns > e->t.start_ns ? end_ns : e->t.start_ns;
	e->dirty = true;
}

int dcp_lives_put(struct dcp_lives *l, const struct dcp_thread_life *t)
{
	struct life_entry *e = latest(l, t->tid);

	if (e && e->t.pid == t->pid && e->t.start_ns == t->start_ns) {
		e->t = *t;
		return 0;
	}
	return add(l, t);
}

size_t dcp_lives_count(const struct dcp_lives *l)
{
	return l ? l->n : 0;
}

const struct dcp_thread_life *dcp_lives_get(const struct dcp_lives *l, size_t i)
{
	return &l->v[i].t;
}

bool dcp_lives_dirty(const struct dcp_lives *l, size_t i)
{
	return l->v[i].dirty;
}

void dcp_lives_mark_flushed(struct dcp_lives *l)
{
	for (size_t i = 0; l && i < l->n; i++)
		l->v[i].dirty = false;
}
