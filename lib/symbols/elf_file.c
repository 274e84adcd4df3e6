// SPDX-License-Identifier: MIT
/*
 * Files through libdwfl: the pinned handle (or a path that still holds the
 * file) reported as a module, each sampled offset named by its symbol
 * table and detailed by its DWARF. The vdso goes through the same module
 * resolution.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dwarf_inline_internal.h"
#include "elf_fde_internal.h"
#include "elf_symtab_internal.h"
#include "log_internal.h"
#include "symbolizer_internal.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * An address of a file that no symbol covers: named after the function
 * its FDE gives (counted as named), else after the address alone (left
 * counted as unresolved). *made is the name, to be freed.
 */
static int name_unnamed(struct ftable *t, struct fde_table *fdes,
			Dwfl_Module *mod, const struct dcp_cookie_info *info,
			const struct dcp_elf_segment *seg, uint64_t off,
			uint64_t q, char **made, uint64_t *start,
			uint64_t *size)
{
	uint64_t fs, fe, lo;
	GElf_Addr bias;
	Elf *elf;
	int err;

	/* No FDE: the address alone, one byte, so that it lies in it. */
	*start = off;
	*size = 1;
	fs = fe = 0;
	if (seg && !fdes->loaded && (elf = dwfl_module_getelf(mod, &bias))) {
		err = dcp_fde_table_load(fdes, elf, bias);
		if (err < 0)
			return err;
	}
	lo = seg ? t->bias + seg->vaddr : 0;
	/* Back to file offsets through the query's segment, as symbols. */
	if (seg && dcp_fde_find(fdes, q, &fs, &fe) && fs >= lo) {
		*start = fs - lo + seg->offset;
		*size = fe - fs;
	} else {
		fe = fs;
	}
	*made = dcp_fde_name(base_name(info->name), *start);
	if (!*made)
		return -ENOMEM;
	return fe != fs;
}

static int resolve_module(struct ftable *t, Dwfl_Module *mod,
			  const struct dcp_cookie_info *info,
			  const uint64_t *offsets, size_t n,
			  struct scope_cache *scopes, struct dcp_symtab *out)
{
	struct fde_table fdes = { 0 };
	uint32_t cookie = info->cookie;
	int err = 0, resolved = 0;

	for (size_t i = 0; i < n && err >= 0; i++) {
		const struct dcp_elf_segment *seg = NULL;
		const char *name = NULL;
		char *made = NULL;
		uint64_t off = offsets[i], start = 0, size = 0, q = 0;
		bool mapped = dcp_ftable_address(t, off, &q, &seg);
		ssize_t k = mapped ? dcp_ftable_find(t, q, &size) : -1;

		if (k >= 0) {
			name = t->syms[k].name;
			/* Back to file offsets, through the same
			 * segment as the query. */
			start = t->syms[k].addr - t->bias - seg->vaddr +
				seg->offset;
			resolved++;
		} else if (info->kind == DCP_COOKIE_KIND_FILE) {
			err = name_unnamed(t, &fdes, mod, info,
					   mapped ? seg : NULL, off, q, &made,
					   &start, &size);
			if (err < 0)
				break;
			resolved += err;
			name = made;
		} else {
			size = 0;
		}
		err = dcp_symtab_add(out, cookie, off, name, start, size);
		if (err == 0 && name && !made && scopes)
			err = dcp_dwarf_add_detail(mod, scopes, q, cookie, off,
						   name, out);
		free(made);
	}
	dcp_fde_table_free(&fdes);
	if (err == -ENOMEM)
		return dcp_error(ENOMEM, "cannot name addresses of '%s': %s",
				 info->name, strerror(ENOMEM));
	return err < 0 ? err : resolved;
}

/* The offsets of a reported module, its unit walks in scopes (NULL: the
 * names alone, without DWARF's details). */
static int resolve_reported(Dwfl_Module *mod,
			    const struct dcp_cookie_info *info,
			    const uint64_t *offsets, size_t n,
			    struct scope_cache *scopes, struct dcp_symtab *out)
{
	struct ftable t;
	int err, err2;

