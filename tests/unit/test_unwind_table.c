// SPDX-License-Identifier: MIT
/*
 * The compact unwind tables against libdw, address by address: for every
 * byte of every executable segment of this machine's libc, of this test
 * binary, of an LLVM-built program and of python3, libdw's own rules
 * (dwarf_cfi_addrframe) are evaluated on synthetic registers and memory
 * and must give what the table's row computes: the CFA, where the return
 * address and rbp are read, the caller's rsp. Then the error paths.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "dcprof/dcprof.h"
#include "hash.h"
#include "unwind_table_internal.h"

#define NR_REGS 17 /* DWARF x86-64: 0..15 the GPRs, 16 rip */
#define RBP 6
#define RSP 7
#define RIP 16

/* Registers, and memory as a fixed pseudo-random function of the address. */
struct state {
	uint64_t reg[NR_REGS];
	uint64_t seed;
};

static uint64_t mem(const struct state *s, uint64_t addr)
{
	return dcp_hash_fmix64(addr ^ s->seed);
}

/* What a rule says of a value in the caller. */
enum how { AT, VALUE, UNDEF, UNKNOWN };
struct outcome {
	enum how how;
	uint64_t v; /* AT: the address it is read from; VALUE: the value */
};

static const struct outcome unknown = { UNKNOWN, 0 };

static bool binary_op(int atom, uint64_t a, uint64_t b, uint64_t *r)
{
	switch (atom) {
	case DW_OP_plus:
		*r = a + b;
		return true;
	case DW_OP_minus:
		*r = a - b;
		return true;
	case DW_OP_and:
		*r = a & b;
		return true;
	case DW_OP_shl:
		*r = b < 64 ? a << b : 0;
		return true;
	case DW_OP_ge:
		*r = (int64_t)a >= (int64_t)b;
		return true;
	}
	return false;
}

/*
 * A DWARF expression as libdw hands it out: AT the address left on the
 * stack, a VALUE when it ends in DW_OP_stack_value or names a register,
 * UNKNOWN for an op this evaluator does not know.
 */
static struct outcome eval(const Dwarf_Op *ops, size_t n, const struct state *s,
			   const struct outcome *cfa)
{
	uint64_t st[32];
	size_t sp = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned atom = ops[i].atom;
		bool breg = atom >= DW_OP_breg0 && atom <= DW_OP_breg31;
		bool reg = atom >= DW_OP_reg0 && atom <= DW_OP_reg31;
		uint64_t regno = breg ? atom - DW_OP_breg0 :
				 reg  ? atom - DW_OP_reg0 :
					ops[i].number;

		if (sp + 1 >= sizeof(st) / sizeof(st[0]) ||
		    ((breg || reg || atom == DW_OP_bregx ||
		      atom == DW_OP_regx) &&
		     regno >= NR_REGS))
			return unknown;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31)
			st[sp++] = atom - DW_OP_lit0;
		else if (breg)
			st[sp++] = s->reg[regno] + ops[i].number;
		else if (atom == DW_OP_bregx)
			st[sp++] = s->reg[regno] + ops[i].number2;
		else if ((reg || atom == DW_OP_regx) && n == 1)
			return (struct outcome){ VALUE, s->reg[regno] };
		else if (atom == DW_OP_call_frame_cfa && cfa &&
			 cfa->how == VALUE)
			st[sp++] = cfa->v;
		else if (atom == DW_OP_consts || atom == DW_OP_constu ||
			 (atom >= DW_OP_const1u && atom <= DW_OP_const8s))
			st[sp++] = ops[i].number;
		else if (atom == DW_OP_plus_uconst && sp)
			st[sp - 1] += ops[i].number;
		else if (atom == DW_OP_deref && sp)
			st[sp - 1] = mem(s, st[sp - 1]);
		else if (atom == DW_OP_stack_value && sp && i == n - 1)
			return (struct outcome){ VALUE, st[sp - 1] };
		else if (sp >= 2 &&
			 binary_op(atom, st[sp - 2], st[sp - 1], &st[sp - 2]))
			sp--;
		else
			return unknown;
	}
	if (!sp)
		return unknown;
	return (struct outcome){ AT, st[sp - 1] };
}

