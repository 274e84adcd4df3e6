// SPDX-License-Identifier: MIT
/*
 * Symbolization: sampled (cookie, offset) pairs to function names. Files
 * (and the vdso) go through libdwfl, which finds .symtab, .dynsym,
 * MiniDebugInfo and separate debug files; the kernel and its modules go
 * through /proc/kallsyms.
 *
 * libdwfl's own address lookup scans the whole symbol table for every
 * address, so each object's symbols are enumerated once through libdwfl
 * and searched in a sorted copy instead.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "cache_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "perfmap_internal.h"
#include "symbolize_internal.h"

/* One kernel text symbol from /proc/kallsyms. */
struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into knames */
	uint32_t owner; /* 0: the kernel image; i + 1: k->modules[i] */
	uint32_t seq; /* line order, to keep the sort stable */
	uint8_t local; /* 't'/'w' sort after 'T'/'W' at the same address */
};

struct dcp_symbolizer {
	const struct dcp_kernel_layout *k;
	bool ksyms_loaded;
	bool ksyms_cached; /* the kernel's own symbols only, from the cache */
	int ksyms_err;
	struct ksym *ksyms;
	size_t nr_ksyms;
	char *knames;
	size_t knames_len;
	/* ksyms of owner o are [owner_first[o], owner_first[o + 1]) */
	size_t *owner_first;

	char *debuginfo_path; /* NULL: libdwfl's default */
	Dwfl_Callbacks cb;
	struct dcp_cache cache;
	bool cache_opened;

	/* A private copy: libelf must not touch the read-only mapping. */
	char *vdso;
	size_t vdso_size;
};

static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name);

struct dcp_symbolizer *dcp_symbolizer_new(const struct dcp_kernel_layout *k)
{
	struct dcp_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return dcp_error_null(ENOMEM, "cannot create symbolizer: %s",
				      strerror(ENOMEM));
	elf_version(EV_CURRENT);
	s->k = k;
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	return s;
}

void dcp_symbolizer_free(struct dcp_symbolizer *s)
{
	if (!s)
		return;
	free(s->ksyms);
	free(s->knames);
	free(s->owner_first);
	free(s->debuginfo_path);
	free(s->vdso);
	dcp_cache_close(&s->cache);
	free(s);
}

/* The cache, opened on first use; NULL when there is none. */
static const struct dcp_cache *symbolizer_cache(struct dcp_symbolizer *s)
{
	if (!s->cache_opened) {
		dcp_cache_open(&s->cache);
		s->cache_opened = true;
	}
	return s->cache.dir_fd >= 0 ? &s->cache : NULL;
}

/* "<prefix>-<build id in hex>"; false when there is no build id. */
static bool cache_entry_name(char *buf, size_t size, const char *prefix,
			     const uint8_t *id, size_t n)
{
	size_t len;

	if (!n)
		return false;
	len = (size_t)snprintf(buf, size, "%s-", prefix);
	for (size_t i = 0; i < n && len + 3 <= size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%02x", id[i]);
	return true;
}

int dcp_symbolizer_set_debuginfo_path(struct dcp_symbolizer *s,
				      const char *path)
{
	char *copy = NULL;

	if (path) {
		copy = strdup(path);
		if (!copy)
			return dcp_error(ENOMEM,
					 "cannot set debuginfo path: %s",
					 strerror(ENOMEM));
	}
	free(s->debuginfo_path);
	s->debuginfo_path = copy;
	return 0;
}

static int add_unresolved(struct dcp_symtab *out, uint32_t cookie,
			  const uint64_t *offsets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = dcp_symtab_add(out, cookie, offsets[i], NULL, 0, 0);

		if (err < 0)
			return err;
	}
	return 0;
}

/* ---- kernel and modules ------------------------------------------------ */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->local != y->local)
		return x->local < y->local ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The owner number of a "[module]" tag; 0 when the layout lacks it. */
static uint32_t module_owner(const struct dcp_kernel_layout *k,
			     const char *name, size_t len)
{
	if (!k)
		return 0;
	for (size_t i = 0; i < k->nr_modules; i++)
		if (strlen(k->modules[i].name) == len &&
		    memcmp(k->modules[i].name, name, len) == 0)
			return (uint32_t)(i + 1);
	return 0;
}

static int ksyms_push(struct dcp_symbolizer *s, size_t *cap, size_t *ncap,
		      uint64_t addr, const char *name, size_t len,
		      uint32_t owner, bool local)
{
	struct ksym *e;

	if (s->nr_ksyms == *cap) {
		size_t c = *cap ? 2 * *cap : 16384;
		void *p = realloc(s->ksyms, c * sizeof(*s->ksyms));

		if (!p)
			return -ENOMEM;
		s->ksyms = p;
		*cap = c;
	}
	if (s->knames_len + len + 1 > *ncap) {
		size_t c = *ncap ? 2 * *ncap : 1 << 20;
		void *p;

		while (c < s->knames_len + len + 1)
			c *= 2;
		p = realloc(s->knames, c);
		if (!p)
			return -ENOMEM;
		s->knames = p;
		*ncap = c;
	}
	e = &s->ksyms[s->nr_ksyms];
	e->addr = addr;
	e->name = (uint32_t)s->knames_len;
	e->owner = owner;
	e->seq = (uint32_t)s->nr_ksyms;
	e->local = local;
	s->nr_ksyms++;
	memcpy(s->knames + s->knames_len, name, len);
	s->knames[s->knames_len + len] = '\0';
	s->knames_len += len + 1;
	return 0;
}

static int ksyms_parse(struct dcp_symbolizer *s, FILE *f)
{
	size_t cap = 0, ncap = 0, linecap = 0, nonzero = 0;
	const char *last_mod = NULL;
	size_t last_mod_len = 0;
	uint32_t last_owner = 0;
	char *line = NULL;
	ssize_t len;
	int err = 0;

	while ((len = getline(&line, &linecap, f)) > 0) {
		char *p, *name, *end, *mod;
		uint32_t owner = 0;
		uint64_t addr;
		char type;

		addr = strtoull(line, &p, 16);
		if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
			continue;
		if (addr)
			nonzero++;
		type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = p + 3;
		end = name + strcspn(name, "\t \n");
		mod = NULL;
		if (*end == '\t' && end[1] == '[')
			mod = end + 2;
		if (mod) {
			size_t ml = strcspn(mod, "]");

			/* Module symbols come grouped by module. */
			if (!last_mod || ml != last_mod_len ||
			    memcmp(mod, last_mod, ml) != 0) {
				last_owner = module_owner(s->k, mod, ml);
				free((void *)last_mod);
				last_mod = strndup(mod, ml);
				last_mod_len = ml;
				if (!last_mod) {
					err = -ENOMEM;
					break;
				}
			}
			owner = last_owner;
			/* [bpf], [__builtin__ftrace] or a module loaded
			 * since the layout was read: no cookie to own it. */
			if (!owner)
				continue;
		}
		err = ksyms_push(s, &cap, &ncap, addr, name,
				 (size_t)(end - name), owner,
				 type == 't' || type == 'w');
		if (err < 0)
			break;
	}
	free(line);
	free((void *)last_mod);
	if (err < 0)
		return dcp_error(err, "cannot read '/proc/kallsyms': %s",
				 strerror(-err));
	if (!nonzero)
		return dcp_error(
			EPERM, "kernel addresses are hidden: '/proc/kallsyms' "
			       "shows only zeros (kernel.kptr_restrict)");
	return 0;
}

