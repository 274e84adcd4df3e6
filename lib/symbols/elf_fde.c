// SPDX-License-Identifier: MIT
/*
 * Functions without symbols: a stripped file still describes every
 * function in its call frame information, one FDE (start, length) each.
 * libdw's dwarf_next_cfi() walks the entries of .eh_frame and of
 * .debug_frame and decodes their CIEs; here only each FDE's two
 * addresses are read, in the encoding its CIE gives, into a table sorted
 * once per file. (dwarf_cfi_addrframe() cannot answer this: the range it
 * gives is that of one row of the FDE's unwinding table, not the FDE's.)
 */
#include <elfutils/libdw.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_fde_internal.h"
#include "elf_segments_internal.h"
#include "grow.h"

/* DWARF pointer encodings (DW_EH_PE_*) this reader knows. */
enum {
	PE_ABSPTR = 0x00,
	PE_ULEB128 = 0x01,
	PE_UDATA2 = 0x02,
	PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04,
	PE_SLEB128 = 0x09,
	PE_SDATA2 = 0x0a,
	PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10,
	PE_OMIT = 0xff,
};

struct reader {
	const uint8_t *base; /* the section's data */
	uint64_t base_addr; /* its vaddr */
	bool msb;
	unsigned int addr_size;
};

static bool read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool read_sleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;
	uint8_t b = 0;

	*v = 0;
	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				*v |= ~(uint64_t)0 << shift;
			return true;
		}
	}
	return false;
}

/* An unsigned value of n bytes, sign-extended when sign. */
static bool read_fixed(const struct reader *r, const uint8_t **p,
		       const uint8_t *end, unsigned int n, bool sign,
		       uint64_t *v)
{
	if ((size_t)(end - *p) < n)
		return false;
	*v = 0;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int k = r->msb ? i : n - 1 - i;

		*v = *v << 8 | (*p)[k];
	}
	if (sign && n < 8 && (*v >> (8 * n - 1) & 1))
		*v |= ~(uint64_t)0 << (8 * n);
	*p += n;
	return true;
}

/*
 * A pointer in encoding enc at *p; with apply, pc-relative values are
 * made absolute (an FDE's range is a plain value in the same format).
 * Encodings other than absolute and pc-relative are not read.
 */
static bool read_encoded(const struct reader *r, uint8_t enc, bool apply,
			 const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t at = r->base_addr + (uint64_t)(*p - r->base);
	bool ok;

	if (enc == PE_OMIT || (enc & 0x80))
		return false;
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		ok = read_fixed(r, p, end, r->addr_size, false, v);
		break;
	case PE_ULEB128:
		ok = read_uleb(p, end, v);
		break;
	case PE_SLEB128:
		ok = read_sleb(p, end, v);
		break;
	case PE_UDATA2:
	case PE_SDATA2:
		ok = read_fixed(r, p, end, 2, enc & 0x08, v);
		break;
	case PE_UDATA4:
	case PE_SDATA4:
		ok = read_fixed(r, p, end, 4, enc & 0x08, v);
		break;
	case PE_UDATA8:
	case PE_SDATA8:
		ok = read_fixed(r, p, end, 8, false, v);
		break;
	default:
		return false;
	}
	if (!ok || !apply)
		return ok;
	switch (enc & 0x70) {
	case 0:
		return true;
	case PE_PCREL:
		*v += at;
		return true;
	default:
		return false;
	}
}

/*
 * The encoding of the addresses in the FDEs of a CIE ('R' of a "z"
 * augmentation, else absolute); false when it cannot be known.
 */
static bool fde_encoding(const struct reader *r, const Dwarf_CIE *cie,
			 uint8_t *enc)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data, *end;

	*enc = PE_ABSPTR;
	if (!a || !a[0])
		return true;
	if (a[0] != 'z' || !p)
		return false;
	end = p + cie->augmentation_data_size;
	for (a++; *a; a++) {
		uint64_t skip;

		switch (*a) {
		case 'R':
			if (p >= end)
				return false;
			*enc = *p;
			return true;
		case 'L':
			if (p >= end)
				return false;
			p++;
			break;
		case 'P':
			if (p >= end)
				return false;
			p++;
			if (!read_encoded(r, p[-1] & 0x7f, false, &p, end,
					  &skip))
				return false;
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return false;
		}
	}
	return true; /* no 'R': absolute */
}

