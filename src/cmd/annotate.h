/* SPDX-License-Identifier: MIT */
/* annotate's names: short forms of demangled names, the closest ones,
 * call targets. */
#ifndef DCPROF_ANNOTATE_H
#define DCPROF_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>

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

/* The target of a direct call or jump ("call 0x1030"); false for other
 * instructions. */
bool annotate_direct_target(const cs_insn *in, uint64_t *target);

#endif
