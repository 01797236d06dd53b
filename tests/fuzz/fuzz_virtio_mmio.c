/* The virtio-mmio register file (virtio/virtio_mmio.c) in front of a
 * virtio-blk device: a sequence of register accesses from the input (an
 * offset anywhere in the window, a size of 1, 2, 4 or 8 bytes, a read or
 * a write with a value), then each enabled queue's handler; the rest of
 * the input is guest RAM from guest-physical 0, where the rings the
 * driver writes into the queue registers point. The wired interrupt line
 * must follow InterruptStatus. Every input ends with a device reset. */
#include <linux/virtio_mmio.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_virtio.h"
#include "lib/util.h"
#include "virtio/virtio_mmio.h"

#define ACCESS_SIZE 8	/* bytes of input per register access */

static struct virtio_blk blk;
static struct virtio_mmio mmio;
static struct irq_lines lines;
static bool ready;
static int line_level;

static int record_line(void *opaque, unsigned line, bool level)
{
	line_level = level;
	return 0;
}

static void mmio_setup(void)
{
	struct irq_source irq;

	fuzz_ram_load(NULL, 0);
	fuzz_blk_create(&blk, BLK_ENGINE_AUTO, &fuzz_ram);
	if (irq_lines_init(&lines, 24, 16, 8, record_line, NULL) ||
	    irq_lines_alloc(&lines, &irq)) {
		fprintf(stderr, "fuzz_virtio_mmio: no interrupt line\n");
		abort();
	}
	virtio_mmio_init(&mmio, &blk.vdev, &lines, &irq);
	ready = true;
}

static void mmio_write32(uint64_t off, uint32_t v)
{
	uint8_t b[4];

	put_le32(b, v);
	virtio_mmio_access(&mmio, off, b, 4, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	unsigned n = fuzz_u8(&in), q;
	struct fuzz_input regs = { in.data, MIN(in.len, n * ACCESS_SIZE) };

	if (!ready)
		mmio_setup();
	fuzz_blk_clear(&blk);
	fuzz_ram_load(in.data + regs.len, in.len - regs.len);
	while (regs.len) {
		uint16_t op = fuzz_u16(&regs);
		uint64_t off = op % VIRTIO_MMIO_SIZE;
		uint32_t len = 1u << ((op >> 12) & 3);
		uint32_t lo = fuzz_u32(&regs);
		uint8_t value[8];

		put_le64(value, lo | (uint64_t)fuzz_u16(&regs) << 32);
		virtio_mmio_access(&mmio, off, value, len, op & 0x8000);
		if (line_level != !!blk.vdev.isr)
			abort();
	}
	for (q = 0; q < blk.vdev.nr_queues; q++)
		fuzz_virtio_kick(&blk.vdev, q);
	mmio_write32(VIRTIO_MMIO_STATUS, 0);
	return 0;
}
