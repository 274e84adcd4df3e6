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
/*
 * name NULL records an address that could not be resolved. Copies name.
 * A second add for the same address replaces the first, details included.
 */
int dcp_symtab_add(struct dcp_symtab *s, uint32_t cookie, uint64_t offset,
		   const char *name, uint64_t start, uint64_t size);
/*
 * Attach what DWARF and the demangler said to an address already added
 * (copied): the demangled name, the position in the function and the
 * inlined calls, innermost first. -ENOENT when the address is not there.
 */
int dcp_symtab_set_detail(struct dcp_symtab *s, uint32_t cookie,
			  uint64_t offset, const char *demangled,
			  const char *file, uint32_t line,
			  const struct dcp_inline_frame *inl,
			  uint32_t nr_inline);
/*
 * Whether a stored name of the address at file offset offset is made from
 * its file's name and start (DCP_SYMBOL_MADE_NAME): "file+0xSTART";
 * *per_address (may be NULL) whether it names the address alone (no
 * .eh_frame entry covered it: start is the offset, size 1).
 */
bool dcp_symbol_name_is_made(const char *name, uint64_t start, uint64_t size,
			     uint64_t offset, bool *per_address);
/* -ENOENT when (cookie, offset) was never added. */
int dcp_symtab_lookup(const struct dcp_symtab *s, uint32_t cookie,
		      uint64_t offset, struct dcp_symbol *sym);
/* Inlined call i of an address; -ENOENT when there is none. */
int dcp_symtab_inline(const struct dcp_symtab *s, uint32_t cookie,
		      uint64_t offset, uint32_t i,
		      struct dcp_inline_frame *out);
/* Copy the entry of (cookie, offset) of src into dst, details included. */
int dcp_symtab_copy(struct dcp_symtab *dst, const struct dcp_symtab *src,
		    uint32_t cookie, uint64_t offset);
/* dcp_symtab_copy() into dst under another cookie (merged profiles). */
int dcp_symtab_copy_as(struct dcp_symtab *dst, const struct dcp_symtab *src,
		       uint32_t cookie, uint64_t offset, uint32_t dst_cookie);
size_t dcp_symtab_count(const struct dcp_symtab *s);
/* The bytes the table holds (its entries, index and strings), and those
 * of entry i alone. */
size_t dcp_symtab_bytes(const struct dcp_symtab *s);
size_t dcp_symtab_entry_bytes(const struct dcp_symtab *s, size_t i);
/* Entry i, in insertion order; inl (may be NULL) its inlined calls. */
void dcp_symtab_entry(const struct dcp_symtab *s, size_t i, uint32_t *cookie,
		      uint64_t *offset, struct dcp_symbol *sym);
void dcp_symtab_entry_inline(const struct dcp_symtab *s, size_t i, uint32_t j,
			     struct dcp_inline_frame *out);

#endif
