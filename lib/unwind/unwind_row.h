/* SPDX-License-Identifier: MIT */
/*
 * One row of a compact unwind table (x86-64): how to find the caller's
 * frame for a range of file offsets. Shared with the BPF programs, which
 * are compiled by clang -target bpf: plain C types only and no includes.
 */
#ifndef DCPROF_UNWIND_ROW_H
#define DCPROF_UNWIND_ROW_H

/* How a row finds the caller's frame (struct dcp_unwind_row.kind). */
enum dcp_unwind_kind {
	/* no FDE covers these addresses: the walker falls back to frame pointers */
	DCP_UNWIND_ROW_GAP = 0,
	/* CFA = rsp + cfa_off */
	DCP_UNWIND_ROW_SP = 1,
	/* CFA = rbp + cfa_off */
	DCP_UNWIND_ROW_FP = 2,
	/* CFA = rsp + cfa_off + ((rip & 15) >= param ? 8 : 0): .plt entries' expression */
	DCP_UNWIND_ROW_PLT = 3,
	/*
	 * a signal trampoline (__restore_rt): caller's rsp, rbp, rip are in
	 * the ucontext at rsp (offsets 160, 120, 168)
	 */
	DCP_UNWIND_ROW_SIGNAL = 4,
	/* return address undefined: the outermost frame, the stack is whole */
	DCP_UNWIND_ROW_END = 5,
	/* a rule no other kind expresses: the walk ends there */
	DCP_UNWIND_ROW_UNSUPPORTED = 6,
};

/* fp_off: rbp keeps its value */
#define DCP_UNWIND_FP_SAME 0
/*
 * fp_off: rbp's rule is not expressible (undefined, expression, register):
 * unknown in the caller
 */
#define DCP_UNWIND_FP_LOST (-32768)

/*
 * 12 bytes. In every row but SP, FP and PLT rows, param, fp_off and
 * cfa_off are 0, so that equal rows merge.
 */
struct dcp_unwind_row {
	/* FILE OFFSET (not vaddr) where this row begins; it lasts until the next row's off */
	unsigned int off;
	/* enum dcp_unwind_kind */
	unsigned char kind;
	/*
	 * PLT: the (rip & 15) threshold from the expression (11 for .plt, 10
	 * in some .plt.sec/.plt.got variants: read from the expression)
	 */
	unsigned char param;
	/* rbp saved at CFA + fp_off; DCP_UNWIND_FP_SAME / DCP_UNWIND_FP_LOST */
	short fp_off;
	/* added to rsp (SP, PLT) or rbp (FP) to give the CFA */
	int cfa_off;
};

#endif
