// SPDX-License-Identifier: MIT
#include "cmd.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error("'export' is not implemented yet");
}
