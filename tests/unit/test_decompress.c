/* Tests for boot/decompress.c: round trips through each library's own
 * encoder, hostile inputs, the output limit, and the installed Debian
 * kernel's real payload. */
#include "boot/decompress.h"
#include "boot/elf_image.h"
#include "lib/util.h"
#include "unit.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <glob.h>
#include <stdlib.h>
#include <time.h>

#include <lz4.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#define XEN_ELFNOTE_PHYS32_ENTRY 18

struct blob {
	uint8_t *data;
	size_t len;
};

/* Compressible, text-like data: words picked by a fixed LCG. */
static struct blob data_make(size_t len)
{
	static const char *const words[] = {
		"kernel ", "page ", "table ", "vcpu ", "memory ", "huge ",
		"\n", "interrupt ", "0x1f ", "mmio ", "ioapic ", "virtio ",
	};
	struct blob b = { malloc(len ? len : 1), len };
	uint32_t seed = 12345;
	size_t pos = 0;

	while (pos < len) {
		const char *w;

		seed = seed * 1103515245 + 12345;
		w = words[(seed >> 16) % ARRAY_SIZE(words)];
		for (; *w && pos < len; w++)
			b.data[pos++] = *w;
		/* Some incompressible bytes too. */
		if ((seed >> 8) % 7 == 0 && pos < len)
			b.data[pos++] = seed >> 24;
	}
	return b;
}

static void blob_append(struct blob *b, const void *p, size_t n)
{
	b->data = realloc(b->data, b->len + n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* Linux's size_append: the uncompressed size, 4 bytes little-endian. */
static void blob_append_size(struct blob *b, uint32_t size)
{
	uint8_t le[4] = { size, size >> 8, size >> 16, size >> 24 };

	blob_append(b, le, sizeof(le));
}

static struct blob gzip_compress(const uint8_t *in, size_t len)
{
	z_stream zs = { 0 };
	struct blob out;

	/* 16 + MAX_WBITS: write a gzip header and trailer. */
	deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8,
		     Z_DEFAULT_STRATEGY);
	out.data = malloc(deflateBound(&zs, len));
	zs.next_in = (Bytef *)in;
	zs.avail_in = len;
	zs.next_out = out.data;
	zs.avail_out = deflateBound(&zs, len);
	CHECK_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
	out.len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

static struct blob xz_compress(const uint8_t *in, size_t len)
{
	struct blob out = { malloc(lzma_stream_buffer_bound(len)), 0 };

	CHECK_EQ(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC32, NULL, in, len,
					 out.data, &out.len,
					 lzma_stream_buffer_bound(len)),
		 LZMA_OK);
	return out;
}

/* What Debian's kernel uses: the x86 BCJ filter in front of LZMA2. */
static struct blob xz_x86_compress(const uint8_t *in, size_t len)
{
	struct blob out = { malloc(lzma_stream_buffer_bound(len)), 0 };
	lzma_options_lzma opt;
	lzma_filter filters[] = {
		{ LZMA_FILTER_X86, NULL },
		{ LZMA_FILTER_LZMA2, &opt },
		{ LZMA_VLI_UNKNOWN, NULL },
	};

	lzma_lzma_preset(&opt, 1);
	CHECK_EQ(lzma_stream_buffer_encode(filters, LZMA_CHECK_CRC32, NULL,
					   in, len, out.data, &out.len,
					   lzma_stream_buffer_bound(len)),
		 LZMA_OK);
	return out;
}

/* .lzma with an unknown size and an end marker, as "lzma -9" on a pipe
 * (how Linux builds it) writes. */
static struct blob lzma_compress(const uint8_t *in, size_t len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = lzma_stream_buffer_bound(len);
	struct blob out = { malloc(cap), 0 };
	lzma_options_lzma opt;

	lzma_lzma_preset(&opt, 1);
	CHECK_EQ(lzma_alone_encoder(&strm, &opt), LZMA_OK);
	strm.next_in = in;
	strm.avail_in = len;
	strm.next_out = out.data;
	strm.avail_out = cap;
	CHECK_EQ(lzma_code(&strm, LZMA_FINISH), LZMA_STREAM_END);
	out.len = strm.total_out;
	lzma_end(&strm);
	return out;
}

/* With a content checksum, as the zstd tool (which Linux uses) writes. */
static struct blob zstd_compress(const uint8_t *in, size_t len)
{
	struct blob out = { malloc(ZSTD_compressBound(len)), 0 };
	ZSTD_CCtx *cctx = ZSTD_createCCtx();

	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 9);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	out.len = ZSTD_compress2(cctx, out.data, ZSTD_compressBound(len), in,
				 len);
	CHECK(!ZSTD_isError(out.len));
	ZSTD_freeCCtx(cctx);
	return out;
}