/* What libdw's rules at one address give for the caller. */
struct expect {
	struct outcome cfa, rip, rsp, rbp; /* cfa: VALUE or UNKNOWN */
};

static struct outcome reg_rule(Dwarf_Frame *frame, int regno,
			       const struct state *s, const struct outcome *cfa)
{
	Dwarf_Op mem_ops[3], *ops;
	size_t n;

	if (dwarf_frame_register(frame, regno, mem_ops, &ops, &n) < 0)
		return unknown;
	if (!ops) /* same value */
		return (struct outcome){ VALUE, s->reg[regno] };
	if (!n)
		return (struct outcome){ UNDEF, 0 };
	return eval(ops, n, s, cfa);
}

static struct expect expect_at(Dwarf_Frame *frame, const struct state *s)
{
	struct expect e;
	Dwarf_Op *ops;
	size_t n;

	e.cfa = unknown;
	if (dwarf_frame_cfa(frame, &ops, &n) == 0 && n) {
		/* a DWARF expression, not a location: its result is the CFA */
		e.cfa = eval(ops, n, s, NULL);
		if (e.cfa.how == AT)
			e.cfa.how = VALUE;
	}
	e.rip = reg_rule(frame, RIP, s, &e.cfa);
	e.rsp = reg_rule(frame, RSP, s, &e.cfa);
	e.rbp = reg_rule(frame, RBP, s, &e.cfa);
	return e;
}

static bool is(struct outcome o, enum how how, uint64_t v)
{
	return o.how == how && o.v == v;
}

/* The caller's frame as the BPF walker finds it from a CFA rule. */
static bool cfa_rule_ok(const struct expect *e, uint64_t cfa)
{
	return is(e->cfa, VALUE, cfa) && is(e->rip, AT, cfa - 8) &&
	       is(e->rsp, VALUE, cfa);
}

/* rbp at CFA + off in both states, off a valid fp_off; 0 if not. */
static int rbp_slot(const struct expect e[2])
{
	int64_t off = (int64_t)(e[0].rbp.v - e[0].cfa.v);

	if (e[0].rbp.how != AT || e[1].rbp.how != AT || e[0].cfa.how != VALUE ||
	    e[1].cfa.how != VALUE ||
	    (int64_t)(e[1].rbp.v - e[1].cfa.v) != off ||
	    off <= DCP_UNWIND_FP_LOST || off > 32767)
		return 0;
	return (int)off;
}

static bool rbp_same(const struct expect e[2], const struct state s[2])
{
	return is(e[0].rbp, VALUE, s[0].reg[RBP]) &&
	       is(e[1].rbp, VALUE, s[1].reg[RBP]);
}

static bool signal_ok(const struct expect *e, const struct state *s)
{
	uint64_t sp = s->reg[RSP];

	return is(e->cfa, VALUE, mem(s, sp + 160)) &&
	       is(e->rip, AT, sp + 168) && is(e->rbp, AT, sp + 120) &&
	       is(e->rsp, AT, sp + 160);
}

