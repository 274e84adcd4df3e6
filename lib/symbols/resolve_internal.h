/* SPDX-License-Identifier: MIT */
/*
 * Naming a recording's sampled addresses: the one routine behind the
 * recorder's closing symbolization and report --resymbolize.
 */
#ifndef DCPROF_RESOLVE_INTERNAL_H
#define DCPROF_RESOLVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate_internal.h"
#include "cookie_internal.h"
#include "symbolize_internal.h"
#include "symtab_internal.h"

/*
 * Called once per object resolved, in cookie order, with its distinct
 * sampled offsets (sorted) and what dcp_symbolizer_resolve() returned for
 * them: the number named, or a negative errno (message set). A non-zero
 * return stops the resolution and is returned by dcp_resolve_sampled().
 */
typedef int (*dcp_resolve_done_fn)(void *ctx, const struct dcp_cookie_info *ci,
				   const uint64_t *offsets, size_t n,
				   int resolved);

struct dcp_resolve_opts {
	/* The kernel the addresses were sampled on; NULL: kernel, module
	 * and vdso addresses are not named. */
	const struct dcp_kernel_layout *kernel;
	/* Where libdwfl looks for separate debug files; NULL: its default. */
	const char *debuginfo_path;
	/*
	 * true (the recorder): every cookie, files and JIT maps read through
	 * the handles the cookie table pinned. false (naming again): files
	 * only, read from their recorded paths, plus the kernel, its modules
	 * and the vdso when kernel_objects.
	 */
	bool pinned;
	bool kernel_objects;
	dcp_resolve_done_fn done; /* may be NULL */
	void *ctx;
};

/*
 * Resolve every distinct (cookie, offset) of the aggregate's stacks into
 * out, one cookie at a time. Returns 0, a negative errno when memory or
 * the symbolizer cannot be had, or what o->done returned. An object that
 * cannot be read is not an error: o->done is told.
 */
int dcp_resolve_sampled(const struct dcp_cookie_table *cookies,
			const struct dcp_aggregate *agg, struct dcp_symtab *out,
			const struct dcp_resolve_opts *o);

#endif