/* A legacy lz4 frame; blocks smaller than Linux's 8 MiB are valid too and
 * give several blocks from little data. */
static struct blob lz4_compress_blocks(const uint8_t *in, size_t len,
				       size_t block)
{
	struct blob out = { NULL, 0 };
	uint8_t magic[4] = { 0x02, 0x21, 0x4c, 0x18 };
	char *tmp = malloc(LZ4_compressBound(block));

	blob_append(&out, magic, sizeof(magic));
	for (size_t pos = 0; pos < len; pos += block) {
		int n = MIN(block, len - pos);
		int c = LZ4_compress_default((const char *)in + pos, tmp, n,
					     LZ4_compressBound(block));

		CHECK(c > 0);
		blob_append_size(&out, c);
		blob_append(&out, tmp, c);
	}
	free(tmp);
	return out;
}

static struct blob lz4_compress(const uint8_t *in, size_t len)
{
	return lz4_compress_blocks(in, len, 64 * KiB);
}

static const struct format {
	enum compression c;
	const char *name;
	struct blob (*compress)(const uint8_t *in, size_t len);
} formats[] = {
	{ COMPRESSION_GZIP, "gzip", gzip_compress },
	{ COMPRESSION_XZ, "xz", xz_compress },
	{ COMPRESSION_XZ, "xz", xz_x86_compress },
	{ COMPRESSION_LZMA, "lzma", lzma_compress },
	{ COMPRESSION_ZSTD, "zstd", zstd_compress },
	{ COMPRESSION_LZ4, "lz4", lz4_compress },
};

/* Compresses len bytes of test data the way Linux would pack them. */
static void format_pack(const struct format *f, size_t len,
			struct blob *plain, struct blob *packed)
{
	*plain = data_make(len);
	*packed = f->compress(plain->data, plain->len);
	blob_append_size(packed, len);
}

static void test_detect(void)
{
	static const uint8_t garbage[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	static const uint8_t bzip2[] = { 'B', 'Z', 'h', '9', '1', 'A' };
	static const uint8_t lzo[] = { 0x89, 'L', 'Z', 'O', 0, 0x0d, 0x0a };

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain, packed;

		format_pack(&formats[i], 1000, &plain, &packed);
		CHECK_EQ(compression_detect(packed.data, packed.len),
			 formats[i].c);
		CHECK_STR(compression_name(formats[i].c), formats[i].name);
		/* One byte short of any magic is not detected. */
		CHECK_EQ(compression_detect(packed.data, 1), COMPRESSION_NONE);
		free(plain.data);
		free(packed.data);
	}
	CHECK_EQ(compression_detect(bzip2, sizeof(bzip2)), COMPRESSION_BZIP2);
	CHECK_EQ(compression_detect(lzo, sizeof(lzo)), COMPRESSION_LZO);
	CHECK_EQ(compression_detect(garbage, sizeof(garbage)),
		 COMPRESSION_NONE);
	CHECK_EQ(compression_detect(garbage, 0), COMPRESSION_NONE);
	CHECK_STR(compression_name(COMPRESSION_BZIP2), "bzip2");
	CHECK_STR(compression_name(COMPRESSION_LZO), "lzo");
	CHECK_STR(compression_name(COMPRESSION_NONE), "none");
}

static void test_round_trip(void)
{
	static const size_t sizes[] = { 0, 1, 100000, 300000 };

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(sizes); j++) {
			struct blob plain, packed;
			uint8_t *out = NULL;
			size_t out_len = 0;

			format_pack(&formats[i], sizes[j], &plain, &packed);
			CHECK_EQ(decompress(formats[i].c, packed.data,
					    packed.len, 1 * MiB, &out,
					    &out_len),
				 0);
			CHECK_EQ(out_len, plain.len);
			CHECK(out && !memcmp(out, plain.data, plain.len));
			free(out);
			free(plain.data);
			free(packed.data);
		}
	}
}

/* Trailing bytes after the stream are ignored. lz4's legacy frame has no
 * end marker, so there only the size word itself can be told apart. */
