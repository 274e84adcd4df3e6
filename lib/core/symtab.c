// SPDX-License-Identifier: MIT
/*
 * The symbol table stored in a profile: names, demangled names, lines and
 * inline chains by (cookie, offset), in insertion order with a hash index.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "index.h"
#include "log_internal.h"
#include "symtab_internal.h"

struct inl_entry {
	char *name, *demangled, *file; /* owned */
	uint32_t line;
};

struct sym_entry {
	uint64_t hash;
	uint64_t offset;
	uint64_t start, size;
	char *name; /* owned; NULL: unresolved */
	bool made; /* DCP_SYMBOL_MADE_NAME, decided when added */
	uint32_t cookie;
	uint32_t line;
	char *demangled, *file; /* owned, may be NULL */
	struct inl_entry *inl; /* innermost first */
	uint32_t nr_inline;
};

/* Entries in insertion order (the position is the id); a dcp_index finds
 * them by the hash of (cookie, offset), which each entry keeps. */
struct dcp_symtab {
	struct sym_entry *e;
	size_t n, cap;
	struct dcp_index ix;
};

static uint64_t hash_key(uint32_t cookie, uint64_t offset)
{
	return dcp_hash_mix(cookie, offset);
}

static uint64_t hash_of(const void *ctx, uint32_t id)
{
	return ((const struct dcp_symtab *)ctx)->e[id].hash;
}

struct dcp_symtab *dcp_symtab_new(void)
{
	struct dcp_symtab *s = calloc(1, sizeof(*s));

	if (!s || dcp_index_init(&s->ix, 64) < 0) {
		free(s);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	return s;
}

static void detail_clear(struct sym_entry *e)
{
	for (uint32_t j = 0; j < e->nr_inline; j++) {
		free(e->inl[j].name);
		free(e->inl[j].demangled);
		free(e->inl[j].file);
	}
	free(e->inl);
	free(e->demangled);
	free(e->file);
	e->inl = NULL;
	e->nr_inline = 0;
	e->demangled = e->file = NULL;
	e->line = 0;
}

void dcp_symtab_free(struct dcp_symtab *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->e[i].name);
		detail_clear(&s->e[i]);
	}
	free(s->e);
	dcp_index_free(&s->ix);
	free(s);
}

bool dcp_symbol_name_is_made(const char *name, uint64_t start, uint64_t size,
			     uint64_t offset, bool *per_address)
{
	char tail[2 + 3 + 16 + 1];
	size_t n, len;

	if (!name)
		return false;
	n = (size_t)snprintf(tail, sizeof(tail), "+0x%" PRIx64, start);
	len = strlen(name);
	if (len <= n || strcmp(name + len - n, tail))
		return false;
	if (per_address)
		*per_address = start == offset && size == 1;
	return true;
}

static void fill_symbol(const struct sym_entry *e, struct dcp_symbol *sym)
{
	sym->flags = e->made ? DCP_SYMBOL_MADE_NAME : 0;
	sym->name = e->name;
	sym->start = e->start;
	sym->size = e->size;
	sym->demangled = e->demangled;
	sym->file = e->file;
	sym->line = e->line;
	sym->nr_inline = e->nr_inline;
}

static void fill_inline(const struct inl_entry *e, struct dcp_inline_frame *out)
{
	out->name = e->name;
	out->demangled = e->demangled;
	out->file = e->file;
	out->line = e->line;
}

/* The entry of (cookie, offset), else -1 with *end (if given) the slot
 * where its probe ended. */
static long find(const struct dcp_symtab *s, uint32_t cookie, uint64_t offset,
		 uint64_t hash, size_t *end)
{
	size_t pos;
	uint32_t id;

	dcp_index_for_each(&s->ix, hash, pos, id) {
		const struct sym_entry *e = &s->e[id];

		if (e->hash == hash && e->cookie == cookie &&
		    e->offset == offset)
			return (long)id;
	}
	if (end)
		*end = pos;
	return -1;
}

