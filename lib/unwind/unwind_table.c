// SPDX-License-Identifier: MIT
/*
 * .eh_frame compiled into compact unwind rows (x86-64). libdw reads the
 * CFI: at an address, dwarf_cfi_addrframe() replays the covering FDE's
 * program and hands out the row in force with its exact [start, end), and
 * that row's rules are matched against the few shapes the BPF walker
 * evaluates (CFA from rsp or rbp plus an offset, the .plt expression, the
 * signal trampoline). The sweep steps from row to row over every
 * executable segment; the FDEs' ranges, read with dwarf_next_cfi(), let
 * it cut rows where an FDE starts and jump over code without CFI in one
 * step, without asking libdw.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_segments_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "unwind_table_internal.h"

/* x86-64 DWARF register numbers; 16 is the return address column */
#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RA 16

/* the interrupted registers in the ucontext a signal frame's rsp points at */
#define SIGNAL_RBP_OFF 120
#define SIGNAL_RSP_OFF 160
#define SIGNAL_RIP_OFF 168

struct cie_encoding {
	Dwarf_Off off; /* the CIE's offset in .eh_frame */
	int fde_encoding; /* DW_EH_PE_* of its FDEs' addresses; -1 unreadable */
};

/*
 * The FDEs by start address. reach is read as the FDE's end, then made
 * the furthest end of this FDE and every one before it: no FDE covers an
 * address at or past the reach of the last FDE starting at or below it.
 */
struct fde_range {
	uint64_t start, reach;
};

/*
 * libdw keeps every FDE it has looked up in a search tree, which it
 * walks at each dwarf_cfi_addrframe() before it replays the row, and
 * which a sweep fills with every FDE of the file. A fresh Dwarf_CFI
 * every so many FDEs keeps the walk short, for a few allocations and the
 * CIEs' initial rules read again.
 */
#define FDES_PER_CFI 32

struct builder {
	struct dcp_unwind_table *t;
	size_t rows_cap;
	struct fde_range *fdes;
	size_t nr_fdes, fdes_cap;
	struct cie_encoding *cies;
	size_t nr_cies, cies_cap;
	Elf *elf;
	Dwarf_CFI *cfi;
	/* a fresh cfi at every FDES_PER_CFI FDEs; false: one for the file */
	bool renew_cfi;
	size_t cfi_from; /* the index in fdes where cfi was made */
};

/* ---- the FDE list ---------------------------------------------------------- */

/*
 * lib/symbols/elf_fde.c reads FDE ranges too, to name functions without
 * symbols, from .eh_frame and .debug_frame and leaving out what it cannot
 * decode. The sweep needs exactly the FDEs libdw finds, so it reads the
 * section libdw reads, whatever its type (lld's SHT_X86_64_UNWIND as
 * well as PROGBITS), and the CIEs as libdw parses them.
 */

/*
 * Bytes of a value in encoding enc at p (libdw's rule: the low three bits
 * give the size, a LEB128 is measured); 0 when unknown.
 */
static size_t encoded_size(int enc, const unsigned char *p,
			   const unsigned char *end)
{
	switch (enc & 0x07) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
		return 8;
	case DW_EH_PE_udata2:
		return 2;
	case DW_EH_PE_udata4:
		return 4;
	case DW_EH_PE_uleb128:
		for (const unsigned char *q = p; q < end; q++)
			if (!(*q & 0x80))
				return (size_t)(q - p) + 1;
		return 0;
	}
	return 0;
}

/*
 * The encoding of the addresses in the FDEs that use cie, read from its
 * augmentation the way libdw's CIE reader reads it (absptr when there is
 * no 'R', letters it does not know skipped after a 'z' and ending the
 * string otherwise); -1 when the augmentation data runs short.
 */
static int cie_fde_encoding(const Dwarf_CIE *cie)
{
	const unsigned char *p = cie->augmentation_data;
	const unsigned char *end = p + cie->augmentation_data_size;
	int enc = DW_EH_PE_absptr, personality;
	bool sized = false;
	size_t n;

	for (const char *a = cie->augmentation; *a; a++) {
		switch (*a) {
		case 'z':
			sized = true;
			continue;
		case 'S':
			continue;
		case 'L':
			if (p >= end)
				return -1;
			p++;
			continue;
		case 'R':
			if (p >= end)
				return -1;
			enc = *p++;
			continue;
		case 'P':
			if (p >= end)
				return -1;
			personality = *p++;
			if (personality == DW_EH_PE_omit)
				continue;
			n = encoded_size(personality, p, end);
			if (!n || n > (size_t)(end - p))
				return -1;
			p += n;
			continue;
		default:
			if (sized)
				continue;
		}
		break;
	}
	return enc;
}

