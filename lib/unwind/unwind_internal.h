/* SPDX-License-Identifier: MIT */
/*
 * DWARF call graphs, unwound online: the sample layout of
 * --call-graph dwarf (kernel callchain, user registers, user stack copy),
 * the mapping of perf's x86_64 registers to DWARF numbers, and the
 * unwinder, which walks a copied user stack with libdwfl's CFI unwinder
 * against a per-process Dwfl built from the process's maps.
 */
#ifndef DCPROF_UNWIND_INTERNAL_H
#define DCPROF_UNWIND_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "process_internal.h"
#include "records_internal.h"

/*
 * perf's x86_64 register indices (asm/perf_regs.h): AX BX CX DX SI DI BP
 * SP IP are 0..8, R8..R15 are 16..23. DS, ES, FS and GS are refused for
 * 64-bit tasks, FLAGS, CS and SS are of no use to CFI.
 */
#define DCP_UNWIND_REGS_MASK 0x00ff01ffull
#define DCP_UNWIND_NR_REGS 17u /* bits in DCP_UNWIND_REGS_MASK */
/* DWARF x86_64: 0..15 the GPRs, 16 the return address (rip) */
#define DCP_UNWIND_NR_DWARF_REGS 17u
#define DCP_UNWIND_DWARF_SP 7u
#define DCP_UNWIND_DWARF_IP 16u

#define DCP_UNWIND_STACK_DEFAULT 8192u /* bytes, as perf */
#define DCP_UNWIND_STACK_MAX 65528u /* the kernel's limit (u16 record size) */

/*
 * perf's user registers (in mask order) to the DWARF numbering libdwfl's
 * x86_64 backend uses. Registers missing from mask are set to 0 and
 * reported missing by the return value: a bit set for every DWARF
 * register filled.
 */
uint32_t dcp_unwind_regs_to_dwarf(const uint64_t *regs, uint32_t nr_regs,
				  uint64_t mask,
				  uint64_t dwarf[DCP_UNWIND_NR_DWARF_REGS]);

/* Why an unwound stack stops. */
enum dcp_unwind_end {
	DCP_UNWIND_COMPLETE = 0, /* the CFI said: outermost frame */
	DCP_UNWIND_STACK_END = 1, /* needed memory past the stack copy */
	DCP_UNWIND_NO_CFI = 2, /* a frame without CFI: vdso, anon, JIT, ... */
	DCP_UNWIND_OTHER = 3, /* a CFI failure, the depth limit, ... */
};

struct dcp_unwind_frame {
	uint64_t pc;
	/* pc is the interrupted instruction itself (leaf, or the frame a
	 * signal interrupted), not a return address */
	bool activation;
};

/*
 * Where the unwinder gets the files of a process: a new descriptor of the
 * file mapped by map (the unwinder owns it), or -1 when it has none (the
 * frame then stops the stack with DCP_UNWIND_NO_CFI).
 */
typedef int (*dcp_unwind_open_fn)(void *ctx, const struct dcp_process *p,
				  const struct dcp_map *map);

struct dcp_unwind_opts {
	dcp_unwind_open_fn open_map;
	void *ctx;
	/* maps with this cookie are the kernel's vdso, read from our own */
	uint32_t vdso_cookie;
	/* maps with these cookies have no file (never opened) */
	uint32_t anon_cookie, vsyscall_cookie;
};

struct dcp_unwinder;

struct dcp_unwinder *dcp_unwinder_new(const struct dcp_unwind_opts *opts);
void dcp_unwinder_free(struct dcp_unwinder *u);

/* The process exited: drop its Dwfl and descriptors. */
void dcp_unwinder_forget(struct dcp_unwinder *u, pid_t pid);

/*
 * Unwind one sample of process p (its maps as of the sample's time,
 * p->map_generation telling when they changed) from the user registers
 * and stack copy in s. Fills at most max frames, leaf first (the first is
 * always the sampled user ip when s has registers), and returns how many;
 * *end says why the stack stops. Never fails: what cannot be unwound
 * ends the stack.
 */
uint32_t dcp_unwinder_unwind(struct dcp_unwinder *u,
			     const struct dcp_process *p,
			     const struct dcp_sample *s,
			     struct dcp_unwind_frame *frames, uint32_t max,
			     enum dcp_unwind_end *end);

/* How many Dwfl were built, for the curious (tests, -v). */
uint64_t dcp_unwinder_builds(const struct dcp_unwinder *u);

#endif
