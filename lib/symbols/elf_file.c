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
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_inline_internal.h"
#include "elf_symtab_internal.h"
#include "log_internal.h"
#include "symbolizer_internal.h"

static int resolve_module(struct ftable *t, Dwfl_Module *mod, uint32_t cookie,
			  const uint64_t *offsets, size_t n,
			  struct dcp_symtab *out)
{
	struct scope_cache scopes = { 0 };
	int err, resolved = 0;

	for (size_t i = 0; i < n; i++) {
		const struct dcp_elf_segment *seg = NULL;
		const char *name = NULL;
		uint64_t off = offsets[i], start = 0, size = 0, q = 0;

		if (dcp_ftable_address(t, off, &q, &seg)) {
			ssize_t k = dcp_ftable_find(t, q, &size);

			if (k >= 0) {
				name = t->syms[k].name;
				/* Back to file offsets, through the same
				 * segment as the query. */
				start = t->syms[k].addr - t->bias - seg->vaddr +
					seg->offset;
				resolved++;
			} else {
				size = 0;
			}
		}
		err = dcp_symtab_add(out, cookie, off, name, start, size);
		if (err == 0 && name)
			err = dcp_dwarf_add_detail(mod, &scopes, q, cookie, off,
						   name, out);
		if (err < 0) {
			dcp_scope_cache_free(&scopes);
			return err;
		}
	}
	dcp_scope_cache_free(&scopes);
	return resolved;
}

int dcp_symbolizer_resolve_dwfl_module(Dwfl *dwfl, Dwfl_Module *mod,
				       const struct dcp_cookie_info *info,
				       const uint64_t *offsets, size_t n,
				       struct dcp_symtab *out)
{
	struct ftable t;
	int err, err2;

	memset(&t, 0, sizeof(t));
	if (dwfl_report_end(dwfl, NULL, NULL) != 0)
		err = dcp_error(ENOEXEC, "cannot report '%s': %s", info->name,
				dwfl_errmsg(-1));
	else
		err = dcp_ftable_build(&t, mod, info->name, offsets, n);
	if (err == -ENOMEM)
		err = dcp_error(ENOMEM, "cannot read symbols of '%s': %s",
				info->name, strerror(ENOMEM));
	if (err == 0) {
		err = resolve_module(&t, mod, info->cookie, offsets, n, out);
	} else {
		err2 = dcp_symbolizer_add_unresolved(out, info->cookie, offsets,
						     n);
		if (err2 < 0)
			err = err2;
	}
	dcp_ftable_free(&t);
	dwfl_end(dwfl);
	return err;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int dcp_symbolizer_resolve_file(struct dcp_symbolizer *s,
				const struct dcp_cookie_info *info, int fd,
				const uint64_t *offsets, size_t n,
				struct dcp_symtab *out)
{
	const char *path = info->nr_paths ? info->paths[0] : info->name;
	void **userdata = NULL;
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int own, err;

	if (fd >= 0) {
		own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (own < 0) {
			err = dcp_error(errno,
					"cannot duplicate handle of "
					"'%s': %s",
					info->name, strerror(errno));
			goto unresolved;
		}
	} else {
		own = dcp_symbolizer_open_object(info, &path);
		if (own < 0) {
			err = own;
			goto unresolved;
		}
	}
	if (!path)
		path = "";
	dwfl = dwfl_begin(&s->cb);
	if (!dwfl) {
		close(own);
		err = dcp_error(ENOMEM, "cannot start libdwfl: %s",
				dwfl_errmsg(-1));
		goto unresolved;
	}
	dwfl_report_begin(dwfl);
	/* base 0 with p_vaddr added: the module sits at its own vaddrs. */
	mod = dwfl_report_elf(dwfl, base_name(path), path, own, 0, true);
	if (!mod) {
		/* On failure the descriptor is still ours. */
		close(own);
		err = dcp_error(ENOEXEC, "cannot read ELF '%s': %s", info->name,
				dwfl_errmsg(-1));
		dwfl_end(dwfl);
		goto unresolved;
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = s; /* for dcp_find_debuginfo */
	return dcp_symbolizer_resolve_dwfl_module(dwfl, mod, info, offsets, n,
						  out);

unresolved : {
	int err2 = dcp_symbolizer_add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}
