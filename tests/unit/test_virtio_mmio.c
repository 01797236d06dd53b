/* The virtio-mmio register file on a real device (virtio-balloon) without
 * KVM: identification, feature negotiation and queue set-up through the
 * registers, the interrupt line following InterruptStatus and
 * InterruptACK, device configuration at 0x100, and accesses the spec
 * does not allow. */
#include <linux/virtio_balloon.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>

#include "core/irq_lines.h"
#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/balloon.h"
#include "virtio/virtio_mmio.h"

static struct virtio_balloon bln;
static struct virtio_mmio mmio;
static struct irq_lines lines;
static int line_level = -1;	/* as last driven; -1: never */

static int record_line(void *opaque, unsigned line, bool level)
{
	CHECK_EQ(line, 16);
	line_level = level;
	return 0;
}

static uint32_t rd(uint64_t off)
{
	uint8_t b[4];

	virtio_mmio_access(&mmio, off, b, 4, false);
	return get_le32(b);
}

static void wr(uint64_t off, uint32_t v)
{
	uint8_t b[4];

	put_le32(b, v);
	virtio_mmio_access(&mmio, off, b, 4, true);
}

static bool setup(void)
{
	static const struct balloon_config opts = { .policy = BALLOON_EAGER };
	struct irq_source irq;

	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		return false;
	}
	if (virtio_balloon_create(&bln, &opts, &ram, NULL, NULL)) {
		CHECK(!"virtio_balloon_create");
		guest_ram_unmap(&ram);
		return false;
	}
	CHECK_EQ(irq_lines_init(&lines, 24, 16, 8, record_line, NULL), 0);
	CHECK_EQ(irq_lines_alloc(&lines, &irq), 0);
	virtio_mmio_init(&mmio, &bln.vdev, &lines, &irq);
	line_level = -1;
	return true;
}

static void teardown(void)
{
	virtio_balloon_destroy(&bln);
	irq_lines_free(&lines);
	guest_ram_unmap(&ram);
}

static void test_identity(void)
{
	uint8_t b[4] = { 0xaa, 0xaa, 0xaa, 0xaa };

	if (!setup())
		return;
	CHECK_EQ(rd(0x000), 0x74726976);	/* "virt" */
	CHECK_EQ(rd(0x004), 2);			/* modern only */
	CHECK_EQ(rd(0x008), VIRTIO_ID_BALLOON);
	CHECK_EQ(rd(0x00c), 0x1af4);
	/* No shared memory regions: length reads as ~0. */
	CHECK_EQ(rd(0x0b0), 0xffffffff);
	CHECK_EQ(rd(0x0b4), 0xffffffff);
	/* Registers take aligned 32-bit accesses only. */
	virtio_mmio_access(&mmio, 0x000, b, 2, false);
	CHECK_EQ(get_le16(b), 0);
	virtio_mmio_access(&mmio, 0x002, b, 4, false);
	CHECK_EQ(get_le32(b), 0);
	teardown();
}

/* What a Linux driver does through the registers, up to DRIVER_OK. */
static void test_negotiation_and_queues(void)
{
	uint64_t offered;
	unsigned q;

	if (!setup())
		return;
	wr(0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(0x014, 0);
	offered = rd(0x010);
	wr(0x014, 1);
	offered |= (uint64_t)rd(0x010) << 32;
	CHECK_EQ(offered, (uint64_t)virtio_get_device_features(&bln.vdev, 0) |
			  (uint64_t)virtio_get_device_features(&bln.vdev, 1)
			  << 32);
	CHECK(offered >> VIRTIO_F_VERSION_1 & 1);
	wr(0x024, 0);
	wr(0x020, 0);
	wr(0x024, 1);
	wr(0x020, 1);			/* VERSION_1 */
	wr(0x070, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		  VIRTIO_CONFIG_S_FEATURES_OK);
	CHECK(rd(0x070) & VIRTIO_CONFIG_S_FEATURES_OK);
	for (q = 0; q < 2; q++) {
		wr(0x030, q);
		CHECK_EQ(rd(0x034), BALLOON_QUEUE_SIZE);
		wr(0x038, QSIZE);
		wr(0x080, RING_GPA(q));
		wr(0x084, 0);
		wr(0x090, AVAIL_GPA(q));
		wr(0x094, 0);
		wr(0x0a0, USED_GPA(q));
		wr(0x0a4, 0);
		CHECK_EQ(rd(0x044), 0);
		wr(0x044, 1);
		CHECK_EQ(rd(0x044), 1);
		CHECK_EQ(virtio_queue_read(&bln.vdev, q, VQ_REG_DESC),
			 RING_GPA(q));
		CHECK_EQ(virtio_queue_read(&bln.vdev, q, VQ_REG_SIZE), QSIZE);
	}
	/* A queue that does not exist has no size and cannot be made
	 * ready; notifying it is ignored. */
	wr(0x030, BALLOON_NR_QUEUES);
	CHECK_EQ(rd(0x034), 0);
	wr(0x044, 1);
	CHECK_EQ(rd(0x044), 0);
	wr(0x050, BALLOON_NR_QUEUES);
	wr(0x070, rd(0x070) | VIRTIO_CONFIG_S_DRIVER_OK);
	CHECK(rd(0x070) & VIRTIO_CONFIG_S_DRIVER_OK);
	CHECK(!(rd(0x070) & VIRTIO_CONFIG_S_NEEDS_RESET));
	teardown();
}

/* The line is high while InterruptStatus has a bit the driver has not
 * acknowledged; a reset lowers it. */
static void test_interrupt_line(void)
{
	uint8_t b[4];

	if (!setup())
		return;
	CHECK_EQ(virtio_balloon_set_target(&bln, 8 * 4096), 0);
	CHECK_EQ(rd(0x060), VIRTIO_ISR_CONFIG);
	CHECK_EQ(line_level, 1);
	/* The new target, in the configuration at 0x100. */
	virtio_mmio_access(&mmio, 0x100 + offsetof(struct virtio_balloon_config,
						   num_pages), b, 4, false);
	CHECK_EQ(get_le32(b), 8);
	wr(0x064, VIRTIO_ISR_QUEUE);	/* not the bit that is set */
	CHECK_EQ(line_level, 1);
	wr(0x064, VIRTIO_ISR_CONFIG);
	CHECK_EQ(rd(0x060), 0);
	CHECK_EQ(line_level, 0);
	CHECK_EQ(virtio_balloon_set_target(&bln, 16 * 4096), 0);
	CHECK_EQ(line_level, 1);
	wr(0x070, 0);
	CHECK_EQ(rd(0x060), 0);
	CHECK_EQ(line_level, 0);
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_identity),
		UNIT_TEST(test_negotiation_and_queues),
		UNIT_TEST(test_interrupt_line),
	};

	return UNIT_RUN(tests);
}
