/* Virtio over MMIO (see virtio_mmio.h). */
#include "virtio/virtio_mmio.h"

#include <string.h>

#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

#define MAGIC_VALUE		0x74726976	/* "virt" */
#define VERSION_MODERN		2
#define VENDOR_ID		0x1af4

/* Register offsets (virtio 1.x, 4.2.2). */
#define REG_MAGIC		0x000
#define REG_VERSION		0x004
#define REG_DEVICE_ID		0x008
#define REG_VENDOR_ID		0x00c
#define REG_DEVICE_FEATURES	0x010
#define REG_DEVICE_FEATURES_SEL	0x014
#define REG_DRIVER_FEATURES	0x020
#define REG_DRIVER_FEATURES_SEL	0x024
#define REG_QUEUE_SEL		0x030
#define REG_QUEUE_NUM_MAX	0x034
#define REG_QUEUE_NUM		0x038
#define REG_QUEUE_READY		0x044
#define REG_QUEUE_NOTIFY	0x050
#define REG_INTERRUPT_STATUS	0x060
#define REG_INTERRUPT_ACK	0x064
#define REG_STATUS		0x070
#define REG_QUEUE_DESC_LOW	0x080
#define REG_QUEUE_DESC_HIGH	0x084
#define REG_QUEUE_DRIVER_LOW	0x090
#define REG_QUEUE_DRIVER_HIGH	0x094
#define REG_QUEUE_DEVICE_LOW	0x0a0
#define REG_QUEUE_DEVICE_HIGH	0x0a4
#define REG_SHM_SEL		0x0ac
#define REG_SHM_LEN_LOW		0x0b0
#define REG_SHM_BASE_HIGH	0x0bc
#define REG_CONFIG_GENERATION	0x0fc
#define REG_CONFIG		0x100

/* With vdev->lock held: the line follows InterruptStatus. */
static void irq_update(struct virtio_mmio *m)
{
	irq_source_set(m->lines, &m->irq, m->vdev->isr != 0);
}

/* vdev->notify and vdev->isr_cleared; MMIO has no vectors. */
static void mmio_notify(void *opaque, uint16_t vector)
{
	irq_update(opaque);
}

static void mmio_isr_cleared(void *opaque)
{
	irq_update(opaque);
}

static uint32_t reg_read(struct virtio_mmio *m, uint64_t off)
{
	struct virtio_device *vdev = m->vdev;
	unsigned q = m->queue_sel;

	switch (off) {
	case REG_MAGIC: return MAGIC_VALUE;
	case REG_VERSION: return VERSION_MODERN;
	case REG_DEVICE_ID: return vdev->device_id;
	case REG_VENDOR_ID: return VENDOR_ID;
	case REG_DEVICE_FEATURES:
		return virtio_get_device_features(vdev, m->device_features_sel);
	case REG_QUEUE_NUM_MAX:
		return virtio_queue_read(vdev, q, VQ_REG_MAX_SIZE);
	case REG_QUEUE_READY:
		return virtio_queue_read(vdev, q, VQ_REG_ENABLE);
	case REG_INTERRUPT_STATUS:
		return __atomic_load_n(&vdev->isr, __ATOMIC_RELAXED);
	case REG_STATUS:
		return virtio_get_status(vdev);
	case REG_CONFIG_GENERATION:
		return __atomic_load_n(&vdev->config_generation,
				       __ATOMIC_RELAXED);
	}
	/* No shared memory regions: their length and base read as ~0. */
	if (off >= REG_SHM_LEN_LOW && off <= REG_SHM_BASE_HIGH)
		return 0xffffffff;
	return 0;
}

/* A write of the low or high half of a 64-bit queue address. */
static void queue_addr_write(struct virtio_mmio *m, enum virtio_queue_reg reg,
			     bool high, uint32_t value)
{
	uint64_t v = virtio_queue_read(m->vdev, m->queue_sel, reg);

	v = high ? (v & 0xffffffffULL) | (uint64_t)value << 32 :
		   (v & ~0xffffffffULL) | value;
	virtio_queue_write(m->vdev, m->queue_sel, reg, v);
}

