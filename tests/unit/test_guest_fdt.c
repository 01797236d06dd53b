/* The arm64 test guest's device tree reader (guest/arch/arm64/fdt.c) on
 * the host: lookups in a well-formed blob, and each kind of malformed
 * blob refused with its reason instead of a read outside it. The blobs
 * are made here, token by token, so that they can be broken anywhere. */
#include <stdlib.h>

#include "../../guest/arch/arm64/fdt.c"

#include "unit.h"

#define BLOB_MAX	4096
#define STRUCT_OFF	64

/* A blob under construction: header, structure block from STRUCT_OFF,
 * then the strings block. */
static struct {
	uint8_t buf[BLOB_MAX] __attribute__((aligned(8)));
	uint32_t st, str_len;
	char strings[512];
} b;

static void put32(uint32_t off, uint32_t v)
{
	v = __builtin_bswap32(v);
	memcpy(b.buf + off, &v, 4);
}

static void tok(uint32_t v)
{
	put32(STRUCT_OFF + b.st, v);
	b.st += 4;
}

static void bytes(const void *p, uint32_t n)
{
	memcpy(b.buf + STRUCT_OFF + b.st, p, n);
	b.st += (n + 3) & ~3u;
}

static void begin(const char *name)
{
	tok(FDT_BEGIN_NODE);
	bytes(name, strlen(name) + 1);
}

static void prop(const char *name, const void *v, uint32_t len)
{
	tok(FDT_PROP);
	tok(len);
	tok(b.str_len);
	memcpy(b.strings + b.str_len, name, strlen(name) + 1);
	b.str_len += strlen(name) + 1;
	bytes(v, len);
}

static void prop_u32(const char *name, uint32_t v)
{
	v = __builtin_bswap32(v);
	prop(name, &v, 4);
}

/* The header and strings block after the structure block so far. */
static uint64_t finish(void)
{
	uint32_t str_off = STRUCT_OFF + b.st, total = str_off + b.str_len;

	memcpy(b.buf + str_off, b.strings, b.str_len);
	put32(0, FDT_MAGIC);
	put32(4, total);
	put32(8, STRUCT_OFF);
	put32(12, str_off);
	put32(16, 40);			/* memory reservation map: unused */
	put32(20, 17);
	put32(24, 16);
	put32(32, b.str_len);
	put32(36, b.st);
	return (uint64_t)(uintptr_t)b.buf;
}

/* / { compatible = "a", "b"; chosen { bootargs = "x=1"; };
 *     memory@40000000 { reg = <0 0x40000000 0x1 0x0>; };
 *     cpus { cpu@0 { reg = <0>; }; cpu@1 { reg = <1>; }; }; } */
static void good_tree(void)
{
	static const uint32_t reg[] = { 0, 0x00000040, 0x01000000, 0 };

	memset(&b, 0, sizeof(b));
	begin("");
	prop("compatible", "a\0b", 4);
	begin("chosen");
	prop("bootargs", "x=1", 4);
	tok(FDT_END_NODE);
	begin("memory@40000000");
	prop("reg", reg, sizeof(reg));
	tok(FDT_END_NODE);
	begin("cpus");
	tok(FDT_NOP);
	begin("cpu@0");
	prop_u32("reg", 0);
	tok(FDT_END_NODE);
	begin("cpu@1");
	prop_u32("reg", 1);
	tok(FDT_END_NODE);
	tok(FDT_END_NODE);
	tok(FDT_END_NODE);
	tok(FDT_END);
}

