// SPDX-License-Identifier: MIT
/*
 * DWARF call graphs, unwound as samples arrive. Each sample of
 * --call-graph dwarf carries the user registers and a copy of the top of
 * the user stack; libdwfl's CFI unwinder walks that copy against a Dwfl
 * that holds the process's files at their load addresses. Only the
 * resulting frames are kept, so the profile does not grow with the stack
 * copies.
 *
 * One Dwfl per process, cached and rebuilt when the process's maps change
 * (map_generation). libdwfl reads .eh_frame_hdr/.eh_frame (or
 * .debug_frame) of a module once and caches what it looked up, so a file's
 * CFI is parsed once per Dwfl, never per sample.
 *
 * Never a wrong frame: libdwfl falls back to frame-pointer unwinding on
 * x86_64 when a frame has no CFI or its CFI fails, and in code built
 * without frame pointers that fallback invents callers. CFI unwinding
 * keeps the callee-saved registers (same value or restored from the
 * stack); the fallback restores only rsp, rbp and rip. A frame whose r12 is
 * unknown therefore came from the fallback: the stack stops before it.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dcprof/dcprof.h"
#include "elf_segments_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "unwind_internal.h"

/* Dwfls kept at once; each holds one descriptor per mapped file. */
#define MAX_PROCS 32
/* callee-saved, and same-value in libdwfl's x86_64 ABI rules (which
 * name rax where the comment says rbx: r12 is safe from that) */
#define DWARF_R12 12u

/* ---- registers ------------------------------------------------------------ */

/* perf_regs index to DWARF number; 0xff: not a register CFI uses */
static const uint8_t perf_to_dwarf[24] = {
	0,	    /* AX */ 3,
	/* BX */ 2, /* CX */ 1, /* DX */
	4,	    /* SI */ 5,
	/* DI */ 6, /* BP */ 7, /* SP */
	16,	    /* IP */ 0xff,
	0xff,	    0xff,
	0xff,	    0xff,
	0xff,	    0xff,
	8,	    9,
	10,	    11, /* R8..R11 */
	12,	    13,
	14,	    15, /* R12..R15 */
};

uint32_t dcp_unwind_regs_to_dwarf(const uint64_t *regs, uint32_t nr_regs,
				  uint64_t mask,
				  uint64_t dwarf[DCP_UNWIND_NR_DWARF_REGS])
{
	uint32_t filled = 0, i = 0;

	memset(dwarf, 0, DCP_UNWIND_NR_DWARF_REGS * sizeof(*dwarf));
	for (unsigned bit = 0; bit < 64 && i < nr_regs; bit++) {
		uint64_t v;

		if (!(mask & (1ull << bit)))
			continue;
		v = regs[i++];
		if (bit < sizeof(perf_to_dwarf) && perf_to_dwarf[bit] != 0xff) {
			dwarf[perf_to_dwarf[bit]] = v;
			filled |= 1u << perf_to_dwarf[bit];
		}
	}
	return filled;
}

/* ---- the unwinder ----------------------------------------------------------- */

/* The PT_LOAD segments of a cookie's file, read once. */
struct layout {
	uint8_t state; /* 0: not read, 1: read, 2: not an ELF we can use */
	size_t nr;
	struct dcp_elf_segment *segs;
};

struct uproc {
	pid_t pid; /* 0: free slot */
	uint64_t generation;
	uint64_t last_use;
	Dwfl *dwfl; /* NULL: nothing to unwind with */
};

struct dcp_unwinder {
	struct dcp_unwind_opts opts;
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	struct uproc procs[MAX_PROCS];
	uint64_t clock, builds;
	struct layout *layouts;
	size_t nr_layouts;
	int vdso_fd;
	bool vdso_tried;

	/* the sample being unwound */
	uint64_t regs[DCP_UNWIND_NR_DWARF_REGS];
	const unsigned char *stack;
	uint64_t stack_lo, stack_size;
	bool read_beyond, read_failed, depth_reached, fallback, failed;
	struct dcp_unwind_frame *frames;
	uint32_t nr, max;
};