static void ksyms_reset(struct dcp_symbolizer *s)
{
	free(s->ksyms);
	free(s->knames);
	free(s->owner_first);
	s->ksyms = NULL;
	s->knames = NULL;
	s->owner_first = NULL;
	s->nr_ksyms = 0;
	s->knames_len = 0;
	s->ksyms_loaded = false;
	s->ksyms_cached = false;
	s->ksyms_err = 0;
}

/* Sort what needs it and find where each owner's symbols start. */
static int ksyms_index(struct dcp_symbolizer *s)
{
	size_t nr_owners = 1 + (s->k ? s->k->nr_modules : 0);

	s->owner_first = calloc(nr_owners + 1, sizeof(size_t));
	if (!s->owner_first)
		return -ENOMEM;
	/* The kernel lists its own symbols, and each module's, in address
	 * order: sort only what is not (aliases are ranked at lookup). */
	for (size_t i = 1; i < s->nr_ksyms; i++) {
		const struct ksym *a = &s->ksyms[i - 1], *b = &s->ksyms[i];

		if (a->owner > b->owner ||
		    (a->owner == b->owner && a->addr > b->addr)) {
			qsort(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms),
			      ksym_cmp);
			break;
		}
	}
	/* owner_first[o] = first index whose owner is >= o */
	for (size_t o = 0, i = 0; o <= nr_owners; o++) {
		while (i < s->nr_ksyms && s->ksyms[i].owner < o)
			i++;
		s->owner_first[o] = i;
	}
	return 0;
}

/*
 * A kernel-symbols cache entry: the magic, u64 count, u64 names_size, then
 * count entries of struct ksyms_cache_entry (little endian), then
 * names_size bytes of NUL-terminated names. Binary so that reading it is
 * three reads and one pass (a text copy took a parse of its 100,000-odd
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
 * ksyms_cache_store: offsets from _text, which stay the same for one
 * kernel build whatever KASLR does. 0, or a negative errno when the entry
 * is missing or damaged.
 */
static int ksyms_cache_load(struct dcp_symbolizer *s, const char *name)
{
	const struct dcp_cache *c = symbolizer_cache(s);
	struct ksyms_cache_entry *e = NULL;
	struct ksyms_cache_head h;
	uint64_t count, names_size;
	struct stat st;
	int fd, err = -EINVAL;

	if (!c || !s->k)
		return -ENOENT;
	fd = dcp_cache_entry_open(c, name);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, KSYMS_CACHE_MAGIC, sizeof(h.magic)))
		goto out;
	count = le64toh(h.count);
	names_size = le64toh(h.names_size);
	if (!count || count > (64u << 20) / sizeof(*e) || !names_size ||
	    names_size > (64u << 20) ||
	    (uint64_t)st.st_size != sizeof(h) + count * sizeof(*e) + names_size)
		goto out;
	e = malloc(count * sizeof(*e));
	s->ksyms = malloc(count * sizeof(*s->ksyms));
	s->knames = malloc(names_size);
	if (!e || !s->ksyms || !s->knames) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(fd, e, count * sizeof(*e), sizeof(h)) !=
		    (ssize_t)(count * sizeof(*e)) ||
	    pread(fd, s->knames, names_size,
		  (off_t)(sizeof(h) + count * sizeof(*e))) !=
		    (ssize_t)names_size ||
	    s->knames[names_size - 1] != '\0')
		goto out;
	for (size_t i = 0; i < count; i++) {
		struct ksym *k = &s->ksyms[i];

		k->addr = s->k->text_start + le64toh(e[i].offset);
		k->name = le32toh(e[i].name);
		k->owner = 0;
		k->seq = (uint32_t)i;
		k->local = le32toh(e[i].local) != 0;
		if (k->name >= names_size)
			goto out;
	}
	s->nr_ksyms = count;
	s->knames_len = names_size;
	err = ksyms_index(s);
out:
	close(fd);
	free(e);
	if (err < 0) {
		ksyms_reset(s);
		return err;
	}
	s->ksyms_loaded = true;
	s->ksyms_cached = true;
	return 0;
}

/* Keep the kernel's own text symbols, just read from /proc/kallsyms. */
static void ksyms_cache_store(struct dcp_symbolizer *s, const char *name)
{
	const struct dcp_cache *c = symbolizer_cache(s);
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

/*
 * The kernel symbols resolve_kernel needs for a cookie: the kernel's own
 * from the cache when it has them; else, and for modules (whose addresses
 * change with every load), all of /proc/kallsyms, once.
 */
static int ksyms_load(struct dcp_symbolizer *s,
		      const struct dcp_cookie_info *info)
{
	char name[128];
	bool cacheable = info->kind == DCP_COOKIE_KIND_KERNEL &&
			 cache_entry_name(name, sizeof(name), "kernel-symbols",
					  info->build_id, info->build_id_size);
	FILE *f;
	int err;

	if (s->ksyms_loaded &&
	    !(s->ksyms_cached && info->kind == DCP_COOKIE_KIND_MODULE))
		return s->ksyms_err;
	if (s->ksyms_loaded)
		ksyms_reset(s); /* a module now needs the full table */
	else if (cacheable && ksyms_cache_load(s, name) == 0) {
		dcp_log(DCP_LOG_INFO, "kernel symbols from the cache '%s/%s'",
			s->cache.path, name);
		return 0;
	}
	s->ksyms_loaded = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		s->ksyms_err =
			dcp_error(errno, "cannot open '/proc/kallsyms': %s",
				  strerror(errno));
		return s->ksyms_err;
	}
	err = ksyms_parse(s, f);
	fclose(f);
	if (err == 0 && ksyms_index(s) < 0)
		err = dcp_error(ENOMEM, "cannot read '/proc/kallsyms': %s",
				strerror(ENOMEM));
	if (err < 0) {
		ksyms_reset(s);
		s->ksyms_loaded = true;
		s->ksyms_err = err;
		return err;
	}
	if (cacheable)
		ksyms_cache_store(s, name);
	return 0;
}

