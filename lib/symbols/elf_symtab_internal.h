/* SPDX-License-Identifier: MIT */
/*
 * The symbols of one ELF object that can name its sampled addresses,
 * sorted for lookup (elf_symtab.c).
 */
#ifndef DCPROF_ELF_SYMTAB_INTERNAL_H
#define DCPROF_ELF_SYMTAB_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf_segments_internal.h"

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

struct ftable {
	struct fsym *syms;
	size_t nr, cap;
	char **plt_names; /* the names made for PLT stubs, owned */
	size_t nr_plt_names, cap_plt_names;
	struct dcp_elf_segment *segs;
	size_t nr_segs;
	GElf_Addr bias; /* main file vaddr + bias = module address */
};

/*
 * The symbols of mod that can name one of the sampled file offsets: the
 * sized symbols that cover one, the sizeless labels, and the sized
 * symbols that cover a label (which then names nothing). A library's
 * table has thousands of entries for a few dozen sampled addresses; what
 * is kept answers every sampled address as the whole table would. what
 * names the object in messages. 0 or a negative errno; t is to be freed
 * with dcp_ftable_free either way.
 */
int dcp_ftable_build(struct ftable *t, Dwfl_Module *mod, const char *what,
		     const uint64_t *offsets, size_t n);
void dcp_ftable_free(struct ftable *t);

/* The module address of file offset off, *segp (may be NULL) the segment
 * that holds it; false outside every segment. */
bool dcp_ftable_address(const struct ftable *t, uint64_t off, uint64_t *q,
			const struct dcp_elf_segment **segp);

/*
 * The symbol covering module address q: the closest sized symbol that
 * contains it, else a sizeless label before it that no sized symbol
 * overlaps, within the label's own section. Returns the index or -1;
 * *size the symbol's size (up to the next symbol for a label).
 */
ssize_t dcp_ftable_find(const struct ftable *t, uint64_t q, uint64_t *size);

#endif
