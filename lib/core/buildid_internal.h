/* SPDX-License-Identifier: MIT */
/* Build ids of ELF files, read with libelf. */
#ifndef DCPROF_BUILDID_INTERNAL_H
#define DCPROF_BUILDID_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dcprof/dcprof.h"

/*
 * Read the GNU build id note of the ELF file open on fd (any file offset;
 * the fd's position is not used). Returns the id's size (1..20), 0 when the
 * file is ELF but has no build id, or a negative errno (-ENOEXEC for a file
 * that is not ELF).
 */
int dcp_build_id_read_fd(int fd, uint8_t id[DCP_BUILD_ID_MAX]);
int dcp_build_id_read_path(const char *path, uint8_t id[DCP_BUILD_ID_MAX]);

/* Parse a hex build id (2..40 hex digits, even count). Size or -EINVAL. */
int dcp_build_id_parse_hex(const char *hex, uint8_t id[DCP_BUILD_ID_MAX]);

#endif
