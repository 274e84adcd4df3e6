// SPDX-License-Identifier: MIT
/*
 * The aggregate: interned process names and stacks, and the sample count
 * of every (comm, pid, stack) row, each in one dense array in the order of
 * first sight with a hash index beside it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate_internal.h"
#include "grow.h"
#include "hash.h"
#include "index.h"
#include "log_internal.h"

/*
 * Four tables share one scheme: entries live in a dense array (the
 * position is the id) and a dcp_index maps their hashes to ids. Each entry
 * keeps its full hash, so probing rarely touches the keys and growing
 * never hashes them again.
 */

struct str_entry {
	uint64_t hash;
	char *s;
};

struct stack_entry {
	uint64_t hash;
	struct dcp_frame *frames; /* in the frame arena: never moves */
	uint32_t nr_frames;
};

struct thread_entry {
	uint64_t hash;
	struct dcp_agg_thread t;
};

struct cgroup_entry {
	uint64_t hash;
	struct dcp_agg_cgroup c;
};

struct row_entry {
	struct dcp_row_key key;
	uint32_t hash;
	uint32_t off_cpu; /* 0: none; else index + 1 in off_cpu */
	uint64_t count;
	uint64_t flushed; /* count at the last dcp_aggregate_mark_flushed */
};

/* Off-CPU time of a row: few rows have it, so it lives apart. */
struct off_cpu_entry {
	uint64_t ns[DCP_OFF_CPU_NR_STATES];
	uint64_t flushed[DCP_OFF_CPU_NR_STATES];
};

/* Frames are carved from blocks that are never reallocated, so that the
 * pointers handed out by dcp_aggregate_stack stay valid. */
#define FRAME_BLOCK 4096u

struct frame_block {
	struct frame_block *next;
	size_t used, cap;
	struct dcp_frame frames[];
};

struct dcp_aggregate {
	struct str_entry *strings;
	size_t nr_strings, cap_strings;
	struct dcp_index string_index;

	struct stack_entry *stacks;
	size_t nr_stacks, cap_stacks;
	struct dcp_index stack_index;
	struct frame_block *blocks; /* newest first */

	struct thread_entry *threads;
	size_t nr_threads, cap_threads;
	struct dcp_index thread_index;

	struct cgroup_entry *cgroups;
	size_t nr_cgroups, cap_cgroups;
	struct dcp_index cgroup_index;

	struct row_entry *rows;
	size_t nr_rows, cap_rows;
	struct dcp_index row_index;

	struct off_cpu_entry *off_cpu;
	size_t nr_off_cpu, cap_off_cpu;

	struct dcp_lives *lives; /* the recorded processes' threads */
};

#define MAX_ENTRIES DCP_INDEX_MAX_ID

static uint64_t hash_frames(const struct dcp_frame *f, uint32_t n)
{
	uint64_t h = DCP_HASH_GOLDEN ^ n;
	uint32_t i;

	for (i = 0; i < n; i++) {
		h ^= ((uint64_t)f[i].cookie << 32 | f[i].flags);
		h *= 0xff51afd7ed558ccdull;
		h ^= f[i].offset;
		h *= 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return dcp_hash_fmix64(h);
}

static uint32_t hash_row(const struct dcp_row_key *k)
{
	uint64_t h = dcp_hash_mix((uint64_t)k->comm_id << 32 | k->pid,
				  (uint64_t)k->thread_id << 32 | k->stack_id);

	return (uint32_t)(h ^ (h >> 32));
}

/* Room in *arr for entry n. */
static int grow_array(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;

	if (n < *cap)
		return 0;
	if (n >= MAX_ENTRIES)
		return -EOVERFLOW;
	p = dcp_grow(*arr, cap, n + 1, elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

static uint64_t string_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct dcp_aggregate *)ctx)->strings[id].hash;
}

static uint64_t stack_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct dcp_aggregate *)ctx)->stacks[id].hash;
}

static uint64_t thread_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct dcp_aggregate *)ctx)->threads[id].hash;
}

static uint64_t cgroup_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct dcp_aggregate *)ctx)->cgroups[id].hash;
}

static uint64_t row_hash_of(const void *ctx, uint32_t id)
{
	return ((const struct dcp_aggregate *)ctx)->rows[id].hash;
}

