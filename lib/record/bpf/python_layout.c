// SPDX-License-Identifier: MIT
/*
 * The CPython layouts the walk reads by (python_internal.h): for each
 * version the walk knows, each field it reads with its value and the
 * question that gives it in the interpreter's debug info (a member's
 * offset, a type's size, an enumerator). A file whose debug info can be
 * found answers them itself, so that a build with other options or a
 * patched release is read by its own layout; the table's values, which
 * tests/t/t0521-python-layout.sh checks against released builds' debug
 * info with gdb, stand for the rest. Keep one field a line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buildid_internal.h"
#include "grow.h"
#include "log_internal.h"
#include "python_internal.h"
#include "symbolize_internal.h"

/*
 * FIELD(f, k, t, q, v): the layout's member f, the question of kind k
 * about type t and name q, and the table's value v. AT(f) is where f goes; a member of struct dcp_py_layout that is
 * not a uint16_t, as the fields are set, does not compile.
 */
/* clang-format off */
#define AT(f) _Generic(((struct dcp_py_layout *)0)->f,			\
		       uint16_t: offsetof(struct dcp_py_layout, f))
#define FIELD(f, k, t, q, v)						\
	{ .name = #f, .at = AT(f), .value = v,				\
	  .query = { .kind = k, .type = t, .name = q } }
/* clang-format on */
/* field f: the offset of member path (a.b) in type */
#define MEMBER(f, type, path, v) \
	FIELD(f, DCP_DWARF_MEMBER_OFFSET, type, path, v)
/* field f: sizeof(type) */
#define SIZE(f, type, v) FIELD(f, DCP_DWARF_TYPE_SIZE, type, NULL, v)
/* field f: the value of an enumerator */
#define ENUMERATOR(f, name, v) FIELD(f, DCP_DWARF_ENUMERATOR, NULL, name, v)

static const struct dcp_py_field layout_3_11[] = {
	MEMBER(runtime_interp_head, "struct pyruntimestate",
	       "interpreters.head", 40),
	MEMBER(interp_threads_head, "struct _is", "threads.head", 16),
	MEMBER(tstate_next, "struct _ts", "next", 8),
	MEMBER(tstate_native_tid, "struct _ts", "native_thread_id", 160),
	MEMBER(tstate_cframe, "struct _ts", "cframe", 56),
	MEMBER(cframe_frame, "struct _PyCFrame", "current_frame", 8),
	MEMBER(frame_code, "struct _PyInterpreterFrame", "f_code", 32),
	MEMBER(frame_previous, "struct _PyInterpreterFrame", "previous", 48),
	MEMBER(frame_prev_instr, "struct _PyInterpreterFrame", "prev_instr",
	       56),
	MEMBER(frame_entry, "struct _PyInterpreterFrame", "is_entry", 68),
	MEMBER(code_qualname, "PyCodeObject", "co_qualname", 128),
	MEMBER(code_filename, "PyCodeObject", "co_filename", 112),
	MEMBER(code_firstlineno, "PyCodeObject", "co_firstlineno", 72),
	MEMBER(code_linetable, "PyCodeObject", "co_linetable", 136),
	MEMBER(code_adaptive, "PyCodeObject", "co_code_adaptive", 184),
	MEMBER(var_size, "PyVarObject", "ob_size", 16),
	MEMBER(bytes_data, "PyBytesObject", "ob_sval", 32),
	MEMBER(str_length, "PyASCIIObject", "length", 16),
	MEMBER(str_state, "PyASCIIObject", "state", 32),
	SIZE(str_ascii_data, "PyASCIIObject", 48),
	SIZE(str_compact_data, "PyCompactUnicodeObject", 72),
};

