/* Tests for boot/aml.c: its bytecode is iasl's for the same ASL, its
 * lengths are right at every PkgLength size, and malformed AML is
 * refused with the first error sticking. */
#include "boot/aml.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>

/* iasl 20200925's output for this ASL (after the table header; iasl
 * writes \_SB and \_S5 at the root as _SB_ and _S5_, as done here):
 *
 *   Scope (\_SB) {
 *     Device (COM1) {
 *       Name (_HID, EisaId ("PNP0501"))
 *       Name (_UID, One)
 *       Name (_CRS, ResourceTemplate () {
 *         IO (Decode16, 0x03F8, 0x03F8, 0x01, 0x08)
 *         IRQNoFlags () {4} })
 *     }
 *     Device (V000) {
 *       Name (_HID, "LNRO0005")
 *       Name (_UID, Zero)
 *       Name (_CRS, ResourceTemplate () {
 *         Memory32Fixed (ReadWrite, 0xFE000000, 0x00000200)
 *         Interrupt (ResourceConsumer, Level, ActiveHigh, Exclusive) {16}
 *       })
 *     }
 *     Device (PCI0) {
 *       Name (_CRS, ResourceTemplate () {
 *         WordBusNumber (ResourceProducer, MinFixed, MaxFixed, PosDecode,
 *                        0, 0, 0, 0, 1)
 *         DWordMemory (ResourceProducer, PosDecode, MinFixed, MaxFixed,
 *                      NonCacheable, ReadWrite, 0, 0xC0000000,
 *                      0xDFFFFFFF, 0, 0x20000000)
 *       })
 *       Name (_PRT, Package () { Package () { 0x0001FFFF, Zero, Zero,
 *                                             0x10 } })
 *     }
 *   }
 *   Name (\_S5, Package () { 5, 5, 0, 0 })
 *   Name (BIG, 0x123456789A)
 */
static const uint8_t iasl_sample[] = {
	0x10, 0x40, 0x0c, 0x5f, 0x53, 0x42, 0x5f, 0x5b, 0x82, 0x2b, 0x43, 0x4f,
	0x4d, 0x31, 0x08, 0x5f, 0x48, 0x49, 0x44, 0x0c, 0x41, 0xd0, 0x05, 0x01,
	0x08, 0x5f, 0x55, 0x49, 0x44, 0x01, 0x08, 0x5f, 0x43, 0x52, 0x53, 0x11,
	0x10, 0x0a, 0x0d, 0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x01, 0x08, 0x22,
	0x10, 0x00, 0x79, 0x00, 0x5b, 0x82, 0x3a, 0x56, 0x30, 0x30, 0x30, 0x08,
	0x5f, 0x48, 0x49, 0x44, 0x0d, 0x4c, 0x4e, 0x52, 0x4f, 0x30, 0x30, 0x30,
	0x35, 0x00, 0x08, 0x5f, 0x55, 0x49, 0x44, 0x00, 0x08, 0x5f, 0x43, 0x52,
	0x53, 0x11, 0x1a, 0x0a, 0x17, 0x86, 0x09, 0x00, 0x01, 0x00, 0x00, 0x00,
	0xfe, 0x00, 0x02, 0x00, 0x00, 0x89, 0x06, 0x00, 0x01, 0x01, 0x10, 0x00,
	0x00, 0x00, 0x79, 0x00, 0x5b, 0x82, 0x4f, 0x04, 0x50, 0x43, 0x49, 0x30,
	0x08, 0x5f, 0x43, 0x52, 0x53, 0x11, 0x2f, 0x0a, 0x2c, 0x88, 0x0d, 0x00,
	0x02, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x87, 0x17, 0x00, 0x00, 0x0c, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xc0, 0xff, 0xff, 0xff, 0xdf, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x20, 0x79, 0x00, 0x08, 0x5f, 0x50, 0x52, 0x54, 0x12, 0x0e,
	0x01, 0x12, 0x0b, 0x04, 0x0c, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 0x0a,
	0x10, 0x08, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x08, 0x04, 0x0a, 0x05, 0x0a,
	0x05, 0x00, 0x00, 0x08, 0x42, 0x49, 0x47, 0x5f, 0x0e, 0x9a, 0x78, 0x56,
	0x34, 0x12, 0x00, 0x00, 0x00,
};