/* Separate debug files are not looked for: the hot path must not search
 * the file system (or debuginfod) for CFI that .eh_frame already has. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name,
			const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	return -1;
}

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	/* threads are named by the samples, never listed */
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg,
		       void **thread_argp)
{
	*thread_argp = dwfl_arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *dwfl_arg)
{
	struct dcp_unwinder *u = dwfl_arg;

	if (addr >= u->stack_lo && u->stack_size >= sizeof(*result) &&
	    addr - u->stack_lo <= u->stack_size - sizeof(*result)) {
		memcpy(result, u->stack + (addr - u->stack_lo),
		       sizeof(*result));
		return true;
	}
	u->read_failed = true;
	if (addr >= u->stack_lo + u->stack_size)
		u->read_beyond = true;
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct dcp_unwinder *u = thread_arg;

	if (!dwfl_thread_state_registers(thread, 0, DCP_UNWIND_NR_DWARF_REGS,
					 u->regs))
		return false;
	dwfl_thread_state_register_pc(thread, u->regs[DCP_UNWIND_DWARF_IP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct dcp_unwinder *dcp_unwinder_new(const struct dcp_unwind_opts *opts)
{
	struct dcp_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return dcp_error_null(ENOMEM, "out of memory");
	elf_version(EV_CURRENT);
	u->opts = *opts;
	u->cb.find_elf = dwfl_build_id_find_elf;
	u->cb.find_debuginfo = no_debuginfo;
	u->cb.section_address = dwfl_offline_section_address;
	u->cb.debuginfo_path = &u->debuginfo_path;
	u->vdso_fd = -1;
	return u;
}

static void uproc_clear(struct uproc *up)
{
	if (up->dwfl)
		dwfl_end(up->dwfl);
	memset(up, 0, sizeof(*up));
}

void dcp_unwinder_free(struct dcp_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < MAX_PROCS; i++)
		uproc_clear(&u->procs[i]);
	for (size_t i = 0; i < u->nr_layouts; i++)
		free(u->layouts[i].segs);
	free(u->layouts);
	if (u->vdso_fd >= 0)
		close(u->vdso_fd);
	free(u);
}

void dcp_unwinder_forget(struct dcp_unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < MAX_PROCS; i++)
		if (u->procs[i].pid == pid)
			uproc_clear(&u->procs[i]);
}

uint64_t dcp_unwinder_builds(const struct dcp_unwinder *u)
{
	return u->builds;
}

/*
 * Every process of this kernel maps the same vdso, so our own image,
 * copied into a memory file, stands for all of them (libdwfl reads files).
 */
static int vdso_fd(struct dcp_unwinder *u)
{
	const unsigned char *img;
	size_t size;
	int fd;

	if (u->vdso_tried)
		return u->vdso_fd;
	u->vdso_tried = true;
	if (dcp_vdso_image(&img, &size) < 0)
		return -1;
	fd = memfd_create("dcprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, img, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	u->vdso_fd = fd;
	return fd;
}

static struct layout *layout_of(struct dcp_unwinder *u, uint32_t cookie, int fd)
{
	struct layout *l;
	Elf *elf;

	if (cookie >= u->nr_layouts) {
		size_t old = u->nr_layouts;
		struct layout *grown =
			dcp_grow(u->layouts, &u->nr_layouts, (size_t)cookie + 1,
				 sizeof(*grown));

		if (!grown)
			return NULL;
		memset(grown + old, 0, (u->nr_layouts - old) * sizeof(*grown));
		u->layouts = grown;
	}
	l = &u->layouts[cookie];
	if (l->state)
		return l->state == 1 ? l : NULL;
	l->state = 2;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return NULL;
	if (elf_kind(elf) == ELF_K_ELF &&
	    dcp_elf_load_segments(elf, &l->segs, &l->nr) == 0 && l->nr)
		l->state = 1;
	elf_end(elf);
	return l->state == 1 ? l : NULL;
}

/* The load bias that puts file offset map->pgoff at map->start. */
static bool map_bias(const struct layout *l, const struct dcp_map *map,
		     uint64_t *bias)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < l->nr; i++) {
		const struct dcp_elf_segment *s = &l->segs[i];
		uint64_t first = s->offset & ~(uint64_t)(page - 1);

		if (map->pgoff >= first && map->pgoff < s->offset + s->filesz) {
			*bias = map->start + s->offset - map->pgoff - s->vaddr;
			return true;
		}
	}
	return false;
}

static bool is_special(const struct dcp_unwinder *u, uint32_t cookie)
{
	return cookie == DCP_COOKIE_UNKNOWN || cookie == u->opts.anon_cookie ||
	       cookie == u->opts.vsyscall_cookie;
}

static void report_map(struct dcp_unwinder *u, Dwfl *dwfl,
		       const struct dcp_process *p, const struct dcp_map *map)
{
	const struct layout *l;
	uint64_t bias;
	char name[32];
	int fd;

	if (map->cookie == u->opts.vdso_cookie) {
		fd = vdso_fd(u);
		fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	} else {
		fd = u->opts.open_map(u->opts.ctx, p, map);
	}
	if (fd < 0)
		return;
	l = layout_of(u, map->cookie, fd);
	if (!l || !map_bias(l, map, &bias)) {
		close(fd);
		return;
	}
	snprintf(name, sizeof(name), "%u", map->cookie);
	/* on success libdwfl owns the descriptor */
	if (!dwfl_report_elf(dwfl, name, name, fd, bias, true))
		close(fd);
}

