/* SPDX-License-Identifier: MIT */
/*
 * The unit tests' shell commands (building, stripping and copying the
 * files a test reads). Included after cmocka.h, whose fail_msg() it uses.
 */
#ifndef DCPROF_UNIT_SHELL_H
#define DCPROF_UNIT_SHELL_H

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The shell command fmt, ...: the test fails when it does. */
static void run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fail_msg("command failed (%d): %s", rc, cmd);
}

#endif
