/* SPDX-License-Identifier: MIT */
/* Growing arrays: the one realloc-by-doubling the library's tables use. */
#ifndef DCPROF_BASE_GROW_H
#define DCPROF_BASE_GROW_H

#include <stdlib.h>

/*
 * p (an array of *cap elements of elem bytes) with room for need
 * elements: p itself when it has it, else reallocated to the next power
 * of two times 64 at or above need, *cap updated. NULL when out of memory
 * (p is then still valid and *cap unchanged).
 */
static inline void *dcp_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t cap2 = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return p;
	while (cap2 < need)
		cap2 *= 2;
	q = realloc(p, cap2 * elem);
	if (q)
		*cap = cap2;
	return q;
}

#endif
