/* SPDX-License-Identifier: MIT */
/*
 * ELF loadable segments, sections by name and the vdso image, read once
 * for the symbolizer and the unwinder alike (elf_segments.c).
 */
#ifndef DCPROF_ELF_SEGMENTS_INTERNAL_H
#define DCPROF_ELF_SEGMENTS_INTERNAL_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* A PT_LOAD segment that holds bytes of its file. */
struct dcp_elf_segment {
	uint64_t offset, vaddr, filesz;
};

/*
 * The PT_LOAD segments of elf with file bytes (p_filesz > 0), in program
 * header order: *segs is malloc'd (room for at least one, also when none
 * is found), *nr their number. 0, -ENOEXEC when the program headers
 * cannot be read (elf_errmsg(-1) says why), or -ENOMEM.
 */
int dcp_elf_load_segments(Elf *elf, struct dcp_elf_segment **segs, size_t *nr);

/* The segment whose file bytes hold file offset off; NULL if none does. */
const struct dcp_elf_segment *
dcp_elf_segment_at(const struct dcp_elf_segment *segs, size_t nr, uint64_t off);

/*
 * This process's vdso, which stands for every process of this kernel and
 * ABI: *image its address, *size the bytes its ELF file spans (through
 * the section headers and every loaded segment). 0, -ENOENT when the
 * process has none, or -ENOEXEC when it is not a 64-bit ELF image.
 */
int dcp_vdso_image(const unsigned char **image, size_t *size);

/* The section of elf called name, its header in *sh; NULL if none. */
Elf_Scn *dcp_elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh);

#endif