static int push(struct fde_table *t, uint64_t start, uint64_t end)
{
	struct fde_range *v = dcp_grow(t->v, &t->cap, t->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	t->v = v;
	t->v[t->n].start = start;
	t->v[t->n++].end = end;
	return 0;
}

/* The FDEs of one section into t; 0 or -ENOMEM. */
static int load_section(struct fde_table *t, Elf *elf, GElf_Addr bias,
			const char *name, bool eh)
{
	const unsigned char *ident =
		(const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	uint8_t enc = 0;
	bool enc_ok = false;
	struct reader r;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn = dcp_elf_section_named(elf, name, &sh);

	if (!scn || !ident || sh.sh_type != SHT_PROGBITS ||
	    (sh.sh_flags & SHF_COMPRESSED))
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return 0;
	r.base = data->d_buf;
	r.base_addr = sh.sh_addr;
	r.msb = ident[EI_DATA] == ELFDATA2MSB;
	r.addr_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	/* Every entry is at least 4 bytes: this many steps end the walk. */
	for (size_t steps = data->d_size / 4 + 1; steps--; off = next) {
		Dwarf_CFI_Entry e;
		const uint8_t *p, *end = r.base + data->d_size;
		uint64_t start, len;
		int ret;

		next = off; /* not always set on errors */
		ret = dwarf_next_cfi(ident, data, eh, off, &next, &e);

		if (ret > 0)
			break;
		if (ret < 0 || dwarf_cfi_cie_p(&e)) {
			if (next <= off || next >= data->d_size)
				break;
			continue;
		}
		if (e.fde.CIE_pointer != cie_off) {
			Dwarf_CFI_Entry c;
			Dwarf_Off after;

			cie_off = e.fde.CIE_pointer;
			enc_ok = dwarf_next_cfi(ident, data, eh, cie_off,
						&after, &c) == 0 &&
				 dwarf_cfi_cie_p(&c) &&
				 fde_encoding(&r, &c.cie, &enc);
		}
		p = e.fde.start;
		if (e.fde.end && e.fde.end < end)
			end = e.fde.end;
		if (enc_ok && read_encoded(&r, enc, true, &p, end, &start) &&
		    read_encoded(&r, enc & 0x0f, false, &p, end, &len) && len &&
		    start + len > start && start + bias + len > start + bias &&
		    push(t, start + bias, start + bias + len) < 0)
			return -ENOMEM;
		if (next <= off || next >= data->d_size)
			break;
	}
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

int dcp_fde_table_load(struct fde_table *t, Elf *elf, GElf_Addr bias)
{
	int err;

	if (t->loaded)
		return 0;
	t->loaded = true;
	/* Both: code built without unwind tables is only in .debug_frame,
	 * while the startup files linked with it are in .eh_frame. */
	err = load_section(t, elf, bias, ".eh_frame", true);
	if (!err)
		err = load_section(t, elf, bias, ".debug_frame", false);
	if (err < 0)
		return err;
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), range_cmp);
	for (size_t i = 0; i < t->n; i++)
		t->v[i].max_end = i && t->v[i - 1].max_end > t->v[i].end ?
					  t->v[i - 1].max_end :
					  t->v[i].end;
	return 0;
}

void dcp_fde_table_free(struct fde_table *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

bool dcp_fde_find(const struct fde_table *t, uint64_t q, uint64_t *start,
		  uint64_t *end)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= q)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The closest start at or below q whose FDE reaches it (FDEs do not
	 * overlap in sane files: one step). */
	for (size_t j = lo; j > 0 && t->v[j - 1].max_end > q; j--)
		if (q < t->v[j - 1].end) {
			*start = t->v[j - 1].start;
			*end = t->v[j - 1].end;
			return true;
		}
	return false;
}

char *dcp_fde_name(const char *base, uint64_t start)
{
	char *s;

	if (asprintf(&s, "%s+0x%" PRIx64, base, start) < 0)
		return NULL;
	return s;
}
