/* SPDX-License-Identifier: MIT */
/* Errors and logging inside libdcprof: the library never prints. */
#ifndef DCPROF_LOG_INTERNAL_H
#define DCPROF_LOG_INTERNAL_H

#include "dcprof/dcprof.h"

#define DCP_HIDDEN __attribute__((visibility("hidden")))

/* Send a message to the callback set with dcp_set_log(). */
void dcp_log(enum dcp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Leave a one-line message for dcp_last_error() and return -err (err may be
 * given positive or negative). Typical use: return dcp_error(errno, "cannot
 * open '%s': %s", path, strerror(errno));
 */
int dcp_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Same, for pointer-returning functions: sets errno and returns NULL. */
void *dcp_error_null(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