static bool fits_int(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * Whether some row could say what libdw says here: then UNSUPPORTED is a
 * failure to compile it. Rows hold for every rip they cover, so the CFA
 * is taken at the 16 values of rip & 15 in both states: a constant
 * offset from rsp or rbp, or the .plt rule's step of 8 from some
 * threshold on.
 */
static bool expressible(Dwarf_Frame *frame, const struct expect e[2],
			const struct state s[2], bool signalp)
{
	int64_t from_sp[2][16], from_fp[2][16];
	bool sp = true, fp = true, plt = false;

	if (e[0].rip.how == UNDEF && e[1].rip.how == UNDEF)
		return true;
	if (signalp)
		return signal_ok(&e[0], &s[0]) && signal_ok(&e[1], &s[1]);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 16; j++) {
			struct state x = s[i];
			struct expect ex;

			x.reg[RIP] = (x.reg[RIP] & ~15ull) | (uint64_t)j;
			ex = expect_at(frame, &x);
			if (!cfa_rule_ok(&ex, ex.cfa.v))
				return false;
			from_sp[i][j] = (int64_t)(ex.cfa.v - x.reg[RSP]);
			from_fp[i][j] = (int64_t)(ex.cfa.v - x.reg[RBP]);
			sp = sp && from_sp[i][j] == from_sp[0][0];
			fp = fp && from_fp[i][j] == from_fp[0][0];
		}
	for (int k = 1; k < 16 && !plt; k++) {
		plt = fits_int(from_sp[0][0]);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 16; j++)
				plt = plt &&
				      from_sp[i][j] ==
					      from_sp[0][0] + (j >= k ? 8 : 0);
	}
	return (sp && fits_int(from_sp[0][0])) ||
	       (fp && fits_int(from_fp[0][0])) || plt;
}

/* The CFA a SP, FP or PLT row computes. */
static uint64_t row_cfa(const struct dcp_unwind_row *row, const struct state *s)
{
	uint64_t rip = s->reg[RIP];

	switch (row->kind) {
	case DCP_UNWIND_ROW_FP:
		return s->reg[RBP] + row->cfa_off;
	case DCP_UNWIND_ROW_PLT:
		return s->reg[RSP] + row->cfa_off +
		       ((rip & 15) >= row->param ? 8 : 0);
	}
	return s->reg[RSP] + row->cfa_off;
}

/* NULL when row agrees with libdw's frame (NULL: no CFI), else why not. */
static const char *check_row(const struct dcp_unwind_row *row,
			     Dwarf_Frame *frame, bool signalp,
			     const struct state s[2])
{
	int kind = row ? row->kind : DCP_UNWIND_ROW_GAP;
	struct expect e[2];

	if (!frame)
		return kind == DCP_UNWIND_ROW_GAP ? NULL : "a row, no CFI";
	if (kind == DCP_UNWIND_ROW_GAP)
		return "a gap, libdw has CFI";
	e[0] = expect_at(frame, &s[0]);
	e[1] = expect_at(frame, &s[1]);
	switch (kind) {
	case DCP_UNWIND_ROW_END:
		return e[0].rip.how == UNDEF && e[1].rip.how == UNDEF ?
			       NULL :
			       "END, the return address is defined";
	case DCP_UNWIND_ROW_UNSUPPORTED:
		return expressible(frame, e, s, signalp) ?
			       "UNSUPPORTED, expressible" :
			       NULL;
	case DCP_UNWIND_ROW_SIGNAL:
		return signalp && signal_ok(&e[0], &s[0]) &&
				       signal_ok(&e[1], &s[1]) ?
			       NULL :
			       "SIGNAL, not the signal frame's rules";
	case DCP_UNWIND_ROW_SP:
	case DCP_UNWIND_ROW_FP:
	case DCP_UNWIND_ROW_PLT:
		break;
	default:
		return "unknown kind";
	}
	if (signalp)
		return "a call frame row in a signal frame";
	for (int i = 0; i < 2; i++)
		if (!cfa_rule_ok(&e[i], row_cfa(row, &s[i])))
			return "CFA, return address or rsp differ";
	if (row->fp_off == DCP_UNWIND_FP_SAME)
		return rbp_same(e, s) ? NULL : "rbp not the same";
	if (row->fp_off == DCP_UNWIND_FP_LOST)
		return rbp_same(e, s) || rbp_slot(e) ? "rbp lost, expressible" :
						       NULL;
	return rbp_slot(e) == row->fp_off ? NULL : "rbp saved elsewhere";
}