struct dcp_aggregate *dcp_aggregate_new(void)
{
	struct dcp_aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return dcp_error_null(ENOMEM, "out of memory");
	if (dcp_index_init(&a->string_index, 64) < 0 ||
	    dcp_index_init(&a->stack_index, 64) < 0 ||
	    dcp_index_init(&a->thread_index, 64) < 0 ||
	    dcp_index_init(&a->cgroup_index, 16) < 0 ||
	    dcp_index_init(&a->row_index, 64) < 0 ||
	    !(a->lives = dcp_lives_new())) {
		dcp_aggregate_free(a);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	return a;
}

void dcp_aggregate_free(struct dcp_aggregate *a)
{
	struct frame_block *b, *next;
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nr_strings; i++)
		free(a->strings[i].s);
	free(a->strings);
	dcp_index_free(&a->string_index);
	free(a->stacks);
	dcp_index_free(&a->stack_index);
	for (b = a->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(a->threads);
	dcp_index_free(&a->thread_index);
	free(a->cgroups);
	dcp_index_free(&a->cgroup_index);
	free(a->rows);
	dcp_index_free(&a->row_index);
	free(a->off_cpu);
	dcp_lives_free(a->lives);
	free(a);
}

int64_t dcp_aggregate_intern_string(struct dcp_aggregate *a, const char *s)
{
	size_t len, pos;
	uint64_t h = dcp_hash_string(s, &len);
	struct str_entry *e;
	uint32_t id;
	int ret;

	dcp_index_for_each(&a->string_index, h, pos, id) {
		e = &a->strings[id];
		if (e->hash == h && strcmp(e->s, s) == 0)
			return id;
	}
	ret = grow_array((void **)&a->strings, &a->cap_strings, a->nr_strings,
			 sizeof(*a->strings));
	if (ret < 0)
		return dcp_error(ret, "cannot intern a string: %s",
				 strerror(-ret));
	e = &a->strings[a->nr_strings];
	e->s = malloc(len + 1);
	if (!e->s)
		return dcp_error(ENOMEM, "out of memory");
	memcpy(e->s, s, len + 1);
	e->hash = h;
	ret = dcp_index_add(&a->string_index, pos, h, (uint32_t)a->nr_strings,
			    string_hash_of, a);
	if (ret < 0) {
		free(e->s);
		return dcp_error(ret, "cannot intern a string: %s",
				 strerror(-ret));
	}
	return (int64_t)a->nr_strings++;
}

static struct dcp_frame *frames_alloc(struct dcp_aggregate *a, uint32_t n)
{
	struct frame_block *b = a->blocks;
	size_t cap;