static const struct dcp_py_field layout_3_12[] = {
	MEMBER(runtime_interp_head, "struct pyruntimestate",
	       "interpreters.head", 40),
	MEMBER(interp_threads_head, "struct _is", "threads.head", 72),
	MEMBER(tstate_next, "struct _ts", "next", 8),
	MEMBER(tstate_native_tid, "struct _ts", "native_thread_id", 144),
	MEMBER(tstate_cframe, "struct _ts", "cframe", 56),
	MEMBER(cframe_frame, "struct _PyCFrame", "current_frame", 0),
	MEMBER(frame_code, "struct _PyInterpreterFrame", "f_code", 0),
	MEMBER(frame_previous, "struct _PyInterpreterFrame", "previous", 8),
	MEMBER(frame_prev_instr, "struct _PyInterpreterFrame", "prev_instr",
	       56),
	MEMBER(frame_entry, "struct _PyInterpreterFrame", "owner", 70),
	ENUMERATOR(shim_owner, "FRAME_OWNED_BY_CSTACK", 3),
	MEMBER(code_qualname, "PyCodeObject", "co_qualname", 128),
	MEMBER(code_filename, "PyCodeObject", "co_filename", 112),
	MEMBER(code_firstlineno, "PyCodeObject", "co_firstlineno", 68),
	MEMBER(code_linetable, "PyCodeObject", "co_linetable", 136),
	MEMBER(code_adaptive, "PyCodeObject", "co_code_adaptive", 192),
	MEMBER(var_size, "PyVarObject", "ob_size", 16),
	MEMBER(bytes_data, "PyBytesObject", "ob_sval", 32),
	MEMBER(str_length, "PyASCIIObject", "length", 16),
	MEMBER(str_state, "PyASCIIObject", "state", 32),
	SIZE(str_ascii_data, "PyASCIIObject", 40),
	SIZE(str_compact_data, "PyCompactUnicodeObject", 56),
};

static const struct dcp_py_field layout_3_13[] = {
	MEMBER(runtime_interp_head, "struct pyruntimestate",
	       "interpreters.head", 632),
	MEMBER(interp_threads_head, "struct _is", "threads.head", 7344),
	MEMBER(tstate_next, "struct _ts", "next", 8),
	MEMBER(tstate_native_tid, "struct _ts", "native_thread_id", 160),
	MEMBER(tstate_frame, "struct _ts", "current_frame", 72),
	MEMBER(frame_code, "struct _PyInterpreterFrame", "f_executable", 0),
	MEMBER(frame_previous, "struct _PyInterpreterFrame", "previous", 8),
	MEMBER(frame_prev_instr, "struct _PyInterpreterFrame", "instr_ptr", 56),
	MEMBER(frame_entry, "struct _PyInterpreterFrame", "owner", 70),
	ENUMERATOR(shim_owner, "FRAME_OWNED_BY_CSTACK", 3),
	MEMBER(code_qualname, "PyCodeObject", "co_qualname", 128),
	MEMBER(code_filename, "PyCodeObject", "co_filename", 112),
	MEMBER(code_firstlineno, "PyCodeObject", "co_firstlineno", 68),
	MEMBER(code_linetable, "PyCodeObject", "co_linetable", 136),
	MEMBER(code_adaptive, "PyCodeObject", "co_code_adaptive", 200),
	MEMBER(var_size, "PyVarObject", "ob_size", 16),
	MEMBER(bytes_data, "PyBytesObject", "ob_sval", 32),
	MEMBER(str_length, "PyASCIIObject", "length", 16),
	MEMBER(str_state, "PyASCIIObject", "state", 32),
	SIZE(str_ascii_data, "PyASCIIObject", 40),
	SIZE(str_compact_data, "PyCompactUnicodeObject", 56),
};

#define VERSION(name, min, max, fields)                                    \
	{                                                                  \
		name, min, max, fields, sizeof(fields) / sizeof(fields[0]) \
	}

static const struct dcp_py_version versions[] = {
	VERSION("3.11", 0x030b0000, 0x030bffff, layout_3_11),
	VERSION("3.12", 0x030c0000, 0x030cffff, layout_3_12),
	VERSION("3.13", 0x030d0000, 0x030dffff, layout_3_13),
};

