// SPDX-License-Identifier: MIT
#include "cmd.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error("'report' is not implemented yet");
}
