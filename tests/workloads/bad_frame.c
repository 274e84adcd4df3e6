// SPDX-License-Identifier: MIT
/*
 * Spins in a function without CFI whose frame pointer points at a frame
 * holding a return address outside user space (the top bit set), as the
 * garbage a broken frame-pointer chain leads to. Writes "ready" to the
 * file given once it spins. usage: bad_frame READY_FILE
 */
#include <stdio.h>

/* no .cfi directives: no FDE, so unwinders take the frame pointer */
__asm__(".text\n"
	".globl spin_bad_frame\n"
	".type spin_bad_frame, @function\n"
	"spin_bad_frame:\n"
	"	mov %rdi, %rbp\n"
	"1:	jmp 1b\n"
	".size spin_bad_frame, . - spin_bad_frame\n");

void spin_bad_frame(const unsigned long *frame);

/* the frame: no caller's frame pointer, then the return address */
static const unsigned long frame[2]
	__attribute__((aligned(16))) = { 0, 0xb5c8489553fc8948ul };

int main(int argc, char **argv)
{
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		if (f) {
			fputs("ready\n", f);
			fclose(f);
		}
	}
	spin_bad_frame(frame);
	return 0;
}
