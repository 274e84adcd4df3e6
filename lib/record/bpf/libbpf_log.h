/* SPDX-License-Identifier: MIT */
/*
 * libbpf's messages into the library's log, for the BPF record source and
 * the BPF collection (both set it with libbpf_set_print()).
 */
#ifndef DCPROF_LIBBPF_LOG_H
#define DCPROF_LIBBPF_LOG_H

#ifndef DCPROF_NO_BPF

#include <stdarg.h>

#include <bpf/libbpf.h>

/* Debug chatter dropped, the rest one DCP_LOG_DEBUG line each. */
int dcp_libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap);

#endif
#endif
