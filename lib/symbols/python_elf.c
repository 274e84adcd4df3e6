// SPDX-License-Identifier: MIT
/*
 * CPython's exported symbols (python_elf_internal.h), read from the
 * dynamic symbol table: Debian's interpreter is stripped of the rest.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <string.h>

#include "log_internal.h"
#include "python_elf_internal.h"

/* The lowest loadable segment's link address less its offset, into *base. */
static int load_base(Elf *elf, uint64_t *base)
{
	size_t n;
	bool found = false;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!found || ph.p_vaddr - ph.p_offset < *base)
			*base = (ph.p_vaddr - ph.p_offset) & ~(uint64_t)4095;
		found = true;
	}
	return found ? 0 : -EINVAL;
}

static void take_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 struct dcp_python_elf *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		if (!strcmp(name, "_PyRuntime")) {
			out->runtime = sym.st_value;
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
			out->eval_start = sym.st_value;
			out->eval_size = sym.st_size;
		} else if (!strcmp(name, "Py_Version")) {
			out->version = sym.st_value;
		}
	}
}

int dcp_python_elf_read(int fd, struct dcp_python_elf *out)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int ret = -ENOENT;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return dcp_error(EINVAL, "not an ELF file: %s", elf_errmsg(-1));
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return dcp_error(EINVAL, "not an ELF file");
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			take_symbols(elf, scn, &sh, out);
	}
	if (out->runtime && out->eval_start && out->eval_size)
		ret = load_base(elf, &out->base);
	if (ret == -EINVAL)
		dcp_error(EINVAL, "an ELF file without loadable segments");
	elf_end(elf);
	return ret;
}