static void test_trailing_bytes(void)
{
	static const uint8_t junk[37] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3 };

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain, packed;
		uint8_t *out = NULL;
		size_t out_len = 0;

		if (formats[i].c == COMPRESSION_LZ4)
			continue;
		format_pack(&formats[i], 50000, &plain, &packed);
		blob_append(&packed, junk, sizeof(junk));
		CHECK_EQ(decompress(formats[i].c, packed.data, packed.len,
				    1 * MiB, &out, &out_len),
			 0);
		CHECK_EQ(out_len, plain.len);
		CHECK(out && !memcmp(out, plain.data, plain.len));
		free(out);
		free(plain.data);
		free(packed.data);
	}
}

/* Without the size word, and with a size word that lies: the hint only
 * sizes the first allocation. */
static void test_size_hint_untrusted(void)
{
	static const uint32_t hints[] = { 0, 16, 0xffffffff };

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain = data_make(200000);

		for (size_t j = 0; j <= ARRAY_SIZE(hints); j++) {
			struct blob packed =
				formats[i].compress(plain.data, plain.len);
			uint8_t *out = NULL;
			size_t out_len = 0;

			if (j < ARRAY_SIZE(hints))
				blob_append_size(&packed, hints[j]);
			CHECK_EQ(decompress(formats[i].c, packed.data,
					    packed.len, 1 * MiB, &out,
					    &out_len),
				 0);
			CHECK_EQ(out_len, plain.len);
			CHECK(out && !memcmp(out, plain.data, plain.len));
			free(out);
			free(packed.data);
		}
		free(plain.data);
	}
}

static void test_lz4_blocks(void)
{
	struct blob plain = data_make(3 * MiB + 12345);
	struct blob packed, second;
	uint8_t *out = NULL;
	size_t out_len = 0;

	/* Several blocks, the last one short. */
	packed = lz4_compress_blocks(plain.data, plain.len, 1 * MiB);
	CHECK_EQ(decompress(COMPRESSION_LZ4, packed.data, packed.len,
			    16 * MiB, &out, &out_len),
		 0);
	CHECK_EQ(out_len, plain.len);
	CHECK(out && !memcmp(out, plain.data, plain.len));
	free(out);

	/* A second stream appended after the first one continues it. */
	second = lz4_compress_blocks(plain.data, 1000, 1 * MiB);
	blob_append(&packed, second.data, second.len);
	blob_append_size(&packed, plain.len + 1000);
	CHECK_EQ(decompress(COMPRESSION_LZ4, packed.data, packed.len,
			    16 * MiB, &out, &out_len),
		 0);
	CHECK_EQ(out_len, plain.len + 1000);
	CHECK(out && !memcmp(out + plain.len, plain.data, 1000));
	free(out);
	free(second.data);
	free(packed.data);

	/* A block may not decompress to more than 8 MiB. */
	free(plain.data);
	plain = data_make(8 * MiB + 1);
	packed = lz4_compress_blocks(plain.data, plain.len, 8 * MiB + 1);
	CHECK_EQ(decompress(COMPRESSION_LZ4, packed.data, packed.len,
			    16 * MiB, &out, &out_len),
		 -EINVAL);
	free(packed.data);
	free(plain.data);
}

static void test_truncated(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain = data_make(300000);
		struct blob packed = formats[i].compress(plain.data, plain.len);
		size_t cuts[] = { 0, 3, 10, packed.len / 2, packed.len - 1 };

		for (size_t j = 0; j < ARRAY_SIZE(cuts); j++) {
			/* An exact-size copy, so ASan sees any overread. */
			uint8_t *in = malloc(cuts[j] ? cuts[j] : 1);
			uint8_t *out = NULL;
			size_t out_len = 0;

			memcpy(in, packed.data, cuts[j]);
			CHECK_EQ(decompress(formats[i].c, in, cuts[j], 1 * MiB,
					    &out, &out_len),
				 -EINVAL);
			free(in);
		}
		free(plain.data);
		free(packed.data);
	}
}

static int corrupt_and_decompress(const struct format *f, size_t at,
				  uint32_t value, bool word)
{
	struct blob plain, packed;
	uint8_t *out = NULL;
	size_t out_len = 0;
	int err;

	format_pack(f, 300000, &plain, &packed);
	if (word) {
		uint8_t le[4] = { value, value >> 8, value >> 16, value >> 24 };

		memcpy(packed.data + at, le, sizeof(le));
	} else {
		packed.data[at] ^= value;
	}
	err = decompress(f->c, packed.data, packed.len, 1 * MiB, &out,
			 &out_len);
	/* No checksum covers lzma or lz4 data: success must at least not
	 * reproduce the original. */
	if (!err) {
		CHECK(out_len != plain.len ||
		      memcmp(out, plain.data, plain.len));
		free(out);
	}
	free(plain.data);
	free(packed.data);
	return err;
}

