// SPDX-License-Identifier: MIT
/*
 * Burns CPU in spin_forever() until killed; writes "ready" to the file
 * given as argument once it runs. usage: spin READY_FILE
 */
#include <stdint.h>
#include <stdio.h>

static volatile uint64_t sink;

__attribute__((noinline)) void spin_forever(void)
{
	for (;;)
		for (uint64_t i = 0; i < 100000; i++)
			sink += i ^ (i >> 3);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		if (f) {
			fputs("ready\n", f);
			fclose(f);
		}
	}
	spin_forever();
	return 0;
}
