// SPDX-License-Identifier: MIT
/*
 * Python processes and their code objects' names (python_internal.h):
 * a sampled process is looked at once for a file that exports _PyRuntime;
 * each code object a walk meets is read once from the process's memory
 * (process_vm_readv) and written as a line of the process's own perf map,
 * an anonymous file pinned to its "[python:PID]" JIT cookie, which the
 * closing symbolization reads (lib/symbols/jit.c) like any perf map.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "index.h"
#include "log_internal.h"
#include "python_elf_internal.h"
#include "python_internal.h"
#include "recorder_internal.h"

/* the times a process is looked at when its maps change: the loader
 * maps libpython before the program runs */
#define PROBE_TRIES 4

/* the reads of a code object that fail before it is left unnamed */
#define NAME_TRIES 4

/* Python processes gone between two compactions of the code entries */
#define COMPACT_AFTER 64

/* what is read of a name, and of a location table */
#define NAME_MAX_CHARS 512
#define TABLE_MAX_BYTES (1u << 20)

struct py_proc {
	uint32_t pid;
	uint32_t gen; /* bumped when forgotten: its code entries go stale */
	bool probed, python;
	size_t maps_seen; /* the process's number of maps when looked at */
	uint32_t tries; /* times looked at since its exec */
	uint32_t cookie;
	const struct dcp_py_layout *layout;
};

struct py_code {
	uint32_t pid, gen;
	uint64_t addr;
	bool named;
	/* the code object's name, file and location table pointers when it
	 * was read: others at the address are another code object (the
	 * first one freed), named again as the next version */
	uint64_t ident[3];
	uint32_t version;
	uint32_t checked; /* the drain that last compared them */
	uint32_t tries; /* reads that failed to name it */
	int first_line;
	uint8_t *table;
	size_t table_len;
};

struct dcp_python {
	struct dcp_recorder *r;
	struct py_proc *procs;
	size_t nr_procs, cap_procs;
	struct dcp_index proc_ix;
	struct py_code *codes;
	size_t nr_codes, cap_codes;
	struct dcp_index code_ix;
	uint64_t unnamed; /* frames of code objects that could not be read */
	/* Python processes forgotten since the code entries were last
	 * compacted (theirs are dropped every COMPACT_AFTER) */
	uint32_t forgotten;
	uint32_t unknown_said; /* an unknown version said once */
	struct dcp_py_layouts *layouts; /* by interpreter file */
};

static uint64_t proc_hash(uint32_t pid)
{
	return dcp_hash_mix(pid, 0);
}

static uint64_t code_hash(uint32_t pid, uint32_t gen, uint64_t addr)
{
	return dcp_hash_mix(dcp_hash_mix(pid, gen), addr);
}

static uint64_t proc_hash_of(const void *ctx, uint32_t id)
{
	const struct dcp_python *py = ctx;

	return proc_hash(py->procs[id].pid);
}

static uint64_t code_hash_of(const void *ctx, uint32_t id)
{
	const struct dcp_python *py = ctx;
	const struct py_code *c = &py->codes[id];

	return code_hash(c->pid, c->gen, c->addr);
}

struct dcp_python *dcp_python_new(struct dcp_recorder *r)
{
	struct dcp_python *py = calloc(1, sizeof(*py));

	if (!py)
		return dcp_error_null(ENOMEM, "out of memory");
	py->r = r;
	py->layouts = dcp_py_layouts_new();
	if (!py->layouts || dcp_index_init(&py->proc_ix, 64) ||
	    dcp_index_init(&py->code_ix, 256)) {
		dcp_python_free(py);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	return py;
}

void dcp_python_free(struct dcp_python *py)
{
	if (!py)
		return;
	for (size_t i = 0; i < py->nr_codes; i++)
		free(py->codes[i].table);
	free(py->codes);
	free(py->procs);
	dcp_index_free(&py->proc_ix);
	dcp_index_free(&py->code_ix);
	dcp_py_layouts_free(py->layouts);
	free(py);
}

uint64_t dcp_python_unnamed(const struct dcp_python *py)
{
	return py ? py->unnamed : 0;
}

static struct py_proc *find_proc(struct dcp_python *py, uint32_t pid, bool add)
{
	uint64_t h = proc_hash(pid);
	struct py_proc *p;
	uint32_t id;
	size_t pos;

