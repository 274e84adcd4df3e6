/* SPDX-License-Identifier: MIT */
/*
 * Symbolization at the end of recording: sampled (cookie, offset) pairs to
 * names, through elfutils for files (read from the pinned handle) and
 * /proc/kallsyms for the kernel and its modules.
 */
#ifndef DCPROF_SYMBOLIZE_INTERNAL_H
#define DCPROF_SYMBOLIZE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcprof/dcprof.h"
#include "cookie_internal.h"
#include "symtab_internal.h"

/*
 * The running kernel's layout, read once when recording starts: where the
 * kernel text and each module sit, each with a cookie of its own.
 */
struct dcp_kernel_module {
	uint64_t start, end;
	uint32_t cookie;
	char name[64];
	uint8_t build_id[DCP_BUILD_ID_MAX];
	uint8_t build_id_size; /* 0: its notes were unreadable */
};

struct dcp_kernel_layout {
	uint64_t text_start; /* _text: kernel frame offsets count from it */
	uint32_t kernel_cookie;
	struct dcp_kernel_module *modules; /* sorted by start */
	size_t nr_modules;
};

/*
 * Read /proc/kallsyms (_text) and /proc/modules; intern the cookies.
 * Returns -EPERM when the kernel hides its addresses (kptr_restrict): the
 * kernel cookie is still set then, with text_start 0 and no modules.
 */
int dcp_kernel_layout_load(struct dcp_kernel_layout *k,
			   struct dcp_cookie_table *cookies);
void dcp_kernel_layout_free(struct dcp_kernel_layout *k);
/* The cookie and offset of a kernel address (module or kernel image). */
uint32_t dcp_kernel_layout_resolve(const struct dcp_kernel_layout *k,
				   uint64_t ip, uint64_t *offset);

/*
 * The module of k a module cookie stands for, as 1 + its index in
 * *owner: the module of that name loaded now, if its build id is the one
 * recorded (-ESTALE when it was rebuilt); without build ids, only the
 * same cookie of the same table (while recording). kallsyms.c.
 */
int dcp_kernel_module_of(const struct dcp_kernel_layout *k,
			 const struct dcp_cookie_info *info, uint32_t *owner);

struct dcp_symbolizer;

struct dcp_symbolizer *dcp_symbolizer_new(const struct dcp_kernel_layout *k);
void dcp_symbolizer_free(struct dcp_symbolizer *s);

/*
 * Where libdwfl looks for separate debug files, in its debuginfo_path
 * syntax (e.g. ":.debug:/usr/lib/debug"); NULL restores its default.
 */
int dcp_symbolizer_set_debuginfo_path(struct dcp_symbolizer *s,
				      const char *path);

/*
 * Keep up to max files open between calls of dcp_symbolizer_resolve(),
 * the least recently used closed first (0, the default: each call opens
 * and closes its file). For a caller that names a few new addresses of
 * the same files again and again (the live view's naming thread): libdw's
 * tables of a file (address ranges, line tables) and the walks of its
 * units are then built once, not at every call. A file is known again by
 * its cookie and identity, so a cookie number that comes back for another
 * file is not confused with it. A kept file's mapped images are unmapped
 * once its call is done (dcp_symbolizer_page_out()): what stays is the
 * tables libdw built from them.
 */
void dcp_symbolizer_keep_files(struct dcp_symbolizer *s, size_t max);

/*
 * Bound the kept files by the heap their reading took as well (0: the
 * count alone): the least recently used are closed past it, and a file
 * whose reading alone took more is closed once its call is done. A file's
 * bytes are the growth of the process's heap while the symbolizer read
 * it, an estimate when other threads allocate meanwhile.
 */
void dcp_symbolizer_keep_bytes(struct dcp_symbolizer *s, size_t max_bytes);

/* What the kept files hold and how often they served. */
struct dcp_symbolizer_kept_stats {
	uint64_t files; /* kept now */
	uint64_t bytes; /* their heap, as estimated */
	uint64_t hits; /* calls that found their file kept */
	uint64_t misses; /* calls that opened their file */
	uint64_t evicted; /* closed to stay within the bounds */
};
void dcp_symbolizer_kept_stats(const struct dcp_symbolizer *s,
			       struct dcp_symbolizer_kept_stats *st);
/* Unmap the pages of the kept files' mapped images and of the cached
 * kernel symbols: they come back from the page cache when used. */
void dcp_symbolizer_page_out(struct dcp_symbolizer *s);
/* Close the kept files whose cookie is not needed (needed[cookie], n
 * entries; a cookie past n is not needed): how many were closed. */
size_t dcp_symbolizer_drop_unneeded(struct dcp_symbolizer *s,
				    const struct dcp_cookie_set *needed);

/*
 * Resolve n offsets of one cookie into out (one entry per offset; a name
 * of NULL when nothing covers it), with the details DWARF has (source
 * position, inlined calls) and demangled names. Files are read through
 * fd when it is not -1 (the pinned handle), else through the cookie's
 * paths, accepted only when their identity still matches, else, for a
 * file with a build id, through its separate debug file found by build id.
 * JIT cookies are read from their pinned perf map (fd), whose addresses
 * are the offsets. Returns the number resolved, or a negative errno when
 * the object could not be read at all (-ESTALE: a path holds another
 * file; -ENOENT: none is left); every offset gets its entry in out even
 * then (with a NULL name).
 */
int dcp_symbolizer_resolve(struct dcp_symbolizer *s,
			   const struct dcp_cookie_info *info, int fd,
			   const uint64_t *offsets, size_t n,
			   struct dcp_symtab *out);

/*
 * Open the first of a file cookie's paths that still holds its file
 * (build id, else device and inode); *path (may be NULL) the path used.
 * -ESTALE when paths exist but hold other files, -ENOENT when none does.
 */
int dcp_symbolizer_open_object(const struct dcp_cookie_info *info,
			       const char **path);

/*
 * libdwfl's debuginfo_path for nr directories searched before the
 * default ones: ":.debug:DIR...:/usr/lib/debug", each directory made
 * absolute (debuginfo.c). 0 with *out malloc'd, or a negative errno and
 * a message naming a directory that cannot be used.
 */
int dcp_debuginfo_path(const char *const *dirs, size_t nr, char **out);

/*
 * The running kernel's layout, in a cookie table of its own, and the
 * identity of its image; false when it cannot be read (hidden kernel
 * addresses). Then whether a profile's kernel image is the one of id, by
 * build id (profile_symbols.c).
 */
struct dcp_profile;
bool dcp_running_kernel(struct dcp_kernel_layout *k,
			struct dcp_cookie_table **cookies,
			struct dcp_cookie_info *id);
bool dcp_profile_recorded_on(const struct dcp_profile *p,
			     const struct dcp_cookie_info *id);

/*
 * The demangled form of a C++ or Rust (legacy and v0) symbol name, as a
 * malloc'd string; NULL when name is not mangled (demangle.c).
 */
char *dcp_demangle(const char *name);

#endif
