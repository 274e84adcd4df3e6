// SPDX-License-Identifier: MIT
/* The other work() of same_name.c: the same loop, half as long. */
#include <stdint.h>

extern volatile uint64_t same_name_sink;

void run_b(uint64_t n);

__attribute__((noinline)) static void work(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		same_name_sink += i ^ (i >> 3);
}

__attribute__((noinline)) void run_b(uint64_t n)
{
	work(n);
}
