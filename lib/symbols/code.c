// SPDX-License-Identifier: MIT
/*
 * The machine code of a sampled function, for annotate: the bytes of a
 * file read through a path that still holds it, with the names of the
 * addresses its calls and jumps go to (PLT stubs included) and the source
 * line of each address; the kernel's and its modules' code read from
 * /proc/kcore at the running kernel's addresses, named by /proc/kallsyms,
 * or the kernel's from a vmlinux file of the same build, named and lined
 * by it. The caller disassembles.
 */
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_internal.h"
#include "buildid_internal.h"
#include "elf_segments_internal.h"
#include "log_internal.h"
#include "code_internal.h"
#include "profile_internal.h"
#include "symbolizer_internal.h"

#define KCORE "/proc/kcore"

struct dcp_code {
	struct dcp_cookie_info ci; /* the profile's: lives as long as it */
	struct dcp_symbolizer *s;
	bool kernel_ok; /* kernel, kcookies: the running kernel's layout */
	struct dcp_kernel_layout kernel;
	struct dcp_cookie_table *kcookies;
	Dwfl_Module *mod; /* a file's, kept by s */
	GElf_Addr bias;
	struct dcp_elf_segment *segs;
	size_t nr_segs;
	uint8_t *bytes;
	size_t size;
	uint64_t address;
	uint16_t machine;
	char *path;
	char *vmlinux_path; /* the kernel's cookie made a file's: its path */
	char line_file[4096];
	char **names; /* what dcp_code_names() returned, owned */
	size_t nr_names, cap_names;
};

DCPROF_API void dcp_code_close(struct dcp_code *c)
{
	if (!c)
		return;
	if (c->s)
		dcp_symbolizer_free(c->s);
	if (c->kernel_ok)
		dcp_kernel_layout_free(&c->kernel);
	dcp_cookie_table_free(c->kcookies);
	for (size_t i = 0; i < c->nr_names; i++)
		free(c->names[i]);
	free(c->names);
	free(c->segs);
	free(c->bytes);
	free(c->path);
	free(c->vmlinux_path);
	free(c);
}

/*
 * The code at where (a file offset, or with by_vaddr a virtual address)
 * of the ELF file e, up to size bytes within the loadable segment that
 * holds it, for files and /proc/kcore alike: what is the file in messages.
 */
static int load_bytes(struct dcp_code *c, Elf *e, const char *what,
		      uint64_t where, bool by_vaddr, uint64_t size)
{
	const struct dcp_elf_segment *seg = NULL;
	uint64_t off;
	GElf_Ehdr eh;
	Elf_Data *d;
	int err = 0;

	if (!e || !gelf_getehdr(e, &eh))
		err = -ENOEXEC;
	else if (!c->segs) /* a vmlinux's are read already */
		err = dcp_elf_load_segments(e, &c->segs, &c->nr_segs);
	if (err == -ENOMEM)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; !err && by_vaddr && i < c->nr_segs; i++)
		if (where >= c->segs[i].vaddr &&
		    where - c->segs[i].vaddr < c->segs[i].filesz)
			seg = &c->segs[i];
	if (!err && !by_vaddr)
		seg = dcp_elf_segment_at(c->segs, c->nr_segs, where);
	if (!seg)
		return dcp_error(
			ENOEXEC,
			"'%s' is not an ELF file holding %s 0x%" PRIx64, what,
			by_vaddr ? "address" : "offset", where);
	off = by_vaddr ? where - seg->vaddr + seg->offset : where;
	if (size > seg->offset + seg->filesz - off)
		size = seg->offset + seg->filesz - off;
	d = elf_getdata_rawchunk(e, (int64_t)off, size, ELF_T_BYTE);
	c->bytes = malloc(size ? size : 1);
	if (!c->bytes)
		return dcp_error(ENOMEM, "out of memory");
	if (!d || d->d_size != size)
		return dcp_error(EIO, "cannot read '%s': %s", what,
				 elf_errmsg(-1));
	memcpy(c->bytes, d->d_buf, size);
	c->size = size;
	c->address = off - seg->offset + seg->vaddr;
	c->machine = eh.e_machine;
	return 0;
}

/*
 * The bytes at kernel address addr from path, /proc/kcore: an ELF core
 * whose loadable segments are the kernel's memory at its addresses.
 */