	dcp_index_for_each(&py->proc_ix, h, pos, id) {
		if (py->procs[id].pid == pid)
			return &py->procs[id];
	}
	if (!add)
		return NULL;
	p = dcp_grow(py->procs, &py->cap_procs, py->nr_procs + 1, sizeof(*p));
	if (!p)
		return NULL;
	py->procs = p;
	id = (uint32_t)py->nr_procs;
	memset(&p[id], 0, sizeof(p[id]));
	p[id].pid = pid;
	if (dcp_index_add(&py->proc_ix, pos, h, id, proc_hash_of, py))
		return NULL;
	py->nr_procs++;
	return &py->procs[id];
}

/* len bytes of pid's memory at addr: 0, or -errno (a short read: -EFAULT) */
static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int read_u64(uint32_t pid, uint64_t addr, uint64_t *v)
{
	return read_mem(pid, addr, v, sizeof(*v));
}

bool dcp_python_interpreter_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* The interpreter mapped in pid: its symbols and load bias, the file open
 * in *fd (the caller's to close) and its path in file[PATH_MAX]; 0,
 * -ENOENT. */
static int find_interpreter(uint32_t pid, struct dcp_python_elf *e,
			    uint64_t *bias, int *fd, char *file)
{
	char path[64], line[PATH_MAX + 128];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &start,
			   &end, &off, file) != 4 ||
		    off || file[0] != '/' || !dcp_python_interpreter_name(file))
			continue;
		snprintf(path, sizeof(path),
			 "/proc/%" PRIu32 "/map_files/%llx-%llx", pid, start,
			 end);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			continue;
		/* a file that is no interpreter, or not ELF: the next */
		if (dcp_python_elf_read(*fd, e) == 0) {
			*bias = start - e->base;
			ret = 0;
		} else {
			close(*fd);
		}
	}
	fclose(f);
	return ret;
}

/* The process's Python cookie, its perf map pinned: 0 on failure. */
static uint32_t python_cookie(struct dcp_python *py, uint32_t pid)
{
	struct dcp_cookie_table *t = py->r->cookies;
	char name[48];
	int64_t cookie = -1;
	int fd;

	/* a pid used again names another process: another cookie */
	for (unsigned n = 0; n < 64; n++) {
		if (n)
			snprintf(name, sizeof(name),
				 DCP_PYTHON_COOKIE_PREFIX "%" PRIu32 ".%u]",
				 pid, n);
		else
			snprintf(name, sizeof(name),
				 DCP_PYTHON_COOKIE_PREFIX "%" PRIu32 "]", pid);
		cookie = dcp_cookie_table_intern_special(t, DCP_COOKIE_KIND_JIT,
							 name, NULL);
		if (cookie <= 0)
			return 0;
		if (!dcp_cookie_table_pin_tried(t, (uint32_t)cookie))
			break;
		cookie = -1;
	}
	if (cookie <= 0)
		return 0;
	fd = memfd_create("dcprof-python", MFD_CLOEXEC);
	if (fd < 0 || dcp_cookie_table_pin(t, (uint32_t)cookie, fd))
		return 0;
	return (uint32_t)cookie;
}

int dcp_python_probe(struct dcp_python *py, uint32_t pid, size_t nr_maps,
		     struct dcp_bpf_py_proc *out)
{
	struct py_proc *p = find_proc(py, pid, true);
	const struct dcp_py_version *v;
	const struct dcp_py_layout *l;
	struct dcp_python_elf e;
	uint64_t bias = 0, version = 0;
	char file[PATH_MAX];
	int ret, fd = -1;

	if (!p)
		return dcp_error(ENOMEM, "out of memory");
	/* looked at again when its maps changed: its first sample may come
	 * before the loader mapped libpython */
	if (p->python ||
	    (p->probed && (p->maps_seen == nr_maps || p->tries >= PROBE_TRIES)))
		return 0;
	p->tries++;
	p->probed = true;
	p->maps_seen = nr_maps;
	ret = find_interpreter(pid, &e, &bias, &fd, file);
	if (ret)
		return ret == -ENOENT || ret == -EACCES || ret == -ESRCH ? 0 :
									   ret;
	if (e.version)
		read_u64(pid, e.version + bias, &version);
	v = dcp_py_version_find((uint32_t)version);
	/* the file's debug info read at its first process only */
	l = v ? dcp_py_layouts_get(py->layouts, v, file, fd) : NULL;
	close(fd);
	if (v && !l)
		return -ENOMEM;
	if (!v) {
		if (!py->unknown_said++)
			dcp_log(DCP_LOG_INFO,
				"process %" PRIu32
				" runs Python %s%x.%x, whose "
				"layout is not known: native frames only",
				pid, version ? "" : "(no Py_Version) ",
				(unsigned)(version >> 24),
				(unsigned)(version >> 16) & 0xff);
		return 0;
	}
	p->cookie = python_cookie(py, pid);
	if (!p->cookie)
		return 0;
	p->python = true;
	p->layout = l;
	memset(out, 0, sizeof(*out));
	out->runtime = e.runtime + bias;
	out->eval_start = e.eval_start + bias;
	out->eval_end = out->eval_start + e.eval_size;
	out->interp_head = l->runtime_interp_head;
	out->threads_head = l->interp_threads_head;
	out->tstate_next = l->tstate_next;
	out->tstate_native_tid = l->tstate_native_tid;
	out->tstate_cframe = l->tstate_cframe;
	out->cframe_frame = l->cframe_frame;
	out->tstate_frame = l->tstate_frame;
	out->frame_code = l->frame_code;
	out->frame_previous = l->frame_previous;
	out->frame_prev_instr = l->frame_prev_instr;
	out->frame_entry = l->frame_entry;
	out->shim_owner = l->shim_owner;
	out->code_adaptive = l->code_adaptive;
	return 1;
}

