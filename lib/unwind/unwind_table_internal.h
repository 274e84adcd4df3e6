/* SPDX-License-Identifier: MIT */
/*
 * Compact unwind tables: one ELF file's .eh_frame (x86-64) compiled, with
 * libdw's CFI reader, into rows of struct dcp_unwind_row keyed by file
 * offset, which the BPF stack walker reads in the kernel.
 */
#ifndef DCPROF_UNWIND_TABLE_INTERNAL_H
#define DCPROF_UNWIND_TABLE_INTERNAL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_row.h"

struct dcp_unwind_table {
	/* sorted by off, no two adjacent rows equal apart from off */
	struct dcp_unwind_row *rows;
	size_t nr_rows;
	size_t nr_fdes; /* FDEs read from .eh_frame */
	/* rows made UNSUPPORTED (each distinct range counted once) */
	size_t nr_unsupported;
	/* size of the .eh_frame section read, for cost per MB figures */
	size_t eh_frame_bytes;
};

/*
 * Builds t from elf's .eh_frame: a row wherever the rule to find the
 * caller changes, over the file bytes of every executable PT_LOAD
 * segment, a GAP row where no FDE covers the code. A file without a
 * .eh_frame section (none, or NOBITS as in a separate debug file) has no
 * CFI to compile: t gets 0 rows and the call returns 0. Otherwise 0, or a
 * negative errno with dcp_last_error() saying why: -ENOEXEC (not an ELF
 * file), -ENOTSUP (not x86-64, or FDE addresses in an encoding other than
 * absolute or pc-relative of fixed size), -EFBIG (code at file offsets
 * from 4 GiB), -EINVAL (unreadable CFI or program headers), -ENOMEM.
 * t is freed with dcp_unwind_table_free() after success, and left empty
 * after a failure.
 */
int dcp_unwind_table_build(Elf *elf, struct dcp_unwind_table *t);

/*
 * The table of the vdso, built from this process's image: every 64-bit
 * process of this kernel maps the same one, at offset 0 of its mapping.
 * 0 or a negative errno as dcp_unwind_table_build().
 */
int dcp_unwind_table_build_vdso(struct dcp_unwind_table *t);

void dcp_unwind_table_free(struct dcp_unwind_table *t);

/* The row in force at file offset off (binary search), NULL before the first row. */
const struct dcp_unwind_row *
dcp_unwind_table_find(const struct dcp_unwind_table *t, uint64_t off);

struct dcp_cache;

/* "unwind-" and a build id of 20 bytes in hex */
#define DCP_UNWIND_CACHE_NAME 64

/*
 * The table of the file open at fd (unwind_table_cache.c): from cache
 * (NULL: none) by the file's build id when there (*cached), else built
 * from its CFI, unless !build (-ENOENT then); name: its entry's name in
 * the cache ("": the file has no build id), for dcp_unwind_table_store()
 * when it was built. 0 or a negative errno as dcp_unwind_table_build().
 */
int dcp_unwind_table_for_fd(int fd, const struct dcp_cache *cache, bool build,
			    struct dcp_unwind_table *t, bool *cached,
			    char name[DCP_UNWIND_CACHE_NAME]);
/* A built table into the cache as name (its fsync is left to a moment
 * when no table waits). */
void dcp_unwind_table_store(const struct dcp_cache *c, const char *name,
			    const struct dcp_unwind_table *t);

#endif
