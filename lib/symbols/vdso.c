// SPDX-License-Identifier: MIT
/*
 * The vdso: named from a copy of this process's own image, reported to
 * libdwfl from memory and resolved like a file.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf_segments_internal.h"
#include "log_internal.h"
#include "symbolizer_internal.h"

/*
 * Every process of this kernel and ABI maps the same vdso, so the
 * recorder's own image stands for all of them.
 */
static int vdso_load(struct dcp_symbolizer *s)
{
	const unsigned char *img;
	size_t size;
	int err;

	if (s->vdso)
		return 0;
	err = dcp_vdso_image(&img, &size);
	if (err == -ENOENT)
		return dcp_error(ENOENT, "this process has no vdso");
	if (err < 0)
		return dcp_error(ENOEXEC, "the vdso is not a 64-bit ELF image");
	s->vdso = malloc(size);
	if (!s->vdso)
		return dcp_error(ENOMEM, "cannot copy the vdso: %s",
				 strerror(ENOMEM));
	memcpy(s->vdso, img, size);
	s->vdso_size = size;
	return 0;
}

int dcp_symbolizer_resolve_vdso(struct dcp_symbolizer *s,
				const struct dcp_cookie_info *info,
				const uint64_t *offsets, size_t n,
				struct dcp_symtab *out)
{
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int err;

	err = vdso_load(s);
	if (err < 0)
		goto unresolved;
	dwfl = dwfl_begin(&s->cb);
	if (!dwfl) {
		err = dcp_error(ENOMEM, "cannot start libdwfl: %s",
				dwfl_errmsg(-1));
		goto unresolved;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline_memory(dwfl, "[vdso]", "[vdso]", s->vdso,
					 s->vdso_size);
	if (!mod) {
		err = dcp_error(ENOEXEC, "cannot read the vdso image: %s",
				dwfl_errmsg(-1));
		dwfl_end(dwfl);
		goto unresolved;
	}
	return dcp_symbolizer_resolve_dwfl_module(dwfl, mod, info, offsets, n,
						  out);

unresolved : {
	int err2 = dcp_symbolizer_add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}
