// SPDX-License-Identifier: MIT
/*
 * JIT code: sampled addresses named by the process's perf map
 * (/tmp/perf-PID.map), pinned when it was sampled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap_internal.h"
#include "symbolizer_internal.h"

/*
 * A Python process's code objects, in the perf map the recorder wrote for
 * it (lib/record/bpf/python.c): a line per code object, "qualname (file)"
 * then a tab and the file's path; an offset is the code's start plus its
 * source line, which goes with the path into the symbol's details.
 */
static int resolve_python(const struct dcp_perfmap *m,
			  const struct dcp_cookie_info *info,
			  const uint64_t *offsets, size_t n,
			  struct dcp_symtab *out)
{
	int err = 0, resolved = 0;

	for (size_t i = 0; i < n && err >= 0; i++) {
		const struct dcp_perfmap_entry *e =
			dcp_perfmap_lookup(m, offsets[i]);
		const char *tab = e ? strchr(e->name, '\t') : NULL;
		char *name;

		if (!tab) {
			err = dcp_symtab_add(out, info->cookie, offsets[i],
					     NULL, 0, 0);
			continue;
		}
		name = strndup(e->name, (size_t)(tab - e->name));
		if (!name)
			return -ENOMEM;
		err = dcp_symtab_add(out, info->cookie, offsets[i], name,
				     e->start, e->size);
		free(name);
		if (err == 0)
			err = dcp_symtab_set_detail(
				out, info->cookie, offsets[i], NULL, tab + 1,
				(uint32_t)(offsets[i] - e->start), NULL, 0);
		resolved++;
	}
	return err < 0 ? err : resolved;
}

/*
 * The map was opened (ownership checked) and pinned when the process was
 * sampled in JIT code; read now, it names code that may since have been
 * freed, but a JIT only appends, and the latest line for an address wins.
 */
int dcp_symbolizer_resolve_jit(const struct dcp_cookie_info *info, int fd,
			       const uint64_t *offsets, size_t n,
			       struct dcp_symtab *out)
{
	struct dcp_perfmap *m;
	int err, resolved = 0;

	/* No map was kept (the process wrote none, or another user's was
	 * refused): nothing names this code, which is no error. */
	if (fd < 0) {
		err = dcp_symbolizer_add_unresolved(out, info->cookie, offsets,
						    n);
		return err < 0 ? err : 0;
	}
	m = dcp_perfmap_read_fd(fd);
	if (!m) {
		err = -errno;
		goto unresolved;
	}
	if (dcp_cookie_is_python(info)) {
		err = resolve_python(m, info, offsets, n, out);
		dcp_perfmap_free(m);
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dcp_perfmap_entry *e =
			dcp_perfmap_lookup(m, offsets[i]);

		err = dcp_symtab_add(out, info->cookie, offsets[i],
				     e ? e->name : NULL, e ? e->start : 0,
				     e ? e->size : 0);
		if (err == 0 && e) {
			char *d = dcp_demangle(e->name);

			if (d)
				err = dcp_symtab_set_detail(out, info->cookie,
							    offsets[i], d, NULL,
							    0, NULL, 0);
			free(d);
			resolved++;
		}
		if (err < 0) {
			dcp_perfmap_free(m);
			return err;
		}
	}
	dcp_perfmap_free(m);
	return resolved;

unresolved : {
	int err2 = dcp_symbolizer_add_unresolved(out, info->cookie, offsets, n);

	return err2 < 0 ? err2 : err;
}
}