	memset(&t, 0, sizeof(t));
	err = dcp_ftable_build(&t, mod, info->name, offsets, n);
	if (err == -ENOMEM)
		err = dcp_error(ENOMEM, "cannot read symbols of '%s': %s",
				info->name, strerror(ENOMEM));
	if (err == 0) {
		err = resolve_module(&t, mod, info, offsets, n, scopes, out);
	} else {
		err2 = dcp_symbolizer_add_unresolved(out, info->cookie, offsets,
						     n);
		if (err2 < 0)
			err = err2;
	}
	dcp_ftable_free(&t);
	return err;
}

int dcp_symbolizer_resolve_dwfl_module(Dwfl *dwfl, Dwfl_Module *mod,
				       const struct dcp_cookie_info *info,
				       const uint64_t *offsets, size_t n,
				       struct dcp_symtab *out)
{
	struct scope_cache scopes = { 0 };
	int err, err2;

	if (dwfl_report_end(dwfl, NULL, NULL) != 0) {
		err = dcp_error(ENOEXEC, "cannot report '%s': %s", info->name,
				dwfl_errmsg(-1));
		err2 = dcp_symbolizer_add_unresolved(out, info->cookie, offsets,
						     n);
		if (err2 < 0)
			err = err2;
	} else {
		err = resolve_reported(mod, info, offsets, n, &scopes, out);
	}
	dcp_scope_cache_free(&scopes);
	dwfl_end(dwfl);
	return err;
}

/* A file kept open between calls (dcp_symbolizer_keep_files()). */
struct kept_file {
	uint32_t cookie;
	struct dcp_file_id id;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct scope_cache scopes;
	uint64_t used; /* kept_clock at its last use */
	size_t bytes; /* heap its reading took (heap_bytes()) */
};

void dcp_symbolizer_keep_files(struct dcp_symbolizer *s, size_t max)
{
	dcp_symbolizer_drop_kept(s);
	s->max_kept = max;
}

void dcp_symbolizer_keep_bytes(struct dcp_symbolizer *s, size_t max_bytes)
{
	s->max_kept_bytes = max_bytes;
}

static size_t kept_bytes(const struct dcp_symbolizer *s)
{
	size_t bytes = 0;

	for (size_t i = 0; i < s->nr_kept; i++)
		bytes += s->kept[i].bytes;
	return bytes;
}

void dcp_symbolizer_kept_stats(const struct dcp_symbolizer *s,
			       struct dcp_symbolizer_kept_stats *st)
{
	*st = s->kept_stats;
	st->files = s->nr_kept;
	st->bytes = kept_bytes(s);
}

/*
 * The bytes the process's allocator has handed out: libdw allocates as it
 * reads a file's tables and keeps them with the session, so the growth
 * across a call is what keeping the file costs.
 */
static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void kept_close(struct kept_file *k)
{
	dcp_scope_cache_free(&k->scopes);
	dwfl_end(k->dwfl);
}

void dcp_symbolizer_drop_kept(struct dcp_symbolizer *s)
{
	for (size_t i = 0; i < s->nr_kept; i++)
		kept_close(&s->kept[i]);
	free(s->kept);
	s->kept = NULL;
	s->nr_kept = 0;
}

/* Close the least recently used kept file; the last one takes its slot. */
static void kept_evict_oldest(struct dcp_symbolizer *s)
{
	size_t oldest = 0;

	for (size_t i = 1; i < s->nr_kept; i++)
		if (s->kept[i].used < s->kept[oldest].used)
			oldest = i;
	kept_close(&s->kept[oldest]);
	s->kept[oldest] = s->kept[--s->nr_kept];
	memset(&s->kept[s->nr_kept], 0, sizeof(*s->kept));
	s->kept_stats.evicted++;
}

/* Within max_kept_bytes again, the least recently used closed first. */
static void kept_trim(struct dcp_symbolizer *s)
{
	while (s->max_kept_bytes && s->nr_kept &&
	       kept_bytes(s) > s->max_kept_bytes)
		kept_evict_oldest(s);
}