static void test_matches_iasl(void)
{
	struct aml_resources r;
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t len = 0;

	aml_init(&w);
	aml_scope(&w, "_SB");

	aml_device(&w, "COM1");
	aml_name(&w, "_HID");
	aml_eisaid(&w, "PNP0501");
	aml_name(&w, "_UID");
	aml_integer(&w, 1);
	aml_res_init(&r);
	aml_res_io(&r, 0x3f8, 8);
	aml_res_irq(&r, 4);
	aml_name(&w, "_CRS");
	aml_resources(&w, &r);
	aml_end(&w);

	aml_device(&w, "V000");
	aml_name(&w, "_HID");
	aml_string(&w, "LNRO0005");
	aml_name(&w, "_UID");
	aml_integer(&w, 0);
	aml_res_init(&r);
	aml_res_memory32_fixed(&r, 0xfe000000, 0x200);
	aml_res_interrupt(&r, 16, AML_IRQ_LEVEL);
	aml_name(&w, "_CRS");
	aml_resources(&w, &r);
	aml_end(&w);

	aml_device(&w, "PCI0");
	aml_res_init(&r);
	aml_res_bus_numbers(&r, 0, 0);
	aml_res_memory32_window(&r, 0xc0000000, 0x20000000);
	aml_name(&w, "_CRS");
	aml_resources(&w, &r);
	aml_name(&w, "_PRT");
	aml_package(&w);
	aml_package(&w);
	aml_integer(&w, 0x1ffff);
	aml_integer(&w, 0);
	aml_integer(&w, 0);
	aml_integer(&w, 16);
	aml_end(&w);
	aml_end(&w);
	aml_end(&w);

	aml_end(&w);
	aml_name(&w, "_S5");
	aml_package(&w);
	aml_integer(&w, 5);
	aml_integer(&w, 5);
	aml_integer(&w, 0);
	aml_integer(&w, 0);
	aml_end(&w);
	aml_name(&w, "BIG");
	aml_integer(&w, 0x123456789aULL);

	CHECK_EQ(aml_finish(&w, &aml, &len), 0);
	CHECK_EQ(len, sizeof(iasl_sample));
	CHECK(aml && len == sizeof(iasl_sample) &&
	      !memcmp(aml, iasl_sample, len));
	for (size_t i = 0; aml && i < len && i < sizeof(iasl_sample); i++)
		if (aml[i] != iasl_sample[i]) {
			printf("# first difference at %zu: 0x%02x, iasl 0x%02x\n",
			       i, aml[i], iasl_sample[i]);
			break;
		}
	free(aml);
}

/* Decodes the PkgLength at p: its value, and its own size in *n. */
static size_t pkg_length(const uint8_t *p, unsigned *n)
{
	size_t v;

	*n = 1 + (p[0] >> 6);
	if (*n == 1)
		return p[0] & 0x3f;
	v = p[0] & 0x0f;
	for (unsigned i = 1; i < *n; i++)
		v |= (size_t)p[i] << (4 + 8 * (i - 1));
	return v;
}

/* A buffer of len bytes, alone in a Name: BUF_ then the buffer, whose
 * PkgLength must run exactly to the end and take want_n bytes. */
static void check_buffer_length(size_t len, unsigned want_n)
{
	uint8_t *data = calloc(1, len ? len : 1);
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t out = 0, v;
	unsigned n;

	aml_init(&w);
	aml_name(&w, "BUF");
	aml_buffer(&w, data, len);
	CHECK_EQ(aml_finish(&w, &aml, &out), 0);
	free(data);
	if (!aml)
		return;
	CHECK_EQ(aml[5], 0x11);		/* after NameOp and BUF_ */
	v = pkg_length(aml + 6, &n);
	CHECK_EQ(n, want_n);
	CHECK_EQ(6 + v, out);
	free(aml);
}

