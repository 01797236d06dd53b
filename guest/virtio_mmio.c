/* virtio 1.x over MMIO (virtio spec 4.2, register layout version 2): the
 * devices the command line announces as Linux's
 * virtio_mmio.device=<size>@<base>:<irq>, their register file, and their
 * one interrupt line each (x86: a GSI on the IOAPIC; arm64: a GIC SPI),
 * level triggered, active high, high while InterruptStatus is not 0.
 * Registers take 32-bit accesses only. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "virtio.h"

#define MAGIC_VALUE		0x000
#define VERSION			0x004
#define DEVICE_ID		0x008
#define VENDOR_ID		0x00c
#define DEVICE_FEATURES		0x010
#define DEVICE_FEATURES_SEL	0x014
#define DRIVER_FEATURES		0x020
#define DRIVER_FEATURES_SEL	0x024
#define QUEUE_SEL		0x030
#define QUEUE_NUM_MAX		0x034
#define QUEUE_NUM		0x038
#define QUEUE_READY		0x044
#define QUEUE_NOTIFY		0x050
#define INTERRUPT_STATUS	0x060
#define INTERRUPT_ACK		0x064
#define STATUS			0x070
#define QUEUE_DESC		0x080	/* low half, high at + 4 */
#define QUEUE_DRIVER		0x090
#define QUEUE_DEVICE		0x0a0
#define CONFIG_GENERATION	0x0fc
#define CONFIG			0x100

#define MAGIC			0x74726976	/* "virt" */

static const struct virtio_ops mmio_ops;

static uint32_t rd(struct virtio_dev *d, unsigned reg)
{
	return mmio_read32(d->base + reg);
}

static void wr(struct virtio_dev *d, unsigned reg, uint32_t v)
{
	mmio_write32(d->base + reg, v);
}

/* Looks at each announced window in command line order and lists the
 * devices there. DeviceID 0 is a transport without a device (QEMU's
 * microvm has eight transports, used or not): skipped. A window without
 * the magic value is the VMM's mistake and fails. */
void virtio_mmio_scan(void)
{
	for (unsigned i = 0; i < params.nmmio; i++) {
		const struct mmio_param *m = &params.mmio[i];
		struct virtio_cand c = { .base = m->base, .size = m->size,
					 .gsi = m->gsi };
		uint32_t magic;

		sprint(c.where, sizeof(c.where), "mmio=0x%lx gsi=%u", m->base,
		       m->gsi);
		if (m->size < CONFIG) {
			report(false, "virtio-mmio", "%s size=0x%lx "
			       "reason=window-too-small", c.where, m->size);
			continue;
		}
		map_mmio(m->base, m->size);
		magic = mmio_read32(m->base + MAGIC_VALUE);
		if (magic != MAGIC) {
			report(false, "virtio-mmio", "%s magic=0x%x "
			       "reason=bad-magic", c.where, magic);
			continue;
		}
		c.version = mmio_read32(m->base + VERSION);
		c.id = mmio_read32(m->base + DEVICE_ID);
		print("tg: virtio-mmio %s size=0x%lx version=%u id=%u "
		      "vendor=0x%x\n", c.where, m->size, c.version, c.id,
		      mmio_read32(m->base + VENDOR_ID));
		if (c.id)
			virtio_add_cand(&c);
	}
}

/* Version 2 only: a legacy (version 1) device has other queue
 * registers and page-based rings, which this driver does not speak.
 * The device's line goes to the arch's interrupt controller (x86: the
 * IOAPIC pin of its GSI, on the IOAPIC the firmware tables name), level
 * triggered, to the slot's queue vector. */
