// SPDX-License-Identifier: MIT
/*
 * Room for the BPF record source's unwind tables (source_bpf_unwind.c) in
 * the kernel's rows and pages arrays: their free extents, each table in
 * one extent of each (first fit), and the eviction of the tables no walk
 * uses when a new one does not fit.
 */
#ifndef DCPROF_NO_BPF

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "grow.h"
#include "hash.h"
#include "log_internal.h"
#include "sort.h"
#include "source_bpf_internal.h"
#include "recorder.lskel.h"

/* The free extents of an array of len elements: all of it. */
static int space_init(struct unwind_space *sp, uint32_t len)
{
	sp->free = calloc(1, sizeof(*sp->free));
	if (!sp->free)
		return dcp_error(ENOMEM, "out of memory");
	sp->free[0] = (struct unwind_extent){ .start = 0, .len = len };
	sp->nr = 1;
	sp->cap = 1;
	return 0;
}

static uint64_t space_free(const struct unwind_space *sp)
{
	uint64_t n = 0;

	for (size_t i = 0; i < sp->nr; i++)
		n += sp->free[i].len;
	return n;
}

/* len elements, the first free extent that holds them: 0 and *start, or
 * -ENOSPC. */
static int space_take(struct unwind_space *sp, uint32_t len, uint32_t *start)
{
	for (size_t i = 0; i < sp->nr; i++) {
		struct unwind_extent *e = &sp->free[i];

		if (e->len < len)
			continue;
		*start = e->start;
		e->start += len;
		e->len -= len;
		if (!e->len)
			memmove(e, e + 1, (--sp->nr - i) * sizeof(*e));
		return 0;
	}
	return -ENOSPC;
}

/* e back into the free extents, joined to its neighbours. */
static int space_give(struct unwind_space *sp, struct unwind_extent e)
{
	struct unwind_extent *p;
	size_t i = 0;

	if (!e.len)
		return 0;
	while (i < sp->nr && sp->free[i].start < e.start)
		i++;
	if (i > 0 && sp->free[i - 1].start + sp->free[i - 1].len == e.start) {
		sp->free[i - 1].len += e.len;
		if (i < sp->nr && e.start + e.len == sp->free[i].start) {
			sp->free[i - 1].len += sp->free[i].len;
			memmove(&sp->free[i], &sp->free[i + 1],
				(--sp->nr - i) * sizeof(*sp->free));
		}
		return 0;
	}
	if (i < sp->nr && e.start + e.len == sp->free[i].start) {
		sp->free[i].start = e.start;
		sp->free[i].len += e.len;
		return 0;
	}
	p = dcp_grow(sp->free, &sp->cap, sp->nr + 1, sizeof(*p));
	if (!p)
		return dcp_error(ENOMEM, "out of memory");
	sp->free = p;
	memmove(&p[i + 1], &p[i], (sp->nr++ - i) * sizeof(*p));
	p[i] = e;
	return 0;
}

uint64_t dcp_bpf_unwind_placed_bytes(const struct unwind_placed *p)
{
	return (uint64_t)p->rows.len * DCP_BPF_UNWIND_ROW_STRIDE +
	       (uint64_t)p->pages.len * sizeof(struct dcp_bpf_unwind_page);
}

/* a table a walk found this recently is not evicted while a process maps
 * its file: it is in use, and evicting it would only have it asked for
 * again */
#define EVICT_IDLE_NS (2 * DCP_BPF_UNWIND_USE_NS)
/* longer than any walk under way can keep reading an evicted table's rows
 * (the programs run with preemption off, a walk in microseconds) */
#define EVICT_GRACE_US 2000

struct evict_candidate {
	bool mapped; /* by a process now */
	uint64_t last_used;
	size_t idx;
};

/* the files no process maps first, then the least recently used */
static int by_eviction_order(const void *a, const void *b)
{
	const struct evict_candidate *x = a, *y = b;

	if (x->mapped != y->mapped)
		return x->mapped ? 1 : -1;
	return (x->last_used > y->last_used) - (x->last_used < y->last_used);
}

static uint64_t file_key_hash(const struct dcp_bpf_file_key *k)
{
	return dcp_hash_fnv1a(DCP_FNV_OFFSET, k, sizeof(*k));
}

/* The files the processes map now, as sorted file_key_hash() values:
 * *n of them (0 and NULL when they cannot be read). */
static uint64_t *mapped_files(struct bpf_source *bs, size_t *n)
{
	int fd = bs->skel->maps.proc_ranges.map_fd;
	struct dcp_bpf_ranges *rs = malloc(sizeof(*rs));
	uint64_t *h = NULL, *grown;
	size_t cap = 0;
	uint32_t pid, next;
	bool first = true;

	*n = 0;
	while (rs && !bpf_map_get_next_key(fd, first ? NULL : &pid, &next)) {
		first = false;
		pid = next;
		if (bpf_map_lookup_elem(fd, &pid, rs))
			continue;
		for (uint32_t i = 0; i < rs->nr && i < DCP_BPF_MAX_RANGES;
		     i++) {
			struct dcp_bpf_file_key k = { .ino = rs->r[i].ino,
						      .dev = rs->r[i].dev };

			grown = dcp_grow(h, &cap, *n + 1, sizeof(*h));
			if (!grown)
				goto out;
			h = grown;
			h[(*n)++] = file_key_hash(&k);
		}
	}
out:
	free(rs);
	if (h)
		qsort(h, *n, sizeof(*h), dcp_cmp_u64);
	return h;
}