static void reg_write(struct virtio_mmio *m, uint64_t off, uint32_t v)
{
	struct virtio_device *vdev = m->vdev;

	switch (off) {
	case REG_DEVICE_FEATURES_SEL:
		m->device_features_sel = v;
		return;
	case REG_DRIVER_FEATURES:
		virtio_set_driver_features(vdev, m->driver_features_sel, v);
		return;
	case REG_DRIVER_FEATURES_SEL:
		m->driver_features_sel = v;
		return;
	case REG_QUEUE_SEL:
		m->queue_sel = v;
		return;
	case REG_QUEUE_NUM:
		/* A size that does not fit 16 bits is none at all. */
		if (v <= UINT16_MAX)
			virtio_queue_write(vdev, m->queue_sel, VQ_REG_SIZE, v);
		return;
	case REG_QUEUE_READY:
		virtio_queue_write(vdev, m->queue_sel, VQ_REG_ENABLE, v);
		return;
	case REG_QUEUE_NOTIFY:
		/* Reached only when no ioeventfd took the write. */
		virtio_queue_kick(vdev, v);
		return;
	case REG_INTERRUPT_ACK:
		virtio_ack_isr(vdev, v);
		return;
	case REG_STATUS:
		virtio_set_status(vdev, v);
		return;
	case REG_QUEUE_DESC_LOW:
	case REG_QUEUE_DESC_HIGH:
		queue_addr_write(m, VQ_REG_DESC, off == REG_QUEUE_DESC_HIGH, v);
		return;
	case REG_QUEUE_DRIVER_LOW:
	case REG_QUEUE_DRIVER_HIGH:
		queue_addr_write(m, VQ_REG_AVAIL, off == REG_QUEUE_DRIVER_HIGH,
				 v);
		return;
	case REG_QUEUE_DEVICE_LOW:
	case REG_QUEUE_DEVICE_HIGH:
		queue_addr_write(m, VQ_REG_USED, off == REG_QUEUE_DEVICE_HIGH,
				 v);
		return;
	}
	/* Read-only registers, SHMSel (no regions) and holes: ignored. */
}

void virtio_mmio_access(void *opaque, uint64_t off, uint8_t *data,
			uint32_t len, bool is_write)
{
	struct virtio_mmio *m = opaque;

	if (off >= REG_CONFIG) {
		virtio_config_access(m->vdev, off - REG_CONFIG, data, len,
				     is_write);
	} else if (len != 4 || off % 4) {
		/* The spec allows only aligned 32-bit register accesses. */
		if (!is_write)
			memset(data, 0, len);
	} else if (is_write) {
		reg_write(m, off, get_le32(data));
	} else {
		put_le32(data, reg_read(m, off));
	}
}

void virtio_mmio_init(struct virtio_mmio *m, struct virtio_device *vdev,
		      struct irq_lines *lines, const struct irq_source *irq)
{
	memset(m, 0, sizeof(*m));
	m->vdev = vdev;
	m->lines = lines;
	m->irq = *irq;
	vdev->notify = mmio_notify;
	vdev->isr_cleared = mmio_isr_cleared;
	vdev->transport = m;
}

int virtio_mmio_add(struct vm *vm, struct virtio_mmio *m,
		    struct virtio_device *vdev)
{
	struct irq_source irq;
	uint64_t base;
	int err;

	err = irq_lines_alloc(&vm->lines, &irq);
	if (err) {
		pr_err("%s: no interrupt line", vdev->name);
		return err;
	}
	err = vm_alloc_mmio(vm, VIRTIO_MMIO_SIZE, &base);
	if (err) {
		pr_err("%s: no room in the platform MMIO window", vdev->name);
		return err;
	}
	virtio_mmio_init(m, vdev, &vm->lines, &irq);
	m->reg = (struct vm_device){
		.kind = VM_DEVICE_VIRTIO_MMIO,
		.name = vdev->name,
		.base = base,
		.size = VIRTIO_MMIO_SIZE,
		.irq = irq.line,
		.pause = virtio_registry_pause,
		.resume = virtio_registry_resume,
		.opaque = vdev,
	};
	err = io_bus_register(&vm->mmio, base, VIRTIO_MMIO_SIZE,
			      virtio_mmio_access, m);
	if (err) {
		pr_err("%s: cannot place it at 0x%llx: %s", vdev->name,
		       (unsigned long long)base, strerror(-err));
		return err;
	}
	vm_device_add(vm, &m->reg);
	return virtio_bind_notify(vdev, vm->vm_fd, base + REG_QUEUE_NOTIFY, 0,
				  4);
}
