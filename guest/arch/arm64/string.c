/* memset and memcpy, a word at a time where both ends allow it. Built
 * with -fno-tree-loop-distribute-patterns, so that GCC does not turn
 * these loops back into calls to themselves. */
#include "lib.h"

void *memset(void *d, int c, size_t n)
{
	uint8_t *p = d;
	uint64_t w = (uint8_t)c * 0x0101010101010101ULL;

	for (; n && (uintptr_t)p & 7; n--)
		*p++ = c;
	for (; n >= 8; n -= 8, p += 8)
		*(uint64_t *)p = w;
	while (n--)
		*p++ = c;
	return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
	uint8_t *p = d;
	const uint8_t *q = s;

	if (!(((uintptr_t)p | (uintptr_t)q) & 7))
		for (; n >= 8; n -= 8, p += 8, q += 8)
			*(uint64_t *)p = *(const uint64_t *)q;
	while (n--)
		*p++ = *q++;
	return d;
}