/*
 * The module of the layout a module cookie stands for, as 1 + its index:
 * the module of that name loaded now, if its build id is the one recorded
 * (-ESTALE when it was rebuilt); without build ids, only the same cookie
 * of the same table (while recording).
 */
static int module_of(const struct dcp_kernel_layout *k,
		     const struct dcp_cookie_info *info, uint32_t *owner)
{
	for (size_t i = 0; i < k->nr_modules; i++) {
		const struct dcp_kernel_module *m = &k->modules[i];

		if (!info->name || strcmp(m->name, info->name))
			continue;
		*owner = (uint32_t)(i + 1);
		if (!info->build_id_size || !m->build_id_size) {
			if (m->cookie == info->cookie)
				return 0;
		} else if (m->build_id_size == info->build_id_size &&
			   !memcmp(m->build_id, info->build_id,
				   m->build_id_size)) {
			return 0;
		}
		return dcp_error(ESTALE,
				 "kernel module '%s' loaded now is another "
				 "build",
				 info->name);
	}
	return dcp_error(ENOENT,
			 "kernel module '%s' is not in the kernel layout",
			 info->name ? info->name : "?");
}

static int resolve_kernel(struct dcp_symbolizer *s,
			  const struct dcp_cookie_info *info,
			  const uint64_t *offsets, size_t n,
			  struct dcp_symtab *out)
{
	const struct dcp_kernel_layout *k = s->k;
	uint64_t base, end = 0;
	size_t first, last;
	uint32_t owner = 0;
	int err, resolved = 0;

	if (!k) {
		err = dcp_error(ENOENT, "no kernel layout to resolve '%s'",
				info->name);
		goto unresolved;
	}
	if (info->kind == DCP_COOKIE_KIND_MODULE) {
		err = module_of(k, info, &owner);
		if (err < 0)
			goto unresolved;
		base = k->modules[owner - 1].start;
		end = k->modules[owner - 1].end;
	} else {
		base = k->text_start;
	}
	err = ksyms_load(s, info);
	if (err < 0)
		goto unresolved;

