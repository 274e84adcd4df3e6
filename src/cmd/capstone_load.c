// SPDX-License-Identifier: MIT
/* capstone loaded at run time (capstone_load.h). */
#include <dlfcn.h>
#include <stdbool.h>

#include "capstone_load.h"
#include "cmd.h"

/* the soname the build's libcapstone.so names (Makefile) */
#ifndef DCPROF_CAPSTONE_SONAME
#define DCPROF_CAPSTONE_SONAME "libcapstone.so.4"
#endif

struct annotate_cs annotate_cs;

int annotate_cs_load(void)
{
	static bool loaded;
	const struct {
		const char *name;
		void **slot;
	} syms[] = {
		{ "cs_open", (void **)&annotate_cs.open },
		{ "cs_disasm", (void **)&annotate_cs.disasm },
		{ "cs_free", (void **)&annotate_cs.free },
		{ "cs_close", (void **)&annotate_cs.close },
	};
	void *lib;

	if (loaded)
		return 0;
	lib = dlopen(DCPROF_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return cmd_error("annotate needs capstone: %s", dlerror());
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		/* POSIX guarantees that a function's address converts so */
		*syms[i].slot = dlsym(lib, syms[i].name);
		if (!*syms[i].slot)
			return cmd_error(
				"annotate needs capstone: %s has no %s",
				DCPROF_CAPSTONE_SONAME, syms[i].name);
	}
	loaded = true;
	return 0;
}