/* A scope of that many names: the same through aml_end, which reserves
 * 4 bytes and moves the body down. */
static void check_scope_length(size_t names, unsigned want_n)
{
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t out = 0, v;
	unsigned n;
	char name[5];

	aml_init(&w);
	aml_scope(&w, "S");
	for (size_t i = 0; i < names; i++) {
		snprintf(name, sizeof(name), "N%03zX", i % 0x1000);
		aml_name(&w, name);
		aml_integer(&w, 0x12345678);	/* 10 bytes a Name */
	}
	aml_end(&w);
	aml_name(&w, "LAST");
	aml_integer(&w, 7);
	CHECK_EQ(aml_finish(&w, &aml, &out), 0);
	if (!aml)
		return;
	v = pkg_length(aml + 1, &n);
	CHECK_EQ(n, want_n);
	CHECK_EQ(1 + v + 7, out);	/* then Name (LAST, 7) */
	CHECK_EQ(aml[1 + v], 0x08);
	CHECK(!memcmp(aml + 2 + v, "LAST", 4));
	CHECK_EQ(aml[1 + n], 'S');
	free(aml);
}

static void test_pkg_lengths(void)
{
	/* One byte holds up to 63 (the PkgLength, BufferSize 0x0a NN and
	 * the bytes): 60 bytes fit, 61 do not. */
	check_buffer_length(0, 1);
	check_buffer_length(60, 1);
	check_buffer_length(61, 2);
	check_buffer_length(4090, 2);
	check_buffer_length(4091, 3);
	check_buffer_length((1 << 20) - 9, 3);
	check_buffer_length((1 << 20) - 8, 4);
	/* Scope: the PkgLength, 4 ("S___"), 10 per name. */
	check_scope_length(5, 1);	/* 1 + 54 */
	check_scope_length(6, 2);
	check_scope_length(408, 2);	/* 2 + 4084 */
	check_scope_length(409, 3);
	check_scope_length(104856, 3);	/* 3 + 1048564 */
	check_scope_length(104857, 4);
}

/* The bytes a name encodes to, written as Name (name, 0) minus the
 * NameOp and the ZeroOp; 0 and no bytes when refused. */
static size_t name_bytes(const char *name, uint8_t *out)
{
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t len = 0;

	aml_init(&w);
	aml_name(&w, name);
	aml_integer(&w, 0);
	if (aml_finish(&w, &aml, &len))
		return 0;
	memcpy(out, aml + 1, len - 2);
	free(aml);
	return len - 2;
}

static void test_names(void)
{
	uint8_t b[80];

	CHECK_EQ(name_bytes("A", b), 4);
	CHECK(!memcmp(b, "A___", 4));
	CHECK_EQ(name_bytes("_S5", b), 4);
	CHECK(!memcmp(b, "_S5_", 4));
	CHECK_EQ(name_bytes("\\_SB", b), 5);
	CHECK(!memcmp(b, "\\_SB_", 5));
	CHECK_EQ(name_bytes("\\_SB.PCI0", b), 10);
	CHECK(!memcmp(b, "\\\x2e_SB_PCI0", 10));
	CHECK_EQ(name_bytes("_SB.PCI0.S08", b), 14);
	CHECK(!memcmp(b, "\x2f\x03_SB_PCI0S08_", 14));
	CHECK_EQ(name_bytes("C0FD", b), 4);
	/* Not ACPI names. */
	CHECK_EQ(name_bytes("", b), 0);
	CHECK_EQ(name_bytes("\\", b), 0);
	CHECK_EQ(name_bytes("ABCDE", b), 0);
	CHECK_EQ(name_bytes("1ABC", b), 0);
	CHECK_EQ(name_bytes("com1", b), 0);
	CHECK_EQ(name_bytes("A..B", b), 0);
	CHECK_EQ(name_bytes("A.", b), 0);
	CHECK_EQ(name_bytes(".A", b), 0);
	CHECK_EQ(name_bytes("A-B", b), 0);
	CHECK_EQ(name_bytes("A.B.C.D.E.F.G.H.I.J.K.L.M.N.O.P.Q", b), 0);
}

