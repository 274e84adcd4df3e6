/* SPDX-License-Identifier: MIT */
/*
 * /proc/kallsyms: the one parser of its lines, and the symbolizer's table
 * of kernel text symbols (kallsyms.c) with its cached copy
 * (kallsyms_cache.c).
 */
#ifndef DCPROF_KALLSYMS_INTERNAL_H
#define DCPROF_KALLSYMS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dcp_symbolizer;

/* One line of /proc/kallsyms: "ADDRESS TYPE NAME[\t[MODULE]]". */
struct dcp_kallsyms_line {
	uint64_t addr;
	char type; /* 'T', 't', 'W', 'w', 'D', ... */
	const char *name; /* name_len bytes, not NUL-terminated */
	size_t name_len;
	const char *module; /* module_len bytes; NULL: the kernel image */
	size_t module_len;
};

/* Parse one line (the pointers of l point into it); false when the line
 * is not "ADDRESS TYPE NAME". */
bool dcp_kallsyms_parse_line(const char *line, struct dcp_kallsyms_line *l);

/*
 * One kernel text symbol from /proc/kallsyms, in 16 bytes: a kernel has
 * a hundred thousand and more. Names are stored in line order, so that
 * their offsets keep the sort stable.
 */
struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into knames */
	uint16_t owner; /* 0: the kernel image; i + 1: k->modules[i] */
	uint8_t local; /* 't'/'w' sort after 'T'/'W' at the same address */
};

/* Sort what needs it and find where each owner's symbols start. */
int dcp_ksyms_index(struct dcp_symbolizer *s);
/* Forget every kernel symbol, to be read again. */
void dcp_ksyms_reset(struct dcp_symbolizer *s);

/*
 * The kernel's own text symbols from the cache entry name (0, or a
 * negative errno when it is missing or damaged), and their storing there
 * after a read of /proc/kallsyms.
 */
int dcp_ksyms_cache_load(struct dcp_symbolizer *s, const char *name);
void dcp_ksyms_cache_store(struct dcp_symbolizer *s, const char *name);

#endif
