// SPDX-License-Identifier: MIT
/*
 * ELF symbol tables through libdwfl (.symtab, .dynsym, MiniDebugInfo),
 * cut down to the symbols that can name a sampled address, plus names for
 * the PLT stubs sampled ("strcmp@plt").
 *
 * libdwfl's own address lookup scans the whole symbol table for every
 * address, so each object's symbols are enumerated once through libdwfl
 * and searched in a sorted copy instead.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_segments_internal.h"
#include "elf_symtab_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "sort.h"

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((x->size == 0) != (y->size == 0))
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

bool dcp_ftable_address(const struct ftable *t, uint64_t off, uint64_t *q,
			const struct dcp_elf_segment **segp)
{
	const struct dcp_elf_segment *seg =
		dcp_elf_segment_at(t->segs, t->nr_segs, off);

	if (!seg)
		return false;
	*q = off - seg->offset + seg->vaddr + t->bias;
	if (segp)
		*segp = seg;
	return true;
}

/* The first of the n sorted addresses at or above addr. */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether [addr, addr + size) holds one of the n sorted addresses. */
static bool covers_any(const uint64_t *v, size_t n, uint64_t addr,
		       uint64_t size)
{
	size_t k = lower_bound(v, n, addr);

	return k < n && v[k] - addr < size;
}

/* Symbol i of mod when it can name code; NULL otherwise. */
static const char *function_symbol(Dwfl_Module *mod, int i, GElf_Sym *sym,
				   GElf_Addr *addr, GElf_Word *shndx, Elf **elf,
				   GElf_Addr *bias)
{
	const char *name =
		dwfl_module_getsym_info(mod, i, sym, addr, shndx, elf, bias);
	int type;

	if (!name || !name[0] || *shndx == SHN_UNDEF || *shndx == SHN_ABS ||
	    *shndx == SHN_COMMON)
		return NULL;
	type = GELF_ST_TYPE(sym->st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return NULL;
	return name;
}

/* A new entry at the end of t->syms, zeroed; NULL when out of memory. */
static struct fsym *ftable_push(struct ftable *t)
{
	struct fsym *syms =
		dcp_grow(t->syms, &t->cap, t->nr + 1, sizeof(*t->syms));

	if (!syms)
		return NULL;
	t->syms = syms;
	memset(&syms[t->nr], 0, sizeof(*syms));
	syms[t->nr].seq = (uint32_t)t->nr;
	return &syms[t->nr++];
}

/* A stub [addr, addr + size) named "<name>@plt". */
static int ftable_add_stub(struct ftable *t, uint64_t addr, uint64_t size,
			   const char *name)
{
	char **names = dcp_grow(t->plt_names, &t->cap_plt_names,
				t->nr_plt_names + 1, sizeof(*names));
	struct fsym *f;
	char *made;

	if (!names)
		return -ENOMEM;
	t->plt_names = names;
	if (asprintf(&made, "%s@plt", name) < 0)
		return -ENOMEM;
	names[t->nr_plt_names++] = made;
	f = ftable_push(t);
	if (!f)
		return -ENOMEM;
	f->addr = addr;
	f->size = size;
	f->name = made;
	return 0;
}

/* An IRELATIVE stub sampled, waiting for the name of its ifunc. */
struct irelative {
	uint64_t stub, size; /* module addresses */
	uint64_t resolver; /* the relocation's addend, a module address */
	const char *name;
	uint8_t rank; /* of the name found: ifuncs first, globals first */
};

/*
 * IRELATIVE relocations bind no symbol: their addend is the address of an
 * ifunc's resolver, which the ifunc's own symbol (STT_GNU_IFUNC) has for
 * its value. The stub is named after it, "memcpy@plt", as perf does; an
 * addend no symbol starts at leaves the stub unnamed.
 */
static int name_irelative(struct ftable *t, Dwfl_Module *mod,
			  struct irelative *ir, size_t n)
{
	int nsyms = dwfl_module_getsymtab(mod);

	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias;
		GElf_Word shndx;
		Elf *elf;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   &shndx, &elf, &bias);
		int type, bind;
		uint8_t rank;

		if (!name || !name[0] || shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		if (type != STT_GNU_IFUNC)
			rank += 3;
		for (size_t k = 0; k < n; k++)
			if (ir[k].resolver == addr &&
			    (!ir[k].name || rank < ir[k].rank)) {
				ir[k].name = name;
				ir[k].rank = rank;
			}
	}
	for (size_t k = 0; k < n; k++) {
		int err = ir[k].name ? ftable_add_stub(t, ir[k].stub,
						       ir[k].size, ir[k].name) :
				       0;

		if (err)
			return err;
	}
	return 0;
}