static int reserve(struct dcp_symtab *s)
{
	if (s->n == s->cap) {
		struct sym_entry *e;

		if (s->n >= UINT32_MAX / 2)
			return -EOVERFLOW;
		e = dcp_grow(s->e, &s->cap, s->n + 1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->e = e;
	}
	return 0;
}

int dcp_symtab_add(struct dcp_symtab *s, uint32_t cookie, uint64_t offset,
		   const char *name, uint64_t start, uint64_t size)
{
	uint64_t hash = hash_key(cookie, offset);
	size_t pos;
	long i = find(s, cookie, offset, hash, &pos);
	char *copy = NULL;
	struct sym_entry *e;
	int ret;

	if (name && !(copy = strdup(name)))
		return dcp_error(ENOMEM, "out of memory");
	/* A second answer for the same address replaces the first. */
	if (i >= 0) {
		e = &s->e[i];
		free(e->name);
		detail_clear(e);
		e->name = copy;
		e->made = dcp_symbol_name_is_made(name, start, size, offset,
						  NULL);
		e->start = start;
		e->size = size;
		return 0;
	}
	ret = reserve(s);
	if (ret == 0)
		ret = dcp_index_add(&s->ix, pos, hash, (uint32_t)s->n, hash_of,
				    s);
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
	e->made = dcp_symbol_name_is_made(name, start, size, offset, NULL);
	e->start = start;
	e->size = size;
	e->line = 0;
	e->demangled = e->file = NULL;
	e->inl = NULL;
	e->nr_inline = 0;
	s->n++;
	return 0;
}

int dcp_symtab_lookup(const struct dcp_symtab *s, uint32_t cookie,
		      uint64_t offset, struct dcp_symbol *sym)
{
	long i = find(s, cookie, offset, hash_key(cookie, offset), NULL);

	/* Report code asks for every frame: a miss is expected and cheap,
	 * so it leaves no message. */
	if (i < 0) {
		memset(sym, 0, sizeof(*sym));
		return -ENOENT;
	}
	fill_symbol(&s->e[i], sym);
	return 0;
}

size_t dcp_symtab_count(const struct dcp_symtab *s)
{
	return s->n;
}

static size_t str_bytes(const char *str)
{
	return str ? strlen(str) + 1 : 0;
}

size_t dcp_symtab_entry_bytes(const struct dcp_symtab *s, size_t i)
{
	const struct sym_entry *e = &s->e[i];
	/* its entry and two index slots, the index being at most half full */
	size_t bytes = sizeof(*e) + 2 * sizeof(*s->ix.slots);

	bytes += str_bytes(e->name) + str_bytes(e->demangled) +
		 str_bytes(e->file) + e->nr_inline * sizeof(*e->inl);
	for (uint32_t j = 0; j < e->nr_inline; j++)
		bytes += str_bytes(e->inl[j].name) +
			 str_bytes(e->inl[j].demangled) +
			 str_bytes(e->inl[j].file);
	return bytes;
}

size_t dcp_symtab_bytes(const struct dcp_symtab *s)
{
	size_t bytes = sizeof(*s);

	for (size_t i = 0; i < s->n; i++)
		bytes += dcp_symtab_entry_bytes(s, i);
	return bytes;
}

void dcp_symtab_entry(const struct dcp_symtab *s, size_t i, uint32_t *cookie,
		      uint64_t *offset, struct dcp_symbol *sym)
{
	const struct sym_entry *e = &s->e[i];

	if (cookie)
		*cookie = e->cookie;
	if (offset)
		*offset = e->offset;
	if (sym)
		fill_symbol(e, sym);
}

void dcp_symtab_entry_inline(const struct dcp_symtab *s, size_t i, uint32_t j,
			     struct dcp_inline_frame *out)
{
	fill_inline(&s->e[i].inl[j], out);
}

int dcp_symtab_inline(const struct dcp_symtab *s, uint32_t cookie,
		      uint64_t offset, uint32_t i, struct dcp_inline_frame *out)
{
	long k = find(s, cookie, offset, hash_key(cookie, offset), NULL);

	if (k < 0 || i >= s->e[k].nr_inline) {
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
	fill_inline(&s->e[k].inl[i], out);
	return 0;
}

static bool dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	return !src || (*dst = strdup(src)) != NULL;
}

int dcp_symtab_set_detail(struct dcp_symtab *s, uint32_t cookie,
			  uint64_t offset, const char *demangled,
			  const char *file, uint32_t line,
			  const struct dcp_inline_frame *inl,
			  uint32_t nr_inline)
{
	long i = find(s, cookie, offset, hash_key(cookie, offset), NULL);
	struct sym_entry *e, tmp;
	bool ok;

	if (i < 0)
		return -ENOENT;
	e = &s->e[i];
	memset(&tmp, 0, sizeof(tmp));
	ok = dup_opt(&tmp.demangled, demangled) && dup_opt(&tmp.file, file);
	if (ok && nr_inline) {
		tmp.inl = calloc(nr_inline, sizeof(*tmp.inl));
		ok = tmp.inl != NULL;
	}
	for (uint32_t j = 0; ok && j < nr_inline; j++) {
		tmp.nr_inline = j + 1;
		tmp.inl[j].line = inl[j].line;
		ok = dup_opt(&tmp.inl[j].name, inl[j].name) &&
		     dup_opt(&tmp.inl[j].demangled, inl[j].demangled) &&
		     dup_opt(&tmp.inl[j].file, inl[j].file);
	}
	if (!ok) {
		detail_clear(&tmp);
		return dcp_error(ENOMEM, "out of memory");
	}
	detail_clear(e);
	e->demangled = tmp.demangled;
	e->file = tmp.file;
	e->line = line;
	e->inl = tmp.inl;
	e->nr_inline = nr_inline;
	return 0;
}

int dcp_symtab_copy(struct dcp_symtab *dst, const struct dcp_symtab *src,
		    uint32_t cookie, uint64_t offset)
{
	return dcp_symtab_copy_as(dst, src, cookie, offset, cookie);
}

int dcp_symtab_copy_as(struct dcp_symtab *dst, const struct dcp_symtab *src,
		       uint32_t cookie, uint64_t offset, uint32_t dst_cookie)
{
	long i = find(src, cookie, offset, hash_key(cookie, offset), NULL);
	struct dcp_inline_frame stack_inl[16] = { { 0 } }, *inl = stack_inl;
	const struct sym_entry *e;
	int ret;

	if (i < 0)
		return -ENOENT;
	e = &src->e[i];
	ret = dcp_symtab_add(dst, dst_cookie, offset, e->name, e->start,
			     e->size);
	if (ret < 0)
		return ret;
	if (!e->demangled && !e->file && !e->nr_inline)
		return 0;
	if (e->nr_inline > 16) {
		inl = calloc(e->nr_inline, sizeof(*inl));
		if (!inl)
			return dcp_error(ENOMEM, "out of memory");
	}
	for (uint32_t j = 0; j < e->nr_inline; j++)
		fill_inline(&e->inl[j], &inl[j]);
	ret = dcp_symtab_set_detail(dst, dst_cookie, offset, e->demangled,
				    e->file, e->line, inl, e->nr_inline);
	if (inl != stack_inl)
		free(inl);
	return ret;
}