static const char *kind_name(const struct dcp_unwind_row *row)
{
	static const char *const names[] = { "GAP",	   "SP",     "FP",
					     "PLT",	   "SIGNAL", "END",
					     "UNSUPPORTED" };

	if (!row)
		return "none";
	return row->kind < 7 ? names[row->kind] : "?";
}

/* ---- rules compilers rarely write --------------------------------------- */

/*
 * Code never run, only there for its CFI, which this binary's check
 * (test_self) reads with the rest: every rule that must become
 * UNSUPPORTED or FP_LOST, next to the expressible ones it could be
 * mistaken for, since the system's files have few of them. Register
 * numbers are DWARF's: 1 rdx, 3 rbx, 6 rbp, 7 rsp, 16 the return address.
 */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	"dcp_test_cfi_rules:\n"
	".cfi_startproc\n"
	"nop; nop\n"
	".cfi_def_cfa 1, 8\n" /* CFA from rdx */
	"nop; nop\n"
	".cfi_def_cfa 7, 8\n"
	".cfi_offset 16, -16\n" /* return address not at CFA-8 */
	"nop; nop\n"
	".cfi_offset 16, -8\n"
	".cfi_offset 7, -24\n" /* the caller's rsp not the CFA */
	"nop; nop\n"
	".cfi_restore 7\n"
	".cfi_same_value 16\n" /* return address unchanged */
	"nop; nop\n"
	".cfi_offset 16, -8\n"
	".cfi_def_cfa_offset 0x100000000\n" /* beyond cfa_off */
	"nop; nop\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_undefined 6\n"
	"nop; nop\n"
	".cfi_offset 6, 0\n" /* at the CFA itself: 0 is "same" */
	"nop; nop\n"
	".cfi_offset 6, -32768\n" /* the FP_LOST value */
	"nop; nop\n"
	".cfi_offset 6, -40000\n" /* beyond fp_off */
	"nop; nop\n"
	".cfi_offset 6, 32760\n"
	"nop; nop\n"
	".cfi_register 6, 3\n"
	"nop; nop\n"
	".cfi_escape 0x14, 0x06, 0x02\n" /* val_offset: rbp = CFA-16 */
	"nop; nop\n"
	".cfi_escape 0x10, 0x06, 0x02, 0x76, 0x10\n" /* rbp at rbp+16 */
	"nop; nop\n"
	".cfi_offset 6, -16\n"
	".cfi_def_cfa 6, 16\n"
	"nop; nop\n"
	".cfi_restore 6\n"
	".cfi_def_cfa 7, 8\n"
	/* CFA = [rsp+8]: a deref outside a signal frame */
	".cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06\n"
	"nop; nop\n"
	".cfi_def_cfa 7, 8\n"
	"nop; nop\n"
	".p2align 4, 0x90\n"
	/* a .plt.sec-style entry: the push 10 bytes in */
	".cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3a, "
	"0x2a, 0x33, 0x24, 0x22\n"
	".fill 32, 1, 0x90\n"
	/* the same with rip & 7 >= 5: no threshold on rip & 15 says it */
	".cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x37, 0x1a, 0x35, "
	"0x2a, 0x33, 0x24, 0x22\n"
	".fill 32, 1, 0x90\n"
	".cfi_def_cfa 7, 8\n"
	".cfi_undefined 16\n"
	"nop; nop\n"
	".cfi_endproc\n"
	/* bytes no FDE covers, then an FDE without the CIE's rules */
	"nop; nop; nop\n"
	"dcp_test_cfi_simple:\n"
	".cfi_startproc simple\n"
	"nop; nop\n"
	".cfi_def_cfa 7, 8\n"
	".cfi_offset 16, -8\n"
	"nop; nop\n"
	".cfi_endproc\n"
	/* a signal trampoline as glibc's __restore_rt describes itself */
	"nop\n"
	"dcp_test_cfi_signal:\n"
	".cfi_startproc simple\n"
	".cfi_signal_frame\n"
	".cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06\n"
	".cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01\n"
	".cfi_escape 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00\n"
	".cfi_escape 0x10, 0x07, 0x03, 0x77, 0xa0, 0x01\n"
	"nop; nop\n"
	/* rip read elsewhere: no longer the trampoline's rules */
	".cfi_escape 0x10, 0x10, 0x03, 0x77, 0xb0, 0x01\n"
	"nop; nop\n"
	".cfi_def_cfa 7, 8\n"
	".cfi_offset 16, -8\n" /* plain rules in a signal frame */
	"nop; nop\n"
	".cfi_endproc\n"
	".popsection\n");