/*
 * PLT stubs have no symbol, yet a program that calls into libraries runs
 * them (a jump through the GOT per call). As perf does, a sampled stub is
 * named after the function its relocation binds, "strcmp@plt". The stubs
 * are the entries of .plt.sec when the binary has one (x86-64 with IBT),
 * else those of .plt after its header, in the order of .rela.plt. Only
 * stubs that hold a sampled address (qs, sorted) are named.
 */
static int ftable_add_plt(struct ftable *t, Dwfl_Module *mod, Elf *elf,
			  const uint64_t *qs, size_t nq)
{
	GElf_Shdr rela_sh, plt_sh, dynsym_sh;
	Elf_Scn *rela, *plt, *dynsym;
	Elf_Data *relocs, *syms;
	uint64_t header, entry = 16, first, end;
	struct irelative *ir = NULL;
	size_t nir = 0, cap_ir = 0;
	GElf_Ehdr ehdr;
	int err;

	if (!nq || !gelf_getehdr(elf, &ehdr))
		return 0;
	switch (ehdr.e_machine) {
	case EM_X86_64:
		header = 16;
		break;
	case EM_AARCH64:
		header = 32;
		break;
	default:
		return 0;
	}
	rela = dcp_elf_section_named(elf, ".rela.plt", &rela_sh);
	plt = dcp_elf_section_named(elf, ".plt.sec", &plt_sh);
	if (plt)
		header = 0;
	else
		plt = dcp_elf_section_named(elf, ".plt", &plt_sh);
	if (!rela || !plt || rela_sh.sh_type != SHT_RELA ||
	    plt_sh.sh_type != SHT_PROGBITS)
		return 0;
	dynsym = elf_getscn(elf, rela_sh.sh_link);
	relocs = elf_getdata(rela, NULL);
	if (!dynsym || !gelf_getshdr(dynsym, &dynsym_sh) || !relocs)
		return 0;
	syms = elf_getdata(dynsym, NULL);
	if (!syms)
		return 0;
	first = plt_sh.sh_addr + t->bias + header;
	end = plt_sh.sh_addr + t->bias + plt_sh.sh_size;
	for (int i = 0;; i++) {
		uint64_t addr = first + (uint64_t)i * entry;
		GElf_Rela rel;
		GElf_Sym sym;
		const char *name;
		uint32_t type;

		if (addr + entry > end || !gelf_getrela(relocs, i, &rel))
			break;
		if (!covers_any(qs, nq, addr, entry))
			continue;
		type = (uint32_t)GELF_R_TYPE(rel.r_info);
		if (type == (ehdr.e_machine == EM_X86_64 ?
				     R_X86_64_IRELATIVE :
				     R_AARCH64_IRELATIVE)) {
			struct irelative *g =
				dcp_grow(ir, &cap_ir, nir + 1, sizeof(*ir));

			if (!g) {
				free(ir);
				return -ENOMEM;
			}
			ir = g;
			memset(&ir[nir], 0, sizeof(*ir));
			ir[nir].stub = addr;
			ir[nir].size = entry;
			ir[nir++].resolver = (uint64_t)rel.r_addend + t->bias;
			continue;
		}
		if (!gelf_getsym(syms, (int)GELF_R_SYM(rel.r_info), &sym))
			continue;
		name = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		err = ftable_add_stub(t, addr, entry, name);
		if (err) {
			free(ir);
			return err;
		}
	}
	err = nir ? name_irelative(t, mod, ir, nir) : 0;
	free(ir);
	return err;
}

/* The GOT slot entry [p, p + n) at module address addr jumps through:
 * "jmp *disp32(%rip)" (ff 25), after endbr64 or a bnd prefix. */
static bool stub_got_slot(const uint8_t *p, size_t n, uint64_t addr,
			  uint64_t *slot)
{
	for (size_t k = 0; k + 6 <= n; k++)
		if (p[k] == 0xff && p[k + 1] == 0x25) {
			int32_t disp = (int32_t)((uint32_t)p[k + 2] |
						 (uint32_t)p[k + 3] << 8 |
						 (uint32_t)p[k + 4] << 16 |
						 (uint32_t)p[k + 5] << 24);

			*slot = addr + k + 6 + (uint64_t)(int64_t)disp;
			return true;
		}
	return false;
}

