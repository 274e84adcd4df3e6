// SPDX-License-Identifier: MIT
#include "cmd.h"

int cmd_flamegraph(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error("'flamegraph' is not implemented yet");
}
