// SPDX-License-Identifier: MIT
/*
 * libbpf's messages into the library's log (see libbpf_log.h).
 */
#ifndef DCPROF_NO_BPF

#include <stdio.h>
#include <string.h>

#include "libbpf_log.h"
#include "log_internal.h"

int dcp_libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	dcp_log(DCP_LOG_DEBUG, "libbpf: %s", line);
	return 0;
}

#endif
