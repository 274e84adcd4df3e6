/* SPDX-License-Identifier: MIT */
/*
 * The hash index of every table of the project: it maps hashes to the ids
 * of entries that the caller keeps in an array of its own (the id is the
 * entry's position there). Open addressing with linear probing over a
 * power-of-two number of slots, each holding id + 1 (0 is a free slot),
 * at most half full, so that probes stay short; growing doubles it.
 *
 * The index keeps no keys and no hashes: the caller compares keys while
 * it walks a probe sequence (dcp_index_for_each), and gives the hash of an
 * id (a dcp_index_hash_fn) when entries move, on growing and on removal.
 * Header-only, so that every layer may use it and the probe loops inline
 * the caller's key comparison.
 */
#ifndef DCPROF_BASE_INDEX_H
#define DCPROF_BASE_INDEX_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct dcp_index {
	uint32_t *slots; /* id + 1, 0: free; NULL before dcp_index_init */
	size_t mask; /* number of slots - 1 */
	size_t nr; /* ids in the index */
};

/* The hash under which id was added, from the caller's entry (ctx). */
typedef uint64_t (*dcp_index_hash_fn)(const void *ctx, uint32_t id);

/* Ids go in slots as id + 1 in a uint32_t. */
#define DCP_INDEX_MAX_ID (UINT32_MAX - 1u)

/* An empty index of nr_slots slots (a power of two, at least 2): 0 or
 * -ENOMEM. */
static inline int dcp_index_init(struct dcp_index *ix, size_t nr_slots)
{
	ix->slots = calloc(nr_slots, sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->mask = nr_slots - 1;
	ix->nr = 0;
	return 0;
}

static inline void dcp_index_free(struct dcp_index *ix)
{
	free(ix->slots);
	ix->slots = NULL;
	ix->mask = ix->nr = 0;
}

/*
 * Walks the probe sequence of hash in an initialized index: for each id
 * in it, pos (a size_t) is its slot and id (a uint32_t) the id, whatever
 * its hash, so the body compares the caller's key and breaks out on a
 * match. When the loop ends without a break, pos is the free slot that
 * ended the sequence, where dcp_index_add puts a new id of that hash.
 */
#define dcp_index_for_each(ix, hash, pos, id)                         \
	for ((pos) = (size_t)(hash) & (ix)->mask;                     \
	     (ix)->slots[pos] ? ((id) = (ix)->slots[pos] - 1, 1) : 0; \
	     (pos) = ((pos) + 1) & (ix)->mask)

/* Place id at the first free slot of hash's probe sequence. */
static inline void dcp_index_place(struct dcp_index *ix, uint64_t hash,
				   uint32_t id)
{
	size_t pos = (size_t)hash & ix->mask;

	while (ix->slots[pos])
		pos = (pos + 1) & ix->mask;
	ix->slots[pos] = id + 1;
}

/* Twice the slots, every id placed again by its hash: 0 or -ENOMEM (the
 * index unchanged). */
static inline int dcp_index_grow(struct dcp_index *ix,
				 dcp_index_hash_fn hash_of, const void *ctx)
{
	size_t old_nr = ix->mask + 1, i;
	uint32_t *old = ix->slots;

	if (old_nr > SIZE_MAX / 2 / sizeof(*old))
		return -ENOMEM;
	ix->slots = calloc(old_nr * 2, sizeof(*old));
	if (!ix->slots) {
		ix->slots = old;
		return -ENOMEM;
	}
	ix->mask = old_nr * 2 - 1;
	for (i = 0; i < old_nr; i++)
		if (old[i])
			dcp_index_place(ix, hash_of(ctx, old[i] - 1),
					old[i] - 1);
	free(old);
	return 0;
}

/*
 * Adds id (at most DCP_INDEX_MAX_ID) under hash, at pos: the free slot
 * where dcp_index_for_each ended for hash, with nothing added since. When
 * one more id would make the index more than half full, it grows first
 * and id goes where hash's probe sequence in the new slots ends. 0, or
 * -ENOMEM with the index unchanged.
 */
static inline int dcp_index_add(struct dcp_index *ix, size_t pos, uint64_t hash,
				uint32_t id, dcp_index_hash_fn hash_of,
				const void *ctx)
{
	int ret;

	if ((ix->nr + 1) * 2 > ix->mask + 1) {
		ret = dcp_index_grow(ix, hash_of, ctx);
		if (ret < 0)
			return ret;
		dcp_index_place(ix, hash, id);
	} else {
		ix->slots[pos] = id + 1;
	}
	ix->nr++;
	return 0;
}

/*
 * Removes the id at slot pos (where dcp_index_for_each found it). The ids
 * probed past it shift back (no tombstones), so every probe sequence stays
 * unbroken; hash_of gives their hashes, not the removed id's.
 */
static inline void dcp_index_remove(struct dcp_index *ix, size_t pos,
				    dcp_index_hash_fn hash_of, const void *ctx)
{
	size_t i = pos, j = pos, home;

	for (;;) {
		j = (j + 1) & ix->mask;
		if (!ix->slots[j])
			break;
		home = (size_t)hash_of(ctx, ix->slots[j] - 1) & ix->mask;
		/* j moves back to i unless its home lies cyclically in
		 * (i, j], where a probe from home reaches j without i. */
		if (i <= j ? (home <= i || home > j) :
			     (home <= i && home > j)) {
			ix->slots[i] = ix->slots[j];
			i = j;
		}
	}
	ix->slots[i] = 0;
	ix->nr--;
}

#endif
