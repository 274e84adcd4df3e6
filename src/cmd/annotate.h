/* SPDX-License-Identifier: MIT */
/* annotate's names: short forms of demangled names, the closest ones. */
#ifndef DCPROF_ANNOTATE_H
#define DCPROF_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>

#include <capstone/capstone.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "profile_view.h"

/*
 * Whether name is a short form of the demangled name: the name without
 * its parameters, or a suffix of it that starts a scope ("heavy" and
 * "Calc<double>::heavy" of "ns::Calc<double>::heavy(int)").
 */
bool annotate_short_match(const char *demangled, const char *name);

/*
 * The sampled functions whose names come closest to name (containing it,
 * else a few typos from it), at most five, quoted and comma-separated in
 * buf; returns how many.
 */
size_t annotate_closest(const struct profile_view *v, const char *name,
			char *buf, size_t size);

/*
 * The name of a direct call's or jump's target, "labs@plt" for a PLT
 * stub, else its symbol in mod ("work+0x10" inside a function), in buf;
 * NULL for other instructions or a target without a name.
 */
const char *annotate_target_name(Elf *e, csh cs, Dwfl_Module *mod,
				 const cs_insn *in, char *buf, size_t size);

/* The kernel's or a module's code, which annotate does not read. */
static inline bool kernel_code(const struct dcp_cookie_info *ci)
{
	return ci->kind == DCP_COOKIE_KIND_KERNEL ||
	       ci->kind == DCP_COOKIE_KIND_MODULE;
}

#endif
