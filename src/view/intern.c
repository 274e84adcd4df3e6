// SPDX-License-Identifier: MIT
/*
 * The reading commands' hash tables: strings interned by content and the
 * (a, b) -> index map, open addressing with linear probing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "intern.h"

/* Slot arrays hold at most half their size, so that probes stay short. */
static size_t slots_wanted(size_t have, size_t used)
{
	size_t n = have ? have : 1024;

	while (n < 2 * (used + 1))
		n *= 2;
	return n;
}

static int string_table_grow(struct string_table *t)
{
	size_t n = slots_wanted(t->nr_slots, t->nr);
	uint32_t *s;

	if (n == t->nr_slots)
		return 0;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr; i++) {
		size_t j = dcp_hash_fnv1a_str(t->strings[i], NULL) & (n - 1);

		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nr_slots = n;
	return 0;
}

int64_t string_table_intern(struct string_table *t, const char *s)
{
	uint64_t h = dcp_hash_fnv1a_str(s, NULL);
	size_t j, mask;
	char **n;

	if (t->nr >= UINT32_MAX - 1 || string_table_grow(t))
		return -ENOMEM;
	mask = t->nr_slots - 1;
	for (j = h & mask; t->slots[j]; j = (j + 1) & mask)
		if (!strcmp(t->strings[t->slots[j] - 1], s))
			return t->slots[j] - 1;
	n = dcp_grow_from(t->strings, &t->cap, t->nr + 1, sizeof(*n), 1024);
	if (!n)
		return -ENOMEM;
	t->strings = n;
	t->strings[t->nr] = strdup(s);
	if (!t->strings[t->nr])
		return -ENOMEM;
	t->slots[j] = (uint32_t)++t->nr;
	return (int64_t)t->nr - 1;
}

void string_table_free(struct string_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static uint64_t key_hash(uint64_t a, uint64_t b)
{
	return dcp_hash_fmix64(a ^ dcp_hash_fmix64(b));
}

static int key_map_grow(struct key_map *m)
{
	size_t n = slots_wanted(m->nr_slots, m->nr);
	struct key_map_slot *s;

	if (n == m->nr_slots)
		return 0;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_slots; i++) {
		const struct key_map_slot *o = &m->slots[i];
		size_t j;

		if (!o->value)
			continue;
		for (j = key_hash(o->a, o->b) & (n - 1); s[j].value;
		     j = (j + 1) & (n - 1))
			;
		s[j] = *o;
	}
	free(m->slots);
	m->slots = s;
	m->nr_slots = n;
	return 0;
}

int key_map_find(const struct key_map *m, uint64_t a, uint64_t b,
		 uint32_t *value)
{
	size_t mask = m->nr_slots - 1;
	const struct key_map_slot *s;

	if (!m->nr_slots)
		return -ENOENT;
	for (size_t j = key_hash(a, b) & mask; (s = &m->slots[j])->value;
	     j = (j + 1) & mask) {
		if (s->a == a && s->b == b) {
			*value = s->value - 1;
			return 0;
		}
	}
	return -ENOENT;
}

int key_map_add(struct key_map *m, uint64_t a, uint64_t b, uint32_t value)
{
	size_t j, mask;

	if (value >= UINT32_MAX || key_map_grow(m))
		return -ENOMEM;
	mask = m->nr_slots - 1;
	for (j = key_hash(a, b) & mask; m->slots[j].value; j = (j + 1) & mask)
		;
	m->slots[j].a = a;
	m->slots[j].b = b;
	m->slots[j].value = value + 1;
	m->nr++;
	return 0;
}

void key_map_free(struct key_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
