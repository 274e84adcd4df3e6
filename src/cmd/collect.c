// SPDX-License-Identifier: MIT
#include "cmd.h"

int cmd_collect(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error("'collect' is not implemented yet");
}
