/* Freestanding helpers: memory, strings, number parsing. */
#ifndef TG_LIB_H
#define TG_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);

/* Parses "123", "0x1f", with an optional K/M/G/T suffix when size is true.
 * Returns false on junk. */
bool parse_u64(const char *s, size_t len, bool size, uint64_t *out);

#endif
