/* The bump allocator over the heap at the end of the image (its .heap
 * section, which the loader reserves with the image): page tables,
 * stacks, rings, never freed. x86's mm.c includes this file rather than
 * linking it, so that the compiler inlines it there as it always did. */
#include "guest.h"
#include "lib.h"

extern char __heap_start[], __heap_end[];
static uint64_t heap_next;

void *alloc_pages(unsigned n)
{
	uint64_t p;

	if (!heap_next)
		heap_next = (uint64_t)__heap_start;
	p = heap_next;
	if (p + n * 4096ULL > (uint64_t)__heap_end) {
		report(false, "alloc", "pages=%u reason=heap-exhausted", n);
		guest_exit(1);
	}
	heap_next += n * 4096ULL;
	return (void *)p;
}

/* Everything below this belongs to the guest kernel (image, heap). */
uint64_t kernel_area_end(void)
{
	return ALIGN_UP((uint64_t)__heap_end, 2ULL << 20);
}