size_t dcp_symbolizer_drop_unneeded(struct dcp_symbolizer *s,
				    const struct dcp_cookie_set *needed)
{
	size_t kept = 0, closed = 0;

	for (size_t i = 0; i < s->nr_kept; i++) {
		if (dcp_cookie_set_has(needed, s->kept[i].cookie)) {
			s->kept[kept++] = s->kept[i];
			continue;
		}
		kept_close(&s->kept[i]);
		closed++;
	}
	/* the slots past the kept ones are taken as new (kept_slot()) */
	if (closed)
		memset(&s->kept[kept], 0, closed * sizeof(*s->kept));
	s->nr_kept = kept;
	return closed;
}

/* The pages of an ELF image libelf mapped, unmapped (see below). */
static void page_out_elf(Elf *elf)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = 0;
	GElf_Ehdr eh;
	char *raw;
	uintptr_t start, end;

	/* libdwfl relocates a relocatable file's sections in place */
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_type == ET_REL)
		return;
	raw = elf_rawfile(elf, &size);
	if (!raw || !size || page <= 0)
		return;
	start = (uintptr_t)raw & ~((uintptr_t)page - 1);
	end = ((uintptr_t)raw + size + (uintptr_t)page - 1) &
	      ~((uintptr_t)page - 1);
	madvise((void *)start, end - start, MADV_DONTNEED);
}

/*
 * Between batches the kept files' mapped images (the file, its debug
 * file) and the kernel's cached symbols are unmapped page by page: the
 * pages stay in the page cache and come back at the next batch's first
 * touch, and left mapped they would count as the recorder's own memory
 * for as long as it keeps the files. libelf reads these images and
 * writes into them only to relocate a relocatable file, never unmapped.
 */
static void page_out_kept(struct kept_file *k)
{
	GElf_Addr bias;
	Elf *file = dwfl_module_getelf(k->mod, &bias);
	Dwarf *dw = dwfl_module_getdwarf(k->mod, &bias);

	page_out_elf(file);
	/* the debug file, when the DWARF is not the file's own */
	if (dw && dwarf_getelf(dw) != file)
		page_out_elf(dwarf_getelf(dw));
}

void dcp_symbolizer_page_out(struct dcp_symbolizer *s)
{
	for (size_t i = 0; i < s->nr_kept; i++)
		page_out_kept(&s->kept[i]);
	if (s->kmap)
		madvise(s->kmap, s->kmap_len, MADV_DONTNEED);
}

static struct kept_file *kept_find(struct dcp_symbolizer *s,
				   const struct dcp_cookie_info *info)
{
	struct dcp_file_id id;

	dcp_file_id_from_info(&id, info);
	for (size_t i = 0; i < s->nr_kept; i++)
		if (s->kept[i].cookie == info->cookie &&
		    dcp_file_id_equal(&s->kept[i].id, &id))
			return &s->kept[i];
	return NULL;
}

/* A slot for a file to keep: a free one, else the least recently used,
 * closed; NULL when out of memory. */
static struct kept_file *kept_slot(struct dcp_symbolizer *s)
{
	if (!s->kept) {
		s->kept = calloc(s->max_kept, sizeof(*s->kept));
		if (!s->kept)
			return NULL;
	}
	if (s->nr_kept == s->max_kept)
		kept_evict_oldest(s);
	return &s->kept[s->nr_kept++];
}

/* Keep a reported module for the next calls; false: it was not kept
 * (report failed, or no memory), and dwfl is still the caller's. */
static bool keep_module(struct dcp_symbolizer *s,
			const struct dcp_cookie_info *info, Dwfl *dwfl,
			Dwfl_Module *mod, struct kept_file **out)
{
	struct kept_file *k;

	if (dwfl_report_end(dwfl, NULL, NULL) != 0)
		return false;
	k = kept_slot(s);
	if (!k)
		return false;
	k->cookie = info->cookie;
	dcp_file_id_from_info(&k->id, info);
	k->dwfl = dwfl;
	k->mod = mod;
	*out = k;
	return true;
}

/* The offsets of a kept file, which is now the most recently used. */
static int resolve_kept(struct dcp_symbolizer *s, struct kept_file *k,
			const struct dcp_cookie_info *info,
			const uint64_t *offsets, size_t n,
			struct dcp_symtab *out)
{
	k->used = ++s->kept_clock;
	return resolve_reported(k->mod, info, offsets, n,
				s->names_only ? NULL : &k->scopes, out);
}

