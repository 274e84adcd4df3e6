// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "symtab_internal.h"

struct sym_entry {
	uint64_t hash;
	uint64_t offset;
	uint64_t start, size;
	char *name; /* owned; NULL: unresolved */
	uint32_t cookie;
};

/* Entries in insertion order; an open-addressing index (entry + 1 per
 * slot, 0 free, at most half full) finds them by (cookie, offset). */
struct dcp_symtab {
	struct sym_entry *e;
	size_t n, cap;
	uint32_t *slots;
	size_t mask;
};

static uint64_t hash_key(uint32_t cookie, uint64_t offset)
{
	uint64_t h = offset ^ ((uint64_t)cookie * 0x9e3779b97f4a7c15ull);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

struct dcp_symtab *dcp_symtab_new(void)
{
	struct dcp_symtab *s = calloc(1, sizeof(*s));

	if (s)
		s->slots = calloc(64, sizeof(*s->slots));
	if (!s || !s->slots) {
		free(s);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	s->mask = 63;
	return s;
}

void dcp_symtab_free(struct dcp_symtab *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->e[i].name);
	free(s->e);
	free(s->slots);
	free(s);
}

static void slot_put(uint32_t *slots, size_t mask, uint64_t hash, size_t i)
{
	size_t k = hash & mask;

	while (slots[k])
		k = (k + 1) & mask;
	slots[k] = (uint32_t)i + 1;
}

static long find(const struct dcp_symtab *s, uint32_t cookie, uint64_t offset,
		 uint64_t hash)
{
	size_t k;
	uint32_t slot;

	for (k = hash & s->mask; (slot = s->slots[k]) != 0;
	     k = (k + 1) & s->mask) {
		const struct sym_entry *e = &s->e[slot - 1];

		if (e->hash == hash && e->cookie == cookie &&
		    e->offset == offset)
			return (long)slot - 1;
	}
	return -1;
}

static int reserve(struct dcp_symtab *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct sym_entry *e;

		if (cap >= UINT32_MAX)
			return -EOVERFLOW;
		e = realloc(s->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->e = e;
		s->cap = cap;
	}
	if ((s->n + 1) * 2 > s->mask + 1) {
		size_t nr = (s->mask + 1) * 2, i;
		uint32_t *slots = calloc(nr, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (i = 0; i < s->n; i++)
			slot_put(slots, nr - 1, s->e[i].hash, i);
		free(s->slots);
		s->slots = slots;
		s->mask = nr - 1;
	}
	return 0;
}

int dcp_symtab_add(struct dcp_symtab *s, uint32_t cookie, uint64_t offset,
		   const char *name, uint64_t start, uint64_t size)
{
	uint64_t hash = hash_key(cookie, offset);
	long i = find(s, cookie, offset, hash);
	char *copy = NULL;
	struct sym_entry *e;
	int ret;

	if (name && !(copy = strdup(name)))
		return dcp_error(ENOMEM, "out of memory");
	/* A second answer for the same address replaces the first. */
	if (i >= 0) {
		e = &s->e[i];
		free(e->name);
		e->name = copy;
		e->start = start;
		e->size = size;
		return 0;
	}
	ret = reserve(s);
	if (ret < 0) {
		free(copy);
		return dcp_error(ret, "cannot add a symbol: %s",
				 strerror(-ret));
	}
	e = &s->e[s->n];
	e->hash = hash;
	e->cookie = cookie;
	e->offset = offset;
	e->name = copy;
	e->start = start;
	e->size = size;
	slot_put(s->slots, s->mask, hash, s->n);
	s->n++;
	return 0;
}

int dcp_symtab_lookup(const struct dcp_symtab *s, uint32_t cookie,
		      uint64_t offset, struct dcp_symbol *sym)
{
	long i = find(s, cookie, offset, hash_key(cookie, offset));

	/* Report code asks for every frame: a miss is expected and cheap,
	 * so it leaves no message. */
	if (i < 0) {
		sym->name = NULL;
		sym->start = sym->size = 0;
		return -ENOENT;
	}
	sym->name = s->e[i].name;
	sym->start = s->e[i].start;
	sym->size = s->e[i].size;
	return 0;
}

size_t dcp_symtab_count(const struct dcp_symtab *s)
{
	return s->n;
}

void dcp_symtab_entry(const struct dcp_symtab *s, size_t i, uint32_t *cookie,
		      uint64_t *offset, struct dcp_symbol *sym)
{
	const struct sym_entry *e = &s->e[i];

	if (cookie)
		*cookie = e->cookie;
	if (offset)
		*offset = e->offset;
	if (sym) {
		sym->name = e->name;
		sym->start = e->start;
		sym->size = e->size;
	}
}