const struct dcp_py_version *dcp_py_version_find(uint32_t hex)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (hex >= versions[i].hex_min && hex <= versions[i].hex_max)
			return &versions[i];
	return NULL;
}

int dcp_py_layout_make(const struct dcp_py_version *v, const int64_t *values,
		       struct dcp_py_layout *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	out->version = v->version;
	for (size_t i = 0; i < v->nr_fields; i++) {
		const struct dcp_py_field *f = &v->fields[i];
		uint16_t value = f->value;

		if (values) {
			if (values[i] < 0 || values[i] > UINT16_MAX) {
				if (why)
					*why = f->name;
				return -ERANGE;
			}
			value = (uint16_t)values[i];
		}
		memcpy((char *)out + f->at, &value, sizeof(value));
	}
	return 0;
}

int dcp_py_layout_ask(const struct dcp_py_version *v, struct dcp_symbolizer *s,
		      const char *path, int fd, struct dcp_dwarf_answer *a,
		      char **dwarf_path)
{
	struct dcp_dwarf_query *q = calloc(v->nr_fields, sizeof(*q));
	int ret;

	if (!q)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < v->nr_fields; i++)
		q[i] = v->fields[i].query;
	ret = dcp_dwarf_types_answer(s, path, fd, q, v->nr_fields, a,
				     dwarf_path);
	free(q);
	return ret;
}

/* ---- the layouts of the files met ---------------------------------- */

/* An interpreter file, known by build id, else by device and inode. */
struct layout_file {
	uint8_t id[DCP_BUILD_ID_MAX];
	int id_len;
	dev_t dev;
	ino_t ino;
	const struct dcp_py_version *v;
	struct dcp_py_layout layout;
};

struct dcp_py_layouts {
	/* each apart: the walks keep pointers to their layouts */
	struct layout_file **files;
	size_t nr_files, cap_files;
	/* the search for debug files, and the symbol cache, which keeps an
	 * inflated copy of a compressed one for the closing symbolization
	 * and the next recordings */
	struct dcp_symbolizer *s;
	bool s_tried;
};

struct dcp_py_layouts *dcp_py_layouts_new(void)
{
	struct dcp_py_layouts *ls = calloc(1, sizeof(*ls));

	return ls ? ls : dcp_error_null(ENOMEM, "out of memory");
}

void dcp_py_layouts_free(struct dcp_py_layouts *ls)
{
	if (!ls)
		return;
	for (size_t i = 0; i < ls->nr_files; i++)
		free(ls->files[i]);
	free(ls->files);
	dcp_symbolizer_free(ls->s);
	free(ls);
}

static bool same_file(const struct layout_file *f, const struct layout_file *g)
{
	if (f->v != g->v || f->id_len != g->id_len)
		return false;
	if (f->id_len > 0)
		return !memcmp(f->id, g->id, (size_t)f->id_len);
	return f->dev == g->dev && f->ino == g->ino;
}

/* A field's question as C asks it, into buf. */
static const char *question(const struct dcp_py_field *f, char *buf,
			    size_t size)
{
	const struct dcp_dwarf_query *q = &f->query;

	if (q->kind == DCP_DWARF_MEMBER_OFFSET)
		snprintf(buf, size, "offsetof(%s, %s)", q->type, q->name);
	else if (q->kind == DCP_DWARF_TYPE_SIZE)
		snprintf(buf, size, "sizeof(%s)", q->type);
	else
		snprintf(buf, size, "%s", q->name);
	return buf;
}

/* Which layout file f got, and the fields on which the debug info
 * (values, when it answered every question) and the table disagree. */