bool virtio_mmio_probe(struct virtio_dev *d, const char **why)
{
	const struct virtio_cand *c = d->cand;
	unsigned line = irq_line(c->gsi);

	d->ops = &mmio_ops;
	d->base = c->base;
	d->device = c->base + CONFIG;
	if (c->version == 1)
		*why = "legacy-version-1";
	else if (c->version != 2)
		*why = "unknown-version";
	else if (irq_line_missing(c->gsi, line))
		*why = IRQ_LINE_MISSING;
	else
		*why = 0;
	if (*why)
		return false;
	d->wired = true;
	irq_line_route(line, VEC_VIRTIO_BASE + 2 * d->slot + 1);
	return true;
}

static uint8_t mmio_status(struct virtio_dev *d)
{
	return rd(d, STATUS);
}

static void mmio_set_status(struct virtio_dev *d, uint8_t st)
{
	wr(d, STATUS, st);
}

static uint32_t mmio_generation(struct virtio_dev *d)
{
	return rd(d, CONFIG_GENERATION);
}

static uint64_t mmio_features(struct virtio_dev *d)
{
	uint64_t f;

	wr(d, DEVICE_FEATURES_SEL, 0);
	f = rd(d, DEVICE_FEATURES);
	wr(d, DEVICE_FEATURES_SEL, 1);
	return f | (uint64_t)rd(d, DEVICE_FEATURES) << 32;
}

static void mmio_set_features(struct virtio_dev *d, uint64_t f)
{
	wr(d, DRIVER_FEATURES_SEL, 0);
	wr(d, DRIVER_FEATURES, (uint32_t)f);
	wr(d, DRIVER_FEATURES_SEL, 1);
	wr(d, DRIVER_FEATURES, f >> 32);
}

/* There is no queue count: a queue the device does not have has
 * QueueNumMax 0. Counted up to the queues the driver uses. */
static unsigned mmio_num_queues(struct virtio_dev *d)
{
	unsigned n = 0;

	for (; n < d->nvq; n++) {
		wr(d, QUEUE_SEL, n);
		if (!rd(d, QUEUE_NUM_MAX))
			break;
	}
	return n;
}

static uint16_t mmio_queue_max(struct virtio_dev *d, unsigned q)
{
	wr(d, QUEUE_SEL, q);
	return MIN(rd(d, QUEUE_NUM_MAX), (uint32_t)VQ_MAX_SIZE);
}

static void write64(struct virtio_dev *d, unsigned reg, uint64_t v)
{
	wr(d, reg, (uint32_t)v);
	wr(d, reg + 4, v >> 32);
}

/* A queue must not be in use before it is set up (spec 4.2.3.2); then
 * its size and rings, and QueueReady. Every queue is notified through
 * the one QueueNotify register. */
static bool mmio_queue_enable(struct virtio_dev *d, unsigned q,
			      const char **why)
{
	struct virtq *vq = &d->vq[q];

	if (rd(d, QUEUE_READY))
		return virtio_fail(d, "queue-in-use", why);
	wr(d, QUEUE_NUM, vq->size);
	write64(d, QUEUE_DESC, (uint64_t)vq->desc);
	write64(d, QUEUE_DRIVER, (uint64_t)vq->avail);
	write64(d, QUEUE_DEVICE, (uint64_t)vq->used);
	vq->notify = d->base + QUEUE_NOTIFY;
	vq->notify32 = true;
	wr(d, QUEUE_READY, 1);
	return true;
}

/* The bits that are set, acknowledged by writing them back: the line
 * goes down once nothing is left, before the handler's EOI. */
static uint8_t mmio_isr(struct virtio_dev *d)
{
	uint32_t st = rd(d, INTERRUPT_STATUS);

	if (st)
		wr(d, INTERRUPT_ACK, st);
	return st;
}

static const struct virtio_ops mmio_ops = {
	.status = mmio_status,
	.set_status = mmio_set_status,
	.generation = mmio_generation,
	.features = mmio_features,
	.set_features = mmio_set_features,
	.num_queues = mmio_num_queues,
	.queue_max = mmio_queue_max,
	.queue_enable = mmio_queue_enable,
	.isr = mmio_isr,
};