static void test_corrupt(void)
{
	/* Checksummed formats: a flipped bit in the middle is caught. */
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		const struct format *f = &formats[i];
		struct blob plain = data_make(300000);
		struct blob packed = f->compress(plain.data, plain.len);
		int err = corrupt_and_decompress(f, packed.len / 2, 0x10,
						 false);

		if (f->c == COMPRESSION_GZIP || f->c == COMPRESSION_XZ ||
		    f->c == COMPRESSION_ZSTD)
			CHECK_EQ(err, -EINVAL);
		free(plain.data);
		free(packed.data);
	}
	/* Headers: xz stream flags, lzma properties (lc+lp+pb too big),
	 * zstd frame header descriptor's reserved bit, lz4 block size. */
	CHECK_EQ(corrupt_and_decompress(&formats[1], 7, 0xff, false), -EINVAL);
	CHECK_EQ(corrupt_and_decompress(&formats[3], 0, 0xff ^ 0x5d, false),
		 -EINVAL);
	CHECK_EQ(corrupt_and_decompress(&formats[4], 4, 0x08, false), -EINVAL);
	CHECK_EQ(corrupt_and_decompress(&formats[5], 4, 0xfffffff0, true),
		 -EINVAL);
	CHECK_EQ(corrupt_and_decompress(&formats[5], 4, 0, true), -EINVAL);
	/* The format named must match the data. */
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain, packed;
		enum compression other = formats[i].c == COMPRESSION_GZIP ?
						 COMPRESSION_ZSTD :
						 COMPRESSION_GZIP;
		uint8_t *out = NULL;
		size_t out_len = 0;

		format_pack(&formats[i], 1000, &plain, &packed);
		CHECK_EQ(decompress(other, packed.data, packed.len, 1 * MiB,
				    &out, &out_len),
			 -EINVAL);
		free(plain.data);
		free(packed.data);
	}
}

/* A copy of packed with a few bytes flipped (more each round) and, every
 * third round, cut short; its length in *len. */
static uint8_t *damaged(const struct blob *packed, int round,
			uint32_t *seed, size_t *len)
{
	uint8_t *in = malloc(packed->len);

	CHECK(in != NULL);
	if (!in)
		abort();
	memcpy(in, packed->data, packed->len);
	*len = packed->len;
	for (int k = 0; k < 1 + round % 4; k++) {
		*seed = *seed * 1103515245 + 12345;
		in[(*seed >> 8) % *len] ^= 1 + (*seed >> 24) % 255;
	}
	if (round % 3 == 0)
		*len = (*seed >> 4) % *len + 1;
	return in;
}

/* Random damage must give a clean error or some output, never a crash or
 * an overread (run under ASan to see those). */
static void test_fuzz(void)
{
	uint32_t seed = 42;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain, packed;

		format_pack(&formats[i], 20000, &plain, &packed);
		for (int round = 0; round < 300; round++) {
			size_t len;
			uint8_t *in = damaged(&packed, round, &seed, &len);
			uint8_t *out = NULL;
			size_t out_len = 0;
			int err;

			err = decompress(formats[i].c, in, len, 64 * KiB, &out,
					 &out_len);
			CHECK(err == 0 || err == -EINVAL || err == -EFBIG);
			if (!err) {
				CHECK(out_len <= 64 * KiB);
				free(out);
			}
			free(in);
		}
		free(plain.data);
		free(packed.data);
	}
}

static void test_max_out(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain, packed;
		size_t limits[4];
		uint8_t *out = NULL;
		size_t out_len = 0;

		format_pack(&formats[i], 300000, &plain, &packed);
		limits[0] = 0;
		limits[1] = 1;
		limits[2] = plain.len / 2 + 7;
		limits[3] = plain.len - 1;
		for (size_t j = 0; j < ARRAY_SIZE(limits); j++)
			CHECK_EQ(decompress(formats[i].c, packed.data,
					    packed.len, limits[j], &out,
					    &out_len),
				 -EFBIG);
		/* Exactly the limit is fine. */
		CHECK_EQ(decompress(formats[i].c, packed.data, packed.len,
				    plain.len, &out, &out_len),
			 0);
		CHECK_EQ(out_len, plain.len);
		CHECK(out && !memcmp(out, plain.data, plain.len));
		free(out);
		free(plain.data);
		free(packed.data);
	}
}

