/* Decompressors for the formats Linux can compress its bzImage payload
 * with. The input is any file a user passes, so every decoder bounds its
 * output and reports corruption instead of trusting sizes in the data. */
#include "boot/decompress.h"
#include "lib/log.h"
#include "lib/util.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <lzma.h>
#define ZLIB_CONST
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* Linux's lz4 "legacy" frame: this magic, then blocks, each a u32 LE
 * compressed size and data that decompresses to at most 8 MiB. */
#define LZ4_LEGACY_MAGIC 0x184C2102u
#define LZ4_LEGACY_BLOCK ((size_t)(8 * MiB))

/* Caps the dictionary a hostile .xz/.lzma header can make us allocate;
 * kernels use 32 or 64 MiB. zstd's windows are capped by its default
 * ZSTD_d_windowLogMax (128 MiB). */
#define LZMA_MEMLIMIT (256 * MiB)

#define OUTBUF_MIN (64 * KiB)

static const char *const compression_names[] = {
	[COMPRESSION_NONE] = "none",   [COMPRESSION_GZIP] = "gzip",
	[COMPRESSION_XZ] = "xz",       [COMPRESSION_LZMA] = "lzma",
	[COMPRESSION_ZSTD] = "zstd",   [COMPRESSION_LZ4] = "lz4",
	[COMPRESSION_BZIP2] = "bzip2", [COMPRESSION_LZO] = "lzo",
};

static const struct {
	enum compression c;
	uint8_t len;
	uint8_t magic[6];
} compression_magics[] = {
	{ COMPRESSION_GZIP, 2, { 0x1f, 0x8b } },
	{ COMPRESSION_XZ, 6, { 0xfd, '7', 'z', 'X', 'Z', 0x00 } },
	/* .lzma has no magic: properties byte 0x5d (lc=3 lp=0 pb=2, what
	 * every encoder uses by default) and a dictionary size whose low 16
	 * bits are zero. */
	{ COMPRESSION_LZMA, 3, { 0x5d, 0x00, 0x00 } },
	{ COMPRESSION_ZSTD, 4, { 0x28, 0xb5, 0x2f, 0xfd } },
	{ COMPRESSION_LZ4, 4, { 0x02, 0x21, 0x4c, 0x18 } },
	{ COMPRESSION_BZIP2, 3, { 'B', 'Z', 'h' } },
	{ COMPRESSION_LZO, 4, { 0x89, 'L', 'Z', 'O' } },
};

enum compression compression_detect(const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(compression_magics); i++) {
		if (len >= compression_magics[i].len &&
		    !memcmp(data, compression_magics[i].magic,
			    compression_magics[i].len))
			return compression_magics[i].c;
	}
	return COMPRESSION_NONE;
}

const char *compression_name(enum compression c)
{
	if ((unsigned)c >= ARRAY_SIZE(compression_names))
		return "unknown";
	return compression_names[c];
}

/* The output: a malloc'd buffer that grows, or the caller's, fixed. A
 * decoder that fills it exactly to max must still be able to tell "done"
 * from "more to come", so it may write one byte more: the grown buffer
 * holds max + 1 bytes, a fixed one lends its spare byte (outbuf_room).
 * More than max bytes out means -EFBIG. */
struct outbuf {
	uint8_t *buf;
	size_t len, cap;
	size_t max, limit;
	bool fixed;
	uint8_t spare;
};

static int outbuf_init(struct outbuf *ob, size_t max_out, size_t hint)
{
	*ob = (struct outbuf){
		.max = max_out,
		.limit = max_out < SIZE_MAX ? max_out + 1 : SIZE_MAX,
	};
	/* The hint (Linux's appended size word) only sizes the first
	 * allocation, which stays within the limit whatever it says. */
	ob->cap = MIN(MAX(hint + 1, OUTBUF_MIN), ob->limit);
	ob->buf = malloc(ob->cap);
	return ob->buf ? 0 : -ENOMEM;
}

static void outbuf_init_fixed(struct outbuf *ob, uint8_t *dst, size_t size)
{
	*ob = (struct outbuf){
		.buf = dst, .cap = size, .max = size, .limit = size,
		.fixed = true,
	};
}