/* The tables that may be evicted, in eviction order: *c (NULL when there
 * are none), their number. */
static size_t evict_candidates(struct bpf_source *bs,
			       struct evict_candidate **c)
{
	struct bpf_unwind *u = &bs->unwind;
	uint64_t now = dcp_now_ns(CLOCK_MONOTONIC), *mapped;
	size_t n = 0, nr_mapped;

	*c = u->nr_placed ? calloc(u->nr_placed, sizeof(**c)) : NULL;
	if (!*c)
		return 0;
	mapped = mapped_files(bs, &nr_mapped);
	for (size_t i = 0; i < u->nr_placed; i++) {
		struct dcp_bpf_unwind_file f;
		uint64_t h = file_key_hash(&u->placed[i].key);
		bool in_use;

		/* the vdso's table is placed once, never asked for again */
		if (u->placed[i].key.ino == DCP_BPF_VDSO_INO ||
		    bpf_map_lookup_elem(u->files_fd, &u->placed[i].key, &f))
			continue;
		in_use = !mapped ||
			 bsearch(&h, mapped, nr_mapped, sizeof(h), dcp_cmp_u64);
		/* a file no process maps is in no walk's ranges: no walk
		 * can use its table, however recently one did (the program
		 * a process just left by exec) */
		if (in_use && f.last_used + EVICT_IDLE_NS > now)
			continue;
		(*c)[n++] = (struct evict_candidate){ .mapped = in_use,
						      .last_used = f.last_used,
						      .idx = i };
	}
	free(mapped);
	qsort(*c, n, sizeof(**c), by_eviction_order);
	return n;
}

/*
 * Candidates from *next on evicted: at least one, and as many as the free
 * space needs to hold nr_rows rows and nr_pages pages in all. Their files
 * leave unwind_files, so that a walk meeting one again walks it by frame
 * pointers and asks for its table; their space is free once no walk can
 * still read it. 0, or -ENOSPC when no candidate is left.
 */
static int evict(struct bpf_unwind *u, const struct evict_candidate *c,
		 size_t n, size_t *next, uint32_t nr_rows, uint32_t nr_pages)
{
	uint64_t rows = space_free(&u->rows), pages = space_free(&u->pages);
	size_t first = *next;
	int ret = 0;

	if (first >= n)
		return -ENOSPC;
	do {
		struct unwind_placed *p = &u->placed[c[(*next)++].idx];

		bpf_map_delete_elem(u->files_fd, &p->key);
		rows += p->rows.len;
		pages += p->pages.len;
	} while (*next < n && (rows < nr_rows || pages < nr_pages));
	usleep(EVICT_GRACE_US);
	for (size_t i = first; i < *next; i++) {
		struct unwind_placed *p = &u->placed[c[i].idx];

		if (!ret)
			ret = space_give(&u->rows, p->rows);
		if (!ret)
			ret = space_give(&u->pages, p->pages);
		u->rows_used -= p->rows.len;
		u->table_bytes -= dcp_bpf_unwind_placed_bytes(p);
		u->tables--;
		u->evicted++;
		p->rows.len =
			0; /* gone: dropped from placed by dcp_bpf_unwind_take_room() */
	}
	return ret;
}

/*
 * Extents of nr_rows rows and nr_pages pages, evicting tables while the
 * arrays cannot hold them (evict_candidates() says which, in which
 * order); -ENOSPC when they still cannot.
 */
int dcp_bpf_unwind_take_room(struct bpf_source *bs, uint32_t nr_rows,
			     uint32_t nr_pages, struct unwind_placed *p)
{
	struct bpf_unwind *u = &bs->unwind;
	struct evict_candidate *c = NULL;
	size_t n = 0, next = 0, i, kept;
	bool listed = false;
	int ret = 0;

	if (nr_rows > u->rows_cap || nr_pages > u->pages_cap)
		return -ENOSPC;
	while (!ret) {
		if (!space_take(&u->rows, nr_rows, &p->rows.start)) {
			if (!space_take(&u->pages, nr_pages, &p->pages.start)) {
				p->rows.len = nr_rows;
				p->pages.len = nr_pages;
				break;
			}
			ret = space_give(
				&u->rows,
				(struct unwind_extent){ .start = p->rows.start,
							.len = nr_rows });
			if (ret)
				break;
		}
		if (!listed) {
			n = evict_candidates(bs, &c);
			listed = true;
		}
		ret = evict(u, c, n, &next, nr_rows, nr_pages);
	}
	free(c);
	for (i = 0, kept = 0; i < u->nr_placed; i++)
		if (u->placed[i].rows.len)
			u->placed[kept++] = u->placed[i];
	u->nr_placed = kept;
	return ret;
}

int dcp_bpf_unwind_space_init(struct bpf_unwind *u)
{
	if (space_init(&u->rows, u->rows_cap) ||
	    space_init(&u->pages, u->pages_cap))
		return -ENOMEM;
	return 0;
}

int dcp_bpf_unwind_give_back(struct bpf_unwind *u,
			     const struct unwind_placed *p)
{
	int ret = space_give(&u->rows, p->rows);

	return ret ? ret : space_give(&u->pages, p->pages);
}

void dcp_bpf_unwind_space_free(struct bpf_unwind *u)
{
	free(u->rows.free);
	free(u->pages.free);
	free(u->placed);
	u->rows.free = u->pages.free = NULL;
	u->placed = NULL;
}

#endif