	first = s->owner_first[owner];
	last = s->owner_first[owner + 1];
	for (size_t i = 0; i < n; i++) {
		uint64_t addr = base + offsets[i], sym, size = 0;
		size_t lo = first, hi = last, j;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (s->ksyms[mid].addr <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == first) {
			err = dcp_symtab_add(out, info->cookie, offsets[i],
					     NULL, 0, 0);
			if (err < 0)
				return err;
			continue;
		}
		/* lo is the first symbol past addr; of the aliases before
		 * it, a global one first, then the first listed. */
		j = lo - 1;
		sym = s->ksyms[j].addr;
		for (size_t a = j; a > first && s->ksyms[a - 1].addr == sym;
		     a--)
			if (ksym_cmp(&s->ksyms[a - 1], &s->ksyms[j]) < 0)
				j = a - 1;
		if (lo < last)
			size = s->ksyms[lo].addr - sym;
		else if (end > sym)
			size = end - sym;
		err = dcp_symtab_add(out, info->cookie, offsets[i],
				     s->knames + s->ksyms[j].name, sym - base,
				     size);
		if (err == 0 && s->knames[s->ksyms[j].name] == '_') {
			/* Rust in the kernel */
			char *d = dcp_demangle(s->knames + s->ksyms[j].name);

			if (d)
				err = dcp_symtab_set_detail(out, info->cookie,
							    offsets[i], d, NULL,
							    0, NULL, 0);
			free(d);
		}
		if (err < 0)
			return err;
		resolved++;
	}
	return resolved;

unresolved : {
	int err2 = add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}

/* ---- files through libdwfl ----------------------------------------------- */

struct fsym {
	uint64_t addr, size; /* module addresses */
	uint64_t max_end; /* greatest addr + size up to this entry */
	uint64_t next; /* a sizeless label: the next symbol's address */
	const char *name;
	Elf *elf; /* the symbol's own file, for its section */
	GElf_Addr bias;
	GElf_Word shndx;
	uint8_t rank; /* global, weak, local */
	uint32_t seq;
};

struct segment {
	uint64_t offset, filesz, vaddr;
};

struct ftable {
	struct fsym *syms;
	size_t nr, cap;
	char **plt_names; /* the names made for PLT stubs, owned */
	size_t nr_plt_names, cap_plt_names;
	struct segment *segs;
	size_t nr_segs;
	GElf_Addr bias; /* main file vaddr + bias = module address */
};

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((x->size == 0) != (y->size == 0))
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The module address of file offset off; false outside every segment. */
static bool ftable_address(const struct ftable *t, uint64_t off, uint64_t *q,
			   const struct segment **segp)
{
	for (size_t j = 0; j < t->nr_segs; j++)
		if (off >= t->segs[j].offset &&
		    off - t->segs[j].offset < t->segs[j].filesz) {
			*q = off - t->segs[j].offset + t->segs[j].vaddr +
			     t->bias;
			if (segp)
				*segp = &t->segs[j];
			return true;
		}
	return false;
}

/* The first of the n sorted addresses at or above addr. */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether [addr, addr + size) holds one of the n sorted addresses. */
static bool covers_any(const uint64_t *v, size_t n, uint64_t addr,
		       uint64_t size)
{
	size_t k = lower_bound(v, n, addr);

	return k < n && v[k] - addr < size;
}

/* Symbol i of mod when it can name code; NULL otherwise. */
static const char *function_symbol(Dwfl_Module *mod, int i, GElf_Sym *sym,
				   GElf_Addr *addr, GElf_Word *shndx, Elf **elf,
				   GElf_Addr *bias)
{
	const char *name =
		dwfl_module_getsym_info(mod, i, sym, addr, shndx, elf, bias);
	int type;

	if (!name || !name[0] || *shndx == SHN_UNDEF || *shndx == SHN_ABS ||
	    *shndx == SHN_COMMON)
		return NULL;
	type = GELF_ST_TYPE(sym->st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return NULL;
	return name;
}

/* A new entry at the end of t->syms, zeroed; NULL when out of memory. */
static struct fsym *ftable_push(struct ftable *t)
{
	struct fsym *syms =
		dcp_grow(t->syms, &t->cap, t->nr + 1, sizeof(*t->syms));

	if (!syms)
		return NULL;
	t->syms = syms;
	memset(&syms[t->nr], 0, sizeof(*syms));
	syms[t->nr].seq = (uint32_t)t->nr;
	return &syms[t->nr++];
}

/* The section of elf called name, its header in *sh; NULL if none. */
static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * PLT stubs have no symbol, yet a program that calls into libraries runs
 * them (a jump through the GOT per call). As perf does, a sampled stub is
 * named after the function its relocation binds, "strcmp@plt". The stubs
 * are the entries of .plt.sec when the binary has one (x86-64 with IBT),
 * else those of .plt after its header, in the order of .rela.plt. Only
 * stubs that hold a sampled address (qs, sorted) are named.
 */
static int ftable_add_plt(struct ftable *t, Elf *elf, const uint64_t *qs,
			  size_t nq)
{
	GElf_Shdr rela_sh, plt_sh, dynsym_sh;
	Elf_Scn *rela, *plt, *dynsym;
	Elf_Data *relocs, *syms;
	uint64_t header, entry = 16, first, end;
	GElf_Ehdr ehdr;

	if (!nq || !gelf_getehdr(elf, &ehdr))
		return 0;
	switch (ehdr.e_machine) {
	case EM_X86_64:
		header = 16;
		break;
	case EM_AARCH64:
		header = 32;
		break;
	default:
		return 0;
	}
	rela = section_named(elf, ".rela.plt", &rela_sh);
	plt = section_named(elf, ".plt.sec", &plt_sh);
	if (plt)
		header = 0;
	else
		plt = section_named(elf, ".plt", &plt_sh);
	if (!rela || !plt || rela_sh.sh_type != SHT_RELA ||
	    plt_sh.sh_type != SHT_PROGBITS)
		return 0;
	dynsym = elf_getscn(elf, rela_sh.sh_link);
	relocs = elf_getdata(rela, NULL);
	if (!dynsym || !gelf_getshdr(dynsym, &dynsym_sh) || !relocs)
		return 0;
	syms = elf_getdata(dynsym, NULL);
	if (!syms)
		return 0;
	first = plt_sh.sh_addr + t->bias + header;
	end = plt_sh.sh_addr + t->bias + plt_sh.sh_size;
	for (int i = 0;; i++) {
		uint64_t addr = first + (uint64_t)i * entry;
		GElf_Rela rel;
		GElf_Sym sym;
		const char *name;
		struct fsym *f;
		char **names, *made;

		if (addr + entry > end || !gelf_getrela(relocs, i, &rel))
			break;
		if (!covers_any(qs, nq, addr, entry) ||
		    !gelf_getsym(syms, (int)GELF_R_SYM(rel.r_info), &sym))
			continue;
		name = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name);
		if (!name || !name[0])
			continue; /* an IRELATIVE stub: no name to give */
		names = dcp_grow(t->plt_names, &t->cap_plt_names,
				 t->nr_plt_names + 1, sizeof(*names));
		if (!names)
			return -ENOMEM;
		t->plt_names = names;
		if (asprintf(&made, "%s@plt", name) < 0)
			return -ENOMEM;
		names[t->nr_plt_names++] = made;
		f = ftable_push(t);
		if (!f)
			return -ENOMEM;
		f->addr = addr;
		f->size = entry;
		f->name = made;
	}
	return 0;
}

/*
 * The symbols of mod that can name one of the sampled file offsets: the
 * sized symbols that cover one, the sizeless labels, and the sized
 * symbols that cover a label (which then names nothing). A library's
 * table has thousands of entries for a few dozen sampled addresses; what
 * is kept answers every sampled address as the whole table would.
 */
static int ftable_build(struct ftable *t, Dwfl_Module *mod, const char *what,
			const uint64_t *offsets, size_t n)
{
	size_t nphdr = 0, kept, nq = 0, nlabels = 0, lcap = 0;
	uint64_t *qs = NULL, *labels = NULL, *label_next = NULL;
	Elf *main_elf;
	int nsyms, err = 0;

	memset(t, 0, sizeof(*t));
	main_elf = dwfl_module_getelf(mod, &t->bias);
	if (!main_elf)
		return dcp_error(ENOEXEC, "cannot read ELF of '%s': %s", what,
				 dwfl_errmsg(-1));
	if (elf_getphdrnum(main_elf, &nphdr) < 0)
		return dcp_error(ENOEXEC,
				 "cannot read program headers of "
				 "'%s': %s",
				 what, elf_errmsg(-1));
	t->segs = calloc(nphdr ? nphdr : 1, sizeof(*t->segs));
	if (!t->segs)
		return -ENOMEM;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(main_elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && ph->p_filesz) {
			t->segs[t->nr_segs].offset = ph->p_offset;
			t->segs[t->nr_segs].filesz = ph->p_filesz;
			t->segs[t->nr_segs].vaddr = ph->p_vaddr;
			t->nr_segs++;
		}
	}