/* ---- one file ------------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Rows in order, none equal to the one before, the first not a gap. */
static void check_shape(const struct dcp_unwind_table *t)
{
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct dcp_unwind_row *r = &t->rows[i], *p = r - 1;

		assert_true(r->kind <= DCP_UNWIND_ROW_UNSUPPORTED);
		if (r->kind != DCP_UNWIND_ROW_SP &&
		    r->kind != DCP_UNWIND_ROW_FP &&
		    r->kind != DCP_UNWIND_ROW_PLT)
			assert_true(!r->param && !r->fp_off && !r->cfa_off);
		if (!i) {
			assert_int_not_equal(r->kind, DCP_UNWIND_ROW_GAP);
			continue;
		}
		assert_true(p->off < r->off);
		assert_false(p->kind == r->kind && p->param == r->param &&
			     p->fp_off == r->fp_off &&
			     p->cfa_off == r->cfa_off);
	}
}

static bool is_code(const GElf_Phdr *ph)
{
	return ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_filesz;
}

/* Whether file offset off holds code of an executable segment. */
static bool in_code(Elf *elf, size_t phnum, uint64_t off)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		assert_non_null(gelf_getphdr(elf, (int)i, &ph));
		if (is_code(&ph) && off >= ph.p_offset &&
		    off - ph.p_offset < ph.p_filesz)
			return true;
	}
	return false;
}

/* Every address of one executable segment; the mismatches. */
static size_t compare_segment(Dwarf_CFI *cfi, const struct dcp_unwind_table *t,
			      const GElf_Phdr *ph, struct state s[2],
			      const char *path, size_t *checked)
{
	size_t bad = 0;

	for (uint64_t v = ph->p_vaddr; v < ph->p_vaddr + ph->p_filesz; v++) {
		const struct dcp_unwind_row *row;
		Dwarf_Frame *frame = NULL;
		bool signalp = false;
		const char *why;

		s[0].reg[RIP] = s[1].reg[RIP] = v;
		row = dcp_unwind_table_find(t, v - ph->p_vaddr + ph->p_offset);
		if (dwarf_cfi_addrframe(cfi, v, &frame) < 0)
			frame = NULL;
		else if (dwarf_frame_info(frame, NULL, NULL, &signalp) < 0)
			fail_msg("%#" PRIx64 ": no frame info", v);
		why = check_row(row, frame, signalp, s);
		free(frame);
		(*checked)++;
		if (why && bad++ < 10)
			print_message("%s: %#" PRIx64 ": %s row: %s\n", path, v,
				      kind_name(row), why);
	}
	return bad;
}

/*
 * Every address of the file's executable segments, and the file offset
 * after each, which no row of its code may reach; the mismatches.
 */