/* The bytes of Name (I___, v) after the name. */
static size_t integer_bytes(uint64_t v, uint8_t *out)
{
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t len = 0;

	aml_init(&w);
	aml_name(&w, "I");
	aml_integer(&w, v);
	if (aml_finish(&w, &aml, &len))
		return 0;
	memcpy(out, aml + 5, len - 5);
	free(aml);
	return len - 5;
}

static void test_integers(void)
{
	static const struct {
		uint64_t v;
		size_t len;
		uint8_t bytes[9];
	} cases[] = {
		{ 0, 1, { 0x00 } },
		{ 1, 1, { 0x01 } },
		{ 2, 2, { 0x0a, 2 } },
		{ 0xff, 2, { 0x0a, 0xff } },
		{ 0x100, 3, { 0x0b, 0x00, 0x01 } },
		{ 0xffff, 3, { 0x0b, 0xff, 0xff } },
		{ 0x10000, 5, { 0x0c, 0, 0, 1, 0 } },
		{ 0xffffffff, 5, { 0x0c, 0xff, 0xff, 0xff, 0xff } },
		{ 0x100000000ULL, 9, { 0x0e, 0, 0, 0, 0, 1, 0, 0, 0 } },
		{ UINT64_MAX, 9, { 0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff } },
	};
	uint8_t b[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_EQ(integer_bytes(cases[i].v, b), cases[i].len);
		CHECK(!memcmp(b, cases[i].bytes, cases[i].len));
	}
}

static void test_eisaid_and_string(void)
{
	static const uint8_t pci[] = { 0x0c, 0x41, 0xd0, 0x0a, 0x08 };
	static const uint8_t str[] = { 0x0d, 'L', 'N', 'R', 'O', '0', '0',
				       '0', '5', 0 };
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t len = 0;

	aml_init(&w);
	aml_name(&w, "A");
	aml_eisaid(&w, "PNP0A08");
	aml_name(&w, "B");
	aml_string(&w, "LNRO0005");
	CHECK_EQ(aml_finish(&w, &aml, &len), 0);
	CHECK_EQ(len, 5 + sizeof(pci) + 5 + sizeof(str));
	if (aml && len == 5 + sizeof(pci) + 5 + sizeof(str)) {
		CHECK(!memcmp(aml + 5, pci, sizeof(pci)));
		CHECK(!memcmp(aml + 10 + sizeof(pci), str, sizeof(str)));
	}
	free(aml);
}

/* Runs fn on a fresh writer; aml_finish must refuse what it wrote with
 * err, and every call after the first error must have added nothing. */
static void check_refused(void (*fn)(struct aml_writer *), int err)
{
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t len = 0, at_error;

	aml_init(&w);
	fn(&w);
	CHECK_EQ(w.err, err);
	at_error = w.len;
	aml_name(&w, "MORE");
	aml_integer(&w, 5);
	CHECK_EQ(w.len, at_error);
	CHECK_EQ(aml_finish(&w, &aml, &len), err);
	CHECK(aml == NULL);
}

static void data_at_root(struct aml_writer *w)
{
	aml_integer(w, 1);
}

static void name_in_package(struct aml_writer *w)
{
	aml_name(w, "P");
	aml_package(w);
	aml_name(w, "X");
}

static void device_for_a_name(struct aml_writer *w)
{
	aml_name(w, "P");
	aml_device(w, "D");
}