/* The code entries of processes gone dropped, the index made again. */
static void compact_codes(struct dcp_python *py)
{
	struct dcp_index fresh;
	size_t kept = 0;

	if (dcp_index_init(&fresh, 256))
		return; /* kept as they are: stale entries are never found */
	dcp_index_free(&py->code_ix);
	py->code_ix = fresh;
	for (size_t i = 0; i < py->nr_codes; i++) {
		struct py_code *c = &py->codes[i];
		const struct py_proc *p = find_proc(py, c->pid, false);
		uint64_t h = code_hash(c->pid, c->gen, c->addr);
		uint32_t id;
		size_t pos;

		if (!p || !p->python || p->gen != c->gen) {
			free(c->table);
			continue;
		}
		py->codes[kept] = *c;
		/* no two entries are alike: the free slot the probe ends at */
		dcp_index_for_each(&py->code_ix, h, pos, id) {
			(void)id;
		}
		if (dcp_index_add(&py->code_ix, pos, h, (uint32_t)kept,
				  code_hash_of, py)) {
			free(py->codes[kept].table);
			continue;
		}
		kept++;
	}
	py->nr_codes = kept;
}

void dcp_python_need(const struct dcp_python *py, struct dcp_cookie_set *needed)
{
	for (size_t i = 0; i < py->nr_procs; i++)
		if (py->procs[i].python && py->procs[i].cookie)
			dcp_cookie_set_add(needed, py->procs[i].cookie);
}

int dcp_python_forget(struct dcp_python *py, uint32_t pid)
{
	struct py_proc *p = py ? find_proc(py, pid, false) : NULL;
	bool was = p && p->python;

	if (!p)
		return 0;
	p->probed = p->python = false;
	p->cookie = 0;
	p->tries = 0;
	p->gen++;
	if (was && ++py->forgotten >= COMPACT_AFTER) {
		py->forgotten = 0;
		compact_codes(py);
	}
	return was;
}