static int read_kcore(struct dcp_code *c, const char *path, uint64_t addr,
		      uint64_t size)
{
	Elf *e;
	int fd, err;

	c->path = strdup(path);
	if (!c->path)
		return dcp_error(ENOMEM, "out of memory");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT && !strcmp(path, KCORE))
			return dcp_error(err, "this kernel has no " KCORE
					      " (CONFIG_PROC_KCORE) to read "
					      "its code from");
		return dcp_error(err, "cannot open '%s': %s%s", path,
				 strerror(err),
				 err == EACCES || err == EPERM ?
					 " (reading the kernel's code takes "
					 "root)" :
					 "");
	}
	elf_version(EV_CURRENT);
	/* read, not mapped: its size is the address space's */
	e = elf_begin(fd, ELF_C_READ, NULL);
	err = load_bytes(c, e, path, addr, true, size);
	elf_end(e);
	close(fd);
	return err;
}

/* The kernel's or a module's code: where it runs now, from kcore. */
static int open_kernel(struct dcp_code *c, const struct dcp_profile *p,
		       uint64_t start, uint64_t size)
{
	struct dcp_cookie_info id = { .sz = sizeof(id) };
	uint64_t base;
	uint32_t owner;
	int err;

	c->kernel_ok = dcp_running_kernel(&c->kernel, &c->kcookies, &id);
	if (!c->kernel_ok)
		return dcp_error(EPERM,
				 "the kernel hides its addresses from this "
				 "user (/proc/kallsyms, kernel.kptr_restrict)");
	if (c->ci.kind == DCP_COOKIE_KIND_MODULE) {
		err = dcp_kernel_module_of(&c->kernel, &c->ci, &owner);
		if (err < 0)
			return err;
		base = c->kernel.modules[owner - 1].start;
	} else {
		if (!dcp_profile_recorded_on(p, &id))
			return dcp_error(ESTALE,
					 "the profile was recorded on another "
					 "kernel than the running one (by "
					 "build id)");
		base = c->kernel.text_start;
	}
	c->s = dcp_symbolizer_new(&c->kernel);
	if (!c->s)
		return -errno;
	return read_kcore(c, KCORE, base + start, size);
}

struct dcp_code *dcp_code_open_image(const char *path, uint64_t addr,
				     uint64_t size)
{
	struct dcp_code *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return dcp_error_null(ENOMEM, "out of memory");
	err = read_kcore(c, path, addr, size);
	if (err) {
		dcp_code_close(c);
		errno = -err;
		return NULL;
	}
	return c;
}

/* An offset from a vmlinux's _text made its file offset. */
static int text_offset(struct dcp_code *c, uint64_t *start)
{
	int n = dwfl_module_getsymtab(c->mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(
			c->mod, i, &sym, &addr, NULL, NULL, NULL);
		uint64_t v = addr - c->bias + *start;

		if (!name || strcmp(name, "_text"))
			continue;
		for (size_t k = 0; k < c->nr_segs; k++)
			if (v >= c->segs[k].vaddr &&
			    v - c->segs[k].vaddr < c->segs[k].filesz) {
				*start = v - c->segs[k].vaddr +
					 c->segs[k].offset;
				return 0;
			}
		return dcp_error(ENOENT, "'%s' does not hold _text+0x%" PRIx64,
				 c->path, *start);
	}
	return dcp_error(ENOENT, "'%s' has no _text symbol", c->path);
}

/*
 * A file's code, through the module the symbolizer keeps open; start a
 * file offset, or with vmlinux an offset from the image's _text.
 */
static int open_file(struct dcp_code *c, uint64_t start, uint64_t size,
		     bool vmlinux)
{
	const char *path = NULL;
	Elf *e;
	int err;

	c->mod = dcp_symbolizer_file_module(c->s, &c->ci);
	if (!c->mod)
		return -errno;
	dwfl_module_info(c->mod, NULL, NULL, NULL, NULL, NULL, &path, NULL);
	c->path = strdup(path ? path : c->ci.name);
	if (!c->path)
		return dcp_error(ENOMEM, "out of memory");
	e = dwfl_module_getelf(c->mod, &c->bias);
	if (vmlinux && e) {
		err = dcp_elf_load_segments(e, &c->segs, &c->nr_segs);
		if (err == -ENOMEM)
			return dcp_error(ENOMEM, "out of memory");
		err = err ? 0 : text_offset(c, &start);
		if (err)
			return err;
	}
	return load_bytes(c, e, c->path, start, false, size);
}