/*
 * The file reported to a new libdwfl session: through fd's duplicate when
 * fd is not -1, else through a path that still holds it. 0, or a negative
 * errno with a message.
 */
static int report_file(struct dcp_symbolizer *s,
		       const struct dcp_cookie_info *info, int fd, Dwfl **dwflp,
		       Dwfl_Module **modp)
{
	const char *path = info->nr_paths ? info->paths[0] : info->name;
	void **userdata = NULL;
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int own;

	if (fd >= 0) {
		own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (own < 0)
			return dcp_error(errno,
					 "cannot duplicate handle of "
					 "'%s': %s",
					 info->name, strerror(errno));
	} else {
		own = dcp_symbolizer_open_object(info, &path);
		if (own < 0)
			return own;
	}
	if (!path)
		path = "";
	dwfl = dwfl_begin(&s->cb);
	if (!dwfl) {
		close(own);
		return dcp_error(ENOMEM, "cannot start libdwfl: %s",
				 dwfl_errmsg(-1));
	}
	dwfl_report_begin(dwfl);
	/* base 0 with p_vaddr added: the module sits at its own vaddrs. */
	mod = dwfl_report_elf(dwfl, base_name(path), path, own, 0, true);
	if (!mod) {
		/* On failure the descriptor is still ours. */
		close(own);
		dwfl_end(dwfl);
		return dcp_error(ENOEXEC, "cannot read ELF '%s': %s",
				 info->name, dwfl_errmsg(-1));
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = s; /* for dcp_find_debuginfo */
	*dwflp = dwfl;
	*modp = mod;
	return 0;
}

int dcp_symbolizer_resolve_file(struct dcp_symbolizer *s,
				const struct dcp_cookie_info *info, int fd,
				const uint64_t *offsets, size_t n,
				struct dcp_symtab *out)
{
	struct kept_file *k = s->max_kept ? kept_find(s, info) : NULL;
	size_t heap0 = 0, names0 = 0, added = 0;
	int64_t grown;
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int err, err2;

	if (s->max_kept) {
		heap0 = heap_bytes();
		names0 = dcp_symtab_count(out);
	}
	if (k) {
		s->kept_stats.hits++;
	} else {
		if (s->max_kept)
			s->kept_stats.misses++;
		err = report_file(s, info, fd, &dwfl, &mod);
		if (err < 0) {
			err2 = dcp_symbolizer_add_unresolved(out, info->cookie,
							     offsets, n);
			return err2 < 0 ? err2 : err;
		}
		if (!s->max_kept || !keep_module(s, info, dwfl, mod, &k))
			return dcp_symbolizer_resolve_dwfl_module(
				dwfl, mod, info, offsets, n, out);
	}
	err = resolve_kept(s, k, info, offsets, n, out);
	/* a caller names a file's addresses together: its images are not
	 * read again before its next call (see dcp_symbolizer_page_out()) */
	page_out_kept(k);
	/* the names added to out (appended to it) are the caller's, not the
	 * file's */
	for (size_t i = names0; i < dcp_symtab_count(out); i++)
		added += dcp_symtab_entry_bytes(out, i);
	grown = (int64_t)(heap_bytes() - heap0) - (int64_t)added;
	if (grown > 0)
		k->bytes += (size_t)grown;
	kept_trim(s);
	return err;
}

Dwfl_Module *dcp_symbolizer_file_module(struct dcp_symbolizer *s,
					const struct dcp_cookie_info *info)
{
	struct kept_file *k = s->max_kept ? kept_find(s, info) : NULL;
	Dwfl_Module *mod;
	Dwfl *dwfl;

	if (k)
		return k->mod;
	if (!s->max_kept) {
		dcp_error(EINVAL, "no file is kept by this symbolizer");
		return NULL;
	}
	if (report_file(s, info, -1, &dwfl, &mod) < 0)
		return NULL;
	if (keep_module(s, info, dwfl, mod, &k))
		return k->mod;
	dcp_error(ENOEXEC, "cannot report '%s': %s", info->name,
		  dwfl_errmsg(-1));
	dwfl_end(dwfl);
	return NULL;
}
