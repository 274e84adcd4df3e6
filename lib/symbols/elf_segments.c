// SPDX-License-Identifier: MIT
/*
 * ELF loadable segments, sections by name and the vdso image: how file
 * offsets map to addresses, shared by the symbolizer and the unwinder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "elf_segments_internal.h"

int dcp_elf_load_segments(Elf *elf, struct dcp_elf_segment **segs, size_t *nr)
{
	size_t nphdr = 0;

	*segs = NULL;
	*nr = 0;
	if (elf_getphdrnum(elf, &nphdr) < 0)
		return -ENOEXEC;
	*segs = calloc(nphdr ? nphdr : 1, sizeof(**segs));
	if (!*segs)
		return -ENOMEM;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && ph->p_type == PT_LOAD && ph->p_filesz) {
			(*segs)[*nr].offset = ph->p_offset;
			(*segs)[*nr].vaddr = ph->p_vaddr;
			(*segs)[*nr].filesz = ph->p_filesz;
			(*nr)++;
		}
	}
	return 0;
}

const struct dcp_elf_segment *
dcp_elf_segment_at(const struct dcp_elf_segment *segs, size_t nr, uint64_t off)
{
	for (size_t j = 0; j < nr; j++)
		if (off >= segs[j].offset &&
		    off - segs[j].offset < segs[j].filesz)
			return &segs[j];
	return NULL;
}

int dcp_vdso_image(const unsigned char **image, size_t *size)
{
	const unsigned char *img;
	const Elf64_Ehdr *eh;
	size_t n;

	img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (!img)
		return -ENOENT;
	eh = (const Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	n = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph =
			(const Elf64_Phdr *)(img + eh->e_phoff +
					     i * eh->e_phentsize);
		size_t e = ph->p_offset + ph->p_filesz;

		if (ph->p_type == PT_LOAD && e > n)
			n = e;
	}
	*image = img;
	*size = n;
	return 0;
}

Elf_Scn *dcp_elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}
