// SPDX-License-Identifier: MIT
/*
 * The CPython layouts the walk knows (python_internal.h). Each offset's
 * comment is the expression tests/t/t0521-python-layout.sh has gdb
 * evaluate in the interpreter's debug info: keep one field a line.
 */
#include <stddef.h>

#include "python_internal.h"

static const struct dcp_py_layout layouts[] = {
	{
		.version = "3.11",
		.hex_min = 0x030b0000,
		.hex_max = 0x030bffff,
		/* gdb: &((struct pyruntimestate *)0)->interpreters.head */
		.runtime_interp_head = 40,
		/* gdb: &((struct _is *)0)->threads.head */
		.interp_threads_head = 16,
		/* gdb: &((struct _ts *)0)->next */
		.tstate_next = 8,
		/* gdb: &((struct _ts *)0)->native_thread_id */
		.tstate_native_tid = 160,
		/* gdb: &((struct _ts *)0)->cframe */
		.tstate_cframe = 56,
		/* gdb: &((struct _PyCFrame *)0)->current_frame */
		.cframe_frame = 8,
		/* gdb: &((struct _PyInterpreterFrame *)0)->f_code */
		.frame_code = 32,
		/* gdb: &((struct _PyInterpreterFrame *)0)->previous */
		.frame_previous = 48,
		/* gdb: &((struct _PyInterpreterFrame *)0)->prev_instr */
		.frame_prev_instr = 56,
		/* gdb: &((struct _PyInterpreterFrame *)0)->is_entry */
		.frame_entry = 68,
		/* gdb: &((PyCodeObject *)0)->co_qualname */
		.code_qualname = 128,
		/* gdb: &((PyCodeObject *)0)->co_filename */
		.code_filename = 112,
		/* gdb: &((PyCodeObject *)0)->co_firstlineno */
		.code_firstlineno = 72,
		/* gdb: &((PyCodeObject *)0)->co_linetable */
		.code_linetable = 136,
		/* gdb: &((PyCodeObject *)0)->co_code_adaptive */
		.code_adaptive = 184,
		/* gdb: &((PyVarObject *)0)->ob_size */
		.var_size = 16,
		/* gdb: &((PyBytesObject *)0)->ob_sval */
		.bytes_data = 32,
		/* gdb: &((PyASCIIObject *)0)->length */
		.str_length = 16,
		/* gdb: &((PyASCIIObject *)0)->state */
		.str_state = 32,
		/* gdb: sizeof(PyASCIIObject) */
		.str_ascii_data = 48,
		/* gdb: sizeof(PyCompactUnicodeObject) */
		.str_compact_data = 72,
	},
	{
		.version = "3.12",
		.hex_min = 0x030c0000,
		.hex_max = 0x030cffff,
		/* gdb: &((struct pyruntimestate *)0)->interpreters.head */
		.runtime_interp_head = 40,
		/* gdb: &((struct _is *)0)->threads.head */
		.interp_threads_head = 72,
		/* gdb: &((struct _ts *)0)->next */
		.tstate_next = 8,
		/* gdb: &((struct _ts *)0)->native_thread_id */
		.tstate_native_tid = 144,
		/* gdb: &((struct _ts *)0)->cframe */
		.tstate_cframe = 56,
		/* gdb: &((struct _PyCFrame *)0)->current_frame */
		.cframe_frame = 0,
		/* gdb: &((struct _PyInterpreterFrame *)0)->f_code */
		.frame_code = 0,
		/* gdb: &((struct _PyInterpreterFrame *)0)->previous */
		.frame_previous = 8,
		/* gdb: &((struct _PyInterpreterFrame *)0)->prev_instr */
		.frame_prev_instr = 56,
		/* gdb: &((struct _PyInterpreterFrame *)0)->owner */
		.frame_entry = 70,
		/* gdb: FRAME_OWNED_BY_CSTACK */
		.shim_owner = 3,
		/* gdb: &((PyCodeObject *)0)->co_qualname */
		.code_qualname = 128,
		/* gdb: &((PyCodeObject *)0)->co_filename */
		.code_filename = 112,
		/* gdb: &((PyCodeObject *)0)->co_firstlineno */
		.code_firstlineno = 68,
		/* gdb: &((PyCodeObject *)0)->co_linetable */
		.code_linetable = 136,
		/* gdb: &((PyCodeObject *)0)->co_code_adaptive */
		.code_adaptive = 192,
		/* gdb: &((PyVarObject *)0)->ob_size */
		.var_size = 16,
		/* gdb: &((PyBytesObject *)0)->ob_sval */
		.bytes_data = 32,
		/* gdb: &((PyASCIIObject *)0)->length */
		.str_length = 16,
		/* gdb: &((PyASCIIObject *)0)->state */
		.str_state = 32,
		/* gdb: sizeof(PyASCIIObject) */
		.str_ascii_data = 40,
		/* gdb: sizeof(PyCompactUnicodeObject) */
		.str_compact_data = 56,
	},
	{
		.version = "3.13",
		.hex_min = 0x030d0000,
		.hex_max = 0x030dffff,
		/* gdb: &((struct pyruntimestate *)0)->interpreters.head */
		.runtime_interp_head = 632,
		/* gdb: &((struct _is *)0)->threads.head */
		.interp_threads_head = 7344,
		/* gdb: &((struct _ts *)0)->next */
		.tstate_next = 8,
		/* gdb: &((struct _ts *)0)->native_thread_id */
		.tstate_native_tid = 160,
		/* gdb: &((struct _ts *)0)->current_frame */
		.tstate_frame = 72,
		/* gdb: &((struct _PyInterpreterFrame *)0)->f_executable */
		.frame_code = 0,
		/* gdb: &((struct _PyInterpreterFrame *)0)->previous */
		.frame_previous = 8,
		/* gdb: &((struct _PyInterpreterFrame *)0)->instr_ptr */
		.frame_prev_instr = 56,
		/* gdb: &((struct _PyInterpreterFrame *)0)->owner */
		.frame_entry = 70,
		/* gdb: FRAME_OWNED_BY_CSTACK */
		.shim_owner = 3,
		/* gdb: &((PyCodeObject *)0)->co_qualname */
		.code_qualname = 128,
		/* gdb: &((PyCodeObject *)0)->co_filename */
		.code_filename = 112,
		/* gdb: &((PyCodeObject *)0)->co_firstlineno */
		.code_firstlineno = 68,
		/* gdb: &((PyCodeObject *)0)->co_linetable */
		.code_linetable = 136,
		/* gdb: &((PyCodeObject *)0)->co_code_adaptive */
		.code_adaptive = 200,
		/* gdb: &((PyVarObject *)0)->ob_size */
		.var_size = 16,
		/* gdb: &((PyBytesObject *)0)->ob_sval */
		.bytes_data = 32,
		/* gdb: &((PyASCIIObject *)0)->length */
		.str_length = 16,
		/* gdb: &((PyASCIIObject *)0)->state */
		.str_state = 32,
		/* gdb: sizeof(PyASCIIObject) */
		.str_ascii_data = 40,
		/* gdb: sizeof(PyCompactUnicodeObject) */
		.str_compact_data = 56,
	},
};

const struct dcp_py_layout *dcp_py_layout_find(uint32_t version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (version >= layouts[i].hex_min &&
		    version <= layouts[i].hex_max)
			return &layouts[i];
	return NULL;
}