	nsyms = dwfl_module_getsymtab(mod);
	if (nsyms <= 0)
		return 0; /* no symbols at all: everything stays unnamed */
	qs = malloc((n ? n : 1) * sizeof(*qs));
	if (!qs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (ftable_address(t, offsets[i], &qs[nq], NULL))
			nq++;
	qsort(qs, nq, sizeof(*qs), cmp_u64);

	/* The labels first: the symbols around them must be kept too. */
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias;
		GElf_Word shndx;
		uint64_t *grown;
		Elf *elf;

		if (!function_symbol(mod, i, &sym, &addr, &shndx, &elf,
				     &bias) ||
		    sym.st_size)
			continue;
		grown = dcp_grow(labels, &lcap, nlabels + 1, sizeof(*labels));
		if (!grown) {
			err = -ENOMEM;
			goto out;
		}
		labels = grown;
		labels[nlabels++] = addr;
	}
	if (nlabels)
		qsort(labels, nlabels, sizeof(*labels), cmp_u64);
	kept = 0;
	for (size_t i = 0; i < nlabels; i++)
		if (!kept || labels[i] != labels[kept - 1])
			labels[kept++] = labels[i];
	nlabels = kept;
	label_next = malloc((nlabels ? nlabels : 1) * sizeof(*label_next));
	if (!label_next) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nlabels; i++)
		label_next[i] = UINT64_MAX;

	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias;
		GElf_Word shndx;
		Elf *elf;
		const char *name;
		int bind;
		size_t k;
		struct fsym *f;

		name = function_symbol(mod, i, &sym, &addr, &shndx, &elf,
				       &bias);
		if (!name)
			continue;
		/* The closest symbol after a label ends it. */
		k = lower_bound(labels, nlabels, addr);
		if (k > 0 && addr < label_next[k - 1])
			label_next[k - 1] = addr;
		if (sym.st_size && !covers_any(qs, nq, addr, sym.st_size) &&
		    !covers_any(labels, nlabels, addr, sym.st_size))
			continue;
		f = ftable_push(t);
		if (!f) {
			err = -ENOMEM;
			goto out;
		}
		bind = GELF_ST_BIND(sym.st_info);
		f->addr = addr;
		f->size = sym.st_size;
		f->name = name;
		f->elf = elf;
		f->bias = bias;
		f->shndx = shndx;
		f->rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
	}
	for (size_t i = 0; i < t->nr; i++)
		if (!t->syms[i].size) {
			size_t k =
				lower_bound(labels, nlabels, t->syms[i].addr);

			t->syms[i].next = label_next[k];
		}
	err = ftable_add_plt(t, main_elf, qs, nq);
	if (err || !t->nr)
		goto out;
	qsort(t->syms, t->nr, sizeof(*t->syms), fsym_cmp);
	/* One entry per address: the best alias sorted first. */
	kept = 1;
	for (size_t i = 1; i < t->nr; i++)
		if (t->syms[i].addr != t->syms[kept - 1].addr)
			t->syms[kept++] = t->syms[i];
	t->nr = kept;
	for (size_t i = 0; i < t->nr; i++) {
		uint64_t e = t->syms[i].addr + t->syms[i].size;
		uint64_t prev = i ? t->syms[i - 1].max_end : 0;

		t->syms[i].max_end = e > prev ? e : prev;
	}
out:
	free(qs);
	free(labels);
	free(label_next);
	return err;
}

static void ftable_free(struct ftable *t)
{
	for (size_t i = 0; i < t->nr_plt_names; i++)
		free(t->plt_names[i]);
	free(t->plt_names);
	free(t->syms);
	free(t->segs);
}

/* The end of the section a symbol lives in (module address), or 0. */
static uint64_t fsym_section_end(const struct fsym *f, uint64_t *sec_start)
{
	GElf_Shdr mem, *sh;
	Elf_Scn *scn;

	if (!f->elf)
		return 0;
	scn = elf_getscn(f->elf, f->shndx);
	if (!scn)
		return 0;
	sh = gelf_getshdr(scn, &mem);
	if (!sh || !(sh->sh_flags & SHF_ALLOC))
		return 0;
	*sec_start = sh->sh_addr + f->bias;
	return sh->sh_addr + f->bias + sh->sh_size;
}

/*
 * The symbol covering module address q: the closest sized symbol that
 * contains it, else a sizeless label before it that no sized symbol
 * overlaps, within the label's own section. Returns the index or -1.
 */
static ssize_t ftable_find(const struct ftable *t, uint64_t q, uint64_t *size)
{
	size_t lo = 0, hi = t->nr;
	uint64_t sec_start = 0, sec_end;
	const struct fsym *f;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= q)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	for (size_t j = lo; j > 0 && t->syms[j - 1].max_end > q; j--) {
		f = &t->syms[j - 1];
		if (f->size && q < f->addr + f->size) {
			*size = f->size;
			return (ssize_t)(j - 1);
		}
	}
	f = &t->syms[lo - 1];
	if (f->size || (lo > 1 && t->syms[lo - 2].max_end > f->addr))
		return -1;
	/* A symbol left out of the table may lie between it and q. */
	if (q >= f->next)
		return -1;
	sec_end = fsym_section_end(f, &sec_start);
	if (q < sec_start || q >= sec_end)
		return -1;
	*size = (f->next < sec_end ? f->next : sec_end) - f->addr;
	return (ssize_t)(lo - 1);
}

/* The name of a function DIE, through its abstract origin: the linkage
 * name when it has one (the demangler makes it readable). */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	name = dwarf_formstring(
		dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(
			dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	return name ? name : dwarf_diename(die);
}

#define MAX_INLINE 64

/*
 * The functions and inlined calls of one compilation unit, with their pc
 * ranges, from one walk of its DIE tree. dwarf_getscopes walks the unit
 * from its top for every address; a profile samples many addresses of
 * few units, so each sampled unit is walked once and its addresses are
 * looked up here.
 */
struct scope_die {
	Dwarf_Die die;
	uint32_t parent; /* index + 1 of the enclosing entry; 0: none */
	uint32_t depth;
	bool subprogram;
};

struct scope_range {
	uint64_t lo, hi; /* DWARF addresses, [lo, hi) */
	uint32_t die;
};

struct scope_unit {
	Dwarf_Off cu; /* the unit's DIE offset, its key */
	struct scope_die *dies;
	size_t nr_dies, cap_dies;
	struct scope_range *ranges;
	size_t nr_ranges, cap_ranges;
};

struct scope_cache {
	struct scope_unit *units;
	size_t nr, cap;
};

static void scope_cache_free(struct scope_cache *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		free(c->units[i].dies);
		free(c->units[i].ranges);
	}
	free(c->units);
	memset(c, 0, sizeof(*c));
}

static int scope_unit_add(struct scope_unit *u, Dwarf_Die *die, uint32_t parent,
			  uint32_t depth, bool subprogram)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t idx;
	void *p;

	p = dcp_grow(u->dies, &u->cap_dies, u->nr_dies + 1, sizeof(*u->dies));
	if (!p)
		return -ENOMEM;
	u->dies = p;
	idx = (uint32_t)u->nr_dies;
	u->dies[idx].die = *die;
	u->dies[idx].parent = parent;
	u->dies[idx].depth = depth;
	u->dies[idx].subprogram = subprogram;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		p = dcp_grow(u->ranges, &u->cap_ranges, u->nr_ranges + 1,
			     sizeof(*u->ranges));
		if (!p)
			return -ENOMEM;
		u->ranges = p;
		u->ranges[u->nr_ranges].lo = lo;
		u->ranges[u->nr_ranges].hi = hi;
		u->ranges[u->nr_ranges].die = idx;
		u->nr_ranges++;
	}
	u->nr_dies++;
	return 0;
}

/* Tags whose children can hold code, or a unit imported into this one. */
static bool scope_may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return true;
	default:
		return false;
	}
}

#define SCOPE_MAX_DEPTH 256

