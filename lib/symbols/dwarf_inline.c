// SPDX-License-Identifier: MIT
/*
 * What DWARF adds to a symbol: the source line of a sampled address and
 * the chain of inlined calls around it, from DIE trees walked once per
 * compilation unit.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_inline_internal.h"
#include "grow.h"
#include "symbolize_internal.h"

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

/* The functions and inlined calls of one compilation unit, with their
 * pc ranges, from one walk of its DIE tree. */
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

void dcp_scope_cache_free(struct scope_cache *c)
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

/* Walked as eu-addr2line -i does: from the innermost scope out to the
 * function, each DW_TAG_inlined_subroutine being one inlined call whose
 * own call site is where the next one out is. */
int dcp_dwarf_add_detail(Dwfl_Module *mod, struct scope_cache *scopes,
			 uint64_t q, uint32_t cookie, uint64_t off,
			 const char *name, struct dcp_symtab *out)
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