/*
 * .plt.got stubs (x86-64): the linker's stub for a function whose GOT
 * slot is bound eagerly (its address is taken too): one "jmp *slot(%rip)"
 * each, the slot set by a GLOB_DAT relocation of .rela.dyn, which names
 * the function: "__cxa_finalize@plt", as perf does.
 */
static int ftable_add_plt_got(struct ftable *t, Elf *elf, const uint64_t *qs,
			      size_t nq)
{
	GElf_Shdr got_sh, rela_sh, dynsym_sh;
	Elf_Scn *got, *rela, *dynsym;
	Elf_Data *code, *relocs, *syms;
	uint64_t entry, first;
	GElf_Ehdr ehdr;
	size_t nrel;

	if (!nq || !gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64)
		return 0;
	got = dcp_elf_section_named(elf, ".plt.got", &got_sh);
	rela = dcp_elf_section_named(elf, ".rela.dyn", &rela_sh);
	if (!got || !rela || got_sh.sh_type != SHT_PROGBITS ||
	    rela_sh.sh_type != SHT_RELA || !rela_sh.sh_entsize)
		return 0;
	entry = got_sh.sh_entsize >= 8 ? got_sh.sh_entsize : 8;
	code = elf_getdata(got, NULL);
	relocs = elf_getdata(rela, NULL);
	dynsym = elf_getscn(elf, rela_sh.sh_link);
	if (!code || !code->d_buf || !relocs || !dynsym ||
	    !gelf_getshdr(dynsym, &dynsym_sh))
		return 0;
	syms = elf_getdata(dynsym, NULL);
	if (!syms)
		return 0;
	nrel = rela_sh.sh_size / rela_sh.sh_entsize;
	first = got_sh.sh_addr + t->bias;
	for (uint64_t i = 0; (i + 1) * entry <= code->d_size; i++) {
		uint64_t addr = first + i * entry, slot;
		const char *name = NULL;

		if (!covers_any(qs, nq, addr, entry) ||
		    !stub_got_slot((const uint8_t *)code->d_buf + i * entry,
				   entry, addr, &slot))
			continue;
		for (size_t r = 0; r < nrel && !name; r++) {
			GElf_Rela rel;
			GElf_Sym sym;

			if (!gelf_getrela(relocs, (int)r, &rel) ||
			    rel.r_offset + t->bias != slot ||
			    !GELF_R_SYM(rel.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(rel.r_info),
					 &sym))
				continue;
			name = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name);
		}
		if (name && name[0]) {
			int err = ftable_add_stub(t, addr, entry, name);

			if (err)
				return err;
		}
	}
	return 0;
}