static int scope_walk(struct scope_unit *u, Dwarf_Die *parent_die,
		      uint32_t parent, uint32_t depth)
{
	Dwarf_Die child;
	int r;

	if (depth > SCOPE_MAX_DEPTH || dwarf_child(parent_die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		uint32_t inner = parent;
		int err;

		if (tag == DW_TAG_imported_unit) {
			Dwarf_Attribute a;
			Dwarf_Die unit;

			/* Code a compressor (dwz) moved to a partial unit
			 * belongs to the units that import it. */
			if (dwarf_attr(&child, DW_AT_import, &a) &&
			    dwarf_formref_die(&a, &unit)) {
				err = scope_walk(u, &unit, parent, depth + 1);
				if (err < 0)
					return err;
			}
			continue;
		}
		if (tag == DW_TAG_subprogram ||
		    tag == DW_TAG_inlined_subroutine) {
			err = scope_unit_add(u, &child, parent, depth,
					     tag == DW_TAG_subprogram);
			if (err < 0)
				return err;
			inner = (uint32_t)u->nr_dies;
		}
		if (scope_may_hold_code(tag) && dwarf_haschildren(&child)) {
			err = scope_walk(u, &child, inner, depth + 1);
			if (err < 0)
				return err;
		}
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	return 0;
}

/* The walked unit of cu, walking it on first use; NULL on error. */
static struct scope_unit *scope_cache_unit(struct scope_cache *c, Dwarf_Die *cu)
{
	Dwarf_Off key = dwarf_dieoffset(cu);
	struct scope_unit *u;
	void *p;

	/* Sorted addresses meet their units in runs: look back first. */
	for (size_t i = c->nr; i > 0; i--)
		if (c->units[i - 1].cu == key)
			return &c->units[i - 1];
	p = dcp_grow(c->units, &c->cap, c->nr + 1, sizeof(*c->units));
	if (!p)
		return NULL;
	c->units = p;
	u = &c->units[c->nr];
	memset(u, 0, sizeof(*u));
	u->cu = key;
	if (scope_walk(u, cu, 0, 0) < 0) {
		free(u->dies);
		free(u->ranges);
		return NULL;
	}
	c->nr++;
	return u;
}

/* The innermost function or inlined call of the unit around pc; -1: none. */
static ssize_t scope_innermost(const struct scope_unit *u, uint64_t pc)
{
	ssize_t best = -1;

	for (size_t i = 0; i < u->nr_ranges; i++) {
		const struct scope_range *r = &u->ranges[i];

		if (pc >= r->lo && pc < r->hi &&
		    (best < 0 || u->dies[r->die].depth > u->dies[best].depth))
			best = r->die;
	}
	return best;
}

/*
 * What DWARF knows of module address q: its line, and the inlined calls
 * around it, walked as eu-addr2line -i does: from the innermost scope out
 * to the function, each DW_TAG_inlined_subroutine being one inlined call
 * whose own call site is where the next one out is.
 */
static int add_detail(Dwfl_Module *mod, struct scope_cache *scopes, uint64_t q,
		      uint32_t cookie, uint64_t off, const char *name,
		      struct dcp_symtab *out)
{
	struct dcp_inline_frame inl[MAX_INLINE];
	char *demangled[MAX_INLINE];
	char *fn_demangled = dcp_demangle(name);
	char *joined = NULL;
	const char *file = NULL;
	uint32_t line = 0, nr = 0;
	struct scope_unit *u = NULL;
	Dwarf_Die *cu;
	Dwarf_Addr bias = 0;
	Dwfl_Line *l;
	ssize_t k;
	int ret;

	l = dwfl_module_getsrc(mod, q);
	if (l) {
		const char *dir = dwfl_line_comp_dir(l);
		int ln = 0;

		file = dwfl_lineinfo(l, NULL, &ln, NULL, NULL, NULL);
		line = file && ln > 0 ? (uint32_t)ln : 0;
		/* A name relative to the compilation directory is no use
		 * to a reader elsewhere. */
		if (file && file[0] != '/' && dir && dir[0] == '/' &&
		    asprintf(&joined, "%s/%s", dir, file) > 0)
			file = joined;
	}
	cu = dwfl_module_addrdie(mod, q, &bias);
	if (cu)
		u = scope_cache_unit(scopes, cu);
	k = u ? scope_innermost(u, q - bias) : -1;
	while (k >= 0 && !u->dies[k].subprogram && nr < MAX_INLINE) {
		Dwarf_Die *die = &u->dies[k].die, unit;
		Dwarf_Files *files = NULL;
		Dwarf_Attribute a;
		Dwarf_Word v;

		inl[nr].name = die_name(die);
		inl[nr].demangled = demangled[nr] = dcp_demangle(inl[nr].name);
		inl[nr].file = file;
		inl[nr].line = line;
		nr++;
		file = NULL;
		line = 0;
		/* The call site's file index is into the line table of the
		 * unit the DIE is in (a partial unit's, when imported). */
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &v) ==
			    0 &&
		    dwarf_diecu(die, &unit, NULL, NULL) &&
		    dwarf_getsrcfiles(&unit, &files, NULL) == 0)
			file = dwarf_filesrc(files, v, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v) ==
		    0)
			line = (uint32_t)v;
		k = (ssize_t)u->dies[k].parent - 1;
	}
	ret = 0;
	if (fn_demangled || file || nr)
		ret = dcp_symtab_set_detail(out, cookie, off, fn_demangled,
					    file, line, inl, nr);
	free(fn_demangled);
	free(joined);
	for (uint32_t i = 0; i < nr; i++)
		free(demangled[i]);
	return ret;
}

static int resolve_module(struct ftable *t, Dwfl_Module *mod, uint32_t cookie,
			  const uint64_t *offsets, size_t n,
			  struct dcp_symtab *out)
{
	struct scope_cache scopes = { 0 };
	int err, resolved = 0;

	for (size_t i = 0; i < n; i++) {
		const struct segment *seg = NULL;
		const char *name = NULL;
		uint64_t off = offsets[i], start = 0, size = 0, q = 0;

		if (ftable_address(t, off, &q, &seg)) {
			ssize_t k = ftable_find(t, q, &size);

			if (k >= 0) {
				name = t->syms[k].name;
				/* Back to file offsets, through the same
				 * segment as the query. */
				start = t->syms[k].addr - t->bias - seg->vaddr +
					seg->offset;
				resolved++;
			} else {
				size = 0;
			}
		}
		err = dcp_symtab_add(out, cookie, off, name, start, size);
		if (err == 0 && name)
			err = add_detail(mod, &scopes, q, cookie, off, name,
					 out);
		if (err < 0) {
			scope_cache_free(&scopes);
			return err;
		}
	}
	scope_cache_free(&scopes);
	return resolved;
}