/* Makes at least min_free bytes free (fewer where the limit is nearer),
 * doubling the buffer so that the total copying stays linear. A fixed
 * buffer has what it has. */
static int outbuf_grow(struct outbuf *ob, size_t min_free)
{
	size_t want = MIN(min_free, ob->limit - ob->len);
	size_t cap;
	uint8_t *buf;

	if (ob->fixed || ob->cap - ob->len >= want)
		return 0;
	cap = ob->cap > ob->limit / 2 ? ob->limit : ob->cap * 2;
	cap = MAX(cap, ob->len + want);
	buf = realloc(ob->buf, cap);
	if (!buf)
		return -ENOMEM;
	ob->buf = buf;
	ob->cap = cap;
	return 0;
}

/* For the streaming decoders: room for the next step, or -EFBIG once more
 * than max bytes came out. */
static int outbuf_next(struct outbuf *ob)
{
	if (ob->len > ob->max)
		return -EFBIG;
	return outbuf_grow(ob, 1);
}

/* Where the next step writes and how much (*n): the buffer's free part,
 * or, once a fixed buffer is full, its spare byte (after outbuf_next,
 * nothing else is possible). */
static uint8_t *outbuf_room(struct outbuf *ob, size_t *n)
{
	if (ob->len < ob->cap) {
		*n = ob->cap - ob->len;
		return ob->buf + ob->len;
	}
	*n = 1;
	return &ob->spare;
}

static int gzip_decode(const uint8_t *in, size_t in_len, struct outbuf *ob)
{
	z_stream zs = { 0 };
	size_t unfed = in_len;
	int ret, err;

	/* 16 + MAX_WBITS: a gzip header and trailer around the deflate data,
	 * the trailer's CRC and size being checked by inflate. */
	ret = inflateInit2(&zs, 16 + MAX_WBITS);
	if (ret != Z_OK)
		return ret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	zs.next_in = in;
	for (;;) {
		size_t avail;

		err = outbuf_next(ob);
		if (err)
			break;
		/* zlib counts in uInt, so feed huge inputs in pieces. */
		if (!zs.avail_in && unfed) {
			zs.avail_in = MIN(unfed, UINT_MAX);
			unfed -= zs.avail_in;
		}
		zs.next_out = outbuf_room(ob, &avail);
		avail = MIN(avail, UINT_MAX);
		zs.avail_out = avail;
		ret = inflate(&zs, Z_NO_FLUSH);
		ob->len += avail - zs.avail_out;
		if (ret == Z_STREAM_END)
			break;
		if (ret == Z_MEM_ERROR) {
			err = -ENOMEM;
			break;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			pr_err("gzip: corrupt data (%s)",
			       zs.msg ? zs.msg : "bad stream");
			err = -EINVAL;
			break;
		}
		/* Stopping with output space left means it wants more input. */
		if (zs.avail_out && !zs.avail_in && !unfed) {
			pr_err("gzip: truncated data");
			err = -EINVAL;
			break;
		}
	}
	inflateEnd(&zs);
	return err;
}

/* Runs an xz or lzma_alone decoder over the whole input. */
static int lzma_run(lzma_stream *strm, const char *name, const uint8_t *in,
		    size_t in_len, struct outbuf *ob)
{
	lzma_ret ret;
	int err;

	strm->next_in = in;
	strm->avail_in = in_len;
	for (;;) {
		size_t avail;

		err = outbuf_next(ob);
		if (err)
			return err;
		strm->next_out = outbuf_room(ob, &avail);
		strm->avail_out = avail;
		/* LZMA_FINISH: all input is there, so running out of it is
		 * reported (LZMA_BUF_ERROR) rather than waited for. */
		ret = lzma_code(strm, LZMA_FINISH);
		ob->len += avail - strm->avail_out;
		switch (ret) {
		case LZMA_OK:
			continue;
		case LZMA_STREAM_END:
			return 0;
		case LZMA_MEM_ERROR:
			return -ENOMEM;
		case LZMA_MEMLIMIT_ERROR:
			pr_err("%s: stream needs more than %llu MiB to decode",
			       name, LZMA_MEMLIMIT / MiB);
			return -EINVAL;
		case LZMA_BUF_ERROR:
			pr_err("%s: truncated data", name);
			return -EINVAL;
		case LZMA_FORMAT_ERROR:
			pr_err("%s: bad header", name);
			return -EINVAL;
		case LZMA_OPTIONS_ERROR:
			pr_err("%s: unsupported or invalid options", name);
			return -EINVAL;
		case LZMA_DATA_ERROR:
			pr_err("%s: corrupt data", name);
			return -EINVAL;
		default:
			pr_err("%s: liblzma error %d", name, (int)ret);
			return -EINVAL;
		}
	}
}

