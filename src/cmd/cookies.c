// SPDX-License-Identifier: MIT
#include "cmd.h"

int cmd_cookies(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error("'cookies' is not implemented yet");
}