/*
 * Finish reporting mod and resolve through it; ends dwfl. Every offset
 * gets an entry, also when the module's symbols cannot be read.
 */
static int resolve_dwfl_module(Dwfl *dwfl, Dwfl_Module *mod,
			       const struct dcp_cookie_info *info,
			       const uint64_t *offsets, size_t n,
			       struct dcp_symtab *out)
{
	struct ftable t;
	int err, err2;

	memset(&t, 0, sizeof(t));
	if (dwfl_report_end(dwfl, NULL, NULL) != 0)
		err = dcp_error(ENOEXEC, "cannot report '%s': %s", info->name,
				dwfl_errmsg(-1));
	else
		err = ftable_build(&t, mod, info->name, offsets, n);
	if (err == -ENOMEM)
		err = dcp_error(ENOMEM, "cannot read symbols of '%s': %s",
				info->name, strerror(ENOMEM));
	if (err == 0) {
		err = resolve_module(&t, mod, info->cookie, offsets, n, out);
	} else {
		err2 = add_unresolved(out, info->cookie, offsets, n);
		if (err2 < 0)
			err = err2;
	}
	ftable_free(&t);
	dwfl_end(dwfl);
	return err;
}

/* ---- separate debug files, inflated once ------------------------------ */

/* Whether a debug section is compressed; -1 for old-style .zdebug ones,
 * which are left alone. */
static int has_compressed_debug(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int found = 0;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name =
			sh ? elf_strptr(e, shstrndx, sh->sh_name) : NULL;

		if (!name)
			continue;
		if (strncmp(name, ".zdebug", 7) == 0)
			return -1;
		if (sh->sh_flags & SHF_COMPRESSED)
			found = 1;
	}
	return found;
}

/* Copy of src into dst with every compressed section inflated. */
static int write_inflated(int src, int dst)
{
	char buf[1 << 16];
	off_t off = 0;
	Elf_Scn *scn = NULL;
	ssize_t r;
	Elf *e;
	int err = 0;

	while ((r = pread(src, buf, sizeof(buf), off)) > 0) {
		if (write(dst, buf, (size_t)r) != r)
			return -EIO;
		off += r;
	}
	if (r < 0)
		return -errno;
	e = elf_begin(dst, ELF_C_RDWR, NULL);
	if (!e)
		return -ENOEXEC;
	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh && (sh->sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			err = -ENOEXEC;
	}
	if (!err && elf_update(e, ELF_C_WRITE) < 0)
		err = -EIO;
	elf_end(e);
	return err;
}

/*
 * The inflated copy of mod's separate debug file from the cache, by the
 * module's build id: a descriptor (and *path set), or -1.
 */
static int debug_file_cached(struct dcp_symbolizer *s, Dwfl_Module *mod,
			     char **path)
{
	const unsigned char *bits;
	uint8_t got[DCP_BUILD_ID_MAX];
	const struct dcp_cache *c;
	char name[128], *cached_path = NULL;
	GElf_Addr vaddr;
	int n, fd;

	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || n > DCP_BUILD_ID_MAX ||
	    !cache_entry_name(name, sizeof(name), "debug", bits, (size_t)n))
		return -1;
	c = symbolizer_cache(s);
	if (!c)
		return -1;
	fd = dcp_cache_entry_open(c, name);
	if (fd < 0)
		return -1;
	/* A copy that is not of the same file is derived again. */
	if (dcp_build_id_read_fd(fd, got) != n ||
	    memcmp(got, bits, (size_t)n) ||
	    asprintf(&cached_path, "%s/%s", c->path, name) < 0) {
		unlinkat(c->dir_fd, name, 0);
		close(fd);
		return -1;
	}
	dcp_log(DCP_LOG_DEBUG, "DWARF of '%s' from the cache '%s'",
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		cached_path);
	free(*path);
	*path = cached_path;
	return fd;
}

/* libdwfl found the debug file fd: when its DWARF is compressed, keep an
 * inflated copy for the next time (this time libdwfl uses its own handle
 * on fd, already open). */
static void debug_file_store(struct dcp_symbolizer *s, int fd, const char *path)
{
	uint8_t id[DCP_BUILD_ID_MAX];
	const struct dcp_cache *c;
	char name[128], tmp[64];
	int n, compressed, out;
	Elf *e;

	n = dcp_build_id_read_fd(fd, id);
	if (n <= 0 ||
	    !cache_entry_name(name, sizeof(name), "debug", id, (size_t)n))
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	compressed = e ? has_compressed_debug(e) : 0;
	elf_end(e);
	c = compressed > 0 ? symbolizer_cache(s) : NULL;
	if (!c)
		return;
	out = dcp_cache_entry_create(c, tmp, sizeof(tmp));
	if (out < 0)
		return;
	if (write_inflated(fd, out) < 0) {
		dcp_log(DCP_LOG_INFO,
			"cannot inflate '%s' into the symbol cache",
			path ? path : name);
		dcp_cache_entry_abort(c, out, tmp);
		return;
	}
	dcp_cache_entry_commit(c, out, tmp, name);
}

/* The inflated copy from the cache when there is one, else libdwfl's
 * search for separate debug files. The module's userdata is the
 * symbolizer (set by resolve_file). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct dcp_symbolizer *s = userdata ? *userdata : NULL;
	int fd = s ? debug_file_cached(s, mod, debuginfo_file_name) : -1;

	if (fd >= 0)
		return fd;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base,
					  file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0 && s)
		debug_file_store(s, fd, *debuginfo_file_name);
	return fd;
}

/* The identity check for a path that is not the pinned handle. */
static bool file_matches(int fd, const struct dcp_cookie_info *info)
{
	if (info->build_id_size) {
		uint8_t id[DCP_BUILD_ID_MAX];
		int n = dcp_build_id_read_fd(fd, id);

		return n == info->build_id_size &&
		       memcmp(id, info->build_id, (size_t)n) == 0;
	} else {
		struct stat st;

		return fstat(fd, &st) == 0 &&
		       st.st_dev == makedev(info->dev_major, info->dev_minor) &&
		       (uint64_t)st.st_ino == info->ino;
	}
}

