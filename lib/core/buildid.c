// SPDX-License-Identifier: MIT
/*
 * Build ids: the one parser of GNU build-id notes, and a small ELF reader
 * that finds the note blocks of a file with pread (program headers first,
 * then section headers), every offset and size checked against the file.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "log_internal.h"

/* Header tables and note blocks larger than this are not real: skipped. */
#define NOTES_MAX (1u << 20)
#define TABLE_MAX (4u << 20)

struct elf_file {
	int fd;
	uint64_t size; /* of the file */
	bool is64;
	bool swap; /* the file's byte order is not the host's */
};

static uint16_t get16(bool swap, const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap16(v) : v;
}

static uint32_t get32(bool swap, const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t get64(bool swap, const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

/* A field of a 32- or 64-bit structure, by its offset in either layout. */
static uint64_t get_word(const struct elf_file *e, const uint8_t *p,
			 size_t off32, size_t off64)
{
	return e->is64 ? get64(e->swap, p + off64) : get32(e->swap, p + off32);
}

#define FIELD(e, p, type, field)                      \
	get_word(e, p, offsetof(Elf32_##type, field), \
		 offsetof(Elf64_##type, field))
#define FIELD32(e, p, type, field)                                          \
	get32((e)->swap, (p) + ((e)->is64 ? offsetof(Elf64_##type, field) : \
					    offsetof(Elf32_##type, field)))
#define FIELD16(e, p, type, field)                                          \
	get16((e)->swap, (p) + ((e)->is64 ? offsetof(Elf64_##type, field) : \
					    offsetof(Elf32_##type, field)))

static size_t align_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/*
 * The parser of every note block: align is the padding of names and
 * descriptions (4, or 8 for blocks aligned so), swap the byte order.
 */
static int scan_notes(const uint8_t *p, size_t size, size_t align, bool swap,
		      uint8_t id[DCP_BUILD_ID_MAX])
{
	size_t pos = 0;

	while (pos < size) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off;

		if (size - pos < 12)
			return -EINVAL;
		namesz = get32(swap, p + pos);
		descsz = get32(swap, p + pos + 4);
		type = get32(swap, p + pos + 8);
		name_off = pos + 12;
		if (namesz > size - name_off || (namesz == 0 && descsz != 0))
			return -EINVAL;
		desc_off = align_up(name_off + namesz, align);
		if (desc_off > size || descsz > size - desc_off)
			return -EINVAL;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && descsz > 0) {
			/* Longer ids (--build-id=0x...) are cut as perf does. */
			if (descsz > DCP_BUILD_ID_MAX)
				descsz = DCP_BUILD_ID_MAX;
			memcpy(id, p + desc_off, descsz);
			return (int)descsz;
		}
		/* The last note's padding may be missing. */
		pos = align_up(desc_off + descsz, align);
	}
	return 0;
}

int dcp_build_id_from_notes(const void *notes, size_t size,
			    uint8_t id[DCP_BUILD_ID_MAX])
{
	if (!notes && size)
		return -EINVAL;
	return scan_notes(notes, size, 4, false, id);
}

/* Read exactly len bytes at off: 0, or a negative errno (-EIO when short). */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

/* A region of the file, or NULL when it lies outside it or is too big. */
static void *read_region(const struct elf_file *e, uint64_t off, uint64_t len,
			 uint64_t max)
{
	void *buf;

	if (len == 0 || len > max || off > e->size || len > e->size - off)
		return NULL;
	buf = malloc(len);
	if (buf && read_at(e->fd, buf, len, off) < 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* The build id of one note block of the file; 0 when none or unreadable. */
static int block_build_id(const struct elf_file *e, uint64_t off, uint64_t len,
			  uint64_t align, uint8_t id[DCP_BUILD_ID_MAX])
{
	uint8_t *buf = read_region(e, off, len, NOTES_MAX);
	int ret;

	if (!buf)
		return 0;
	ret = scan_notes(buf, len, align == 8 ? 8 : 4, e->swap, id);
	free(buf);
	return ret > 0 ? ret : 0;
}

/* Section 0, which holds the counts that overflow the ELF header. */
static int section_zero(const struct elf_file *e, uint64_t shoff,
			uint16_t shentsize, uint8_t *sh)
{
	if (shoff == 0 ||
	    shentsize < (e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
	    shoff > e->size || shentsize > e->size - shoff)
		return -1;
	return read_at(e->fd, sh,
		       e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr),
		       shoff);
}

static int from_phdrs(const struct elf_file *e, const uint8_t *eh,
		      uint8_t id[DCP_BUILD_ID_MAX])
{
	uint64_t phoff = FIELD(e, eh, Ehdr, e_phoff), n, i;
	uint16_t entsize = FIELD16(e, eh, Ehdr, e_phentsize);
	uint8_t *tab, sh[sizeof(Elf64_Shdr)];
	int ret = 0;

	n = FIELD16(e, eh, Ehdr, e_phnum);
	if (n == PN_XNUM) {
		if (section_zero(e, FIELD(e, eh, Ehdr, e_shoff),
				 FIELD16(e, eh, Ehdr, e_shentsize), sh) < 0)
			return 0;
		n = FIELD32(e, sh, Shdr, sh_info);
	}
	/* n * entsize must not wrap: sh_info and sh_size are the file's. */
	if (phoff == 0 || n == 0 ||
	    entsize < (e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
	    n > TABLE_MAX / entsize)
		return 0;
	tab = read_region(e, phoff, n * entsize, TABLE_MAX);
	if (!tab)
		return 0;
	for (i = 0; i < n && ret == 0; i++) {
		const uint8_t *ph = tab + i * entsize;
		uint64_t filesz = FIELD(e, ph, Phdr, p_filesz);

		if (FIELD32(e, ph, Phdr, p_type) != PT_NOTE || filesz == 0)
			continue;
		ret = block_build_id(e, FIELD(e, ph, Phdr, p_offset), filesz,
				     FIELD(e, ph, Phdr, p_align), id);
	}
	free(tab);
	return ret;
}

/* Objects without program headers (debug files, .o) keep notes in sections. */
static int from_sections(const struct elf_file *e, const uint8_t *eh,
			 uint8_t id[DCP_BUILD_ID_MAX])
{
	uint64_t shoff = FIELD(e, eh, Ehdr, e_shoff), n, i;
	uint16_t entsize = FIELD16(e, eh, Ehdr, e_shentsize);
	uint8_t *tab, sh[sizeof(Elf64_Shdr)];
	int ret = 0;

	n = FIELD16(e, eh, Ehdr, e_shnum);
	if (n == 0) {
		if (section_zero(e, shoff, entsize, sh) < 0)
			return 0;
		n = FIELD(e, sh, Shdr, sh_size);
	}
	if (shoff == 0 || n == 0 ||
	    entsize < (e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
	    n > TABLE_MAX / entsize)
		return 0;
	tab = read_region(e, shoff, n * entsize, TABLE_MAX);
	if (!tab)
		return 0;
	for (i = 1; i < n && ret == 0; i++) {
		const uint8_t *s = tab + i * entsize;

		if (FIELD32(e, s, Shdr, sh_type) != SHT_NOTE)
			continue;
		ret = block_build_id(e, FIELD(e, s, Shdr, sh_offset),
				     FIELD(e, s, Shdr, sh_size),
				     FIELD(e, s, Shdr, sh_addralign), id);
	}
	free(tab);
	return ret;
}

static int read_fd(int fd, const char *what, uint8_t id[DCP_BUILD_ID_MAX])
{
	uint8_t eh[sizeof(Elf64_Ehdr)];
	struct elf_file e = { .fd = fd };
	struct stat st;
	size_t ehsize;
	int ret;

	if (fstat(fd, &st) < 0)
		return dcp_error(errno, "cannot stat %s: %s", what,
				 strerror(errno));
	if (!S_ISREG(st.st_mode))
		return dcp_error(ENOEXEC, "%s is not a regular file", what);
	e.size = (uint64_t)st.st_size;
	if (e.size < EI_NIDENT)
		return dcp_error(ENOEXEC, "%s is not an elf file", what);
	ret = read_at(fd, eh, EI_NIDENT, 0);
	if (ret < 0)
		return dcp_error(-ret, "cannot read %s: %s", what,
				 strerror(-ret));
	if (memcmp(eh, ELFMAG, SELFMAG) != 0 ||
	    (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) ||
	    (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB) ||
	    eh[EI_VERSION] != EV_CURRENT)
		return dcp_error(ENOEXEC, "%s is not an elf file", what);
	e.is64 = eh[EI_CLASS] == ELFCLASS64;
	e.swap = (eh[EI_DATA] == ELFDATA2LSB) !=
		 (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	ehsize = e.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (e.size < ehsize || read_at(fd, eh, ehsize, 0) < 0)
		return dcp_error(ENOEXEC, "cannot read %s as elf: %s", what,
				 "truncated header");
	ret = from_phdrs(&e, eh, id);
	if (ret == 0)
		ret = from_sections(&e, eh, id);
	return ret;
}

int dcp_build_id_read_fd(int fd, uint8_t id[DCP_BUILD_ID_MAX])
{
	char what[32];

	snprintf(what, sizeof(what), "fd %d", fd);
	return read_fd(fd, what, id);
}

int dcp_build_id_read_path(const char *path, uint8_t id[DCP_BUILD_ID_MAX])
{
	char what[PATH_MAX + 2];
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dcp_error(errno, "cannot open '%s': %s", path,
				 strerror(errno));
	snprintf(what, sizeof(what), "'%s'", path);
	ret = read_fd(fd, what, id);
	close(fd);
	return ret;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int dcp_build_id_parse_hex(const char *hex, uint8_t id[DCP_BUILD_ID_MAX])
{
	size_t i, len = hex ? strlen(hex) : 0;

	if (len < 2 || len > 2 * DCP_BUILD_ID_MAX || len % 2)
		return dcp_error(EINVAL, "'%s' is not a hex build id",
				 hex ? hex : "");
	for (i = 0; i < len; i += 2) {
		int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return dcp_error(EINVAL, "'%s' is not a hex build id",
					 hex);
		id[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(len / 2);
}

DCPROF_API char *dcp_build_id_hex(const uint8_t *id, size_t size, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (size > DCP_BUILD_ID_MAX)
		size = DCP_BUILD_ID_MAX;
	for (i = 0; i < size; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * size] = '\0';
	return buf;
}
