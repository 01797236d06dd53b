/* The console output filter: a small terminal parser (ECMA-48 shapes:
 * ESC, CSI parameters, intermediates and final byte, strings ended by ST
 * or BEL) that decides per sequence, plus a UTF-8 validator. */
#include <stdbool.h>
#include <string.h>

#include "core/console_filter.h"

#define ESC	0x1b
#define BEL	0x07
#define CAN	0x18
#define SUB	0x1a

enum {
	TEXT,
	UTF8,		/* inside a multi-byte character */
	AFTER_ESC,
	CSI,		/* ESC [ params intermediates, final due */
	CHARSET,	/* ESC ( or ESC ), charset byte due */
	STRING,		/* OSC, DCS, APC, PM, SOS: removed to ST or BEL */
	STRING_ESC,	/* an ESC inside one: ST if a backslash follows */
};

static void hold(struct console_filter *f, uint8_t c)
{
	f->seq[f->seq_len++] = c;
}

static size_t emit_held(struct console_filter *f, uint8_t *out)
{
	size_t n = f->seq_len;

	memcpy(out, f->seq, n);
	f->seq_len = 0;
	f->state = TEXT;
	return n;
}

static void drop_held(struct console_filter *f)
{
	f->removed += f->seq_len;
	f->seq_len = 0;
	f->state = TEXT;
}

/* Tabs, line ends, backspace, and SO/SI (the line-drawing charset). */
static bool c0_passes(uint8_t c)
{
	return c == '\t' || c == '\n' || c == '\r' || c == '\b' ||
	       c == 0x0e || c == 0x0f;
}

/* Cursor movement and position, insert/delete, erase, scroll, scroll
 * region, save/restore, colours, and modes (h/l: cursor, wrap, the
 * alternate screen). Not: n (status reports), c (attributes), t
 * (window operations and reports), q, p, x and the rest. */
static bool csi_passes(const struct console_filter *f, uint8_t final)
{
	const uint8_t *p = f->seq + 2, *end = f->seq + f->seq_len;

	if (!strchr("@ABCDEFGHJKLMPSTXdfmrhlsu`", final))
		return false;
	for (const uint8_t *q = p; q < end; q++)
		if (*q < 0x30)		/* an intermediate byte */
			return false;
	/* ED 3 clears the scrollback, the one thing on screen the guest
	 * should not take away. */
	return !(final == 'J' && end - p == 1 && *p == '3');
}

/* A character's bytes so far are a valid start of UTF-8 that is not a
 * C1 control (U+0080-U+009F), an overlong form or a surrogate. */
static bool utf8_second_ok(uint8_t lead, uint8_t c)
{
	if ((c & 0xc0) != 0x80)
		return false;
	switch (lead) {
	case 0xc2: return c >= 0xa0;
	case 0xe0: return c >= 0xa0;
	case 0xed: return c < 0xa0;
	case 0xf0: return c >= 0x90;
	case 0xf4: return c < 0x90;
	default: return true;
	}
}

static unsigned utf8_length(uint8_t lead)
{
	if (lead >= 0xc2 && lead <= 0xdf)
		return 2;
	if (lead >= 0xe0 && lead <= 0xef)
		return 3;
	if (lead >= 0xf0 && lead <= 0xf4)
		return 4;
	return 0;
}

/* One byte in TEXT state. */
static size_t text_byte(struct console_filter *f, uint8_t c, uint8_t *out)
{
	unsigned n;

	if (c >= 0x20 && c < 0x7f) {
		*out = c;
		return 1;
	}
	if (c == ESC) {
		hold(f, c);
		f->state = AFTER_ESC;
		return 0;
	}
	if (c < 0x80) {
		if (c0_passes(c)) {
			*out = c;
			return 1;
		}
		f->removed++;
		return 0;
	}
	n = utf8_length(c);
	if (!n) {
		f->removed++;
		return 0;
	}
	hold(f, c);
	f->utf8_left = n - 1;
	f->state = UTF8;
	return 0;
}

static size_t esc_byte(struct console_filter *f, uint8_t c, uint8_t *out)
{
	switch (c) {
	case '[':
		hold(f, c);
		f->state = CSI;
		return 0;
	case ']': case 'P': case '_': case '^': case 'X':
		drop_held(f);
		f->removed++;
		f->state = STRING;
		f->string_len = 0;
		return 0;
	case '(': case ')':
		hold(f, c);
		f->state = CHARSET;
		return 0;
	/* Save/restore cursor, index, reverse index, next line, keypad
	 * modes. */
	case '7': case '8': case 'D': case 'E': case 'M': case '=': case '>':
		hold(f, c);
		return emit_held(f, out);
	}
	drop_held(f);
	/* A control byte ends the sequence and counts as itself; anything
	 * else (RIS, DEC tests...) went with it. */
	if (c < 0x20 || c == 0x7f)
		return text_byte(f, c, out);
	f->removed++;
	return 0;
}

static size_t csi_byte(struct console_filter *f, uint8_t c, uint8_t *out)
{
	if (c >= 0x40 && c <= 0x7e) {
		if (!csi_passes(f, c)) {
			drop_held(f);
			f->removed++;
			return 0;
		}
		hold(f, c);
		return emit_held(f, out);
	}
	if (c >= 0x20 && c < 0x40 && f->seq_len < CONSOLE_FILTER_SEQ_MAX - 1) {
		hold(f, c);
		return 0;
	}
	/* Too long, or broken by another byte: removed, and that byte is
	 * text again. */
	drop_held(f);
	return text_byte(f, c, out);
}

static size_t string_byte(struct console_filter *f, uint8_t c, uint8_t *out)
{
	if (f->state == STRING_ESC) {
		if (c == '\\') {		/* ST: the ESC and this */
			f->removed += 2;
			f->state = TEXT;
			return 0;
		}
		/* As terminals do: the ESC ended the string and begins a
		 * sequence of its own. */
		hold(f, ESC);
		f->state = AFTER_ESC;
		return esc_byte(f, c, out);
	}
	if (c == ESC) {
		f->state = STRING_ESC;
		return 0;
	}
	f->removed++;
	if (c == BEL || c == CAN || c == SUB ||
	    ++f->string_len >= CONSOLE_FILTER_STRING_MAX)
		f->state = TEXT;
	return 0;
}

static size_t utf8_byte(struct console_filter *f, uint8_t c, uint8_t *out)
{
	bool ok = f->seq_len == 1 ? utf8_second_ok(f->seq[0], c)
				  : (c & 0xc0) == 0x80;

	if (!ok) {
		drop_held(f);
		return text_byte(f, c, out);
	}
	hold(f, c);
	return --f->utf8_left ? 0 : emit_held(f, out);
}

void console_filter_init(struct console_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->state = TEXT;
}

size_t console_filter_run(struct console_filter *f, const uint8_t *in,
			  size_t len, uint8_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t c = in[i];

		switch (f->state) {
		case TEXT:
			n += text_byte(f, c, out + n);
			break;
		case UTF8:
			n += utf8_byte(f, c, out + n);
			break;
		case AFTER_ESC:
			n += esc_byte(f, c, out + n);
			break;
		case CSI:
			n += csi_byte(f, c, out + n);
			break;
		case CHARSET:
			if (c >= 0x30 && c < 0x7f) {
				hold(f, c);
				n += emit_held(f, out + n);
			} else {
				drop_held(f);
				n += text_byte(f, c, out + n);
			}
			break;
		default:
			n += string_byte(f, c, out + n);
		}
	}
	return n;
}