/* Open the first of the cookie's paths that still holds its file. */
static int open_matching_path(const struct dcp_cookie_info *info,
			      const char **path)
{
	size_t nr = info->nr_paths;
	bool opened = false;

	for (size_t i = 0; i < (nr ? nr : 1); i++) {
		const char *p = nr ? info->paths[i] : info->name;
		int fd;

		if (!p || p[0] != '/')
			continue;
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		opened = true;
		if (file_matches(fd, info)) {
			*path = p;
			return fd;
		}
		close(fd);
	}
	if (opened)
		return dcp_error(ESTALE,
				 "'%s' was replaced: no path holds the sampled "
				 "file any more",
				 info->name);
	return dcp_error(ENOENT, "cannot open '%s': no path of it is left",
			 info->name);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int resolve_file(struct dcp_symbolizer *s,
			const struct dcp_cookie_info *info, int fd,
			const uint64_t *offsets, size_t n,
			struct dcp_symtab *out)
{
	const char *path = info->nr_paths ? info->paths[0] : info->name;
	void **userdata = NULL;
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int own, err;

	if (fd >= 0) {
		own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (own < 0) {
			err = dcp_error(errno,
					"cannot duplicate handle of "
					"'%s': %s",
					info->name, strerror(errno));
			goto unresolved;
		}
	} else {
		own = open_matching_path(info, &path);
		if (own < 0) {
			err = own;
			goto unresolved;
		}
	}
	if (!path)
		path = "";
	dwfl = dwfl_begin(&s->cb);
	if (!dwfl) {
		close(own);
		err = dcp_error(ENOMEM, "cannot start libdwfl: %s",
				dwfl_errmsg(-1));
		goto unresolved;
	}
	dwfl_report_begin(dwfl);
	/* base 0 with p_vaddr added: the module sits at its own vaddrs. */
	mod = dwfl_report_elf(dwfl, base_name(path), path, own, 0, true);
	if (!mod) {
		/* On failure the descriptor is still ours. */
		close(own);
		err = dcp_error(ENOEXEC, "cannot read ELF '%s': %s", info->name,
				dwfl_errmsg(-1));
		dwfl_end(dwfl);
		goto unresolved;
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = s; /* for find_debuginfo */
	return resolve_dwfl_module(dwfl, mod, info, offsets, n, out);

unresolved : {
	int err2 = add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}

/* ---- the vdso ------------------------------------------------------------ */

/*
 * Every process of this kernel and ABI maps the same vdso, so the
 * recorder's own image stands for all of them.
 */
static int vdso_load(struct dcp_symbolizer *s)
{
	const unsigned char *img;
	const Elf64_Ehdr *eh;
	size_t size;

	if (s->vdso)
		return 0;
	img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (!img)
		return dcp_error(ENOENT, "this process has no vdso");
	eh = (const Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return dcp_error(ENOEXEC, "the vdso is not a 64-bit ELF image");
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph =
			(const Elf64_Phdr *)(img + eh->e_phoff +
					     i * eh->e_phentsize);
		size_t e = ph->p_offset + ph->p_filesz;

		if (ph->p_type == PT_LOAD && e > size)
			size = e;
	}
	s->vdso = malloc(size);
	if (!s->vdso)
		return dcp_error(ENOMEM, "cannot copy the vdso: %s",
				 strerror(ENOMEM));
	memcpy(s->vdso, img, size);
	s->vdso_size = size;
	return 0;
}

static int resolve_vdso(struct dcp_symbolizer *s,
			const struct dcp_cookie_info *info,
			const uint64_t *offsets, size_t n,
			struct dcp_symtab *out)
{
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int err;

	err = vdso_load(s);
	if (err < 0)
		goto unresolved;
	dwfl = dwfl_begin(&s->cb);
	if (!dwfl) {
		err = dcp_error(ENOMEM, "cannot start libdwfl: %s",
				dwfl_errmsg(-1));
		goto unresolved;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline_memory(dwfl, "[vdso]", "[vdso]", s->vdso,
					 s->vdso_size);
	if (!mod) {
		err = dcp_error(ENOEXEC, "cannot read the vdso image: %s",
				dwfl_errmsg(-1));
		dwfl_end(dwfl);
		goto unresolved;
	}
	return resolve_dwfl_module(dwfl, mod, info, offsets, n, out);

unresolved : {
	int err2 = add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}

/* ---- JIT code: perf maps ----------------------------------------------- */

/*
 * The map was opened (ownership checked) and pinned when the process was
 * sampled in JIT code; read now, it names code that may since have been
 * freed, but a JIT only appends, and the latest line for an address wins.
 */
static int resolve_jit(const struct dcp_cookie_info *info, int fd,
		       const uint64_t *offsets, size_t n,
		       struct dcp_symtab *out)
{
	struct dcp_perfmap *m;
	int err, resolved = 0;

	/* No map was kept (the process wrote none, or another user's was
	 * refused): nothing names this code, which is no error. */
	if (fd < 0) {
		err = add_unresolved(out, info->cookie, offsets, n);
		return err < 0 ? err : 0;
	}
	m = dcp_perfmap_read_fd(fd);
	if (!m) {
		err = -errno;
		goto unresolved;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dcp_perfmap_entry *e =
			dcp_perfmap_lookup(m, offsets[i]);

		err = dcp_symtab_add(out, info->cookie, offsets[i],
				     e ? e->name : NULL, e ? e->start : 0,
				     e ? e->size : 0);
		if (err == 0 && e) {
			char *d = dcp_demangle(e->name);

			if (d)
				err = dcp_symtab_set_detail(out, info->cookie,
							    offsets[i], d, NULL,
							    0, NULL, 0);
			free(d);
			resolved++;
		}
		if (err < 0) {
			dcp_perfmap_free(m);
			return err;
		}
	}
	dcp_perfmap_free(m);
	return resolved;

unresolved : {
	int err2 = add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}

int dcp_symbolizer_open_object(const struct dcp_cookie_info *info,
			       const char **path)
{
	const char *used = NULL;
	int fd = open_matching_path(info, &used);

	if (path)
		*path = used;
	return fd;
}

int dcp_symbolizer_resolve(struct dcp_symbolizer *s,
			   const struct dcp_cookie_info *info, int fd,
			   const uint64_t *offsets, size_t n,
			   struct dcp_symtab *out)
{
	int err;

	if (n == 0)
		return 0;
	switch (info->kind) {
	case DCP_COOKIE_KIND_FILE:
		return resolve_file(s, info, fd, offsets, n, out);
	case DCP_COOKIE_KIND_KERNEL:
	case DCP_COOKIE_KIND_MODULE:
		return resolve_kernel(s, info, offsets, n, out);
	case DCP_COOKIE_KIND_VDSO:
		return resolve_vdso(s, info, offsets, n, out);
	case DCP_COOKIE_KIND_JIT:
		return resolve_jit(info, fd, offsets, n, out);
	default:
		err = add_unresolved(out, info->cookie, offsets, n);
		return err < 0 ? err : 0;
	}
}
