// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the FDE reader (lib/symbols/elf_fde.c) on arbitrary
 * call frame information. The input is an 8-byte section address (little
 * endian), one byte of flags (bit 0: .debug_frame instead of .eh_frame,
 * bit 1: a 32-bit ELF), then the section's bytes; they are wrapped into a
 * minimal ELF in memory, its FDE table read, and every range found must
 * answer the lookups of its own start and last byte.
 */
#include <elf.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_fde_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char strtab[] = "\0.eh_frame\0.debug_frame\0.shstrtab";
enum { NAME_EH = 1, NAME_DEBUG = 11, NAME_SHSTRTAB = 24 };

/* ELF header, section data, string table, three section headers. */
static char *make_elf64(uint64_t addr, bool debug, const uint8_t *sec, size_t n,
			size_t *len)
{
	size_t data_off = sizeof(Elf64_Ehdr), str_off = data_off + n;
	size_t sh_off = (str_off + sizeof(strtab) + 7) & ~(size_t)7;
	char *image = calloc(1, sh_off + 3 * sizeof(Elf64_Shdr));
	Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
	Elf64_Shdr *sh;

	if (!image)
		return NULL;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(image + data_off, sec, n);
	memcpy(image + str_off, strtab, sizeof(strtab));
	sh = (Elf64_Shdr *)(image + sh_off);
	sh[1].sh_name = debug ? NAME_DEBUG : NAME_EH;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = debug ? 0 : SHF_ALLOC;
	sh[1].sh_addr = debug ? 0 : addr;
	sh[1].sh_offset = data_off;
	sh[1].sh_size = n;
	sh[1].sh_addralign = 1;
	sh[2].sh_name = NAME_SHSTRTAB;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = str_off;
	sh[2].sh_size = sizeof(strtab);
	sh[2].sh_addralign = 1;
	*len = sh_off + 3 * sizeof(Elf64_Shdr);
	return image;
}

static char *make_elf32(uint64_t addr, bool debug, const uint8_t *sec, size_t n,
			size_t *len)
{
	size_t data_off = sizeof(Elf32_Ehdr), str_off = data_off + n;
	size_t sh_off = (str_off + sizeof(strtab) + 7) & ~(size_t)7;
	char *image = calloc(1, sh_off + 3 * sizeof(Elf32_Shdr));
	Elf32_Ehdr *eh = (Elf32_Ehdr *)image;
	Elf32_Shdr *sh;

	if (!image)
		return NULL;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS32;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_386;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = (Elf32_Off)sh_off;
	eh->e_shentsize = sizeof(Elf32_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(image + data_off, sec, n);
	memcpy(image + str_off, strtab, sizeof(strtab));
	sh = (Elf32_Shdr *)(image + sh_off);
	sh[1].sh_name = debug ? NAME_DEBUG : NAME_EH;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = debug ? 0 : SHF_ALLOC;
	sh[1].sh_addr = debug ? 0 : (Elf32_Addr)addr;
	sh[1].sh_offset = (Elf32_Off)data_off;
	sh[1].sh_size = (Elf32_Word)n;
	sh[1].sh_addralign = 1;
	sh[2].sh_name = NAME_SHSTRTAB;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = (Elf32_Off)str_off;
	sh[2].sh_size = sizeof(strtab);
	sh[2].sh_addralign = 1;
	*len = sh_off + 3 * sizeof(Elf32_Shdr);
	return image;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fde_table t = { 0 };
	uint64_t addr = 0, start, end;
	size_t len;
	char *image;
	Elf *elf;

	if (size < 9 || size > (1 << 20))
		return 0;
	elf_version(EV_CURRENT);
	memcpy(&addr, data, 8);
	image = data[8] & 2 ?
			make_elf32(addr, data[8] & 1, data + 9, size - 9,
				   &len) :
			make_elf64(addr, data[8] & 1, data + 9, size - 9, &len);
	if (!image)
		return 0;
	elf = elf_memory(image, len);
	if (elf) {
		if (dcp_fde_table_load(&t, elf, 0) < 0)
			__builtin_trap();
		if (dcp_fde_table_load(&t, elf, 0) < 0) /* read once */
			__builtin_trap();
		for (size_t i = 0; i < t.n; i++) {
			const struct fde_range *r = &t.v[i];

			if (r->end <= r->start ||
			    (i && r->start < t.v[i - 1].start))
				__builtin_trap();
			if (!dcp_fde_find(&t, r->end - 1, &start, &end) ||
			    start > r->end - 1 || end <= r->end - 1)
				__builtin_trap();
		}
		if (dcp_fde_find(&t, addr, &start, &end) &&
		    (start > addr || end <= addr))
			__builtin_trap();
		dcp_fde_table_free(&t);
		elf_end(elf);
	}
	free(image);
	return 0;
}