static size_t compare_file(Elf *elf, const struct dcp_unwind_table *t,
			   const char *path, size_t *checked)
{
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	struct state s[2];
	size_t phnum, bad = 0;

	assert_non_null(cfi);
	assert_int_equal(elf_getphdrnum(elf, &phnum), 0);
	for (int r = 0; r < NR_REGS; r++) {
		s[0].reg[r] = 0x100000000ull * (r + 1) + 0x1000;
		s[1].reg[r] = 0x300000000ull * (r + 3) + 0x2340;
	}
	s[0].reg[RSP] = 0x7ffd00001000ull;
	s[0].reg[RBP] = 0x7ffd00002000ull;
	s[1].reg[RSP] = 0x7ffc12345670ull;
	s[1].reg[RBP] = 0x7ffe00ab0010ull;
	s[0].seed = 0x5eed;
	s[1].seed = 0xfeed0000beefull;
	for (size_t i = 0; i < phnum; i++) {
		const struct dcp_unwind_row *row;
		uint64_t after;
		GElf_Phdr ph;

		assert_non_null(gelf_getphdr(elf, (int)i, &ph));
		if (!is_code(&ph))
			continue;
		bad += compare_segment(cfi, t, &ph, s, path, checked);
		after = ph.p_offset + ph.p_filesz;
		row = dcp_unwind_table_find(t, after);
		if (!in_code(elf, phnum, after) && row &&
		    row->kind != DCP_UNWIND_ROW_GAP) {
			print_message("%s: %#" PRIx64 ": %s row after code\n",
				      path, after, kind_name(row));
			bad++;
		}
	}
	dwarf_cfi_end(cfi);
	return bad;
}

/*
 * Builds after the first, whose best time leaves out what only a first
 * build pays (pages of the file and of the heap touched for the first
 * time): both are printed, and neither is checked.
 */
#define REBUILDS 3

/* elf's table built REBUILDS times more, each time t again; the best ms. */
static double rebuild_ms(Elf *elf, const struct dcp_unwind_table *t)
{
	double best = 0;

	for (int i = 0; i < REBUILDS; i++) {
		struct dcp_unwind_table again;
		double t0 = now_ms(), ms;

		assert_int_equal(dcp_unwind_table_build(elf, &again), 0);
		ms = now_ms() - t0;
		if (!i || ms < best)
			best = ms;
		assert_int_equal(again.nr_rows, t->nr_rows);
		assert_memory_equal(again.rows, t->rows,
				    t->nr_rows * sizeof(*t->rows));
		dcp_unwind_table_free(&again);
	}
	return best;
}

/* Builds the table of elf into t, checks it and prints its figures. */
static void check_elf(Elf *elf, const char *name, struct dcp_unwind_table *t)
{
	size_t checked = 0, bad;
	double t0 = now_ms(), ms, best;

	assert_int_equal(dcp_unwind_table_build(elf, t), 0);
	ms = now_ms() - t0;
	assert_true(t->nr_rows > 0 && t->nr_fdes > 0 && t->eh_frame_bytes > 0);
	best = rebuild_ms(elf, t);
	check_shape(t);
	bad = compare_file(elf, t, name, &checked);
	print_message("%s: %zu addresses, %zu rows, %zu FDEs, %zu unsupported,"
		      " %.0f rows/MB of .eh_frame\n",
		      name, checked, t->nr_rows, t->nr_fdes, t->nr_unsupported,
		      t->nr_rows / (t->eh_frame_bytes / 1048576.0));
	print_message("%s: built in %.1f ms, again in %.1f ms at best of %d"
		      " (%.0f ns a row)\n",
		      name, ms, best, REBUILDS, best * 1e6 / t->nr_rows);
	assert_int_equal(bad, 0);
}

