/* SPDX-License-Identifier: MIT */
/*
 * Files the reading commands write (exports, flame graphs): written under
 * a temporary name beside the destination and renamed over it once
 * complete, so a reader never sees half a file and a failure leaves what
 * was there. "-" means stdout. A device or a FIFO at the path (/dev/null,
 * a pipe) is written as it is: a rename would put a file in its place.
 */
#ifndef DCPROF_OUTPUT_H
#define DCPROF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

struct cmd_output {
	const char *path;
	char *tmp; /* NULL for stdout, and for a device or FIFO */
	FILE *f;
	bool device; /* f is the device or FIFO at path */
};

/*
 * Create the temporary file 0600 with O_EXCL|O_NOFOLLOW and a random
 * suffix: a name planted in the directory, symlink or not, is never
 * opened. On failure prints one error line and returns the exit code.
 */
int cmd_output_open(struct cmd_output *o, const char *path);

/*
 * With status 0, flush, sync and rename the file into place (a symlink at
 * the path is replaced, never followed); otherwise, or when that fails,
 * remove every trace. Returns the exit code (status when it is not 0).
 */
int cmd_output_close(struct cmd_output *o, int status);

#endif