/* Into a fixed buffer (guest RAM): exactly the output's size is enough,
 * for every format, even though the decoders need to look one byte past
 * it; one byte less is -EFBIG, with nothing written past the buffer
 * (each buffer is malloc'd to its size, for ASan to watch). */
static void test_into_fixed_buffer(void)
{
	static const size_t sizes[] = { 0, 1, 300000 };

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(sizes); j++) {
			struct blob plain, packed;
			size_t room[] = { sizes[j], sizes[j] + 4096,
					  sizes[j] ? sizes[j] - 1 : 0,
					  sizes[j] / 2 };

			format_pack(&formats[i], sizes[j], &plain, &packed);
			for (size_t k = 0; k < ARRAY_SIZE(room); k++) {
				uint8_t *dst = malloc(room[k] ? room[k] : 1);
				bool fits = room[k] >= plain.len;
				size_t out_len = 12345;

				CHECK_EQ(decompress_into(formats[i].c,
							 packed.data,
							 packed.len, dst,
							 room[k], &out_len),
					 fits ? 0 : -EFBIG);
				if (fits) {
					CHECK_EQ(out_len, plain.len);
					CHECK(!memcmp(dst, plain.data,
						      plain.len));
				}
				free(dst);
			}
			free(plain.data);
			free(packed.data);
		}
	}
}

/* Damaged input into a fixed buffer: a clean error or output within it. */
static void test_into_fuzz(void)
{
	uint32_t seed = 7;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct blob plain, packed;

		format_pack(&formats[i], 20000, &plain, &packed);
		for (int round = 0; round < 200; round++) {
			size_t len;
			uint8_t *in = damaged(&packed, round, &seed, &len);
			size_t room = 16 * KiB + round * 37;
			uint8_t *dst = malloc(room);
			size_t out_len = 0;
			int err;

			err = decompress_into(formats[i].c, in, len, dst, room,
					      &out_len);
			CHECK(err == 0 || err == -EINVAL || err == -EFBIG);
			if (!err)
				CHECK(out_len <= room);
			free(dst);
			free(in);
		}
		free(plain.data);
		free(packed.data);
	}
}

static void test_none_and_unsupported(void)
{
	static const uint8_t bzip2[] = { 'B', 'Z', 'h', '9', '1', 'A', 'Y' };
	static const uint8_t lzo[] = { 0x89, 'L', 'Z', 'O', 0, 0x0d, 0x0a };
	uint8_t *out = NULL;
	size_t out_len = 0;

	CHECK_EQ(decompress(COMPRESSION_BZIP2, bzip2, sizeof(bzip2), 1 * MiB,
			    &out, &out_len),
		 -ENOTSUP);
	CHECK_EQ(decompress(COMPRESSION_LZO, lzo, sizeof(lzo), 1 * MiB, &out,
			    &out_len),
		 -ENOTSUP);
	CHECK_EQ(decompress(COMPRESSION_NONE, lzo, sizeof(lzo), 1 * MiB, &out,
			    &out_len),
		 0);
	CHECK_EQ(out_len, sizeof(lzo));
	CHECK(out && !memcmp(out, lzo, sizeof(lzo)));
	free(out);
	CHECK_EQ(decompress(COMPRESSION_NONE, lzo, sizeof(lzo),
			    sizeof(lzo) - 1, &out, &out_len),
		 -EFBIG);
	CHECK(!compression_can_unpack(COMPRESSION_BZIP2));
	CHECK(!compression_can_unpack(COMPRESSION_LZO));
	CHECK(compression_can_unpack(COMPRESSION_NONE));
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		CHECK(compression_can_unpack(formats[i].c));
	{
		uint8_t dst[sizeof(lzo)];

		CHECK_EQ(decompress_into(COMPRESSION_BZIP2, bzip2,
					 sizeof(bzip2), dst, sizeof(dst),
					 &out_len),
			 -ENOTSUP);
		CHECK_EQ(decompress_into(COMPRESSION_NONE, lzo, sizeof(lzo),
					 dst, sizeof(dst), &out_len),
			 0);
		CHECK_EQ(out_len, sizeof(lzo));
		CHECK(!memcmp(dst, lzo, sizeof(lzo)));
		CHECK_EQ(decompress_into(COMPRESSION_NONE, lzo, sizeof(lzo),
					 dst, sizeof(dst) - 1, &out_len),
			 -EFBIG);
	}
}

