/* SPDX-License-Identifier: MIT */
/* Resolved symbols, keyed by (cookie, offset): stored in the profile. */
#ifndef DCPROF_SYMTAB_INTERNAL_H
#define DCPROF_SYMTAB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dcprof/dcprof.h"

struct dcp_symtab;

struct dcp_symtab *dcp_symtab_new(void);
void dcp_symtab_free(struct dcp_symtab *s);
/* name NULL records an address that could not be resolved. Copies name. */
int dcp_symtab_add(struct dcp_symtab *s, uint32_t cookie, uint64_t offset,
		   const char *name, uint64_t start, uint64_t size);
/* -ENOENT when (cookie, offset) was never added. */
int dcp_symtab_lookup(const struct dcp_symtab *s, uint32_t cookie,
		      uint64_t offset, struct dcp_symbol *sym);
size_t dcp_symtab_count(const struct dcp_symtab *s);
/* Entry i, in insertion order. */
void dcp_symtab_entry(const struct dcp_symtab *s, size_t i, uint32_t *cookie,
		      uint64_t *offset, struct dcp_symbol *sym);

#endif