static int xz_decode(const uint8_t *in, size_t in_len, struct outbuf *ob)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	int err;

	/* No LZMA_CONCATENATED: stop after one stream, so that what follows
	 * (Linux's size word) is ignored. */
	if (lzma_stream_decoder(&strm, LZMA_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	err = lzma_run(&strm, "xz", in, in_len, ob);
	lzma_end(&strm);
	return err;
}

static int lzma_decode(const uint8_t *in, size_t in_len, struct outbuf *ob)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	int err;

	if (lzma_alone_decoder(&strm, LZMA_MEMLIMIT) != LZMA_OK)
		return -ENOMEM;
	err = lzma_run(&strm, "lzma", in, in_len, ob);
	lzma_end(&strm);
	return err;
}

static int zstd_decode(const uint8_t *in, size_t in_len, struct outbuf *ob)
{
	ZSTD_inBuffer src = { in, in_len, 0 };
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	int err;

	if (!dctx)
		return -ENOMEM;
	for (;;) {
		ZSTD_outBuffer dst = { 0 };
		size_t ret;

		err = outbuf_next(ob);
		if (err)
			break;
		dst.dst = outbuf_room(ob, &dst.size);
		ret = ZSTD_decompressStream(dctx, &dst, &src);
		ob->len += dst.pos;
		if (ZSTD_isError(ret)) {
			if (ZSTD_getErrorCode(ret) ==
			    ZSTD_error_memory_allocation) {
				err = -ENOMEM;
				break;
			}
			pr_err("zstd: corrupt data (%s)",
			       ZSTD_getErrorName(ret));
			err = -EINVAL;
			break;
		}
		/* 0: the first frame is complete; what follows is ignored. */
		if (!ret)
			break;
		if (src.pos == src.size && dst.pos < dst.size) {
			pr_err("zstd: truncated data");
			err = -EINVAL;
			break;
		}
	}
	ZSTD_freeDCtx(dctx);
	return err;
}

static int lz4_decode(const uint8_t *in, size_t in_len, struct outbuf *ob)
{
	size_t pos = 4;
	int err;

	if (in_len < 4 || get_le32(in) != LZ4_LEGACY_MAGIC) {
		pr_err("lz4: not a legacy lz4 frame");
		return -EINVAL;
	}
	/* There is no end marker: the data ends where the input does, give
	 * or take Linux's size word and up to 3 bytes of padding. */
	while (in_len - pos >= 4) {
		uint32_t size = get_le32(in + pos);
		size_t room;
		int n;

		pos += 4;
		/* The start of another stream appended to this one, as the
		 * Linux decompressor also accepts. */
		if (size == LZ4_LEGACY_MAGIC)
			continue;
		/* Linux's appended uncompressed size. */
		if (pos == in_len)
			break;
		if (size > in_len - pos ||
		    size > (size_t)LZ4_compressBound(LZ4_LEGACY_BLOCK)) {
			pr_err("lz4: block of %u bytes at offset %zu is too big or runs past the data",
			       size, pos - 4);
			return -EINVAL;
		}
		err = outbuf_grow(ob, LZ4_LEGACY_BLOCK);
		if (err)
			return err;
		room = MIN(ob->cap - ob->len, LZ4_LEGACY_BLOCK);
		n = LZ4_decompress_safe((const char *)in + pos,
					(char *)ob->buf + ob->len, size, room);
		if (n < 0) {
			/* With less than a block of room left under the limit,
			 * failing may just mean the block is too big: it is if
			 * it validly fills all the room. */
			if (room < LZ4_LEGACY_BLOCK &&
			    LZ4_decompress_safe_partial(
				    (const char *)in + pos,
				    (char *)ob->buf + ob->len, size, room,
				    room) == (int)room)
				return -EFBIG;
			pr_err("lz4: corrupt block at offset %zu", pos - 4);
			return -EINVAL;
		}
		ob->len += n;
		if (ob->len > ob->max)
			return -EFBIG;
		pos += size;
	}
	return 0;
}

