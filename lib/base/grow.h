/* SPDX-License-Identifier: MIT */
/* Growing arrays: the one realloc-by-doubling the library's tables use. */
#ifndef DCPROF_BASE_GROW_H
#define DCPROF_BASE_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * p (an array of *cap elements of elem bytes) with room for need
 * elements: p itself when it has it, else reallocated to the next power
 * of two times first (the capacity of an empty array) at or above need,
 * *cap updated. NULL when out of memory or when the size would overflow
 * (p is then still valid and *cap unchanged).
 */
static inline void *dcp_grow_from(void *p, size_t *cap, size_t need,
				  size_t elem, size_t first)
{
	size_t cap2 = *cap ? *cap : first ? first : 1;
	void *q;

	if (need <= *cap)
		return p;
	while (cap2 < need) {
		if (cap2 > SIZE_MAX / 2)
			return NULL;
		cap2 *= 2;
	}
	if (elem && cap2 > SIZE_MAX / elem)
		return NULL;
	q = realloc(p, cap2 * elem);
	if (q)
		*cap = cap2;
	return q;
}

/* dcp_grow_from with 64 elements for an empty array. */
static inline void *dcp_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	return dcp_grow_from(p, cap, need, elem, 64);
}

#endif
