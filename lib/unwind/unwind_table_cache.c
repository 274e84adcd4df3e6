// SPDX-License-Identifier: MIT
/*
 * A file's unwind table by descriptor: read from the symbol cache by the
 * file's build id when a recording compiled it before, else compiled from
 * the file's .eh_frame (unwind_table.c) and kept there. Compiling a large
 * program's table takes a tenth of a second of CPU, which a busy machine
 * may not give the recorder before the program's first samples; reading
 * it back takes a read.
 *
 * An entry, "unwind-BUILDID": the line "dcprof unwind table 1", then the
 * row count and the CFI bytes compiled (64-bit, little endian), then the
 * rows as struct dcp_unwind_row (12 bytes, little endian). An entry whose
 * length does not match, or whose rows are not in order, is compiled
 * again.
 *
 * The vdso has no file: its table is compiled from this process's image.
 */
#include <endian.h>
#include <errno.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "cache_internal.h"
#include "elf_segments_internal.h"
#include "log_internal.h"
#include "unwind_table_internal.h"

#define ENTRY_MAGIC "dcprof unwind table 1\n"

struct entry_head {
	char magic[sizeof(ENTRY_MAGIC) - 1];
	uint64_t nr_rows;
	uint64_t cfi_bytes;
} __attribute__((packed));

_Static_assert(sizeof(struct dcp_unwind_row) == 12, "row size");

static void entry_name(const uint8_t *id, int len, char *name, size_t size)
{
	size_t at = (size_t)snprintf(name, size, "unwind-");

	for (int i = 0; i < len && at + 3 <= size; i++)
		at += (size_t)snprintf(name + at, size - at, "%02x", id[i]);
}

static int read_all(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	return 0;
}

/* The cached table into t; -ENOENT when there is none worth using. */
static int load_entry(const struct dcp_cache *c, const char *name,
		      struct dcp_unwind_table *t)
{
	struct entry_head h;
	struct stat st;
	int fd = dcp_cache_entry_open(c, name), ret;
	uint64_t n;

	if (fd < 0)
		return -ENOENT;
	ret = -ENOENT;
	if (fstat(fd, &st) || read_all(fd, &h, sizeof(h)) ||
	    memcmp(h.magic, ENTRY_MAGIC, sizeof(h.magic)))
		goto out;
	n = le64toh(h.nr_rows);
	if (n > (uint64_t)st.st_size / sizeof(*t->rows) ||
	    (uint64_t)st.st_size != sizeof(h) + n * sizeof(*t->rows))
		goto out;
	t->rows = malloc(n ? n * sizeof(*t->rows) : 1);
	if (!t->rows) {
		ret = -ENOMEM;
		goto out;
	}
	if (read_all(fd, t->rows, n * sizeof(*t->rows)))
		goto out;
	for (uint64_t i = 0; i < n; i++) {
		t->rows[i].off = le32toh(t->rows[i].off);
		t->rows[i].fp_off = (short)le16toh((uint16_t)t->rows[i].fp_off);
		t->rows[i].cfa_off = (int)le32toh((uint32_t)t->rows[i].cfa_off);
		if (i && t->rows[i].off <= t->rows[i - 1].off)
			goto out;
	}
	t->nr_rows = n;
	t->eh_frame_bytes = le64toh(h.cfi_bytes);
	ret = 0;
out:
	close(fd);
	if (ret) {
		free(t->rows);
		t->rows = NULL;
		t->nr_rows = 0;
	}
	return ret;
}

void dcp_unwind_table_store(const struct dcp_cache *c, const char *name,
			    const struct dcp_unwind_table *t)
{
	struct entry_head h;
	char tmp[64];
	int fd = dcp_cache_entry_create(c, tmp, sizeof(tmp)), ret;

	if (fd < 0)
		return;
	memcpy(h.magic, ENTRY_MAGIC, sizeof(h.magic));
	h.nr_rows = htole64(t->nr_rows);
	h.cfi_bytes = htole64(t->eh_frame_bytes);
	ret = write_all(fd, &h, sizeof(h));
	/* a batch of rows a write: one system call a row would cost more
	 * than the table's build */
	for (size_t i = 0; !ret && i < t->nr_rows;) {
		struct dcp_unwind_row buf[1024];
		size_t n = 0;

		for (; n < sizeof(buf) / sizeof(buf[0]) && i < t->nr_rows;
		     n++, i++) {
			buf[n] = t->rows[i];
			buf[n].off = htole32(buf[n].off);
			buf[n].fp_off = (short)htole16((uint16_t)buf[n].fp_off);
			buf[n].cfa_off = (int)htole32((uint32_t)buf[n].cfa_off);
		}
		ret = write_all(fd, buf, n * sizeof(*buf));
	}
	if (ret)
		dcp_cache_entry_abort(c, fd, tmp);
	else
		dcp_cache_entry_commit(c, fd, tmp, name);
}

int dcp_unwind_table_for_fd(int fd, const struct dcp_cache *cache, bool build,
			    struct dcp_unwind_table *t, bool *cached,
			    char name[DCP_UNWIND_CACHE_NAME])
{
	uint8_t id[DCP_BUILD_ID_MAX];
	int id_len, ret;
	Elf *elf;

	memset(t, 0, sizeof(*t));
	*cached = false;
	name[0] = 0;
	id_len = cache ? dcp_build_id_read_fd(fd, id) : 0;
	if (id_len > 0) {
		entry_name(id, id_len, name, DCP_UNWIND_CACHE_NAME);
		if (!load_entry(cache, name, t)) {
			*cached = true;
			return 0;
		}
	}
	if (!build)
		return -ENOENT;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return dcp_error(ENOEXEC, "not an ELF file: %s",
				 elf_errmsg(-1));
	ret = dcp_unwind_table_build(elf, t);
	elf_end(elf);
	return ret;
}

int dcp_unwind_table_build_vdso(struct dcp_unwind_table *t)
{
	const unsigned char *img;
	unsigned char *copy;
	size_t size;
	Elf *elf;
	int err;

	memset(t, 0, sizeof(*t));
	err = dcp_vdso_image(&img, &size);
	if (err < 0)
		return dcp_error(-err, "cannot read the vdso's image");
	/* libelf reads from a buffer of its own: the vdso's pages are the
	 * kernel's */
	copy = malloc(size);
	if (!copy)
		return dcp_error(ENOMEM, "out of memory");
	memcpy(copy, img, size);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)copy, size);
	if (!elf) {
		free(copy);
		return dcp_error(ENOEXEC, "cannot read the vdso's image: %s",
				 elf_errmsg(-1));
	}
	err = dcp_unwind_table_build(elf, t);
	elf_end(elf);
	free(copy);
	return err;
}
