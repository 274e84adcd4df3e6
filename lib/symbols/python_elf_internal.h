/* SPDX-License-Identifier: MIT */
/*
 * What a CPython interpreter file (the python program, or libpython)
 * exports that a walk of its Python frames needs: found in its dynamic
 * symbols, so that stripped files do.
 */
#ifndef DCPROF_PYTHON_ELF_INTERNAL_H
#define DCPROF_PYTHON_ELF_INTERNAL_H

#include <stdint.h>

struct dcp_python_elf {
	/* link-time addresses (the file's own, before relocation) */
	uint64_t runtime; /* _PyRuntime */
	uint64_t eval_start, eval_size; /* _PyEval_EvalFrameDefault */
	uint64_t version; /* Py_Version (3.11 on); 0: not exported */
	/*
	 * The address the file's first loadable segment links at, less its
	 * file offset, page aligned: the file's mapping of offset 0 at A
	 * puts a link-time address X at A + X - base.
	 */
	uint64_t base;
};

/*
 * The CPython symbols of the ELF file open at fd into *out: 0, -ENOENT
 * when the file exports no _PyRuntime (not an interpreter), or another
 * negative errno with a message (not ELF, unreadable).
 */
int dcp_python_elf_read(int fd, struct dcp_python_elf *out);

#endif
