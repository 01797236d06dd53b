/* 9P2000.L on the wire: message types, the fields' fixed layouts, and a
 * reader and a writer over flat buffers that check every length (a
 * reader past its end, or a writer past its room, turns bad and stays
 * so, which the caller checks once per message). Integers are
 * little-endian; a string is a 16-bit length and that many bytes. */
#ifndef THPVM_BACKEND_P9_WIRE_H
#define THPVM_BACKEND_P9_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* T-messages; each R is its T + 1. */
enum p9_type {
	P9_TLERROR = 6, P9_RLERROR = 7,
	P9_TSTATFS = 8,
	P9_TLOPEN = 12,
	P9_TLCREATE = 14,
	P9_TSYMLINK = 16,
	P9_TMKNOD = 18,
	P9_TRENAME = 20,
	P9_TREADLINK = 22,
	P9_TGETATTR = 24,
	P9_TSETATTR = 26,
	P9_TXATTRWALK = 30,
	P9_TXATTRCREATE = 32,
	P9_TREADDIR = 40,
	P9_TFSYNC = 50,
	P9_TLOCK = 52,
	P9_TGETLOCK = 54,
	P9_TLINK = 70,
	P9_TMKDIR = 72,
	P9_TRENAMEAT = 74,
	P9_TUNLINKAT = 76,
	P9_TVERSION = 100,
	P9_TAUTH = 102,
	P9_TATTACH = 104,
	P9_TFLUSH = 108,
	P9_TWALK = 110,
	P9_TREAD = 116,
	P9_TWRITE = 118,
	P9_TCLUNK = 120,
	P9_TREMOVE = 122,
};

#define P9_RFLUSH (P9_TFLUSH + 1)
/* Every message starts size[4] type[1] tag[2]. */
#define P9_HEADER_SIZE 7
#define P9_NOFID 0xffffffffu
#define P9_NOTAG 0xffff
/* Names in one Twalk at most. */
#define P9_MAXWELEM 16
/* A qid: type[1] version[4] path[8]. */
#define P9_QID_SIZE 13
#define P9_QTDIR 0x80
#define P9_QTSYMLINK 0x02
#define P9_QTFILE 0x00
/* Rread's and Rreaddir's header: size[4] type[1] tag[2] count[4], after
 * which the data. Twrite's: size type tag fid[4] offset[8] count[4]. */
#define P9_IO_HEADER 11
#define P9_TWRITE_HEADER 23

struct p9_qid {
	uint8_t type;
	uint32_t version;
	uint64_t path;
};

struct p9_reader {
	const uint8_t *p;
	size_t len, pos;
	bool bad;
};

struct p9_writer {
	uint8_t *p;
	size_t cap, pos;
	bool bad;
};

uint8_t p9_get_u8(struct p9_reader *r);
uint16_t p9_get_u16(struct p9_reader *r);
uint32_t p9_get_u32(struct p9_reader *r);
uint64_t p9_get_u64(struct p9_reader *r);
/* A string into buf as a C string: bad if it does not fit in cap - 1
 * bytes, or holds a NUL (a name no host call could take as given). */
void p9_get_str(struct p9_reader *r, char *buf, size_t cap);

void p9_put_u8(struct p9_writer *w, uint8_t v);
void p9_put_u16(struct p9_writer *w, uint16_t v);
void p9_put_u32(struct p9_writer *w, uint32_t v);
void p9_put_u64(struct p9_writer *w, uint64_t v);
void p9_put_str(struct p9_writer *w, const char *s, size_t len);
void p9_put_qid(struct p9_writer *w, const struct p9_qid *q);
/* Starts a reply of type for tag: its size field is filled in by
 * p9_end. */
void p9_begin(struct p9_writer *w, uint8_t type, uint16_t tag);
/* The reply's length, with its size field written, counting data_len
 * bytes placed after w's (straight into the guest's buffers); 0 if it
 * did not fit. */
size_t p9_end(struct p9_writer *w, size_t data_len);

#endif