static void say_layout(const struct layout_file *f, const char *path,
		       const int64_t *values, const char *dwarf_path,
		       const char *why)
{
	const struct dcp_py_version *v = f->v;
	char buf[256];

	for (size_t i = 0; values && i < v->nr_fields; i++) {
		const struct dcp_py_field *fl = &v->fields[i];

		if (values[i] != fl->value)
			dcp_log(DCP_LOG_INFO,
				"Python %s layout of '%s': its debug info "
				"gives %s = %" PRId64 ", the table %u (%s)",
				v->version, path, fl->name, values[i],
				fl->value, question(fl, buf, sizeof(buf)));
	}
	if (!why)
		dcp_log(DCP_LOG_INFO,
			"Python %s layout of '%s': from the debug info of '%s'",
			v->version, path, dwarf_path);
	else
		dcp_log(DCP_LOG_INFO,
			"Python %s layout of '%s': from the table for %s (%s)",
			v->version, path, v->version, why);
}

/* The layout of file f (new) from its debug info, else from the table. */
static int find_layout(struct dcp_py_layouts *ls, struct layout_file *f,
		       const char *path, int fd)
{
	const struct dcp_py_version *v = f->v;
	struct dcp_dwarf_answer *a = calloc(v->nr_fields, sizeof(*a));
	int64_t *values = calloc(v->nr_fields, sizeof(*values));
	char *dwarf_path = NULL, why[256];
	const char *field = NULL;
	int ret = 0, n;

	if (!a || !values) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto out;
	}
	if (!ls->s_tried) {
		ls->s_tried = true;
		ls->s = dcp_symbolizer_new(NULL);
	}
	n = dcp_py_layout_ask(v, ls->s, path, fd, a, &dwarf_path);
	if (n == -ENOMEM) {
		ret = n;
		goto out;
	}
	for (size_t i = 0; n >= 0 && i < v->nr_fields; i++) {
		values[i] = a[i].value;
		if (!a[i].found && !field)
			field = v->fields[i].name;
	}
	if (n == -ENOENT)
		snprintf(why, sizeof(why), "no debug info found");
	else if (n < 0)
		snprintf(why, sizeof(why), "its debug info: %s",
			 dcp_last_error());
	else if (field)
		snprintf(why, sizeof(why), "the debug info of '%s' lacks %s",
			 dwarf_path, field);
	else if (dcp_py_layout_make(v, values, &f->layout, &field))
		snprintf(why, sizeof(why),
			 "the debug info of '%s' gives %s out of range",
			 dwarf_path, field);
	else
		why[0] = '\0';
	if (why[0])
		dcp_py_layout_make(v, NULL, &f->layout, NULL);
	say_layout(f, path, n >= 0 && !field ? values : NULL, dwarf_path,
		   why[0] ? why : NULL);
out:
	free(dwarf_path);
	free(values);
	free(a);
	return ret;
}

const struct dcp_py_layout *dcp_py_layouts_get(struct dcp_py_layouts *ls,
					       const struct dcp_py_version *v,
					       const char *path, int fd)
{
	struct layout_file key = { .v = v }, *f, **files;
	struct stat st;

	key.id_len = dcp_build_id_read_fd(fd, key.id);
	if (key.id_len <= 0) {
		key.id_len = 0;
		if (fstat(fd, &st) == 0) {
			key.dev = st.st_dev;
			key.ino = st.st_ino;
		}
	}
	for (size_t i = 0; i < ls->nr_files; i++)
		if (same_file(ls->files[i], &key))
			return &ls->files[i]->layout;
	files = dcp_grow_from(ls->files, &ls->cap_files, ls->nr_files + 1,
			      sizeof(*files), 4);
	if (!files)
		return dcp_error_null(ENOMEM, "out of memory");
	ls->files = files;
	f = malloc(sizeof(*f));
	if (!f)
		return dcp_error_null(ENOMEM, "out of memory");
	*f = key;
	if (find_layout(ls, f, path, fd)) {
		free(f);
		return NULL;
	}
	ls->files[ls->nr_files++] = f;
	return &f->layout;
}
