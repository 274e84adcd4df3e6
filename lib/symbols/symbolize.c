// SPDX-License-Identifier: MIT
/*
 * The symbolizer's front: sampled (cookie, offset) pairs to function names,
 * each cookie sent to the resolver of its kind (kallsyms.c for the kernel
 * and its modules, elf_file.c for files, vdso.c, jit.c), with the symbol
 * cache they share.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"
#include "kallsyms_internal.h"
#include "log_internal.h"
#include "symbolizer_internal.h"
#include "symbolize_internal.h"

struct dcp_symbolizer *dcp_symbolizer_new(const struct dcp_kernel_layout *k)
{
	struct dcp_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return dcp_error_null(ENOMEM, "cannot create symbolizer: %s",
				      strerror(ENOMEM));
	elf_version(EV_CURRENT);
	s->k = k;
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dcp_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	return s;
}

void dcp_symbolizer_free(struct dcp_symbolizer *s)
{
	if (!s)
		return;
	dcp_ksyms_reset(s);
	dcp_symbolizer_drop_kept(s);
	free(s->debuginfo_path);
	free(s->vdso);
	dcp_cache_close(&s->cache);
	free(s);
}

const struct dcp_cache *dcp_symbolizer_cache(struct dcp_symbolizer *s)
{
	if (!s->cache_opened) {
		dcp_cache_open(&s->cache);
		s->cache_opened = true;
	}
	return s->cache.dir_fd >= 0 ? &s->cache : NULL;
}

bool dcp_cache_entry_name(char *buf, size_t size, const char *prefix,
			  const uint8_t *id, size_t n)
{
	size_t len;

	if (!n)
		return false;
	len = (size_t)snprintf(buf, size, "%s-", prefix);
	for (size_t i = 0; i < n && len + 3 <= size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%02x", id[i]);
	return true;
}

int dcp_symbolizer_set_debuginfo_path(struct dcp_symbolizer *s,
				      const char *path)
{
	char *copy = NULL;

	if (path) {
		copy = strdup(path);
		if (!copy)
			return dcp_error(ENOMEM,
					 "cannot set debuginfo path: %s",
					 strerror(ENOMEM));
	}
	free(s->debuginfo_path);
	s->debuginfo_path = copy;
	return 0;
}

int dcp_symbolizer_add_unresolved(struct dcp_symtab *out, uint32_t cookie,
				  const uint64_t *offsets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = dcp_symtab_add(out, cookie, offsets[i], NULL, 0, 0);

		if (err < 0)
			return err;
	}
	return 0;
}

int dcp_symbolizer_resolve(struct dcp_symbolizer *s,
			   const struct dcp_cookie_info *info, int fd,
			   const uint64_t *offsets, size_t n,
			   struct dcp_symtab *out)
{
	int err;

	if (n == 0)
		return 0;
	switch (info->kind) {
	case DCP_COOKIE_KIND_FILE:
		return dcp_symbolizer_resolve_file(s, info, fd, offsets, n,
						   out);
	case DCP_COOKIE_KIND_KERNEL:
	case DCP_COOKIE_KIND_MODULE:
		return dcp_symbolizer_resolve_kernel(s, info, offsets, n, out);
	case DCP_COOKIE_KIND_VDSO:
		return dcp_symbolizer_resolve_vdso(s, info, offsets, n, out);
	case DCP_COOKIE_KIND_JIT:
		return dcp_symbolizer_resolve_jit(info, fd, offsets, n, out);
	default:
		err = dcp_symbolizer_add_unresolved(out, info->cookie, offsets,
						    n);
		return err < 0 ? err : 0;
	}
}