static void test_lookups(void)
{
	uint32_t len, v;
	const void *p;
	int cpus, c;

	good_tree();
	CHECK(fdt_open(finish()));
	CHECK_STR(fdt_prop_str(fdt_path("/chosen"), "bootargs"), "x=1");
	CHECK(fdt_prop_has(fdt_root(), "compatible", "b"));
	CHECK(!fdt_prop_has(fdt_root(), "compatible", "c"));
	/* A unit address may be left out of a path. */
	p = fdt_prop(fdt_path("/memory"), "reg", &len);
	CHECK(p != NULL);
	CHECK_EQ(len, 16);
	if (p) {
		CHECK_EQ(fdt_cells(p, 0, 2), 0x40000000);
		CHECK_EQ(fdt_cells(p, 2, 2), 0x100000000ULL);
	}
	cpus = fdt_path("/cpus");
	c = fdt_child(cpus, -1);
	CHECK_STR(c >= 0 ? fdt_name(c) : NULL, "cpu@0");
	c = fdt_child(cpus, c);
	CHECK_STR(c >= 0 ? fdt_name(c) : NULL, "cpu@1");
	CHECK(fdt_prop_u32(c, "reg", &v) && v == 1);
	CHECK_EQ(fdt_child(cpus, c), -1);
	CHECK(fdt_path("/nowhere") < 0);
	CHECK(fdt_prop(fdt_path("/chosen"), "nothing", &len) == NULL);
	CHECK(fdt_error.what == NULL);
}

static void expect_error(const char *why)
{
	CHECK_STR(fdt_error.what, why);
}

static void test_bad_headers(void)
{
	uint64_t blob;

	good_tree();
	blob = finish();
	put32(0, 0xd00dfeee);
	CHECK(!fdt_open(blob));
	expect_error("bad-magic");

	blob = finish();
	put32(4, 8 << 20);
	CHECK(!fdt_open(blob));
	expect_error("bad-totalsize");

	blob = finish();
	put32(20, 16);
	CHECK(!fdt_open(blob));
	expect_error("unsupported-version");

	blob = finish();
	put32(36, b.st + 4096);
	CHECK(!fdt_open(blob));
	expect_error("bad-struct-block");

	blob = finish();
	put32(32, 0xfffffff0);
	CHECK(!fdt_open(blob));
	expect_error("bad-strings-block");

	CHECK(!fdt_open(finish() + 4));
	expect_error("misaligned-blob");
}

/* A property whose length runs past the structure block. */
static void test_property_overrun(void)
{
	uint32_t len;

	good_tree();
	put32(STRUCT_OFF + 4 + 4 + 4, 0x10000);	/* compatible's len */
	CHECK(fdt_open(finish()));
	CHECK(fdt_prop(fdt_root(), "compatible", &len) == NULL);
	expect_error("property-overrun");
	/* Every read fails from then on. */
	CHECK(fdt_path("/chosen") < 0);
}

/* A node name with no NUL before the end of the block. */
static void test_unterminated_name(void)
{
	memset(&b, 0, sizeof(b));
	begin("");
	tok(FDT_BEGIN_NODE);
	memset(b.buf + STRUCT_OFF + b.st, 'x', 8);
	b.st += 8;
	CHECK(fdt_open(finish()));
	CHECK(fdt_child(fdt_root(), -1) >= 0);
	CHECK(fdt_path("/x/y") < 0);
	expect_error("unterminated-node-name");
}

static void test_bad_token(void)
{
	good_tree();
	put32(STRUCT_OFF + 4 + 4, 7);	/* the root's first property */
	CHECK(fdt_open(finish()));
	CHECK(fdt_path("/chosen") < 0);
	expect_error("bad-token");
}

static void test_bad_name_offset(void)
{
	uint32_t len;

	good_tree();
	put32(STRUCT_OFF + 4 + 4 + 8, 0x1000);	/* compatible's name */
	CHECK(fdt_open(finish()));
	CHECK(fdt_prop(fdt_root(), "compatible", &len) == NULL);
	expect_error("bad-property-name");
}

/* A tree that stops before its END_NODE: the walk ends at the block's
 * end instead of reading on. */
static void test_truncated(void)
{
	memset(&b, 0, sizeof(b));
	begin("");
	begin("chosen");
	prop_u32("x", 1);
	CHECK(fdt_open(finish()));
	CHECK(fdt_child(fdt_root(), fdt_path("/chosen")) < 0);
	expect_error("struct-overrun");
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_lookups),
		UNIT_TEST(test_bad_headers),
		UNIT_TEST(test_property_overrun),
		UNIT_TEST(test_unterminated_name),
		UNIT_TEST(test_bad_token),
		UNIT_TEST(test_bad_name_offset),
		UNIT_TEST(test_truncated),
	};

	return UNIT_RUN(tests);
}