/* One code point as UTF-8 into s (room for 4); the bytes written. */
static size_t put_utf8(char *s, uint32_t c)
{
	if (c < 0x80) {
		s[0] = c < 0x20 ? ' ' : (char)c; /* no tabs or line ends */
		return 1;
	}
	if (c < 0x800) {
		s[0] = (char)(0xc0 | c >> 6);
		s[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		s[0] = (char)(0xe0 | c >> 12);
		s[1] = (char)(0x80 | (c >> 6 & 0x3f));
		s[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	s[0] = (char)(0xf0 | (c >> 18 & 7));
	s[1] = (char)(0x80 | (c >> 12 & 0x3f));
	s[2] = (char)(0x80 | (c >> 6 & 0x3f));
	s[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A compact str object at addr as UTF-8 into out (size at least
 * 4 * NAME_MAX_CHARS + 1), cut at NAME_MAX_CHARS characters. 0 or -errno. */
static int read_str(uint32_t pid, const struct dcp_py_layout *l, uint64_t addr,
		    char *out)
{
	uint8_t head[128], data[4 * NAME_MAX_CHARS];
	uint64_t len;
	uint32_t state, kind, width;
	size_t o = 0;
	int ret;

	/* the ASCII object's header: a shorter object's end may be the end
	 * of the mapped memory */
	if (!addr || l->str_ascii_data > sizeof(head) ||
	    l->str_length + 8u > l->str_ascii_data ||
	    l->str_state + 4u > l->str_ascii_data)
		return -EINVAL;
	ret = read_mem(pid, addr, head, l->str_ascii_data);
	if (ret)
		return ret;
	memcpy(&len, head + l->str_length, 8);
	memcpy(&state, head + l->str_state, 4);
	kind = state >> 2 & 7;
	/* compact strings only: code names and file names are */
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	width = kind;
	if (len > NAME_MAX_CHARS)
		len = NAME_MAX_CHARS;
	ret = read_mem(pid,
		       addr + (state >> 6 & 1 ? l->str_ascii_data :
						l->str_compact_data),
		       data, len * width);
	if (ret)
		return ret;
	for (size_t i = 0; i < len; i++) {
		uint32_t c;

		if (width == 1) {
			c = data[i];
		} else if (width == 2) {
			uint16_t u;

			memcpy(&u, data + 2 * i, 2);
			c = u;
		} else {
			memcpy(&c, data + 4 * i, 4);
			if (c > 0x10ffff)
				c = '?';
		}
		o += put_utf8(out + o, c);
	}
	out[o] = '\0';
	return 0;
}

/* Code object c of process p read: its names written to the process's
 * perf map, its location table kept. 0 or -errno. */
/* The frame offset code c's symbol starts at (python_internal.h). */
static uint64_t code_start(const struct py_code *c)
{
	return (c->addr >> 3) << (DCP_PY_VERSION_BITS + DCP_PY_LINE_BITS) |
	       (uint64_t)(c->version & ((1u << DCP_PY_VERSION_BITS) - 1))
		       << DCP_PY_LINE_BITS;
}

/* The pointers that tell code objects at one address apart into ident. */
static int code_ident(const struct py_proc *p, const struct py_code *c,
		      uint64_t ident[3])
{
	const struct dcp_py_layout *l = p->layout;
	int ret;

	if ((ret = read_u64(p->pid, c->addr + l->code_qualname, &ident[0])) ||
	    (ret = read_u64(p->pid, c->addr + l->code_filename, &ident[1])) ||
	    (ret = read_u64(p->pid, c->addr + l->code_linetable, &ident[2])))
		return ret;
	return 0;
}

static int name_code(struct dcp_python *py, const struct py_proc *p,
		     struct py_code *c)
{
	const struct dcp_py_layout *l = p->layout;
	char qualname[4 * NAME_MAX_CHARS + 1], file[4 * NAME_MAX_CHARS + 1];
	uint64_t qual_addr, file_addr, table_addr, size;
	uint32_t first_line;
	const char *base;
	int ret, fd, n;

	if ((ret = code_ident(p, c, c->ident)) ||
	    (ret = read_mem(p->pid, c->addr + l->code_firstlineno, &first_line,
			    4)))
		return ret;
	qual_addr = c->ident[0];
	file_addr = c->ident[1];
	table_addr = c->ident[2];
	if ((ret = read_str(p->pid, l, qual_addr, qualname)) ||
	    (ret = read_str(p->pid, l, file_addr, file)))
		return ret;
	c->first_line = (int)first_line;
	if (!read_u64(p->pid, table_addr + l->var_size, &size) &&
	    size <= TABLE_MAX_BYTES) {
		c->table = malloc(size ? size : 1);
		if (c->table && !read_mem(p->pid, table_addr + l->bytes_data,
					  c->table, size)) {
			c->table_len = size;
		} else {
			free(c->table);
			c->table = NULL;
		}
	}
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	fd = dcp_cookie_table_pinned_fd(py->r->cookies, p->cookie);
	if (fd < 0)
		return -EBADF;
	/* the code's lines, one symbol: "START SIZE qualname (file)\tpath" */
	n = dprintf(fd, "%" PRIx64 " %x %s (%s)\t%s\n", code_start(c),
		    1u << DCP_PY_LINE_BITS, qualname, base, file);
	return n < 0 ? -errno : 0;
}

static struct py_code *find_code(struct dcp_python *py, const struct py_proc *p,
				 uint64_t addr)
{
	uint64_t h = code_hash(p->pid, p->gen, addr);
	struct py_code *c;
	uint32_t id;
	size_t pos;

	dcp_index_for_each(&py->code_ix, h, pos, id) {
		c = &py->codes[id];
		if (c->addr == addr && c->pid == p->pid && c->gen == p->gen)
			return c;
	}
	c = dcp_grow(py->codes, &py->cap_codes, py->nr_codes + 1, sizeof(*c));
	if (!c)
		return NULL;
	py->codes = c;
	id = (uint32_t)py->nr_codes;
	c = &py->codes[id];
	memset(c, 0, sizeof(*c));
	c->pid = p->pid;
	c->gen = p->gen;
	c->addr = addr;
	if (dcp_index_add(&py->code_ix, pos, h, id, code_hash_of, py))
		return NULL;
	py->nr_codes++;
	c->named = name_code(py, p, c) == 0;
	c->tries = !c->named;
	return c;
}

int dcp_python_note_code(struct dcp_python *py, uint32_t pid, uint64_t addr)
{
	struct py_proc *p = py ? find_proc(py, pid, false) : NULL;

	if (!p || !p->python)
		return 0;
	return find_code(py, p, addr) ? 0 : dcp_error(ENOMEM, "out of memory");
}

/* Code c, named before drain: named again when another code object took
 * its address since (the frames drained now are more likely its). */
static void check_code(struct dcp_python *py, const struct py_proc *p,
		       struct py_code *c, uint32_t drain)
{
	struct py_code next;
	uint64_t ident[3];

	if (!c->named || c->checked == drain)
		return;
	c->checked = drain;
	/* unreadable (the process is gone): the name it had */
	if (code_ident(p, c, ident) || !memcmp(ident, c->ident, sizeof(ident)))
		return;
	/* another code object: its name as the next version; no code object
	 * (freed memory): the name the frames had when it lived */
	next = *c;
	next.version++;
	next.table = NULL;
	next.table_len = 0;
	if (name_code(py, p, &next)) {
		free(next.table);
		return;
	}
	free(c->table);
	*c = next;
}

int dcp_python_frame(struct dcp_python *py, uint32_t pid, uint64_t ip,
		     uint32_t drain, struct dcp_frame *f)
{
	struct py_proc *p = py ? find_proc(py, pid, false) : NULL;
	uint64_t addr = (ip >> DCP_BPF_PY_INSTR_BITS & DCP_BPF_PY_CODE_MASK)
			<< 3;
	uint32_t instr = (uint32_t)(ip & DCP_BPF_PY_INSTR_MAX);
	struct py_code *c;
	int line = 0;

	f->flags = 0;
	f->cookie = DCP_COOKIE_UNKNOWN;
	f->offset = addr;
	if (!p || !p->python) {
		if (py)
			py->unnamed++;
		return 0;
	}
	c = find_code(py, p, addr);
	if (!c)
		return dcp_error(ENOMEM, "out of memory");
	/* a read that failed is tried again at later drains, a few times:
	 * the code object may have been read while it was being made */
	if (!c->named && c->checked != drain && c->tries < NAME_TRIES) {
		c->checked = drain;
		c->named = name_code(py, p, c) == 0;
		c->tries += !c->named;
	}
	check_code(py, p, c, drain);
	if (!c->named)
		py->unnamed++;
	else if (c->table)
		line = dcp_py_line(c->table, c->table_len, c->first_line,
				   instr);
	if (line < 0)
		line = c->first_line;
	if (line < 0 || line >= 1 << DCP_PY_LINE_BITS)
		line = 0;
	f->cookie = p->cookie;
	f->offset = code_start(c) | (uint64_t)line;
	return 0;
}

/* ---- CPython's location table, 3.11 to 3.13 (Objects/locations.md) - */

static uint32_t table_varint(const uint8_t *t, size_t len, size_t *i)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 28)
			return v;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int table_svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint32_t v = table_varint(t, len, i);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

int dcp_py_line(const uint8_t *t, size_t len, int first_line, uint32_t instr)
{
	uint32_t at = 0;
	int line = first_line;
	size_t i = 0;

	/* each entry: a first byte with bit 7 set, code in bits 3-6, the
	 * code units it covers less one in bits 0-2, then its operands */
	while (i < len) {
		uint8_t b = t[i++];
		uint32_t code = b >> 3 & 15, units = (b & 7) + 1;
		bool none = false;

		if (!(b & 128))
			return -1; /* not an entry's first byte: damage */
		switch (code) {
		case 15: /* no location */
			none = true;
			break;
		case 14: /* long form: line delta, end line, columns */
			line += table_svarint(t, len, &i);
			table_varint(t, len, &i);
			table_varint(t, len, &i);
			table_varint(t, len, &i);
			break;
		case 13: /* no columns */
			line += table_svarint(t, len, &i);
			break;
		case 10:
		case 11:
		case 12: /* one line: its delta in the code, two columns */
			line += (int)code - 10;
			i += 2;
			break;
		default: /* short form: the same line, one column byte */
			i += 1;
			break;
		}
		if (instr < at + units)
			return none ? -1 : line;
		at += units;
	}
	return -1;
}