static void check_file(const char *path)
{
	struct dcp_unwind_table t;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	check_elf(elf, path, &t);
	dcp_unwind_table_free(&t);
	elf_end(elf);
	close(fd);
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = strrchr(info->dlpi_name, '/');

	if (base && !strncmp(base, "/libc.so", 8)) {
		snprintf(arg, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static void test_libc(void **state)
{
	char path[PATH_MAX] = "";

	dl_iterate_phdr(find_libc, path);
	assert_true(path[0]);
	check_file(path);
}

static void test_self(void **state)
{
	check_file("/proc/self/exe");
}

/* The bytes of the file at path, malloc'd, *size of them. */
static unsigned char *read_whole(const char *path, size_t *size)
{
	unsigned char *buf;
	struct stat st;
	size_t n = 0;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_non_null(buf);
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, st.st_size - n);

		assert_true(r > 0);
		n += r;
	}
	close(fd);
	*size = n;
	return buf;
}

/*
 * This binary with its .eh_frame_hdr renamed in memory: libdw then finds
 * FDEs by reading .eh_frame in order, not by the header's table, and the
 * builder keeps one Dwarf_CFI for the file. Its rows are those of the
 * file as it is, built with a fresh Dwarf_CFI every few FDEs.
 */
static void test_no_search_table(void **state)
{
	struct dcp_unwind_table t, with_table;
	size_t size, shstrndx, last = 0;
	unsigned char *buf = read_whole("/proc/self/exe", &size);
	Elf *elf = elf_memory((char *)buf, size);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, strtab;

	assert_non_null(elf);
	assert_int_equal(dcp_unwind_table_build(elf, &with_table), 0);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	assert_non_null(gelf_getshdr(elf_getscn(elf, shstrndx), &strtab));
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame_hdr"))
			last = strtab.sh_offset + sh.sh_name + strlen(name) - 1;
	}
	elf_end(elf);
	assert_true(last && last < size && buf[last] == 'r');
	buf[last] = 'X';
	elf = elf_memory((char *)buf, size);
	assert_non_null(elf);
	check_elf(elf, "/proc/self/exe without .eh_frame_hdr", &t);
	assert_int_equal(t.nr_rows, with_table.nr_rows);
	assert_memory_equal(t.rows, with_table.rows,
			    t.nr_rows * sizeof(*t.rows));
	dcp_unwind_table_free(&t);
	dcp_unwind_table_free(&with_table);
	elf_end(elf);
	free(buf);
}

/* A file of this machine's, when it has one. */
static void check_optional_file(const char *path)
{
	if (access(path, R_OK) != 0)
		skip();
	check_file(path);
}

/* lld writes .eh_frame as SHT_X86_64_UNWIND, not PROGBITS */
static void test_llvm_built(void **state)
{
	check_optional_file("/usr/bin/clang-14");
}

static void test_python(void **state)
{
	check_optional_file("/usr/bin/python3");
}

/* ---- error paths ---------------------------------------------------------- */

/* An ELF header for machine, nothing else, at the start of buf. */
static Elf64_Ehdr *put_header(unsigned char *buf, size_t size, int machine)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;

	memset(buf, 0, size);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = (Elf64_Half)machine;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	return eh;
}

static Elf *elf_header_only(unsigned char *buf, size_t size, int machine)
{
	put_header(buf, size, machine);
	return elf_memory((char *)buf, size);
}

/* No CFI: no rows, and no error; CFI of another machine: refused. */
static void test_header_only(void **state)
{
	_Alignas(8) unsigned char buf[sizeof(Elf64_Ehdr)];
	struct dcp_unwind_table t;
	Elf *elf = elf_header_only(buf, sizeof(buf), EM_X86_64);

	assert_non_null(elf);
	assert_int_equal(dcp_unwind_table_build(elf, &t), 0);
	assert_int_equal(t.nr_rows, 0);
	assert_null(dcp_unwind_table_find(&t, 0));
	dcp_unwind_table_free(&t);
	elf_end(elf);
	elf = elf_header_only(buf, sizeof(buf), EM_AARCH64);
	assert_non_null(elf);
	assert_int_equal(dcp_unwind_table_build(elf, &t), -ENOTSUP);
	assert_int_equal(t.nr_rows, 0);
	elf_end(elf);
}

/*
 * An ELF file with an .eh_frame that holds only its terminator and one
 * executable segment of 16 bytes at file offset off.
 */
