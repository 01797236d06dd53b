/* Minimal printf to the serial port or into a buffer: %s (and %.*s) %c
 * %d %u %x with l/ll/z, '0' flag and width. */
#include <stdarg.h>

#include "guest.h"
#include "lib.h"

/* Where the characters go: the serial port if buf is 0, else buf, cut
 * at size - 1 characters. */
struct sink {
	char *buf;
	size_t size, len;
};

static void put(struct sink *o, char c)
{
	if (!o->buf)
		serial_putc(c);
	else if (o->len + 1 < o->size)
		o->buf[o->len++] = c;
}

static void put_num(struct sink *o, uint64_t v, unsigned base, bool neg,
		    int width, char pad)
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
		put(o, pad);
	while (n)
		put(o, buf[--n]);
}

static void format(struct sink *o, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		int width = 0, lng = 0, prec = -1;
		char pad = ' ';

		if (*fmt != '%') {
			put(o, *fmt);
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
				put(o, *s++);
			break;
		}
		case 'c':
			put(o, (char)va_arg(ap, int));
			break;
		case 'd': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);

			put_num(o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10,
				v < 0, width, pad);
			break;
		}
		case 'u':
		case 'x': {
			uint64_t v = lng ? va_arg(ap, uint64_t)
					 : va_arg(ap, unsigned);

			put_num(o, v, *fmt == 'x' ? 16 : 10, false, width, pad);
			break;
		}
		case '%':
			put(o, '%');
			break;
		default:
			return;
		}
	}
}

void vprint(const char *fmt, va_list ap)
{
	struct sink o = { 0, 0, 0 };

	format(&o, fmt, ap);
}

void print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint(fmt, ap);
	va_end(ap);
}

void sprint(char *buf, size_t size, const char *fmt, ...)
{
	struct sink o = { buf, size, 0 };
	va_list ap;

	va_start(ap, fmt);
	format(&o, fmt, ap);
	va_end(ap);
	if (size)
		buf[o.len] = 0;
}
