/* Minimal printf to the serial port: %s (and %.*s) %c %d %u %x with
 * l/ll/z, '0' flag and width. */
#include <stdarg.h>

#include "guest.h"
#include "lib.h"

static void put_num(uint64_t v, unsigned base, bool neg, int width, char pad)
{
	char buf[24];
	int n = 0;

	do {
		buf[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		buf[n++] = '-';
	while (width-- > n)
		serial_putc(pad);
	while (n)
		serial_putc(buf[--n]);
}

void vprint(const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		int width = 0, lng = 0, prec = -1;
		char pad = ' ';

		if (*fmt != '%') {
			serial_putc(*fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + *fmt++ - '0';
		if (fmt[0] == '.' && fmt[1] == '*') {
			prec = va_arg(ap, int);
			fmt += 2;
		}
		while (*fmt == 'l' || *fmt == 'z') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 's': {
			const char *s = va_arg(ap, const char *);

			while (*s && prec--)
				serial_putc(*s++);
			break;
		}
		case 'c':
			serial_putc((char)va_arg(ap, int));
			break;
		case 'd': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);

			put_num(v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0,
				width, pad);
			break;
		}
		case 'u':
		case 'x': {
			uint64_t v = lng ? va_arg(ap, uint64_t)
					 : va_arg(ap, unsigned);

			put_num(v, *fmt == 'x' ? 16 : 10, false, width, pad);
			break;
		}
		case '%':
			serial_putc('%');
			break;
		default:
			return;
		}
	}
}

void print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap);
	va_end(ap);
}
