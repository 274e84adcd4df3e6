// SPDX-License-Identifier: MIT
/*
 * Demangling through libiberty, the demangler of binutils and gcc: C++
 * (Itanium ABI) and Rust, both the legacy scheme (which looks like C++
 * with a hash) and v0.
 */
#include <libiberty/demangle.h>
#include <stdlib.h>

#include "symbolize_internal.h"

char *dcp_demangle(const char *name)
{
	/* Only these prefixes are mangled: plain C names never go to the
	 * demangler, which would spend time on every one. */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* DMGL_AUTO tries Rust before C++: legacy Rust names are valid
	 * Itanium names and would come out with their hash otherwise. */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
