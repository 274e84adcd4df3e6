/* SPDX-License-Identifier: MIT */
/*
 * Source lines and inlined calls of sampled addresses from DWARF, with
 * the walked compilation units kept for the object's next addresses
 * (dwarf_inline.c).
 */
#ifndef DCPROF_DWARF_INLINE_INTERNAL_H
#define DCPROF_DWARF_INLINE_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "symtab_internal.h"

struct scope_unit;

/*
 * The compilation units of one module walked so far. dwarf_getscopes
 * walks a unit from its top for every address; a profile samples many
 * addresses of few units, so each sampled unit is walked once and its
 * addresses are looked up in what the walk found. Zero it to start.
 */
struct scope_cache {
	struct scope_unit *units;
	size_t nr, cap;
};

void dcp_scope_cache_free(struct scope_cache *c);

/*
 * Record what DWARF knows of module address q, the entry (cookie, off) of
 * out that the symbol name already names: the demangled name, the source
 * line, and the inlined calls around q. 0 or a negative errno.
 */
int dcp_dwarf_add_detail(Dwfl_Module *mod, struct scope_cache *scopes,
			 uint64_t q, uint32_t cookie, uint64_t off,
			 const char *name, struct dcp_symtab *out);

#endif