static Dwfl *build(struct dcp_unwinder *u, const struct dcp_process *p)
{
	uint32_t *seen = calloc(p->nr_maps ? p->nr_maps : 1, sizeof(*seen));
	size_t nr_seen = 0;
	Dwfl *dwfl;

	u->builds++;
	if (!seen)
		return NULL;
	dwfl = dwfl_begin(&u->cb);
	if (!dwfl) {
		free(seen);
		return NULL;
	}
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < p->nr_maps; i++) {
		const struct dcp_map *map = &p->maps[i];
		bool dup = false;

		if (is_special(u, map->cookie))
			continue;
		/* a file mapped twice is reported once */
		for (size_t j = 0; j < nr_seen && !dup; j++)
			dup = seen[j] == map->cookie;
		if (dup)
			continue;
		seen[nr_seen++] = map->cookie;
		report_map(u, dwfl, p, map);
	}
	free(seen);
	if (dwfl_report_end(dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(dwfl, NULL, p->pid, &thread_callbacks, u)) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

static struct uproc *uproc_get(struct dcp_unwinder *u,
			       const struct dcp_process *p)
{
	struct uproc *up = NULL, *oldest = &u->procs[0];

	for (size_t i = 0; i < MAX_PROCS && !up; i++) {
		if (u->procs[i].pid == p->pid)
			up = &u->procs[i];
		else if (u->procs[i].last_use < oldest->last_use)
			oldest = &u->procs[i];
	}
	if (up && up->generation != p->map_generation)
		uproc_clear(up);
	else if (!up)
		uproc_clear(up = oldest);
	if (!up->pid) {
		up->pid = p->pid;
		up->generation = p->map_generation;
		up->dwfl = build(u, p);
	}
	up->last_use = ++u->clock;
	return up;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct dcp_unwinder *u = arg;
	Dwarf_Addr pc;
	Dwarf_Word r12;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation)) {
		u->failed = true;
		return DWARF_CB_ABORT;
	}
	/* see the top of the file: only the fallback loses r12 */
	if (u->nr > 0 && dwfl_frame_reg(state, DWARF_R12, &r12) != 0) {
		u->fallback = true;
		return DWARF_CB_ABORT;
	}
	u->frames[u->nr].pc = pc;
	u->frames[u->nr].activation = activation;
	u->nr++;
	if (u->nr >= u->max) {
		u->depth_reached = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

static bool has_cfi(Dwfl_Module *mod, Dwarf_Addr pc)
{
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame;
	Dwarf_Addr bias;

	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
		free(frame);
		return true;
	}
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
		free(frame);
		return true;
	}
	return false;
}

/* Why the walk stopped after the last frame it kept. */
static enum dcp_unwind_end classify(struct dcp_unwinder *u, Dwfl *dwfl)
{
	const struct dcp_unwind_frame *last = &u->frames[u->nr - 1];
	Dwarf_Addr pc = last->activation ? last->pc : last->pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);

	if (!mod || !has_cfi(mod, pc))
		return DCP_UNWIND_NO_CFI;
	if (u->read_beyond)
		return DCP_UNWIND_STACK_END;
	return DCP_UNWIND_OTHER;
}

uint32_t dcp_unwinder_unwind(struct dcp_unwinder *u,
			     const struct dcp_process *p,
			     const struct dcp_sample *s,
			     struct dcp_unwind_frame *frames, uint32_t max,
			     enum dcp_unwind_end *end)
{
	const uint32_t need = (1u << DCP_UNWIND_DWARF_SP) |
			      (1u << DCP_UNWIND_DWARF_IP) | (1u << DWARF_R12);
	struct uproc *up;
	uint32_t filled;
	int ret;

	*end = DCP_UNWIND_COMPLETE;
	if (!s->regs || !max)
		return 0;
	filled = dcp_unwind_regs_to_dwarf(s->regs, s->nr_regs,
					  DCP_UNWIND_REGS_MASK, u->regs);
	frames[0].pc = u->regs[DCP_UNWIND_DWARF_IP];
	frames[0].activation = true;
	if ((filled & need) != need) {
		*end = DCP_UNWIND_OTHER;
		return 1;
	}
	up = uproc_get(u, p);
	if (!up->dwfl) {
		*end = DCP_UNWIND_NO_CFI;
		return 1;
	}
	u->stack = s->stack;
	u->stack_lo = u->regs[DCP_UNWIND_DWARF_SP];
	u->stack_size = s->stack ? s->stack_size : 0;
	u->read_beyond = u->read_failed = false;
	u->depth_reached = u->fallback = u->failed = false;
	u->frames = frames;
	u->nr = 0;
	u->max = max;
	ret = dwfl_getthread_frames(up->dwfl, s->tid ? (pid_t)s->tid : p->pid,
				    frame_cb, u);
	if (u->nr == 0) {
		/* libdwfl refused even the first frame: keep the ip */
		u->nr = 1;
		*end = DCP_UNWIND_OTHER;
		return 1;
	}
	if (ret == 0 && !u->read_failed)
		*end = DCP_UNWIND_COMPLETE;
	else if (ret == 0)
		/* libdwfl takes a return address it could not read for the
		 * end of the stack */
		*end = u->read_beyond ? DCP_UNWIND_STACK_END : DCP_UNWIND_OTHER;
	else if (u->depth_reached || u->failed)
		*end = DCP_UNWIND_OTHER;
	else
		*end = classify(u, up->dwfl);
	return u->nr;
}
