/* Freestanding helpers: comparing, measuring and parsing strings (the
 * arch copies and fills memory: arch/<arch>/string.c). */
#include "lib.h"

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

bool parse_u64(const char *s, size_t len, bool size, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		v = v * base + d;
	}
	if (i < len && size && i + 1 == len) {
		switch (s[i] | 0x20) {
		case 'k': v <<= 10; break;
		case 'm': v <<= 20; break;
		case 'g': v <<= 30; break;
		case 't': v <<= 40; break;
		default: return false;
		}
		i++;
	}
	if (i != len)
		return false;
	*out = v;
	return true;
}
