/* An optional filter on the guest's console output (--console-filter):
 * printable text (valid UTF-8 without C1 controls), the C0 controls a
 * line discipline uses, and the escape sequences that position the
 * cursor, colour text, erase the screen and switch modes pass; strings
 * a terminal acts on outside the screen (OSC: titles, the clipboard;
 * DCS, APC, PM, SOS), sequences that make the terminal answer on its
 * input (device status, attributes, window reports), a full reset and
 * clearing the scrollback are removed. The filter only removes bytes;
 * state carries over between calls, so a sequence split across writes
 * is judged whole. */
#ifndef THPVM_CORE_CONSOLE_FILTER_H
#define THPVM_CORE_CONSOLE_FILTER_H

#include <stddef.h>
#include <stdint.h>

/* The longest escape sequence held back until it is judged; longer ones
 * are removed. */
#define CONSOLE_FILTER_SEQ_MAX 32
/* A removed string (OSC, DCS...) ends at its terminator or after this
 * many bytes, when text resumes: the terminal never saw it begin. */
#define CONSOLE_FILTER_STRING_MAX 4096

struct console_filter {
	unsigned state;
	uint8_t seq[CONSOLE_FILTER_SEQ_MAX];	/* held back, not yet judged */
	size_t seq_len;
	size_t string_len;
	unsigned utf8_left;		/* continuation bytes still due */
	uint64_t removed;		/* bytes, since init */
};

void console_filter_init(struct console_filter *f);
/* Filters len bytes of in into out, which has room for len +
 * CONSOLE_FILTER_SEQ_MAX bytes (a sequence held back from an earlier call
 * may complete now); returns the bytes written to out. */
size_t console_filter_run(struct console_filter *f, const uint8_t *in,
			  size_t len, uint8_t *out);

#endif
