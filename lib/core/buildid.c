// SPDX-License-Identifier: MIT
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "log_internal.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static unsigned int elf_version_result = EV_NONE;

static void elf_init(void)
{
	elf_version_result = elf_version(EV_CURRENT);
}

/* Scan one block of notes; the size of the build id found, else 0. */
static int scan_notes(Elf_Data *data, uint8_t id[DCP_BUILD_ID_MAX])
{
	size_t off = 0, name_off, desc_off, size;
	GElf_Nhdr nhdr;

	if (!data)
		return 0;
	while (off < data->d_size) {
		const char *name;

		off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off);
		if (off == 0)
			break;
		name = (const char *)data->d_buf + name_off;
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
		    memcmp(name, "GNU", 4) != 0 || nhdr.n_descsz == 0)
			continue;
		/* Longer ids (--build-id=0x...) are cut as perf does. */
		size = nhdr.n_descsz;
		if (size > DCP_BUILD_ID_MAX)
			size = DCP_BUILD_ID_MAX;
		memcpy(id, (const char *)data->d_buf + desc_off, size);
		return (int)size;
	}
	return 0;
}

static int from_phdrs(Elf *elf, uint8_t id[DCP_BUILD_ID_MAX])
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);
		Elf_Data *data;
		int ret;

		if (!ph || ph->p_type != PT_NOTE || ph->p_filesz == 0)
			continue;
		data = elf_getdata_rawchunk(
			elf, (int64_t)ph->p_offset, ph->p_filesz,
			ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		ret = scan_notes(data, id);
		if (ret > 0)
			return ret;
	}
	return 0;
}

/* Objects without program headers (debug files, .o) keep notes in sections. */
static int from_sections(Elf *elf, uint8_t id[DCP_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		int ret;

		if (!sh || sh->sh_type != SHT_NOTE)
			continue;
		ret = scan_notes(elf_getdata(scn, NULL), id);
		if (ret > 0)
			return ret;
	}
	return 0;
}

static int read_fd(int fd, const char *what, uint8_t id[DCP_BUILD_ID_MAX])
{
	struct stat st;
	Elf *elf;
	int ret;

	pthread_once(&elf_once, elf_init);
	if (elf_version_result == EV_NONE)
		return dcp_error(ENOSYS, "libelf is out of date");
	if (fstat(fd, &st) < 0)
		return dcp_error(errno, "cannot stat %s: %s", what,
				 strerror(errno));
	if (!S_ISREG(st.st_mode))
		return dcp_error(ENOEXEC, "%s is not a regular file", what);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		/* e.g. an empty file, which cannot be mapped: no ELF either */
		return dcp_error(ENOEXEC, "cannot read %s as elf: %s", what,
				 elf_errmsg(-1));
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return dcp_error(ENOEXEC, "%s is not an elf file", what);
	}
	ret = from_phdrs(elf, id);
	if (ret == 0)
		ret = from_sections(elf, id);
	elf_end(elf);
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
