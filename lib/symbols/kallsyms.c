// SPDX-License-Identifier: MIT
/*
 * The kernel's symbols: /proc/kallsyms parsed (one line parser, also used
 * for the kernel layout), indexed by owner (the kernel image or a module)
 * and searched for the sampled kernel and module offsets.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "grow.h"
#include "kallsyms_internal.h"
#include "log_internal.h"
#include "symbolizer_internal.h"

bool dcp_kallsyms_parse_line(const char *line, struct dcp_kallsyms_line *l)
{
	const char *end;
	char *p;

	l->addr = strtoull(line, &p, 16);
	if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
		return false;
	l->type = p[1];
	l->name = p + 3;
	l->name_len = strcspn(l->name, "\t \n");
	end = l->name + l->name_len;
	l->module = NULL;
	l->module_len = 0;
	if (*end == '\t' && end[1] == '[') {
		l->module = end + 2;
		l->module_len = strcspn(l->module, "]");
	}
	return true;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->local != y->local)
		return x->local < y->local ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
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
	void *p;

	p = dcp_grow_from(s->ksyms, cap, s->nr_ksyms + 1, sizeof(*s->ksyms),
			  16384);
	if (!p)
		return -ENOMEM;
	s->ksyms = p;
	p = dcp_grow_from(s->knames, ncap, s->knames_len + len + 1, 1, 1 << 20);
	if (!p)
		return -ENOMEM;
	s->knames = p;
	e = &s->ksyms[s->nr_ksyms];
	e->addr = addr;
	e->name = (uint32_t)s->knames_len;
	e->owner = (uint16_t)owner;
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
		struct dcp_kallsyms_line l;
		uint32_t owner = 0;

		if (!dcp_kallsyms_parse_line(line, &l))
			continue;
		if (l.addr)
			nonzero++;
		if (l.type != 't' && l.type != 'T' && l.type != 'w' &&
		    l.type != 'W')
			continue;
		if (l.module) {
			const char *mod = l.module;
			size_t ml = l.module_len;

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
			 * since the layout was read: no cookie to own it;
			 * nor past the owners a ksym can say. */
			if (!owner || owner > UINT16_MAX)
				continue;
		}
		err = ksyms_push(s, &cap, &ncap, l.addr, l.name, l.name_len,
				 owner, l.type == 't' || l.type == 'w');
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

void dcp_ksyms_reset(struct dcp_symbolizer *s)
{
	free(s->ksyms);
	if (s->kmap)
		munmap(s->kmap, s->kmap_len);
	else
		free(s->knames);
	free(s->owner_first);
	s->ksyms = NULL;
	s->knames = NULL;
	s->kmap = NULL;
	s->kmap_len = 0;
	s->owner_first = NULL;
	s->nr_ksyms = 0;
	s->knames_len = 0;
	s->ksyms_loaded = false;
	s->ksyms_cached = false;
	s->ksyms_err = 0;
}

int dcp_ksyms_index(struct dcp_symbolizer *s)
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
 * The kernel symbols the resolver needs for a cookie: the kernel's own
 * from the cache when it has them; else, and for modules (whose addresses
 * change with every load), all of /proc/kallsyms, once.
 */
static int ksyms_load(struct dcp_symbolizer *s,
		      const struct dcp_cookie_info *info)
{
	char name[128];
	bool cacheable =
		info->kind == DCP_COOKIE_KIND_KERNEL &&
		dcp_cache_entry_name(name, sizeof(name), "kernel-symbols",
				     info->build_id, info->build_id_size);
	FILE *f;
	int err;

	if (s->ksyms_loaded &&
	    !(s->ksyms_cached && info->kind == DCP_COOKIE_KIND_MODULE))
		return s->ksyms_err;
	if (s->ksyms_loaded)
		dcp_ksyms_reset(s); /* a module now needs the full table */
	else if (cacheable && dcp_ksyms_cache_load(s, name) == 0) {
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
	if (err == 0 && dcp_ksyms_index(s) < 0)
		err = dcp_error(ENOMEM, "cannot read '/proc/kallsyms': %s",
				strerror(ENOMEM));
	if (err < 0) {
		dcp_ksyms_reset(s);
		s->ksyms_loaded = true;
		s->ksyms_err = err;
		return err;
	}
	if (cacheable)
		dcp_ksyms_cache_store(s, name);
	return 0;
}

int dcp_kernel_module_of(const struct dcp_kernel_layout *k,
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

int dcp_symbolizer_resolve_kernel(struct dcp_symbolizer *s,
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
		err = dcp_kernel_module_of(k, info, &owner);
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
	int err2 = dcp_symbolizer_add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}