/*
 * The kernel's code from vmlinux, an ELF image of the profile's kernel
 * (its build id), read as a file is: its symbols name the targets, its
 * DWARF gives the lines.
 */
static int open_vmlinux(struct dcp_code *c, const char *vmlinux, uint64_t start,
			uint64_t size)
{
	uint8_t id[DCP_BUILD_ID_MAX];
	char *abs = realpath(vmlinux, NULL);
	int fd, n;

	fd = abs ? open(abs, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0) {
		n = errno;
		free(abs);
		return dcp_error(n, "cannot open '%s': %s", vmlinux,
				 strerror(n));
	}
	n = dcp_build_id_read_fd(fd, id);
	close(fd);
	if (!c->ci.build_id_size || n != c->ci.build_id_size ||
	    memcmp(id, c->ci.build_id, (size_t)n)) {
		free(abs);
		return dcp_error(ESTALE,
				 "'%s' is not the profile's kernel (%s)",
				 vmlinux,
				 !c->ci.build_id_size ?
					 "the profile has no build id of it" :
				 n <= 0 ? "it has no build id" :
					  "its build id differs");
	}
	/* from here on a file of the kernel's build id at that path */
	c->vmlinux_path = abs;
	c->ci.kind = DCP_COOKIE_KIND_FILE;
	c->ci.name = abs;
	c->ci.paths = (const char *const *)&c->vmlinux_path;
	c->ci.nr_paths = 1;
	return open_file(c, start, size, true);
}

/* The symbolizer of a file's code: the debug directories, one file kept. */
static int file_symbolizer(struct dcp_code *c, const struct dcp_code_opts *o)
{
	char *path = NULL;
	int err;

	err = dcp_debuginfo_path(DCP_OPTS_GET(o, debuginfo_dirs, NULL),
				 DCP_OPTS_GET(o, nr_debuginfo_dirs, 0), &path);
	if (err)
		return err;
	c->s = dcp_symbolizer_new(NULL);
	err = c->s ? dcp_symbolizer_set_debuginfo_path(c->s, path) : -errno;
	free(path);
	if (!err) {
		dcp_symbolizer_keep_files(c->s, 1);
		c->s->names_only = true;
	}
	return err;
}