/* A little-endian value of n bytes at p, sign-extended when is_signed. */
static uint64_t read_le(const unsigned char *p, size_t n, bool is_signed)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	if (is_signed && n < 8 && (v >> (n * 8 - 1)) & 1)
		v |= ~0ull << (n * 8);
	return v;
}

/*
 * The [start, end) an FDE covers, in encoding enc. Absolute and
 * pc-relative addresses of fixed size are all that x86-64 toolchains
 * write; -ENOTSUP for the others, -EINVAL when the FDE is too short.
 */
static int read_fde_range(const Dwarf_FDE *fde, int enc, const Elf_Data *data,
			  uint64_t sh_addr, uint64_t *start, uint64_t *end)
{
	const unsigned char *p = fde->start;
	uint64_t base;
	size_t n;

	if ((enc & 0x70) == DW_EH_PE_pcrel)
		base = sh_addr +
		       (uint64_t)(p - (const unsigned char *)data->d_buf);
	else if ((enc & 0x70) == DW_EH_PE_absptr)
		base = 0;
	else
		return -ENOTSUP;
	if (enc & DW_EH_PE_indirect)
		return -ENOTSUP;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		n = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		n = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		n = 2;
		break;
	default:
		return -ENOTSUP;
	}
	if ((size_t)(fde->end - p) < 2 * n)
		return -EINVAL;
	*start = base + read_le(p, n, enc & DW_EH_PE_signed);
	*end = *start + read_le(p + n, n, enc & DW_EH_PE_signed);
	return 0;
}

static const struct cie_encoding *find_cie(const struct builder *b,
					   Dwarf_Off off)
{
	/* an FDE mostly uses the CIE read last */
	for (size_t i = b->nr_cies; i-- > 0;)
		if (b->cies[i].off == off)
			return &b->cies[i];
	return NULL;
}

static int add_fde(struct builder *b, const Dwarf_FDE *fde,
		   const Elf_Data *data, uint64_t sh_addr)
{
	const struct cie_encoding *cie = find_cie(b, fde->CIE_pointer);
	struct fde_range *f;
	uint64_t start, end;
	int err;

	/* libdw skips an FDE whose CIE it cannot read: so does the sweep */
	if (!cie)
		return 0;
	if (cie->fde_encoding < 0)
		return dcp_error(
			EINVAL, "cannot read the CIE at .eh_frame offset %#llx",
			(unsigned long long)cie->off);
	err = read_fde_range(fde, cie->fde_encoding, data, sh_addr, &start,
			     &end);
	if (err == -ENOTSUP)
		return dcp_error(ENOTSUP,
				 "FDE address encoding %#x not handled",
				 (unsigned)cie->fde_encoding);
	if (err < 0)
		return dcp_error(EINVAL, "truncated FDE in .eh_frame");
	b->t->nr_fdes++;
	/* an empty FDE covers nothing, for libdw too */
	if (start >= end)
		return 0;
	f = dcp_grow(b->fdes, &b->fdes_cap, b->nr_fdes + 1, sizeof(*f));
	if (!f)
		return dcp_error(ENOMEM, "out of memory");
	b->fdes = f;
	b->fdes[b->nr_fdes++] = (struct fde_range){ start, end };
	return 0;
}

