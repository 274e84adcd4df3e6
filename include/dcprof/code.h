/* SPDX-License-Identifier: MIT */
/*
 * libdcprof: the machine code of sampled functions, to be disassembled
 * beside their samples (dcprof annotate). Included by dcprof/dcprof.h,
 * whose conventions it follows; not to be included alone.
 */
#ifndef DCPROF_CODE_H
#define DCPROF_CODE_H

#ifndef DCPROF_DCPROF_H
#error "include <dcprof/dcprof.h>, which includes this header"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_profile;

/*
 * The machine code of [start, start + size) of the object a cookie
 * stands for (offsets as dcp_frame's; size cut at the end of the segment
 * holding start): a file's, read through a recorded path that still holds
 * it (build id, else device and inode), with lines from it or its
 * separate debug file; the kernel's or a module's, read from /proc/kcore
 * (root) at the running kernel's addresses when the profile was recorded
 * on the running kernel (by build id), named by /proc/kallsyms, or the
 * kernel's from a vmlinux file (opts->vmlinux). NULL with
 * errno and a message saying why it cannot be read. The code object is
 * closed before the profile.
 */
struct dcp_code;

struct dcp_code_opts {
	size_t sz;
	/* Searched before /usr/lib/debug for separate debug files, as
	 * dcp_resymbolize_opts' are. */
	const char *const *debuginfo_dirs;
	size_t nr_debuginfo_dirs;
	/* The kernel's code (not its modules') from this ELF image of it,
	 * with its symbols and DWARF, instead of /proc/kcore: accepted when
	 * its build id is the profile's kernel's. */
	const char *vmlinux;
};

struct dcp_code_info {
	size_t sz; /* sizeof(struct dcp_code_info), set by the caller */
	const uint8_t *bytes; /* the code, owned by the code object */
	size_t size;
	/* where bytes[0] runs: the file's (or vmlinux's) virtual address,
	 * or the running kernel's address */
	uint64_t address;
	uint16_t machine; /* its ELF e_machine (EM_X86_64, EM_AARCH64) */
	const char *path; /* the file read, or "/proc/kcore" */
};

DCPROF_API struct dcp_code *
dcp_profile_code_open(const struct dcp_profile *p, uint32_t cookie,
		      uint64_t start, uint64_t size,
		      const struct dcp_code_opts *opts);
/* What was read into *info (info->sz set by the caller). */
DCPROF_API int dcp_code_get_info(const struct dcp_code *c,
				 struct dcp_code_info *info);
/*
 * The source line of the instruction at address (one of the code's),
 * its file joined to its compilation directory when relative: *file is
 * valid until the next call. -ENOENT when DWARF has no line for it (and
 * for kernel code).
 */
DCPROF_API int dcp_code_line(struct dcp_code *c, uint64_t address,
			     const char **file, uint32_t *line);
/*
 * The functions that n addresses of the same object are in (the targets
 * of direct calls and jumps): names[i] ("labs@plt" for a PLT stub, NULL
 * when no symbol covers it) and offsets[i], the address's distance from
 * the function's start. The names live as long as c.
 */
DCPROF_API int dcp_code_names(struct dcp_code *c, const uint64_t *addresses,
			      size_t n, const char **names, uint64_t *offsets);
DCPROF_API void dcp_code_close(struct dcp_code *c);

#ifdef __cplusplus
}
#endif

#endif /* DCPROF_CODE_H */
