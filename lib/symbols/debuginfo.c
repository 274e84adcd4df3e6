// SPDX-License-Identifier: MIT
/*
 * Separate debug files: libdwfl's search for them (its local part only
 * when no debuginfod server is named), and their compressed DWARF inflated
 * once into the symbol cache, by build id, so that the next reading does
 * not pay for it again.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "cache_internal.h"
#include "log_internal.h"
#include "symbolizer_internal.h"

/* Whether a debug section is compressed; -1 for old-style .zdebug ones,
 * which are left alone. */
static int has_compressed_debug(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int found = 0;

	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name =
			sh ? elf_strptr(e, shstrndx, sh->sh_name) : NULL;

		if (!name)
			continue;
		if (strncmp(name, ".zdebug", 7) == 0)
			return -1;
		if (sh->sh_flags & SHF_COMPRESSED)
			found = 1;
	}
	return found;
}

/* Copy of src into dst with every compressed section inflated. */
static int write_inflated(int src, int dst)
{
	char buf[1 << 16];
	off_t off = 0;
	Elf_Scn *scn = NULL;
	ssize_t r;
	Elf *e;
	int err = 0;

	while ((r = pread(src, buf, sizeof(buf), off)) > 0) {
		if (write(dst, buf, (size_t)r) != r)
			return -EIO;
		off += r;
	}
	if (r < 0)
		return -errno;
	e = elf_begin(dst, ELF_C_RDWR, NULL);
	if (!e)
		return -ENOEXEC;
	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh && (sh->sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			err = -ENOEXEC;
	}
	if (!err && elf_update(e, ELF_C_WRITE) < 0)
		err = -EIO;
	elf_end(e);
	return err;
}

/*
 * The inflated copy of mod's separate debug file from the cache, by the
 * module's build id: a descriptor (and *path set), or -1.
 */
static int debug_file_cached(struct dcp_symbolizer *s, Dwfl_Module *mod,
			     char **path)
{
	const unsigned char *bits;
	uint8_t got[DCP_BUILD_ID_MAX];
	const struct dcp_cache *c;
	char name[128], *cached_path = NULL;
	GElf_Addr vaddr;
	int n, fd;

	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || n > DCP_BUILD_ID_MAX ||
	    !dcp_cache_entry_name(name, sizeof(name), "debug", bits, (size_t)n))
		return -1;
	c = dcp_symbolizer_cache(s);
	if (!c)
		return -1;
	fd = dcp_cache_entry_open(c, name);
	if (fd < 0)
		return -1;
	/* A copy that is not of the same file is derived again. */
	if (dcp_build_id_read_fd(fd, got) != n ||
	    memcmp(got, bits, (size_t)n) ||
	    asprintf(&cached_path, "%s/%s", c->path, name) < 0) {
		unlinkat(c->dir_fd, name, 0);
		close(fd);
		return -1;
	}
	dcp_log(DCP_LOG_DEBUG, "DWARF of '%s' from the cache '%s'",
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		cached_path);
	free(*path);
	*path = cached_path;
	return fd;
}

/* libdwfl found the debug file fd: when its DWARF is compressed, keep an
 * inflated copy for the next time (this time libdwfl uses its own handle
 * on fd, already open). */
static void debug_file_store(struct dcp_symbolizer *s, int fd, const char *path)
{
	uint8_t id[DCP_BUILD_ID_MAX];
	const struct dcp_cache *c;
	char name[128], tmp[64];
	int n, compressed, out;
	Elf *e;

	n = dcp_build_id_read_fd(fd, id);
	if (n <= 0 ||
	    !dcp_cache_entry_name(name, sizeof(name), "debug", id, (size_t)n))
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	compressed = e ? has_compressed_debug(e) : 0;
	elf_end(e);
	c = compressed > 0 ? dcp_symbolizer_cache(s) : NULL;
	if (!c)
		return;
	out = dcp_cache_entry_create(c, tmp, sizeof(tmp));
	if (out < 0)
		return;
	if (write_inflated(fd, out) < 0) {
		dcp_log(DCP_LOG_INFO,
			"cannot inflate '%s' into the symbol cache",
			path ? path : name);
		dcp_cache_entry_abort(c, out, tmp);
		return;
	}
	dcp_cache_entry_commit(c, out, tmp, name);
}

/*
 * Whether a debuginfod server is named. libdwfl's search (elfutils 0.188)
 * ends, for every module it finds no local debug file for, in loading
 * libdebuginfod, and with it libcurl and some thirty libraries, even when
 * no server is named and the client would ask nobody: 20 ms or so at the
 * end of every recording that sampled the vdso.
 */
