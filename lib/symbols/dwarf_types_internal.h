/* SPDX-License-Identifier: MIT */
/*
 * Questions about a file's types answered from its DWARF: where a member
 * lies in a structure, how large a type is, what an enumerator is worth.
 * For a caller that reads another process's memory by the layout the
 * program was built with (the Python walk), without elfutils' headers.
 */
#ifndef DCPROF_DWARF_TYPES_INTERNAL_H
#define DCPROF_DWARF_TYPES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dcp_dwarf_query_kind {
	/* the byte offset of member path name ("a.b.c", each part a member
	 * of the previous one's structure or union) in type */
	DCP_DWARF_MEMBER_OFFSET,
	/* sizeof(type) */
	DCP_DWARF_TYPE_SIZE,
	/* the value of the enumerator called name (type unused) */
	DCP_DWARF_ENUMERATOR,
};

/*
 * One question. A type is named as C names it: "struct NAME", "union
 * NAME", "enum NAME", or a typedef's or base type's NAME (a typedef is
 * followed to the type it names, which may be an anonymous structure).
 * Declarations are skipped: the first definition found answers.
 */
struct dcp_dwarf_query {
	enum dcp_dwarf_query_kind kind;
	const char *type;
	const char *name;
};

struct dcp_dwarf_answer {
	int64_t value;
	bool found;
};

struct dcp_symbolizer;

/*
 * The n questions q about the ELF file open at fd (not taken; -1: opened
 * from path), whose path names it for the search of a separate debug file,
 * answered into a[n] from its DWARF: the file's own, else its separate
 * debug file as the symbolizer finds one for resolving (by build id,
 * .gnu_debuglink, debuginfod when DEBUGINFOD_URLS names a server;
 * symbolizer_internal.h), through s's search path and symbol cache (NULL:
 * the default path, no cache). The units are read until every question
 * has its answer or cannot have one (a member the structure lacks, a
 * bit-field). Returns the number answered, -ENOENT when the file has no
 * DWARF to be found, or another negative errno (message set). *dwarf_path,
 * when dwarf_path is not NULL, is the malloc'd path of the file the DWARF
 * was read from.
 */
int dcp_dwarf_types_answer(struct dcp_symbolizer *s, const char *path, int fd,
			   const struct dcp_dwarf_query *q, size_t n,
			   struct dcp_dwarf_answer *a, char **dwarf_path);

#endif