static int cmp_fde_start(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every FDE's range into b->fdes, sorted, with its reach. */
static int read_fdes(struct builder *b, Elf *elf, Elf_Data *data,
		     uint64_t sh_addr)
{
	const unsigned char *ident =
		(const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int rc, err;

	if (!ident)
		return dcp_error(ENOEXEC, "cannot read the ELF header: %s",
				 elf_errmsg(-1));
	for (;; off = next) {
		next = off;
		rc = dwarf_next_cfi(ident, data, true, off, &next, &e);
		if (rc > 0)
			break;
		if (rc < 0) {
			/*
			 * libdw's own FDE search skips an entry it cannot
			 * read, and stops where it cannot step past one.
			 */
			if (next == off)
				break;
			continue;
		}
		if (dwarf_cfi_cie_p(&e)) {
			struct cie_encoding *c;

			c = dcp_grow_from(b->cies, &b->cies_cap, b->nr_cies + 1,
					  sizeof(*c), 8);
			if (!c)
				return dcp_error(ENOMEM, "out of memory");
			b->cies = c;
			c[b->nr_cies].off = off;
			c[b->nr_cies++].fde_encoding = cie_fde_encoding(&e.cie);
			continue;
		}
		err = add_fde(b, &e.fde, data, sh_addr);
		if (err < 0)
			return err;
	}
	if (b->nr_fdes)
		qsort(b->fdes, b->nr_fdes, sizeof(*b->fdes), cmp_fde_start);
	for (size_t i = 1; i < b->nr_fdes; i++)
		if (b->fdes[i].reach < b->fdes[i - 1].reach)
			b->fdes[i].reach = b->fdes[i - 1].reach;
	return 0;
}

/* The index in b->fdes of the first FDE starting above addr. */
static size_t fde_above(const struct builder *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nr_fdes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->fdes[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Whether libdw finds FDEs by .eh_frame_hdr's sorted table: it reads the
 * table when the section comes before .eh_frame, gives .eh_frame's
 * address and counts entries that fit in it. Only the encodings every
 * linker writes are recognized (version 1, the .eh_frame address
 * pc-relative, the count and the entries 4-byte values), so that "yes"
 * is certain. Without the table libdw reads .eh_frame from its start
 * until it meets the FDE, and a fresh Dwarf_CFI would read it all again.
 */
static bool has_search_table(Elf *elf, uint64_t eh_frame_addr)
{
	const unsigned char *p;
	Elf_Scn *scn = NULL, *hdr = NULL;
	GElf_Shdr sh;
	Elf_Data *data;
	size_t shstrndx;
	uint64_t hdr_addr = 0, count;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	/* libdw's choice: the last .eh_frame_hdr before the first .eh_frame */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".eh_frame"))
			break;
		if (!strcmp(name, ".eh_frame_hdr")) {
			hdr = scn;
			hdr_addr = sh.sh_addr;
		}
	}
	if (!scn || !hdr)
		return false;
	data = elf_rawdata(hdr, NULL);
	if (!data || !data->d_buf || data->d_size < 12)
		return false;
	p = data->d_buf;
	if (p[0] != 1 || p[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
	    p[2] != DW_EH_PE_udata4 ||
	    p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return false;
	count = read_le(p + 8, 4, false);
	return hdr_addr + 4 + read_le(p + 4, 4, true) == eh_frame_addr &&
	       count && count <= (data->d_size - 12) / 8;
}

/* ---- a row's rules --------------------------------------------------------- */

/* op is DW_OP_bregN or DW_OP_bregx of register reg: its offset in *off. */
static bool is_breg(const Dwarf_Op *op, unsigned reg, int64_t *off)
{
	if (op->atom == DW_OP_bregx && op->number == reg) {
		*off = (int64_t)op->number2;
		return true;
	}
	if (op->atom == DW_OP_breg0 + reg) {
		*off = (int64_t)op->number;
		return true;
	}
	return false;
}

/* ops, a register's rule, is "at CFA + off" (libdw's offset(N) rule). */
static bool is_at_cfa(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (!ops || n < 1 || n > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

/* ops is the register rule DW_CFA_expression(DW_OP_breg7 off) */
static bool is_at_sp(const Dwarf_Op *ops, size_t n, int64_t off)
{
	int64_t o;

	/* libdw puts the CFA first, as DWARF has it pushed for these */
	return ops && n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	       is_breg(&ops[1], DWARF_RSP, &o) && o == off;
}

/*
 * .plt's CFA: rsp + off + ((rip & 15) >= K ? 8 : 0), which accounts for
 * the push in the middle of every 16-byte entry.
 */
static bool is_plt_cfa(const Dwarf_Op *ops, size_t n, int64_t *off, unsigned *k)
{
	int64_t zero;

	if (n != 9 || !is_breg(&ops[0], DWARF_RSP, off) ||
	    !is_breg(&ops[1], DWARF_RA, &zero) || zero != 0 ||
	    ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
	    ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31 ||
	    ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 ||
	    ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	*k = ops[4].atom - DW_OP_lit0;
	return true;
}

static bool is_signal_frame(const Dwarf_Op *cfa, size_t ncfa,
			    const Dwarf_Op *ra, size_t nra, const Dwarf_Op *rbp,
			    size_t nrbp, const Dwarf_Op *rsp, size_t nrsp)
{
	int64_t off;

	return ncfa == 2 && is_breg(&cfa[0], DWARF_RSP, &off) &&
	       off == SIGNAL_RSP_OFF && cfa[1].atom == DW_OP_deref &&
	       is_at_sp(ra, nra, SIGNAL_RIP_OFF) &&
	       is_at_sp(rbp, nrbp, SIGNAL_RBP_OFF) &&
	       is_at_sp(rsp, nrsp, SIGNAL_RSP_OFF);
}

/* rbp's rule as fp_off */
static short fp_rule(const Dwarf_Op *ops, size_t n)
{
	int64_t off;

	if (!ops)
		return DCP_UNWIND_FP_SAME;
	/* 0 means "same", and -32768 "lost": neither is a place */
	if (is_at_cfa(ops, n, &off) && off != 0 && off > DCP_UNWIND_FP_LOST &&
	    off <= 32767)
		return (short)off;
	return DCP_UNWIND_FP_LOST;
}

/*
 * The row for frame. A rule libdw cannot hand out makes the row
 * UNSUPPORTED, not the file unreadable: the walk ends there, as libdw's
 * own unwinder would.
 */
static void classify(Dwarf_Frame *frame, bool signalp,
		     struct dcp_unwind_row *row)
{
	Dwarf_Op ra_mem[3], rbp_mem[3], rsp_mem[3];
	Dwarf_Op *cfa, *ra, *rbp, *rsp;
	size_t ncfa, nra, nrbp, nrsp;
	int64_t off, ra_off;
	unsigned k = 0;

	row->kind = DCP_UNWIND_ROW_UNSUPPORTED;
	row->param = 0;
	row->fp_off = 0;
	row->cfa_off = 0;
	if (dwarf_frame_register(frame, DWARF_RA, ra_mem, &ra, &nra) < 0)
		return;
	if (ra && !nra) {
		row->kind = DCP_UNWIND_ROW_END;
		return;
	}
	if (dwarf_frame_cfa(frame, &cfa, &ncfa) < 0 ||
	    dwarf_frame_register(frame, DWARF_RBP, rbp_mem, &rbp, &nrbp) < 0 ||
	    dwarf_frame_register(frame, DWARF_RSP, rsp_mem, &rsp, &nrsp) < 0)
		return;
	if (signalp) {
		if (is_signal_frame(cfa, ncfa, ra, nra, rbp, nrbp, rsp, nrsp))
			row->kind = DCP_UNWIND_ROW_SIGNAL;
		return;
	}
	/* the return address at CFA-8 and the caller's rsp the CFA itself */
	if (!is_at_cfa(ra, nra, &ra_off) || ra_off != -8 || !rsp || nrsp != 2 ||
	    rsp[0].atom != DW_OP_call_frame_cfa ||
	    rsp[1].atom != DW_OP_stack_value)
		return;
	if (ncfa == 1 && is_breg(&cfa[0], DWARF_RSP, &off))
		row->kind = DCP_UNWIND_ROW_SP;
	else if (ncfa == 1 && is_breg(&cfa[0], DWARF_RBP, &off))
		row->kind = DCP_UNWIND_ROW_FP;
	else if (is_plt_cfa(cfa, ncfa, &off, &k))
		row->kind = DCP_UNWIND_ROW_PLT;
	else
		return;
	if (off < INT32_MIN || off > INT32_MAX) {
		row->kind = DCP_UNWIND_ROW_UNSUPPORTED;
		return;
	}
	row->cfa_off = (int)off;
	row->param = row->kind == DCP_UNWIND_ROW_PLT ? (unsigned char)k : 0;
	row->fp_off = fp_rule(rbp, nrbp);
}

/* ---- the rows -------------------------------------------------------------- */

static bool same_rule(const struct dcp_unwind_row *a,
		      const struct dcp_unwind_row *b)
{
	return a->kind == b->kind && a->param == b->param &&
	       a->fp_off == b->fp_off && a->cfa_off == b->cfa_off;
}

/*
 * Appends row at file offset off, offsets coming in order: a row at the
 * offset of the last replaces it, and a row equal to the one before it
 * only lengthens that one. A GAP before every row is what no row means.
 */
static int push_row(struct builder *b, uint64_t off, struct dcp_unwind_row row)
{
	struct dcp_unwind_table *t = b->t;
	struct dcp_unwind_row *rows;

	if (off > UINT32_MAX)
		return dcp_error(EFBIG, "code at file offset %#llx, past 4 GiB",
				 (unsigned long long)off);
	row.off = (unsigned)off;
	if (t->nr_rows && t->rows[t->nr_rows - 1].off > off)
		return dcp_error(EINVAL,
				 "executable segments overlap in the file");
	if (t->nr_rows && t->rows[t->nr_rows - 1].off == off)
		t->nr_rows--;
	if (t->nr_rows ? same_rule(&t->rows[t->nr_rows - 1], &row) :
			 row.kind == DCP_UNWIND_ROW_GAP)
		return 0;
	/* room for 8 rows an FDE at first: most tables then need no regrowth */
	rows = dcp_grow_from(t->rows, &b->rows_cap, t->nr_rows + 1,
			     sizeof(*rows), 8 * b->nr_fdes + 64);
	if (!rows)
		return dcp_error(ENOMEM, "out of memory");
	t->rows = rows;
	rows[t->nr_rows++] = row;
	return 0;
}

/*
 * The Dwarf_CFI to look up an address in at or after FDE i: a fresh one
 * when the current one has looked up FDES_PER_CFI FDEs. When libdw
 * cannot make one the current one does, only slower.
 */
static Dwarf_CFI *cfi_for(struct builder *b, size_t i)
{
	Dwarf_CFI *cfi;

	if (!b->renew_cfi ||
	    (i >= b->cfi_from && i - b->cfi_from < FDES_PER_CFI))
		return b->cfi;
	cfi = dwarf_getcfi_elf(b->elf);
	if (cfi) {
		dwarf_cfi_end(b->cfi);
		b->cfi = cfi;
	}
	b->cfi_from = i;
	return b->cfi;
}

/*
 * The rows of one executable segment: libdw's row at each address, from
 * the segment's start to its end, cut where a later FDE starts (libdw
 * takes the FDE starting last at an address covered twice); where no FDE
 * covers an address, a GAP up to the next FDE. One dwarf_cfi_addrframe()
 * a row, none for a GAP that no FDE covers.
 */
static int sweep_segment(struct builder *b, const GElf_Phdr *ph)
{
	const struct dcp_unwind_row gap = { .kind = DCP_UNWIND_ROW_GAP };
	uint64_t end = ph->p_vaddr + ph->p_filesz;
	uint64_t delta = ph->p_offset - ph->p_vaddr; /* vaddr to offset */
	uint64_t at = ph->p_vaddr;
	size_t i = fde_above(b, at);
	int err;

	if (end < at || ph->p_offset + ph->p_filesz < ph->p_offset)
		return dcp_error(EINVAL, "bad program header");
	while (at < end) {
		struct dcp_unwind_row row;
		Dwarf_Frame *frame;
		Dwarf_Addr start, stop;
		uint64_t next;
		bool signalp;

		/* at only grows: FDE i, the first starting above it, too */
		while (i < b->nr_fdes && b->fdes[i].start <= at)
			i++;
		next = i < b->nr_fdes ? b->fdes[i].start : UINT64_MAX;
		/*
		 * No FDE covers at, or libdw cannot replay the one that
		 * does: either way its unwinder has no CFI here.
		 */
		if (!i || b->fdes[i - 1].reach <= at ||
		    dwarf_cfi_addrframe(cfi_for(b, i), at, &frame) < 0) {
			err = push_row(b, at + delta, gap);
			if (err < 0)
				return err;
			at = next;
			continue;
		}
		if (dwarf_frame_info(frame, &start, &stop, &signalp) < 0) {
			free(frame);
			return dcp_error(
				EINVAL, "cannot read the CFI row at %#llx: %s",
				(unsigned long long)at, dwarf_errmsg(-1));
		}
		classify(frame, signalp, &row);
		free(frame);
		if (stop <= at)
			return dcp_error(EINVAL, "CFI row at %#llx is empty",
					 (unsigned long long)at);
		err = push_row(b, at + delta, row);
		if (err < 0)
			return err;
		at = stop < next ? stop : next;
	}
	return push_row(b, end + delta, gap);
}

static int cmp_phdr_offset(const void *a, const void *b)
{
	const GElf_Phdr *x = a, *y = b;

	return x->p_offset < y->p_offset ? -1 : x->p_offset > y->p_offset;
}

/* The executable PT_LOAD segments with file bytes, by file offset. */
static int exec_segments(Elf *elf, GElf_Phdr **segs, size_t *nr)
{
	size_t phnum, n = 0;
	GElf_Phdr *s;

	if (elf_getphdrnum(elf, &phnum) < 0)
		return dcp_error(EINVAL, "cannot read program headers: %s",
				 elf_errmsg(-1));
	s = calloc(phnum ? phnum : 1, sizeof(*s));
	if (!s)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &s[n])) {
			free(s);
			return dcp_error(EINVAL,
					 "cannot read program header %zu: %s",
					 i, elf_errmsg(-1));
		}
		if (s[n].p_type == PT_LOAD && (s[n].p_flags & PF_X) &&
		    s[n].p_filesz)
			n++;
	}
	qsort(s, n, sizeof(*s), cmp_phdr_offset);
	*segs = s;
	*nr = n;
	return 0;
}

static int build(struct builder *b, Elf *elf, Elf_Data *data, uint64_t sh_addr)
{
	GElf_Phdr *segs = NULL;
	size_t nr_segs = 0;
	int err;

	err = read_fdes(b, elf, data, sh_addr);
	if (err < 0)
		return err;
	err = exec_segments(elf, &segs, &nr_segs);
	if (err < 0)
		return err;
	b->renew_cfi = has_search_table(elf, sh_addr);
	for (size_t i = 0; i < nr_segs && !err; i++)
		err = sweep_segment(b, &segs[i]);
	free(segs);
	return err;
}

int dcp_unwind_table_build(Elf *elf, struct dcp_unwind_table *t)
{
	struct builder b = { .t = t, .elf = elf };
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	int err;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh))
		return dcp_error(ENOEXEC, "not an ELF file: %s",
				 elf_errmsg(-1));
	if (eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return dcp_error(ENOTSUP,
				 "unwind tables are built for x86-64 only, not "
				 "ELF machine %u",
				 (unsigned)eh.e_machine);
	/*
	 * No .eh_frame, or a NOBITS one as in a separate debug file: no CFI,
	 * hence no rows, and not an error. The file's code unwinds by frame
	 * pointers, as every GAP does.
	 */
	scn = dcp_elf_section_named(elf, ".eh_frame", &sh);
	if (!scn || sh.sh_type == SHT_NOBITS)
		return 0;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf)
		return dcp_error(EINVAL, "cannot read .eh_frame: %s",
				 elf_errmsg(-1));
	b.cfi = dwarf_getcfi_elf(elf);
	if (!b.cfi)
		return dcp_error(EINVAL, "cannot read .eh_frame: %s",
				 dwarf_errmsg(-1));
	t->eh_frame_bytes = data->d_size;
	err = build(&b, elf, data, sh.sh_addr);
	dwarf_cfi_end(b.cfi);
	free(b.fdes);
	free(b.cies);
	if (err < 0) {
		dcp_unwind_table_free(t);
		return err;
	}
	for (size_t i = 0; i < t->nr_rows; i++)
		t->nr_unsupported +=
			t->rows[i].kind == DCP_UNWIND_ROW_UNSUPPORTED;
	return 0;
}

void dcp_unwind_table_free(struct dcp_unwind_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct dcp_unwind_row *
dcp_unwind_table_find(const struct dcp_unwind_table *t, uint64_t off)
{
	size_t lo = 0, hi = t->nr_rows;

	/* the first row past off; the one before it is in force */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
