/* SPDX-License-Identifier: MIT */
/*
 * What the files of the symbolizer share: its state, and one resolver per
 * kind of object (kernel, file, vdso, JIT) behind dcp_symbolizer_resolve.
 */
#ifndef DCPROF_SYMBOLIZER_INTERNAL_H
#define DCPROF_SYMBOLIZER_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_internal.h"
#include "symbolize_internal.h"

struct ksym; /* kallsyms_internal.h */
struct kept_file; /* elf_file.c */

struct dcp_symbolizer {
	const struct dcp_kernel_layout *k;
	bool ksyms_loaded;
	bool ksyms_cached; /* the kernel's own symbols only, from the cache */
	int ksyms_err;
	struct ksym *ksyms;
	size_t nr_ksyms;
	char *knames;
	size_t knames_len;
	/* the symbol cache's entry, mapped (knames points into it), or NULL */
	void *kmap;
	size_t kmap_len;
	/* ksyms of owner o are [owner_first[o], owner_first[o + 1]) */
	size_t *owner_first;

	char *debuginfo_path; /* NULL: libdwfl's default */
	Dwfl_Callbacks cb;
	struct dcp_cache cache;
	bool cache_opened;

	/* A private copy: libelf must not touch the read-only mapping. */
	char *vdso;
	size_t vdso_size;

	/* dcp_symbolizer_keep_files(): the files kept open, and a clock of
	 * calls for the least recently used */
	struct kept_file *kept;
	size_t nr_kept, max_kept;
	size_t max_kept_bytes; /* 0: no bound but the count */
	uint64_t kept_clock;
	struct dcp_symbolizer_kept_stats kept_stats;
	/* kept files' addresses named without DWARF's details (source
	 * position, inlined calls): for names alone, as of call targets */
	bool names_only;
};

/* elf_file.c: close the kept files. */
void dcp_symbolizer_drop_kept(struct dcp_symbolizer *s);

/*
 * The module of a file cookie, reported from a path that still holds the
 * file and kept (dcp_symbolizer_keep_files() must allow one), with its
 * debug file found as for resolving; NULL with a message (elf_file.c).
 */
Dwfl_Module *dcp_symbolizer_file_module(struct dcp_symbolizer *s,
					const struct dcp_cookie_info *info);

/* The cache, opened on first use; NULL when there is none. */
const struct dcp_cache *dcp_symbolizer_cache(struct dcp_symbolizer *s);

/* "<prefix>-<build id in hex>"; false when there is no build id. */
bool dcp_cache_entry_name(char *buf, size_t size, const char *prefix,
			  const uint8_t *id, size_t n);

/* An entry without a name for each of the n offsets. */
int dcp_symbolizer_add_unresolved(struct dcp_symtab *out, uint32_t cookie,
				  const uint64_t *offsets, size_t n);

/*
 * The resolvers, each as dcp_symbolizer_resolve for its kinds of cookie:
 * the number resolved or a negative errno, every offset with its entry.
 */
int dcp_symbolizer_resolve_kernel(struct dcp_symbolizer *s,
				  const struct dcp_cookie_info *info,
				  const uint64_t *offsets, size_t n,
				  struct dcp_symtab *out); /* kallsyms.c */
int dcp_symbolizer_resolve_file(struct dcp_symbolizer *s,
				const struct dcp_cookie_info *info, int fd,
				const uint64_t *offsets, size_t n,
				struct dcp_symtab *out); /* elf_file.c */
int dcp_symbolizer_resolve_vdso(struct dcp_symbolizer *s,
				const struct dcp_cookie_info *info,
				const uint64_t *offsets, size_t n,
				struct dcp_symtab *out); /* vdso.c */
int dcp_symbolizer_resolve_jit(const struct dcp_cookie_info *info, int fd,
			       const uint64_t *offsets, size_t n,
			       struct dcp_symtab *out); /* jit.c */

/*
 * Finish reporting mod and resolve through it; ends dwfl. Every offset
 * gets an entry, also when the module's symbols cannot be read
 * (elf_file.c).
 */
int dcp_symbolizer_resolve_dwfl_module(Dwfl *dwfl, Dwfl_Module *mod,
				       const struct dcp_cookie_info *info,
				       const uint64_t *offsets, size_t n,
				       struct dcp_symtab *out);

/*
 * libdwfl's find_debuginfo callback: the inflated copy from the cache
 * when there is one, else libdwfl's search (without its debuginfod step
 * when DEBUGINFOD_URLS names no server), whose compressed finds are
 * inflated into the cache. The module's userdata is the symbolizer
 * (debuginfo.c).
 */
int dcp_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, const char *file_name,
		       const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name);

#endif