/* The installed distribution kernel: an xz payload (with the x86 BCJ
 * filter) holding vmlinux, which has a PVH entry note. */
static void test_debian_kernel(void)
{
	const uint8_t *payload, *desc;
	uint8_t *image = NULL, *vmlinux = NULL;
	size_t len = 0, vmlinux_len = 0, desc_len = 0;
	uint64_t payload_off, payload_len;
	char why[ELF_WHY_MAX];
	struct elf_image elf;
	struct timespec start;
	double secs;
	unsigned setup_sects;
	glob_t g;

	if (glob("/boot/vmlinuz-*", 0, NULL, &g) || !g.gl_pathc) {
		globfree(&g);
		SKIP("no /boot/vmlinuz-*");
		return;
	}
	CHECK_EQ(file_read_all(g.gl_pathv[0], 256 * MiB, &image, &len), 0);
	printf("# %s: %zu bytes\n", g.gl_pathv[0], len);
	globfree(&g);
	if (!image || len < 0x250 || get_le32(image + 0x202) != 0x53726448 ||
	    get_le16(image + 0x206) < 0x208) {
		CHECK(!"a bzImage with boot protocol 2.08+ (payload fields)");
		free(image);
		return;
	}
	setup_sects = image[0x1f1] ? image[0x1f1] : 4;
	payload_off = (setup_sects + 1) * 512ULL + get_le32(image + 0x248);
	payload_len = get_le32(image + 0x24c);
	if (payload_off > len || payload_len > len - payload_off ||
	    payload_len < 4) {
		CHECK(!"payload within the file");
		free(image);
		return;
	}
	payload = image + payload_off;
	CHECK_EQ(compression_detect(payload, payload_len), COMPRESSION_XZ);

	clock_gettime(CLOCK_MONOTONIC, &start);
	CHECK_EQ(decompress(COMPRESSION_XZ, payload, payload_len, 512 * MiB,
			    &vmlinux, &vmlinux_len),
		 0);
	secs = time_ms_since(&start) / 1e3;
	printf("# xz payload of %" PRIu64 " bytes -> %zu bytes in %.3f s\n",
	       payload_len, vmlinux_len, secs);
	/* Linux's appended size word matches (vmlinux.bin + relocs). */
	CHECK_EQ(vmlinux_len, get_le32(payload + payload_len - 4));

	if (vmlinux) {
		CHECK(elf_is_elf64(vmlinux, vmlinux_len));
		CHECK_EQ(elf_parse(vmlinux, vmlinux_len, &elf, why), 0);
		CHECK_EQ(elf.machine, EM_X86_64);
		CHECK(elf.nr_segments > 0);
		CHECK_EQ(elf_find_note(vmlinux, vmlinux_len, "Xen",
				       XEN_ELFNOTE_PHYS32_ENTRY, &desc,
				       &desc_len, why),
			 0);
		/* Xen reads 32 bits, but x86-64 Linux emits the note with
		 * _ASM_PTR: 8 bytes, the upper half zero. */
		CHECK(desc_len == 4 || desc_len == 8);
		if (desc_len == 8)
			CHECK_EQ(get_le32(desc + 4), 0);
		if (desc_len >= 4)
			printf("# entry 0x%" PRIx64 ", %u PT_LOAD segments, "
			       "PVH entry 0x%" PRIx32 " (%zu-byte note)\n",
			       elf.entry, elf.nr_segments, get_le32(desc),
			       desc_len);
	}
	free(vmlinux);
	free(image);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_detect),
		UNIT_TEST(test_round_trip),
		UNIT_TEST(test_trailing_bytes),
		UNIT_TEST(test_size_hint_untrusted),
		UNIT_TEST(test_lz4_blocks),
		UNIT_TEST(test_truncated),
		UNIT_TEST(test_corrupt),
		UNIT_TEST(test_fuzz),
		UNIT_TEST(test_max_out),
		UNIT_TEST(test_into_fixed_buffer),
		UNIT_TEST(test_into_fuzz),
		UNIT_TEST(test_none_and_unsupported),
		UNIT_TEST(test_debian_kernel),
	};

	return UNIT_RUN(tests);
}