static void end_with_name_pending(struct aml_writer *w)
{
	aml_device(w, "D");
	aml_name(w, "X");
	aml_end(w);
}

static void end_of_nothing(struct aml_writer *w)
{
	aml_end(w);
}

static void too_deep(struct aml_writer *w)
{
	for (unsigned i = 0; i <= AML_MAX_DEPTH; i++)
		aml_scope(w, "S");
}

static void package_of_256(struct aml_writer *w)
{
	aml_name(w, "P");
	aml_package(w);
	for (unsigned i = 0; i < 256; i++)
		aml_integer(w, i);
	aml_end(w);
}

static void bad_eisaid(struct aml_writer *w)
{
	aml_name(w, "H");
	aml_eisaid(w, "PNP050G");
}

static void short_eisaid(struct aml_writer *w)
{
	aml_name(w, "H");
	aml_eisaid(w, "PNP050");
}

static void non_ascii_string(struct aml_writer *w)
{
	aml_name(w, "S");
	aml_string(w, "caf\xc3\xa9");
}

static void bad_device_name(struct aml_writer *w)
{
	aml_device(w, "DEVICE");
}

static void full_resources(struct aml_writer *w)
{
	struct aml_resources r;

	aml_res_init(&r);
	for (unsigned i = 0; i < AML_RESOURCES_MAX / 8; i++)
		aml_res_io(&r, i, 1);
	aml_name(w, "_CRS");
	aml_resources(w, &r);
}

static void isa_irq_16(struct aml_writer *w)
{
	struct aml_resources r;

	aml_res_init(&r);
	aml_res_irq(&r, 16);
	aml_name(w, "_CRS");
	aml_resources(w, &r);
}

static void wrapping_window(struct aml_writer *w)
{
	struct aml_resources r;

	aml_res_init(&r);
	aml_res_memory32_window(&r, 0xf0000000, 0x20000000);
	aml_name(w, "_CRS");
	aml_resources(w, &r);
}

static void test_errors_stick(void)
{
	struct aml_writer w;
	uint8_t *aml = NULL;
	size_t len = 0;

	check_refused(data_at_root, -EINVAL);
	check_refused(name_in_package, -EINVAL);
	check_refused(device_for_a_name, -EINVAL);
	check_refused(end_with_name_pending, -EINVAL);
	check_refused(end_of_nothing, -EINVAL);
	check_refused(too_deep, -EINVAL);
	check_refused(package_of_256, -EINVAL);
	check_refused(bad_eisaid, -EINVAL);
	check_refused(short_eisaid, -EINVAL);
	check_refused(non_ascii_string, -EINVAL);
	check_refused(bad_device_name, -EINVAL);
	check_refused(full_resources, -ENOSPC);
	check_refused(isa_irq_16, -EINVAL);
	check_refused(wrapping_window, -EINVAL);

	/* Left open, or a Name without its value: refused at the end. */
	aml_init(&w);
	aml_device(&w, "D");
	CHECK_EQ(aml_finish(&w, &aml, &len), -EINVAL);
	aml_init(&w);
	aml_name(&w, "N");
	CHECK_EQ(aml_finish(&w, &aml, &len), -EINVAL);
	/* 255 elements are fine. */
	aml_init(&w);
	aml_name(&w, "P");
	aml_package(&w);
	for (unsigned i = 0; i < 255; i++)
		aml_integer(&w, 0);
	aml_end(&w);
	CHECK_EQ(aml_finish(&w, &aml, &len), 0);
	CHECK(aml && aml[8] == 255);	/* Name, P___, 0x12, 2-byte length */
	free(aml);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_matches_iasl),
		UNIT_TEST(test_pkg_lengths),
		UNIT_TEST(test_names),
		UNIT_TEST(test_integers),
		UNIT_TEST(test_eisaid_and_string),
		UNIT_TEST(test_errors_stick),
	};

	return UNIT_RUN(tests);
}