int dcp_ftable_build(struct ftable *t, Dwfl_Module *mod, const char *what,
		     const uint64_t *offsets, size_t n)
{
	size_t kept, nq = 0, nlabels = 0, lcap = 0;
	uint64_t *qs = NULL, *labels = NULL, *label_next = NULL;
	Elf *main_elf;
	int nsyms, err = 0;

	memset(t, 0, sizeof(*t));
	main_elf = dwfl_module_getelf(mod, &t->bias);
	if (!main_elf)
		return dcp_error(ENOEXEC, "cannot read ELF of '%s': %s", what,
				 dwfl_errmsg(-1));
	err = dcp_elf_load_segments(main_elf, &t->segs, &t->nr_segs);
	if (err == -ENOEXEC)
		return dcp_error(ENOEXEC,
				 "cannot read program headers of "
				 "'%s': %s",
				 what, elf_errmsg(-1));
	if (err < 0)
		return err;

	nsyms = dwfl_module_getsymtab(mod);
	if (nsyms <= 0)
		return 0; /* no symbols at all: everything stays unnamed */
	qs = malloc((n ? n : 1) * sizeof(*qs));
	if (!qs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (dcp_ftable_address(t, offsets[i], &qs[nq], NULL))
			nq++;
	qsort(qs, nq, sizeof(*qs), dcp_cmp_u64);

	/* The labels first: the symbols around them must be kept too. */
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias;
		GElf_Word shndx;
		uint64_t *grown;
		Elf *elf;

		if (!function_symbol(mod, i, &sym, &addr, &shndx, &elf,
				     &bias) ||
		    sym.st_size)
			continue;
		grown = dcp_grow(labels, &lcap, nlabels + 1, sizeof(*labels));
		if (!grown) {
			err = -ENOMEM;
			goto out;
		}
		labels = grown;
		labels[nlabels++] = addr;
	}
	if (nlabels)
		qsort(labels, nlabels, sizeof(*labels), dcp_cmp_u64);
	kept = 0;
	for (size_t i = 0; i < nlabels; i++)
		if (!kept || labels[i] != labels[kept - 1])
			labels[kept++] = labels[i];
	nlabels = kept;
	label_next = malloc((nlabels ? nlabels : 1) * sizeof(*label_next));
	if (!label_next) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nlabels; i++)
		label_next[i] = UINT64_MAX;

	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias;
		GElf_Word shndx;
		Elf *elf;
		const char *name;
		int bind;
		size_t k;
		struct fsym *f;

		name = function_symbol(mod, i, &sym, &addr, &shndx, &elf,
				       &bias);
		if (!name)
			continue;
		/* The closest symbol after a label ends it. */
		k = lower_bound(labels, nlabels, addr);
		if (k > 0 && addr < label_next[k - 1])
			label_next[k - 1] = addr;
		if (sym.st_size && !covers_any(qs, nq, addr, sym.st_size) &&
		    !covers_any(labels, nlabels, addr, sym.st_size))
			continue;
		f = ftable_push(t);
		if (!f) {
			err = -ENOMEM;
			goto out;
		}
		bind = GELF_ST_BIND(sym.st_info);
		f->addr = addr;
		f->size = sym.st_size;
		f->name = name;
		f->elf = elf;
		f->bias = bias;
		f->shndx = shndx;
		f->rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
	}
	for (size_t i = 0; i < t->nr; i++)
		if (!t->syms[i].size) {
			size_t k =
				lower_bound(labels, nlabels, t->syms[i].addr);

			t->syms[i].next = label_next[k];
		}
	err = ftable_add_plt(t, mod, main_elf, qs, nq);
	if (!err)
		err = ftable_add_plt_got(t, main_elf, qs, nq);
	if (err || !t->nr)
		goto out;
	qsort(t->syms, t->nr, sizeof(*t->syms), fsym_cmp);
	/* One entry per address: the best alias sorted first. */
	kept = 1;
	for (size_t i = 1; i < t->nr; i++)
		if (t->syms[i].addr != t->syms[kept - 1].addr)
			t->syms[kept++] = t->syms[i];
	t->nr = kept;
	for (size_t i = 0; i < t->nr; i++) {
		uint64_t e = t->syms[i].addr + t->syms[i].size;
		uint64_t prev = i ? t->syms[i - 1].max_end : 0;

		t->syms[i].max_end = e > prev ? e : prev;
	}
out:
	free(qs);
	free(labels);
	free(label_next);
	return err;
}

void dcp_ftable_free(struct ftable *t)
{
	for (size_t i = 0; i < t->nr_plt_names; i++)
		free(t->plt_names[i]);
	free(t->plt_names);
	free(t->syms);
	free(t->segs);
}

/* The end of the section a symbol lives in (module address), or 0. */
static uint64_t fsym_section_end(const struct fsym *f, uint64_t *sec_start)
{
	GElf_Shdr mem, *sh;
	Elf_Scn *scn;

	if (!f->elf)
		return 0;
	scn = elf_getscn(f->elf, f->shndx);
	if (!scn)
		return 0;
	sh = gelf_getshdr(scn, &mem);
	if (!sh || !(sh->sh_flags & SHF_ALLOC))
		return 0;
	*sec_start = sh->sh_addr + f->bias;
	return sh->sh_addr + f->bias + sh->sh_size;
}

ssize_t dcp_ftable_find(const struct ftable *t, uint64_t q, uint64_t *size)
{
	size_t lo = 0, hi = t->nr;
	uint64_t sec_start = 0, sec_end;
	const struct fsym *f;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= q)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	for (size_t j = lo; j > 0 && t->syms[j - 1].max_end > q; j--) {
		f = &t->syms[j - 1];
		if (f->size && q < f->addr + f->size) {
			*size = f->size;
			return (ssize_t)(j - 1);
		}
	}
	f = &t->syms[lo - 1];
	if (f->size || (lo > 1 && t->syms[lo - 2].max_end > f->addr))
		return -1;
	/* A symbol left out of the table may lie between it and q. */
	if (q >= f->next)
		return -1;
	sec_end = fsym_section_end(f, &sec_start);
	if (q < sec_start || q >= sec_end)
		return -1;
	*size = (f->next < sec_end ? f->next : sec_end) - f->addr;
	return (ssize_t)(lo - 1);
}
