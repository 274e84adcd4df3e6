// SPDX-License-Identifier: MIT
#include "cmd.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error("'record' is not implemented yet");
}