static Elf *elf_code_at(unsigned char *buf, size_t size, uint64_t off)
{
	static const char names[] = "\0.eh_frame\0.shstrtab";
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + 64);
	Elf64_Shdr *sh = (Elf64_Shdr *)(buf + 160);
	Elf64_Ehdr *eh;

	assert_true(size >= 160 + 3 * sizeof(*sh));
	eh = put_header(buf, size, EM_X86_64);
	eh->e_phoff = 64;
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shoff = 160;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD,
			    .p_flags = PF_R | PF_X,
			    .p_offset = off,
			    .p_vaddr = 0x1000,
			    .p_filesz = 16,
			    .p_memsz = 16 };
	memcpy(buf + 136, names, sizeof(names)); /* .eh_frame: 8 zeros at 128 */
	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = 0x2000,
			      .sh_offset = 128,
			      .sh_size = 8 };
	sh[2] = (Elf64_Shdr){ .sh_name = 11,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = 136,
			      .sh_size = sizeof(names) };
	return elf_memory((char *)buf, size);
}

static void test_no_fde(void **state)
{
	_Alignas(8) unsigned char buf[352];
	struct dcp_unwind_table t;
	Elf *elf = elf_code_at(buf, sizeof(buf), 0x1000);

	assert_non_null(elf);
	assert_int_equal(dcp_unwind_table_build(elf, &t), 0);
	assert_int_equal(t.nr_rows, 0);
	assert_int_equal(t.nr_fdes, 0);
	assert_int_equal(t.eh_frame_bytes, 8);
	dcp_unwind_table_free(&t);
	elf_end(elf);
}

/* rows hold 32-bit file offsets */
static void test_code_past_4g(void **state)
{
	_Alignas(8) unsigned char buf[352];
	struct dcp_unwind_table t;
	Elf *elf = elf_code_at(buf, sizeof(buf), 5ull << 30);

	assert_non_null(elf);
	assert_int_equal(dcp_unwind_table_build(elf, &t), -EFBIG);
	assert_int_equal(t.nr_rows, 0);
	assert_null(t.rows);
	elf_end(elf);
}

static void test_not_elf(void **state)
{
	char text[] = "#!/bin/sh\necho this is not an ELF file\n";
	struct dcp_unwind_table t;
	Elf *elf = elf_memory(text, sizeof(text));

	assert_non_null(elf);
	assert_true(dcp_unwind_table_build(elf, &t) < 0);
	assert_int_equal(t.nr_rows, 0);
	assert_non_null(strstr(dcp_last_error(), "not an ELF file"));
	elf_end(elf);
}

static void test_find(void **state)
{
	struct dcp_unwind_row rows[] = {
		{ .off = 0x10, .kind = DCP_UNWIND_ROW_SP, .cfa_off = 8 },
		{ .off = 0x20, .kind = DCP_UNWIND_ROW_GAP },
		{ .off = 0x30, .kind = DCP_UNWIND_ROW_FP, .cfa_off = 16 },
	};
	struct dcp_unwind_table t = { .rows = rows, .nr_rows = 3 };

	assert_null(dcp_unwind_table_find(&t, 0xf));
	assert_ptr_equal(dcp_unwind_table_find(&t, 0x10), &rows[0]);
	assert_ptr_equal(dcp_unwind_table_find(&t, 0x1f), &rows[0]);
	assert_ptr_equal(dcp_unwind_table_find(&t, 0x20), &rows[1]);
	assert_ptr_equal(dcp_unwind_table_find(&t, 0x30), &rows[2]);
	assert_ptr_equal(dcp_unwind_table_find(&t, 1ull << 40), &rows[2]);
}

static void test_row_layout(void **state)
{
	/* the BPF programs read the same 12 bytes */
	assert_int_equal(sizeof(struct dcp_unwind_row), 12);
	assert_int_equal(offsetof(struct dcp_unwind_row, kind), 4);
	assert_int_equal(offsetof(struct dcp_unwind_row, param), 5);
	assert_int_equal(offsetof(struct dcp_unwind_row, fp_off), 6);
	assert_int_equal(offsetof(struct dcp_unwind_row, cfa_off), 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_row_layout),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_header_only),
		cmocka_unit_test(test_no_fde),
		cmocka_unit_test(test_code_past_4g),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_no_search_table),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_llvm_built),
		cmocka_unit_test(test_python),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
