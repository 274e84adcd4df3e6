/* SPDX-License-Identifier: MIT */
/*
 * The code of sampled functions (code.c): what the unit tests reach
 * besides the public calls of dcprof/code.h.
 */
#ifndef DCPROF_CODE_INTERNAL_H
#define DCPROF_CODE_INTERNAL_H

#include <stdint.h>

#include "dcprof/dcprof.h"

/*
 * The code at address addr of path, an ELF image of memory as
 * /proc/kcore is (its loadable segments at the addresses they hold), read
 * as a kernel function's is: up to size bytes within the segment holding
 * addr. NULL with errno and a message.
 */
struct dcp_code *dcp_code_open_image(const char *path, uint64_t addr,
				     uint64_t size);

#endif
