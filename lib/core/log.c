// SPDX-License-Identifier: MIT
/* The library's log: a callback with levels, and the last error's message. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "log_internal.h"

static dcp_log_fn log_fn;
static void *log_ctx;
static _Thread_local char last_error[512] = "no error";

DCPROF_API void dcp_set_log(dcp_log_fn fn, void *ctx)
{
	log_fn = fn;
	log_ctx = ctx;
}

DCPROF_API const char *dcp_last_error(void)
{
	return last_error;
}

void dcp_log(enum dcp_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}

static void set_last_error(const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
}

int dcp_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_last_error(fmt, ap);
	va_end(ap);
	if (err == 0)
		err = EINVAL;
	/* The public calls promise errno as well as the return value. */
	errno = err < 0 ? -err : err;
	return err < 0 ? err : -err;
}

void *dcp_error_null(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_last_error(fmt, ap);
	va_end(ap);
	if (err == 0)
		err = EINVAL;
	errno = err < 0 ? -err : err;
	return NULL;
}
