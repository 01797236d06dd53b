/* memset and memcpy: string instructions keep the emulated code short. */
#include "lib.h"

void *memset(void *d, int c, size_t n)
{
	void *p = d;

	asm volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(c) : "memory");
	return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
	void *p = d;

	asm volatile("rep movsb" : "+D"(p), "+S"(s), "+c"(n) : : "memory");
	return d;
}
