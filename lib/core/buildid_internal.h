/* SPDX-License-Identifier: MIT */
/*
 * Build ids: the one parser of GNU build-id notes, and the reader that
 * finds them in ELF files with plain reads (no libelf in the core).
 */
#ifndef DCPROF_BUILDID_INTERNAL_H
#define DCPROF_BUILDID_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dcprof/dcprof.h"

/*
 * The GNU build id among a block of ELF notes in the host's byte order
 * with 4-byte padding (a PT_NOTE segment, a .note section, or a sysfs
 * notes file such as /sys/kernel/notes). Returns the id's size (1..20),
 * 0 when the block holds no GNU build-id note, or -EINVAL when a note runs
 * past the end of the block before one was found.
 *
 * The one rule for ids longer than DCP_BUILD_ID_MAX (20) bytes, such as
 * those of --build-id=0x<long hex>: the first 20 bytes are kept, as perf
 * does, so that such files still have an id and keep the one they had.
 */
int dcp_build_id_from_notes(const void *notes, size_t size,
			    uint8_t id[DCP_BUILD_ID_MAX]);

/*
 * Read the GNU build id note of the ELF file open on fd (any file offset;
 * the fd's position is not used). Program headers (PT_NOTE) are searched
 * first, then section headers (SHT_NOTE) for objects without segments such
 * as separate debug files; 32- and 64-bit files of either byte order.
 * Returns the id's size (1..20), 0 when the file is ELF but has no build id
 * (damaged headers or notes count as none), or a negative errno (-ENOEXEC
 * for a file that is not ELF).
 */
int dcp_build_id_read_fd(int fd, uint8_t id[DCP_BUILD_ID_MAX]);
int dcp_build_id_read_path(const char *path, uint8_t id[DCP_BUILD_ID_MAX]);

/* Parse a hex build id (2..40 hex digits, even count). Size or -EINVAL. */
int dcp_build_id_parse_hex(const char *hex, uint8_t id[DCP_BUILD_ID_MAX]);

#endif
