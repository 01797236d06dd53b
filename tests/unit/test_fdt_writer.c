/* Tests for boot/fdt_writer.c: what it writes reads back through libfdt,
 * and its first error sticks. */
#include "boot/fdt_writer.h"
#include "unit.h"

#include <errno.h>
#include <libfdt.h>
#include <stdlib.h>

static void *write_sample(size_t *size)
{
	static const char *const compat[] = { "vendor,dev", "generic", NULL };
	static const uint32_t cells[] = { 1, 0xdeadbeef, 3 };
	struct fdt_writer w;
	void *fdt = NULL;

	fdtw_init(&w, 4096, NULL, 0);
	fdtw_u32(&w, "#address-cells", 2);
	fdtw_begin_at(&w, "dev", 0x9000000);
	fdtw_strings(&w, "compatible", compat);
	fdtw_reg(&w, 0x9000000, 0x1000);
	fdtw_cells(&w, "interrupts", cells, 3);
	fdtw_empty(&w, "dma-coherent");
	fdtw_u64(&w, "big", 0x123456789abcdef0ULL);
	fdtw_string(&w, "label", "uart");
	fdtw_end(&w);
	if (fdtw_finish(&w, &fdt, size))
		return NULL;
	return fdt;
}

static void test_reads_back(void)
{
	const fdt32_t *p;
	size_t size;
	void *fdt = write_sample(&size);
	int node, len;

	CHECK(fdt != NULL);
	if (!fdt)
		return;
	CHECK_EQ(fdt_check_header(fdt), 0);
	CHECK_EQ(fdt_totalsize(fdt), size);
	node = fdt_path_offset(fdt, "/dev@9000000");
	CHECK(node >= 0);
	CHECK_EQ(fdt_node_check_compatible(fdt, node, "generic"), 0);
	CHECK_EQ(fdt_node_check_compatible(fdt, node, "vendor,dev"), 0);
	p = fdt_getprop(fdt, node, "reg", &len);
	CHECK_EQ(len, 16);
	if (p && len == 16) {
		CHECK_EQ(fdt32_to_cpu(p[1]), 0x9000000);
		CHECK_EQ(fdt32_to_cpu(p[3]), 0x1000);
	}
	p = fdt_getprop(fdt, node, "interrupts", &len);
	CHECK_EQ(len, 12);
	if (p && len == 12)
		CHECK_EQ(fdt32_to_cpu(p[1]), 0xdeadbeef);
	CHECK(fdt_getprop(fdt, node, "dma-coherent", &len) && len == 0);
	p = fdt_getprop(fdt, node, "big", &len);
	CHECK_EQ(len, 8);
	if (p && len == 8) {
		fdt64_t big;	/* properties are only 4-byte aligned */

		memcpy(&big, p, sizeof(big));
		CHECK_EQ(fdt64_to_cpu(big), 0x123456789abcdef0ULL);
	}
	CHECK_STR(fdt_getprop(fdt, node, "label", NULL), "uart");
	free(fdt);
}

/* A tree that outgrows its buffer says so once, at the end. */
static void test_no_space_sticks(void)
{
	struct fdt_writer w;
	void *fdt = NULL;
	size_t size = 0;
	unsigned i;

	fdtw_init(&w, 256, NULL, 0);
	for (i = 0; i < 64; i++)
		fdtw_string(&w, "bootargs", "console=ttyS0 earlycon panic=-1");
	fdtw_begin(&w, "chosen");
	fdtw_end(&w);
	CHECK_EQ(fdtw_finish(&w, &fdt, &size), -ENOSPC);
	CHECK(fdt == NULL);
}

/* An unbalanced tree is an error, not a blob. */
static void test_unbalanced(void)
{
	struct fdt_writer w;
	void *fdt = NULL;
	size_t size;

	fdtw_init(&w, 1024, NULL, 0);
	fdtw_end(&w);		/* the root is fdtw_finish's to end */
	CHECK(fdtw_finish(&w, &fdt, &size) < 0);
	CHECK(fdt == NULL);

	fdtw_init(&w, 1024, NULL, 0);
	fdtw_begin(&w, "cpus");	/* never ended */
	CHECK(fdtw_finish(&w, &fdt, &size) < 0);
	CHECK(fdt == NULL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_reads_back),
		UNIT_TEST(test_no_space_sticks),
		UNIT_TEST(test_unbalanced),
	};

	return UNIT_RUN(tests);
}
