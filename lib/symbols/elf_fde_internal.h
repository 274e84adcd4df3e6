/* SPDX-License-Identifier: MIT */
/*
 * Functions without symbols: the address ranges of the FDEs of a file's
 * call frame information (.eh_frame and .debug_frame), read once per
 * file into a sorted table, and the names made from them (elf_fde.c).
 */
#ifndef DCPROF_ELF_FDE_INTERNAL_H
#define DCPROF_ELF_FDE_INTERNAL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fde_range {
	uint64_t start, end; /* module addresses, end excluded */
	uint64_t max_end; /* greatest end up to this entry */
};

struct fde_table {
	struct fde_range *v; /* sorted by start */
	size_t n, cap;
	bool loaded;
};

/*
 * Read the FDE ranges of elf (its vaddrs plus bias are module addresses)
 * once; later calls do nothing. Entries that cannot be decoded are left
 * out, and a section that cannot be read leaves the table empty: 0, or
 * -ENOMEM.
 */
int dcp_fde_table_load(struct fde_table *t, Elf *elf, GElf_Addr bias);
void dcp_fde_table_free(struct fde_table *t);

/* The FDE covering module address q: true with its [*start, *end). */
bool dcp_fde_find(const struct fde_table *t, uint64_t q, uint64_t *start,
		  uint64_t *end);

/*
 * The name of a function without a symbol in the file called base:
 * "base+0xSTART", START the file offset of its start (of the address
 * itself when no FDE covers it); malloc'd, NULL when out of memory.
 */
char *dcp_fde_name(const char *base, uint64_t start);

/* Whether a stored name is one of those: dcp_symbol_name_is_made()
 * (symtab_internal.h), which the core reading a profile also needs. */

#endif