	if (b && b->cap - b->used >= n) {
		b->used += n;
		return &b->frames[b->used - n];
	}
	cap = n > FRAME_BLOCK ? n : FRAME_BLOCK;
	b = malloc(sizeof(*b) + cap * sizeof(b->frames[0]));
	if (!b)
		return NULL;
	b->cap = cap;
	b->used = n;
	/* A dedicated oversized block goes behind the current one, which may
	 * still have room for ordinary stacks. */
	if (n > FRAME_BLOCK && a->blocks) {
		b->next = a->blocks->next;
		a->blocks->next = b;
	} else {
		b->next = a->blocks;
		a->blocks = b;
	}
	return b->frames;
}

int64_t dcp_aggregate_intern_stack(struct dcp_aggregate *a,
				   const struct dcp_frame *frames,
				   uint32_t nr_frames)
{
	uint64_t h = hash_frames(frames, nr_frames);
	struct stack_entry *e;
	struct dcp_frame *copy = NULL;
	uint32_t id;
	size_t pos;
	int ret;

	dcp_index_for_each(&a->stack_index, h, pos, id) {
		e = &a->stacks[id];
		/* No padding in struct dcp_frame: memcmp compares fields. */
		if (e->hash == h && e->nr_frames == nr_frames &&
		    (nr_frames == 0 ||
		     memcmp(e->frames, frames, nr_frames * sizeof(*frames)) ==
			     0))
			return id;
	}
	ret = grow_array((void **)&a->stacks, &a->cap_stacks, a->nr_stacks,
			 sizeof(*a->stacks));
	if (ret == 0 && nr_frames) {
		copy = frames_alloc(a, nr_frames);
		if (!copy)
			ret = -ENOMEM;
	}
	/* On failure, frames taken stay in their block until the end. */
	if (ret == 0)
		ret = dcp_index_add(&a->stack_index, pos, h,
				    (uint32_t)a->nr_stacks, stack_hash_of, a);
	if (ret < 0)
		return dcp_error(ret, "cannot intern a stack: %s",
				 strerror(-ret));
	if (nr_frames)
		memcpy(copy, frames, nr_frames * sizeof(*frames));
	e = &a->stacks[a->nr_stacks];
	e->hash = h;
	e->frames = copy;
	e->nr_frames = nr_frames;
	return (int64_t)a->nr_stacks++;
}

_Static_assert(sizeof(struct dcp_frame) == 16, "struct dcp_frame has padding");

int64_t dcp_aggregate_intern_thread(struct dcp_aggregate *a,
				    const struct dcp_agg_thread *t)
{
	uint64_t h =
		dcp_hash_mix((uint64_t)t->cgroup << 32 | t->tid, t->comm_id);
	struct thread_entry *e;
	uint32_t id;
	size_t pos;
	int ret;

	dcp_index_for_each(&a->thread_index, h, pos, id) {
		e = &a->threads[id];
		if (e->hash == h && e->t.tid == t->tid &&
		    e->t.comm_id == t->comm_id && e->t.cgroup == t->cgroup)
			return id + 1;
	}
	ret = grow_array((void **)&a->threads, &a->cap_threads, a->nr_threads,
			 sizeof(*a->threads));
	if (ret == 0)
		ret = dcp_index_add(&a->thread_index, pos, h,
				    (uint32_t)a->nr_threads, thread_hash_of, a);
	if (ret < 0)
		return dcp_error(ret, "cannot intern a thread: %s",
				 strerror(-ret));
	e = &a->threads[a->nr_threads];
	e->hash = h;
	e->t = *t;
	return (int64_t)++a->nr_threads;
}

size_t dcp_aggregate_nr_threads(const struct dcp_aggregate *a)
{
	return a->nr_threads;
}

bool dcp_aggregate_thread(const struct dcp_aggregate *a, uint32_t id,
			  struct dcp_agg_thread *out)
{
	if (id == 0 || id > a->nr_threads)
		return false;
	*out = a->threads[id - 1].t;
	return true;
}

int64_t dcp_aggregate_intern_cgroup(struct dcp_aggregate *a,
				    const struct dcp_agg_cgroup *c)
{
	uint64_t h = dcp_hash_mix(c->kernel_id, c->path_id);
	struct cgroup_entry *e;
	uint32_t id;
	size_t pos;
	int ret;

	dcp_index_for_each(&a->cgroup_index, h, pos, id) {
		e = &a->cgroups[id];
		if (e->hash == h && e->c.kernel_id == c->kernel_id &&
		    e->c.path_id == c->path_id)
			return id + 1;
	}
	ret = grow_array((void **)&a->cgroups, &a->cap_cgroups, a->nr_cgroups,
			 sizeof(*a->cgroups));
	if (ret == 0)
		ret = dcp_index_add(&a->cgroup_index, pos, h,
				    (uint32_t)a->nr_cgroups, cgroup_hash_of, a);
	if (ret < 0)
		return dcp_error(ret, "cannot intern a cgroup: %s",
				 strerror(-ret));
	e = &a->cgroups[a->nr_cgroups];
	e->hash = h;
	e->c = *c;
	return (int64_t)++a->nr_cgroups;
}

size_t dcp_aggregate_nr_cgroups(const struct dcp_aggregate *a)
{
	return a->nr_cgroups;
}

bool dcp_aggregate_cgroup(const struct dcp_aggregate *a, uint32_t id,
			  struct dcp_agg_cgroup *out)
{
	if (id == 0 || id > a->nr_cgroups)
		return false;
	*out = a->cgroups[id - 1].c;
	return true;
}

/* The row of key, created with nothing counted; NULL with a message. */
static struct row_entry *row_of(struct dcp_aggregate *a,
				const struct dcp_row_key *key)
{
	uint32_t h = hash_row(key), id;
	struct row_entry *r;
	size_t pos;
	int ret;

	dcp_index_for_each(&a->row_index, h, pos, id) {
		r = &a->rows[id];
		if (r->hash == h && r->key.stack_id == key->stack_id &&
		    r->key.pid == key->pid && r->key.comm_id == key->comm_id &&
		    r->key.thread_id == key->thread_id)
			return r;
	}
	ret = grow_array((void **)&a->rows, &a->cap_rows, a->nr_rows,
			 sizeof(*a->rows));
	if (ret == 0)
		ret = dcp_index_add(&a->row_index, pos, h, (uint32_t)a->nr_rows,
				    row_hash_of, a);
	if (ret < 0) {
		dcp_error(ret, "cannot add a row: %s", strerror(-ret));
		return NULL;
	}
	r = &a->rows[a->nr_rows];
	memset(r, 0, sizeof(*r));
	r->key = *key;
	r->hash = h;
	a->nr_rows++;
	return r;
}

int dcp_aggregate_add(struct dcp_aggregate *a, const struct dcp_row_key *key,
		      uint64_t count)
{
	struct row_entry *r = row_of(a, key);

	if (!r)
		return -ENOMEM;
	r->count += count;
	return 0;
}

int dcp_aggregate_add_off_cpu(struct dcp_aggregate *a,
			      const struct dcp_row_key *key,
			      const uint64_t ns[DCP_OFF_CPU_NR_STATES])
{
	struct row_entry *r = row_of(a, key);
	int ret;

	if (!r)
		return -ENOMEM;
	if (!r->off_cpu) {
		ret = grow_array((void **)&a->off_cpu, &a->cap_off_cpu,
				 a->nr_off_cpu, sizeof(*a->off_cpu));
		if (ret < 0)
			return dcp_error(ret, "cannot add a row: %s",
					 strerror(-ret));
		memset(&a->off_cpu[a->nr_off_cpu], 0, sizeof(*a->off_cpu));
		r->off_cpu = (uint32_t)++a->nr_off_cpu;
	}
	for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
		a->off_cpu[r->off_cpu - 1].ns[s] += ns[s];
	return 0;
}

bool dcp_aggregate_has_off_cpu(const struct dcp_aggregate *a)
{
	return a->nr_off_cpu > 0;
}

bool dcp_aggregate_row_off_cpu(const struct dcp_aggregate *a, size_t i,
			       bool unflushed,
			       uint64_t ns[DCP_OFF_CPU_NR_STATES])
{
	const struct off_cpu_entry *e;
	bool any = false;

	if (!a->rows[i].off_cpu) {
		memset(ns, 0, DCP_OFF_CPU_NR_STATES * sizeof(*ns));
		return false;
	}
	e = &a->off_cpu[a->rows[i].off_cpu - 1];
	for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++) {
		ns[s] = e->ns[s] - (unflushed ? e->flushed[s] : 0);
		any |= ns[s] != 0;
	}
	return any;
}