/* Runs the decoder for c, which can_unpack, into ob. */
/* An image stored as it is: copied whole, within the limit. */
static int none_decode(const uint8_t *in, size_t in_len, struct outbuf *ob)
{
	int err;

	if (in_len > ob->max)
		return -EFBIG;
	err = outbuf_grow(ob, in_len);
	if (err)
		return err;
	memcpy(ob->buf + ob->len, in, in_len);
	ob->len += in_len;
	return 0;
}

static int decode(enum compression c, const uint8_t *in, size_t in_len,
		  struct outbuf *ob)
{
	int err;

	switch (c) {
	case COMPRESSION_NONE:
		err = none_decode(in, in_len, ob);
		break;
	case COMPRESSION_GZIP:
		err = gzip_decode(in, in_len, ob);
		break;
	case COMPRESSION_XZ:
		err = xz_decode(in, in_len, ob);
		break;
	case COMPRESSION_LZMA:
		err = lzma_decode(in, in_len, ob);
		break;
	case COMPRESSION_ZSTD:
		err = zstd_decode(in, in_len, ob);
		break;
	default:
		err = lz4_decode(in, in_len, ob);
		break;
	}
	/* A stream may end right after filling the spare byte past max. */
	if (!err && ob->len > ob->max)
		err = -EFBIG;
	if (err == -ENOMEM)
		pr_err("%s: out of memory while decompressing",
		       compression_name(c));
	return err;
}

bool compression_can_unpack(enum compression c)
{
	switch (c) {
	case COMPRESSION_NONE:
	case COMPRESSION_GZIP:
	case COMPRESSION_XZ:
	case COMPRESSION_LZMA:
	case COMPRESSION_ZSTD:
	case COMPRESSION_LZ4:
		return true;
	default:
		return false;
	}
}

int decompress(enum compression c, const uint8_t *in, size_t in_len,
	       size_t max_out, uint8_t **out, size_t *out_len)
{
	struct outbuf ob;
	uint8_t *shrunk;
	size_t hint;
	int err;

	if (!compression_can_unpack(c))
		return -ENOTSUP;
	/* Linux appends the unpacked size to a compressed payload. */
	if (c == COMPRESSION_NONE)
		hint = in_len;
	else
		hint = in_len >= 4 ? get_le32(in + in_len - 4) : 0;
	err = outbuf_init(&ob, max_out, hint);
	if (err) {
		/* The caller says nothing more: "already reported". */
		pr_err("%s: out of memory to unpack into",
		       compression_name(c));
		return err;
	}
	err = decode(c, in, in_len, &ob);
	if (err) {
		free(ob.buf);
		return err;
	}
	/* Give back what the geometric growth over-allocated. */
	shrunk = realloc(ob.buf, ob.len ? ob.len : 1);
	*out = shrunk ? shrunk : ob.buf;
	*out_len = ob.len;
	return 0;
}

int decompress_into(enum compression c, const uint8_t *in, size_t in_len,
		    uint8_t *dst, size_t dst_size, size_t *out_len)
{
	struct outbuf ob;
	int err;

	if (!compression_can_unpack(c))
		return -ENOTSUP;
	outbuf_init_fixed(&ob, dst, dst_size);
	err = decode(c, in, in_len, &ob);
	if (!err)
		*out_len = ob.len;
	return err;
}
