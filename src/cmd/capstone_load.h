/* SPDX-License-Identifier: MIT */
/*
 * capstone, loaded when annotate disassembles: the other commands, a
 * long recording above all, start without it and the relocated tables it
 * brings into every process that links it. annotate.c calls capstone
 * through annotate_cs only.
 */
#ifndef DCPROF_CAPSTONE_LOAD_H
#define DCPROF_CAPSTONE_LOAD_H

#include <capstone/capstone.h>

struct annotate_cs {
	typeof(cs_open) *open;
	typeof(cs_disasm) *disasm;
	typeof(cs_free) *free;
	typeof(cs_close) *close;
};

/* Filled by annotate_cs_load(). */
extern struct annotate_cs annotate_cs;

/*
 * Load capstone (once; it stays loaded) and resolve annotate_cs. 0, or
 * the exit status of the error said (cmd_error()), which names what is
 * missing.
 */
int annotate_cs_load(void);

#endif