static bool debuginfod_named(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

/*
 * The candidate path of a .gnu_debuglink name for one entry of libdwfl's
 * debuginfo_path (its syntax: ':'-separated, an optional '+' or '-' for
 * the CRC check, which the build id replaces here; an empty entry is the
 * file's own directory, a relative one below it, an absolute one the
 * root under which the file's directory is repeated).
 */
static char *debuglink_candidate(const char *entry, size_t len, const char *dir,
				 const char *link)
{
	char *path = NULL;
	int r;

	if (len && (entry[0] == '+' || entry[0] == '-'))
		entry++, len--;
	if (!len)
		r = asprintf(&path, "%s/%s", dir, link);
	else if (entry[0] != '/')
		r = asprintf(&path, "%s/%.*s/%s", dir, (int)len, entry, link);
	else
		r = asprintf(&path, "%.*s%s/%s", (int)len, entry, dir, link);
	return r < 0 ? NULL : path;
}

/*
 * Open path when it is a debug file of the build id (id, n) and not the
 * module's file itself (a .gnu_debuglink name may be the file's own).
 */
static int open_matching(const char *path, const struct stat *self,
			 const unsigned char *id, int n)
{
	uint8_t got[DCP_BUILD_ID_MAX];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino) ||
	    dcp_build_id_read_fd(fd, got) != n || memcmp(got, id, (size_t)n)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * libdwfl's local search without its debuginfod step, for modules with a
 * build id: the build-id trees of debuginfo_path, then the .gnu_debuglink
 * name in each of its directories, accepted only with the module's build
 * id. -1 when none.
 */
static int
find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname,
		     Dwarf_Addr base, const char *file_name,
		     const char *debuglink_file, GElf_Word debuglink_crc,
		     const unsigned char *id, int n, char **debuginfo_file_name)
{
	const char *search = ":.debug:/usr/lib/debug", *entry, *end;
	struct dcp_symbolizer *s = userdata ? *userdata : NULL;
	const struct stat *self = NULL;
	struct stat st;
	char *dir, *slash;
	int fd;

	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base,
					  file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	/* a .gnu_debuglink holds a file name; one with a directory in it
	 * is not followed out of the search path */
	if (fd >= 0 || !debuglink_file || !file_name ||
	    strchr(debuglink_file, '/'))
		return fd;
	if (s && s->debuginfo_path)
		search = s->debuginfo_path;
	if (stat(file_name, &st) == 0)
		self = &st;
	dir = strdup(file_name);
	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	for (entry = search; fd < 0; entry = end + 1) {
		char *path;

		end = strchrnul(entry, ':');
		path = debuglink_candidate(entry, (size_t)(end - entry), dir,
					   debuglink_file);
		if (path)
			fd = open_matching(path, self, id, n);
		if (fd >= 0) {
			free(*debuginfo_file_name);
			*debuginfo_file_name = path;
		} else {
			free(path);
		}
		if (!*end)
			break;
	}
	free(dir);
	return fd;
}

int dcp_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, const char *file_name,
		       const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name)
{
	struct dcp_symbolizer *s = userdata ? *userdata : NULL;
	int fd = s ? debug_file_cached(s, mod, debuginfo_file_name) : -1;
	const unsigned char *id;
	GElf_Addr vaddr;
	int n;

	if (fd >= 0)
		return fd;
	n = dwfl_module_build_id(mod, &id, &vaddr);
	if (n > 0 && n <= DCP_BUILD_ID_MAX && !debuginfod_named())
		fd = find_debuginfo_local(
			mod, userdata, modname, base, file_name, debuglink_file,
			debuglink_crc, id, n, debuginfo_file_name);
	else
		fd = dwfl_standard_find_debuginfo(
			mod, userdata, modname, base, file_name, debuglink_file,
			debuglink_crc, debuginfo_file_name);
	if (fd >= 0 && s)
		debug_file_store(s, fd, *debuginfo_file_name);
	return fd;
}

int dcp_debuginfo_path(const char *const *dirs, size_t nr, char **out)
{
	size_t len = sizeof(":.debug:/usr/lib/debug");
	char **abs = calloc(nr + 1, sizeof(*abs));
	int ret = 0;
	char *s;

	*out = NULL;
	if (!abs)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		const char *d = dirs[i];
		struct stat st;

		abs[i] = realpath(d, NULL);
		if (!abs[i] || stat(abs[i], &st) < 0) {
			ret = dcp_error(errno,
					"cannot use debuginfo directory '%s': "
					"%s",
					d, strerror(errno));
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			ret = dcp_error(ENOTDIR,
					"cannot use debuginfo directory '%s': "
					"not a directory",
					d);
			goto out;
		}
		if (strchr(abs[i], ':')) {
			ret = dcp_error(EINVAL,
					"cannot use debuginfo directory '%s': "
					"its path holds a ':'",
					d);
			goto out;
		}
		len += strlen(abs[i]) + 1;
	}
	s = malloc(len);
	if (!s) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto out;
	}
	strcpy(s, ":.debug");
	for (size_t i = 0; i < nr; i++) {
		strcat(s, ":");
		strcat(s, abs[i]);
	}
	strcat(s, ":/usr/lib/debug");
	*out = s;
out:
	for (size_t i = 0; i < nr; i++)
		free(abs[i]);
	free(abs);
	return ret;
}