DCPROF_API struct dcp_code *dcp_profile_code_open(const struct dcp_profile *p,
						  uint32_t cookie,
						  uint64_t start, uint64_t size,
						  const struct dcp_code_opts *o)
{
	const char *vmlinux = DCP_OPTS_GET(o, vmlinux, NULL);
	struct dcp_code *c;
	int err;

	if (!DCP_OPTS_VALID(o)) {
		DCP_OPTS_ERROR(dcp_code_opts);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return dcp_error_null(ENOMEM, "out of memory");
	c->ci.sz = sizeof(c->ci);
	if (dcp_cookie_table_lookup(p->cookies, cookie, &c->ci) < 0)
		err = dcp_error(ENOENT, "no cookie %" PRIu32 " in the profile",
				cookie);
	else if (c->ci.kind == DCP_COOKIE_KIND_KERNEL && vmlinux)
		err = file_symbolizer(c, o) ?:
			      open_vmlinux(c, vmlinux, start, size);
	else if (c->ci.kind == DCP_COOKIE_KIND_KERNEL ||
		 c->ci.kind == DCP_COOKIE_KIND_MODULE)
		err = open_kernel(c, p, start, size);
	else if (c->ci.kind != DCP_COOKIE_KIND_FILE)
		err = dcp_error(ENOENT, "'%s' is not a file", c->ci.name);
	else
		err = file_symbolizer(c, o) ?: open_file(c, start, size, false);
	if (err) {
		dcp_code_close(c);
		errno = -err;
		return NULL;
	}
	return c;
}

DCPROF_API int dcp_code_get_info(const struct dcp_code *c,
				 struct dcp_code_info *info)
{
	struct dcp_code_info i = {
		.bytes = c->bytes,
		.size = c->size,
		.address = c->address,
		.machine = c->machine,
		.path = c->path,
	};

	if (!DCP_SZ_VALID(info))
		return DCP_SZ_ERROR(dcp_code_info, info);
	dcp_sz_copy(info, &i, sizeof(i));
	return 0;
}

DCPROF_API int dcp_code_line(struct dcp_code *c, uint64_t address,
			     const char **file, uint32_t *line)
{
	Dwfl_Line *l =
		c->mod ? dwfl_module_getsrc(c->mod, address + c->bias) : NULL;
	const char *f, *dir;
	int n = 0;

	f = l ? dwfl_lineinfo(l, NULL, &n, NULL, NULL, NULL) : NULL;
	if (!f || n <= 0)
		return -ENOENT;
	/* a relative name is the compilation directory's */
	dir = dwfl_line_comp_dir(l);
	if (f[0] != '/' && dir && dir[0] == '/') {
		snprintf(c->line_file, sizeof(c->line_file), "%s/%s", dir, f);
		f = c->line_file;
	}
	*file = f;
	*line = (uint32_t)n;
	return 0;
}

/* A name for the caller, owned by c. */
static const char *keep_name(struct dcp_code *c, const char *name)
{
	if (c->nr_names == c->cap_names) {
		size_t cap = c->cap_names ? 2 * c->cap_names : 16;
		char **g = realloc(c->names, cap * sizeof(*g));

		if (!g)
			return NULL;
		c->names = g;
		c->cap_names = cap;
	}
	c->names[c->nr_names] = strdup(name);
	return c->names[c->nr_names] ? c->names[c->nr_names++] : NULL;
}

/*
 * The object and offset of an address of the code's: a file offset
 * through the file's segments, or the running kernel's cookie of it.
 */
static bool object_offset(const struct dcp_code *c, uint64_t addr,
			  struct dcp_cookie_info *ci, uint64_t *off)
{
	if (c->mod) {
		for (size_t i = 0; i < c->nr_segs; i++)
			if (addr >= c->segs[i].vaddr &&
			    addr - c->segs[i].vaddr < c->segs[i].filesz) {
				*ci = c->ci;
				*off = addr - c->segs[i].vaddr +
				       c->segs[i].offset;
				return true;
			}
		return false;
	}
	return dcp_cookie_table_lookup(
		       c->kcookies,
		       dcp_kernel_layout_resolve(&c->kernel, addr, off),
		       ci) == 0 &&
	       (ci->kind == DCP_COOKIE_KIND_KERNEL ||
		ci->kind == DCP_COOKIE_KIND_MODULE);
}

DCPROF_API int dcp_code_names(struct dcp_code *c, const uint64_t *addresses,
			      size_t n, const char **names, uint64_t *offsets)
{
	struct dcp_cookie_info *ci = calloc(n ? n : 1, sizeof(*ci));
	uint64_t *off = calloc(n ? n : 1, sizeof(*off));
	struct dcp_symtab *t = dcp_symtab_new();
	size_t nr_file = 0;
	int err = ci && off && t ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && !err; i++) {
		ci[i].sz = sizeof(ci[i]);
		if (!object_offset(c, addresses[i], &ci[i], &off[i]))
			ci[i].kind = DCP_COOKIE_KIND_UNKNOWN;
		else if (c->mod)
			nr_file++;
		/* kernel addresses one by one: each may be another
		 * module's, and a lookup in kallsyms is a search */
		else if (dcp_symbolizer_resolve(c->s, &ci[i], -1, &off[i], 1,
						t) == -ENOMEM)
			err = -ENOMEM;
	}
	/* a file's all at once: its symbol table is read once */
	if (!err && nr_file) {
		uint64_t *v = malloc(nr_file * sizeof(*v));
		size_t k = 0;

		for (size_t i = 0; v && i < n; i++)
			if (ci[i].kind != DCP_COOKIE_KIND_UNKNOWN)
				v[k++] = off[i];
		if (!v || dcp_symbolizer_resolve(c->s, &c->ci, -1, v, k, t) ==
				  -ENOMEM)
			err = -ENOMEM;
		free(v);
	}
	for (size_t i = 0; i < n && !err; i++) {
		struct dcp_symbol sym = { .sz = sizeof(sym) };

		names[i] = NULL;
		offsets[i] = 0;
		/* a name made from the file's (no symbol) names nothing */
		if (ci[i].kind == DCP_COOKIE_KIND_UNKNOWN ||
		    dcp_symtab_lookup(t, ci[i].cookie, off[i], &sym) ||
		    !sym.name ||
		    dcp_symbol_name_is_made(sym.name, sym.start, sym.size,
					    off[i], NULL))
			continue;
		names[i] = keep_name(c, sym.name);
		if (!names[i])
			err = -ENOMEM;
		offsets[i] = off[i] - sym.start;
	}
	dcp_symtab_free(t);
	free(ci);
	free(off);
	return err ? dcp_error(ENOMEM, "out of memory") : 0;
}
