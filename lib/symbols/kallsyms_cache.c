// SPDX-License-Identifier: MIT
/*
 * The kernel's own text symbols kept in the symbol cache, by the kernel's
 * build id: reading them back costs far less than parsing /proc/kallsyms.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_internal.h"
#include "kallsyms_internal.h"
#include "symbolizer_internal.h"

/*
 * A kernel-symbols cache entry: the magic, u64 count, u64 names_size, then
 * count entries of struct ksyms_cache_entry (little endian), then
 * names_size bytes of NUL-terminated names. Binary so that reading it is
 * one mapping and one pass (a text copy took a parse of its 100,000-odd
 * lines); its size must add up exactly, so a cut entry is damaged.
 */
#define KSYMS_CACHE_MAGIC "dcprof kernel symbols 2\n"

struct ksyms_cache_head {
	char magic[sizeof(KSYMS_CACHE_MAGIC) - 1];
	uint64_t count;
	uint64_t names_size;
};

struct ksyms_cache_entry {
	uint64_t offset; /* from _text */
	uint32_t name; /* offset into the names */
	uint32_t local; /* 1: 't', 0: 'T' */
};

_Static_assert(sizeof(struct ksyms_cache_head) == 40, "cache head size");
_Static_assert(sizeof(struct ksyms_cache_entry) == 16, "cache entry size");

/*
 * The kernel's own text symbols from the cache entry written by
 * dcp_ksyms_cache_store: offsets from _text, which stay the same for one
 * kernel build whatever KASLR does. 0, or a negative errno when the entry
 * is missing or damaged.
 */
int dcp_ksyms_cache_load(struct dcp_symbolizer *s, const char *name)
{
	const struct dcp_cache *c = dcp_symbolizer_cache(s);
	const struct ksyms_cache_entry *e;
	const struct ksyms_cache_head *h;
	uint64_t count, names_size;
	struct stat st;
	void *map;
	int fd, err = -EINVAL;

	if (!c || !s->k)
		return -ENOENT;
	fd = dcp_cache_entry_open(c, name);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(*h)) {
		close(fd);
		return -EINVAL;
	}
	/*
	 * Mapped, not read: the names are used where they lie and the
	 * entries read once, a page fault per 16 pages (the kernel maps
	 * the pages around a fault of a file's mapping) instead of one per
	 * page of a copy.
	 */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	s->kmap = map;
	s->kmap_len = (size_t)st.st_size;
	h = map;
	if (memcmp(h->magic, KSYMS_CACHE_MAGIC, sizeof(h->magic)))
		goto out;
	count = le64toh(h->count);
	names_size = le64toh(h->names_size);
	if (!count || count > (64u << 20) / sizeof(*e) || !names_size ||
	    names_size > (64u << 20) ||
	    (uint64_t)st.st_size !=
		    sizeof(*h) + count * sizeof(*e) + names_size)
		goto out;
	e = (const void *)(h + 1);
	s->knames = (char *)(e + count);
	if (s->knames[names_size - 1] != '\0')
		goto out;
	s->ksyms = malloc(count * sizeof(*s->ksyms));
	if (!s->ksyms) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		struct ksym *k = &s->ksyms[i];

		k->addr = s->k->text_start + le64toh(e[i].offset);
		k->name = le32toh(e[i].name);
		k->owner = 0;
		k->local = le32toh(e[i].local) != 0;
		if (k->name >= names_size)
			goto out;
	}
	s->nr_ksyms = count;
	s->knames_len = names_size;
	err = dcp_ksyms_index(s);
out:
	if (err < 0) {
		dcp_ksyms_reset(s);
		return err;
	}
	s->ksyms_loaded = true;
	s->ksyms_cached = true;
	return 0;
}

/* Keep the kernel's own text symbols, just read from /proc/kallsyms. */
void dcp_ksyms_cache_store(struct dcp_symbolizer *s, const char *name)
{
	const struct dcp_cache *c = dcp_symbolizer_cache(s);
	size_t first, last, count = 0, names_size = 0, at = 0;
	struct ksyms_cache_head h;
	struct ksyms_cache_entry *e;
	char tmp[64], *names;
	int fd;

	if (!c || !s->k)
		return;
	first = s->owner_first[0];
	last = s->owner_first[1];
	for (size_t i = first; i < last; i++)
		if (s->ksyms[i].addr >= s->k->text_start) {
			count++;
			names_size += strlen(s->knames + s->ksyms[i].name) + 1;
		}
	if (!count)
		return;
	e = malloc(count * sizeof(*e));
	names = malloc(names_size);
	if (!e || !names)
		goto out;
	count = 0;
	for (size_t i = first; i < last; i++) {
		const struct ksym *k = &s->ksyms[i];
		size_t len;

		if (k->addr < s->k->text_start)
			continue;
		len = strlen(s->knames + k->name) + 1;
		e[count].offset = htole64(k->addr - s->k->text_start);
		e[count].name = htole32((uint32_t)at);
		e[count].local = htole32(k->local ? 1 : 0);
		memcpy(names + at, s->knames + k->name, len);
		at += len;
		count++;
	}
	memcpy(h.magic, KSYMS_CACHE_MAGIC, sizeof(h.magic));
	h.count = htole64(count);
	h.names_size = htole64(names_size);
	fd = dcp_cache_entry_create(c, tmp, sizeof(tmp));
	if (fd >= 0) {
		if (write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
		    write(fd, e, count * sizeof(*e)) ==
			    (ssize_t)(count * sizeof(*e)) &&
		    write(fd, names, names_size) == (ssize_t)names_size)
			dcp_cache_entry_commit(c, fd, tmp, name);
		else
			dcp_cache_entry_abort(c, fd, tmp);
	}
out:
	free(e);
	free(names);
}
