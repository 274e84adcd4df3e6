/* SPDX-License-Identifier: MIT */
/*
 * Python frames: the layouts of the CPython versions the walk
 * knows, the processes running one (found by the file that exports
 * _PyRuntime), and the names of their code objects, read once per process
 * from its memory and kept with the profile like JIT names (a perf map of
 * the recorder's own, pinned to the process's "[python:PID]" cookie).
 */
#ifndef DCPROF_PYTHON_INTERNAL_H
#define DCPROF_PYTHON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcprof/dcprof.h"
#include "dwarf_types_internal.h"
#include "profile_common.h"

/*
 * The offsets, in bytes, of the fields read in one CPython version's
 * structures (python_layout.c: from the interpreter's debug info, else
 * from the table; the fields a version does not use are 0).
 */
struct dcp_py_layout {
	const char *version; /* "3.11" */
	uint16_t runtime_interp_head; /* _PyRuntime.interpreters.head */
	uint16_t interp_threads_head; /* PyInterpreterState.threads.head */
	uint16_t tstate_next, tstate_native_tid, tstate_cframe;
	uint16_t cframe_frame; /* _PyCFrame.current_frame */
	uint16_t tstate_frame; /* 3.13: PyThreadState.current_frame, else 0 */
	uint16_t frame_code, frame_previous, frame_prev_instr;
	/* is_entry (3.11), or owner with shim_owner (3.12 on): profile_common.h */
	uint16_t frame_entry, shim_owner;
	uint16_t code_qualname, code_filename, code_firstlineno;
	uint16_t code_linetable, code_adaptive;
	uint16_t var_size; /* PyVarObject.ob_size */
	uint16_t bytes_data; /* PyBytesObject.ob_sval */
	/* PyASCIIObject: length, state; data after PyASCIIObject (ASCII)
	 * or after PyCompactUnicodeObject (other compact strings) */
	uint16_t str_length, str_state, str_ascii_data, str_compact_data;
};

/*
 * One field of a version's layout: the member of struct dcp_py_layout it
 * sets, the table's value, and the question whose answer in the
 * interpreter's debug info is that value (tests/t/t0521-python-layout.sh
 * has gdb answer it too).
 */
struct dcp_py_field {
	const char *name; /* the member's: "tstate_next" */
	uint16_t at; /* offsetof(struct dcp_py_layout, that member) */
	uint16_t value;
	struct dcp_dwarf_query query;
};

/* A CPython version the walk knows: the Py_Version values it holds for,
 * and the fields its walk reads. */
struct dcp_py_version {
	const char *version; /* "3.11" */
	uint32_t hex_min, hex_max;
	const struct dcp_py_field *fields;
	size_t nr_fields;
};

/* The version Py_Version says (PY_VERSION_HEX) is of; NULL: none known. */
const struct dcp_py_version *dcp_py_version_find(uint32_t hex);

/*
 * The layout of v into *out, each field i set to values[i] (its answer
 * in the debug info), or to the table's value when values is NULL: 0, or
 * -ERANGE naming the field that does not fit in *why.
 */
int dcp_py_layout_make(const struct dcp_py_version *v, const int64_t *values,
		       struct dcp_py_layout *out, const char **why);

/*
 * The questions of v's fields answered by the debug info of the
 * interpreter file open at fd (path: its name in the process's maps, for
 * the search of a separate debug file), as dcp_dwarf_types_answer() with
 * the symbolizer s (NULL: no symbol cache): a[v->nr_fields] and the
 * number answered, or a negative errno (-ENOENT: no debug info found).
 */
int dcp_py_layout_ask(const struct dcp_py_version *v, struct dcp_symbolizer *s,
		      const char *path, int fd, struct dcp_dwarf_answer *a,
		      char **dwarf_path);

/*
 * The layouts of the interpreter files met, each found once per file (by
 * build id, else by device and inode): from the file's debug info when it
 * answers every question of its version, else the table's. Where a file's
 * layout came from is said once (DCP_LOG_INFO), and every field on which
 * the debug info and the table disagree.
 */
struct dcp_py_layouts;
struct dcp_py_layouts *dcp_py_layouts_new(void);
void dcp_py_layouts_free(struct dcp_py_layouts *ls);
/* The layout of version v for the interpreter file open at fd (path as
 * above); NULL only when out of memory (message set). */
const struct dcp_py_layout *dcp_py_layouts_get(struct dcp_py_layouts *ls,
					       const struct dcp_py_version *v,
					       const char *path, int fd);

/*
 * The source line of instruction instr (code units from the start of the
 * code) by a CPython location table (co_linetable, 3.11 to 3.13) of a
 * code object starting at first_line: the line, or -1 when it gives none.
 */
int dcp_py_line(const uint8_t *table, size_t len, int first_line,
		uint32_t instr);

struct dcp_recorder;
struct dcp_python;

struct dcp_python *dcp_python_new(struct dcp_recorder *r);
void dcp_python_free(struct dcp_python *py);

/*
 * Process pid, with nr_maps maps known: looked at for a CPython
 * interpreter in its maps, once until forgotten or until its number of
 * maps changes (SIZE_MAX: unknown, just exec'd), at most 4 times. 1 with its walk's entry
 * in *out (for the kernel's py_procs), 0 when it is no Python process of a
 * known version or was looked at already, negative errno on failure.
 */
int dcp_python_probe(struct dcp_python *py, uint32_t pid, size_t nr_maps,
		     struct dcp_bpf_py_proc *out);

/* Whether a file's path names a CPython interpreter (python*, libpython*):
 * only those are opened and their symbols read. */
bool dcp_python_interpreter_name(const char *path);

struct dcp_cookie_set;

/* The cookies of the live Python processes' code maps into needed: their
 * pins hold the names of every code object read. */
void dcp_python_need(const struct dcp_python *py,
		     struct dcp_cookie_set *needed);

/* Process pid exited or ran another program: looked at again if sampled
 * again. 1 when it was a Python process (its py_procs entry to delete). */
int dcp_python_forget(struct dcp_python *py, uint32_t pid);

/* Code object addr of pid, met by a walk for the first time: read now,
 * while the process lives. 0, or -ENOMEM. */
int dcp_python_note_code(struct dcp_python *py, uint32_t pid, uint64_t addr);

/*
 * A Python frame of pid as the walk gave it (DCP_BPF_IS_PY_FRAME), in the
 * drain numbered drain, into f: the process's Python cookie and, as
 * offset, the code object (its address over 8) above the version of the
 * code at that address (DCP_PY_VERSION_BITS: another code object there
 * since, the first freed, checked once a drain) above the source line
 * (DCP_PY_LINE_BITS). The code object is named on first sight; one that
 * cannot be read is counted (dcp_python_unnamed) and its frames stay
 * unresolved.
 */
#define DCP_PY_VERSION_BITS 4
#define DCP_PY_LINE_BITS 16
int dcp_python_frame(struct dcp_python *py, uint32_t pid, uint64_t ip,
		     uint32_t drain, struct dcp_frame *f);
uint64_t dcp_python_unnamed(const struct dcp_python *py);

#endif
