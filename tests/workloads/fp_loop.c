// SPDX-License-Identifier: MIT
/* A CPU-bound loop two calls deep, built with frame pointers by t0492. */
#include <stdio.h>
static volatile double sink;
__attribute__((noinline)) static double work(int n)
{
	volatile double x = 0;
	for (int i = 0; i < n; i++)
		x += (double)i * 0.5;
	return x;
}
__attribute__((noinline)) static void outer(void)
{
	for (int k = 0; k < 4000; k++)
		sink += work(100000);
}
int main(void)
{
	outer();
	printf("%f\n", sink);
	return 0;
}