size_t dcp_aggregate_nr_strings(const struct dcp_aggregate *a)
{
	return a->nr_strings;
}

const char *dcp_aggregate_string(const struct dcp_aggregate *a, uint32_t id)
{
	return id < a->nr_strings ? a->strings[id].s : NULL;
}

size_t dcp_aggregate_nr_stacks(const struct dcp_aggregate *a)
{
	return a->nr_stacks;
}

const struct dcp_frame *dcp_aggregate_stack(const struct dcp_aggregate *a,
					    uint32_t id, uint32_t *nr_frames)
{
	if (id >= a->nr_stacks) {
		*nr_frames = 0;
		return NULL;
	}
	*nr_frames = a->stacks[id].nr_frames;
	return a->stacks[id].frames;
}

size_t dcp_aggregate_nr_rows(const struct dcp_aggregate *a)
{
	return a->nr_rows;
}

void dcp_aggregate_row(const struct dcp_aggregate *a, size_t i,
		       struct dcp_row_key *key, uint64_t *count)
{
	if (key)
		*key = a->rows[i].key;
	if (count)
		*count = a->rows[i].count;
}

uint64_t dcp_aggregate_row_unflushed(const struct dcp_aggregate *a, size_t i)
{
	return a->rows[i].count - a->rows[i].flushed;
}

void dcp_aggregate_mark_flushed(struct dcp_aggregate *a)
{
	size_t i;

	for (i = 0; i < a->nr_rows; i++)
		a->rows[i].flushed = a->rows[i].count;
	for (i = 0; i < a->nr_off_cpu; i++)
		memcpy(a->off_cpu[i].flushed, a->off_cpu[i].ns,
		       sizeof(a->off_cpu[i].ns));
	dcp_lives_mark_flushed(a->lives);
}

struct dcp_lives *dcp_aggregate_lives(const struct dcp_aggregate *a)
{
	return a->lives;
}
