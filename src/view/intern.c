// SPDX-License-Identifier: MIT
/*
 * The reading commands' hash tables: strings interned by content and the
 * (a, b) -> index map, each a dense array found through a dcp_index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "index.h"
#include "intern.h"

/* Slots allocated at the first entry: reading commands intern many. */
#define FIRST_SLOTS 1024

static uint64_t string_hash_of(const void *ctx, uint32_t i)
{
	const struct string_table *t = ctx;

	return dcp_hash_string(t->strings[i], NULL);
}

int64_t string_table_intern(struct string_table *t, const char *s)
{
	uint64_t h = dcp_hash_string(s, NULL);
	size_t pos;
	uint32_t i;
	char **n;

	if (t->nr >= DCP_INDEX_MAX_ID ||
	    (!t->index.slots && dcp_index_init(&t->index, FIRST_SLOTS) < 0))
		return -ENOMEM;
	dcp_index_for_each(&t->index, h, pos, i) {
		if (!strcmp(t->strings[i], s))
			return i;
	}
	n = dcp_grow_from(t->strings, &t->cap, t->nr + 1, sizeof(*n), 1024);
	if (!n)
		return -ENOMEM;
	t->strings = n;
	t->strings[t->nr] = strdup(s);
	if (!t->strings[t->nr])
		return -ENOMEM;
	if (dcp_index_add(&t->index, pos, h, (uint32_t)t->nr, string_hash_of,
			  t) < 0) {
		free(t->strings[t->nr]);
		return -ENOMEM;
	}
	return (int64_t)t->nr++;
}

void string_table_free(struct string_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->strings[i]);
	free(t->strings);
	dcp_index_free(&t->index);
	memset(t, 0, sizeof(*t));
}

static uint64_t key_map_hash_of(const void *ctx, uint32_t i)
{
	const struct key_map *m = ctx;

	return dcp_hash_mix(m->entries[i].a, m->entries[i].b);
}

/* The entry of (a, b) (hash h), else -1; *end gets its slot, else the
 * free slot where it would go. */
static int64_t key_map_lookup(const struct key_map *m, uint64_t a, uint64_t b,
			      uint64_t h, size_t *end)
{
	size_t pos;
	uint32_t i;

	dcp_index_for_each(&m->index, h, pos, i) {
		if (m->entries[i].a == a && m->entries[i].b == b) {
			*end = pos;
			return i;
		}
	}
	*end = pos;
	return -1;
}

int key_map_find(const struct key_map *m, uint64_t a, uint64_t b,
		 uint32_t *value)
{
	size_t pos;
	int64_t i;

	if (!m->index.slots)
		return -ENOENT;
	i = key_map_lookup(m, a, b, dcp_hash_mix(a, b), &pos);
	if (i < 0)
		return -ENOENT;
	*value = m->entries[i].value;
	return 0;
}

int key_map_add(struct key_map *m, uint64_t a, uint64_t b, uint32_t value)
{
	uint64_t h = dcp_hash_mix(a, b);
	struct key_map_entry *e;
	size_t pos;

	if (m->nr >= DCP_INDEX_MAX_ID ||
	    (!m->index.slots && dcp_index_init(&m->index, FIRST_SLOTS) < 0))
		return -ENOMEM;
	if (key_map_lookup(m, a, b, h, &pos) >= 0)
		return -EEXIST;
	e = dcp_grow_from(m->entries, &m->cap, m->nr + 1, sizeof(*e), 1024);
	if (!e)
		return -ENOMEM;
	m->entries = e;
	if (dcp_index_add(&m->index, pos, h, (uint32_t)m->nr, key_map_hash_of,
			  m) < 0)
		return -ENOMEM;
	e = &m->entries[m->nr++];
	e->a = a;
	e->b = b;
	e->value = value;
	return 0;
}

void key_map_free(struct key_map *m)
{
	free(m->entries);
	dcp_index_free(&m->index);
	memset(m, 0, sizeof(*m));
}
