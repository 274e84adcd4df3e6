/* SPDX-License-Identifier: MIT */
/*
 * Hash tables of the reading commands: strings interned by content, and a
 * map from two 64-bit words to an index. Both are dense arrays found by
 * hash through a dcp_index (lib/base/index.h).
 */
#ifndef DCPROF_INTERN_H
#define DCPROF_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"

/* Copies of strings, one per distinct text, numbered from 0. */
struct string_table {
	char **strings;
	size_t nr, cap;
	struct dcp_index index; /* allocated with the first string */
};

/* The number of s, copying it in when new; -ENOMEM. */
int64_t string_table_intern(struct string_table *t, const char *s);

static inline const char *string_table_get(const struct string_table *t,
					   uint32_t i)
{
	return t->strings[i];
}

void string_table_free(struct string_table *t);

/* (a, b) -> a caller's index; zero-initialized is empty. */
struct key_map {
	struct key_map_entry {
		uint64_t a, b;
		uint32_t value; /* the caller's index */
	} * entries;
	size_t nr, cap;
	struct dcp_index index; /* allocated with the first entry */
};

/* The value stored for (a, b) into *value: 0, else -ENOENT. */
int key_map_find(const struct key_map *m, uint64_t a, uint64_t b,
		 uint32_t *value);

/* Stores value for (a, b), which must not be in the map yet: 0, -EEXIST
 * or -ENOMEM. */
int key_map_add(struct key_map *m, uint64_t a, uint64_t b, uint32_t value);

void key_map_free(struct key_map *m);

#endif
