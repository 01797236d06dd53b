/* Virtio modern PCI transport (see virtio_pci.h). */
#include "virtio/virtio_pci.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

#define VIRTIO_PCI_VENDOR	0x1af4
#define VIRTIO_PCI_DEVICE_BASE	0x1040	/* + the virtio device ID */
#define VIRTIO_PCI_SUBSYS	0x1100

/* BAR0: one 4 KiB page per area. */
#define BAR_VIRTIO		0
#define BAR_VIRTIO_SIZE		0x4000
#define COMMON_OFF		0x0000
#define COMMON_LEN		0x38	/* up to queue_device (virtio 1.1) */
#define ISR_OFF			0x1000
#define DEVICE_OFF		0x2000
#define NOTIFY_OFF		0x3000
#define NOTIFY_MULTIPLIER	4
#define AREA_SIZE		0x1000

/* BAR2: MSI-X. */
#define BAR_MSIX		2
#define BAR_MSIX_SIZE		0x1000
#define MSIX_TABLE_OFF		0x000
#define MSIX_PBA_OFF		0x800
#define MSIX_CTRL_ENABLE	0x8000
#define MSIX_CTRL_FUNC_MASK	0x4000
#define MSIX_ENTRY_MASKED	0x1

/* struct virtio_pci_cap and the fields after it. */
#define CAP_LEN			16
#define CAP_NOTIFY_LEN		20
#define CAP_PCI_CFG_LEN		20
#define CAP_BAR			4
#define CAP_OFFSET		8
#define CAP_LENGTH		12
#define CAP_PCI_CFG_DATA	16

static bool msix_enabled(struct virtio_pci *vp)
{
	return get_le16(vp->pci.cfg + vp->msix_cap + 2) & MSIX_CTRL_ENABLE;
}

/* With vdev->lock held: INTA follows the ISR while MSI-X is off, once a
 * driver is there (DRIVER_OK): a configuration change before that must
 * not hold a line high that another device's driver may share. */
static void intx_update(struct virtio_pci *vp)
{
	uint16_t cmd = get_le16(vp->pci.cfg + PCI_COMMAND);

	irq_source_set(&vp->vm->lines, &vp->intx,
		       vp->vdev->isr && !msix_enabled(vp) &&
		       (vp->vdev->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
		       !(cmd & PCI_COMMAND_INTX_DISABLE));
}

/* vdev->isr_cleared: called with vdev->lock held. */
static void intx_isr_cleared(void *opaque)
{
	intx_update(opaque);
}

static bool msix_masked(struct virtio_pci *vp, unsigned i)
{
	uint16_t ctrl = get_le16(vp->pci.cfg + vp->msix_cap + 2);

	return !msix_enabled(vp) || (ctrl & MSIX_CTRL_FUNC_MASK) ||
	       (get_le32(vp->vectors[i].entry + 12) & MSIX_ENTRY_MASKED);
}

static void msix_fire(struct virtio_pci *vp, struct msix_vector *v)
{
	int err = eventfd_signal(v->irqfd);

	if (err)
		pr_warn_ratelimited("%s: MSI-X interrupt lost: %s",
				    vp->vdev->name, strerror(-err));
}

/* With msix_lock held: point the vector's GSI at the MSI the guest wrote
 * and deliver what arrived while it was masked. */
static void msix_update(struct virtio_pci *vp, unsigned i)
{
	struct msix_vector *v = &vp->vectors[i];
	uint64_t addr = get_le64(v->entry);
	uint32_t data = get_le32(v->entry + 8);

	if (msix_masked(vp, i))
		return;
	if (!v->routed || v->routed_addr != addr || v->routed_data != data) {
		if (irq_msi_set(&vp->vm->irq, v->gsi, addr, data,
				vp->reg.pci_slot << 3))
			return;
		v->routed = true;
		v->routed_addr = addr;
		v->routed_data = data;
	}
	if (v->pending) {
		v->pending = false;
		msix_fire(vp, v);
	}
}

/* vdev->notify: called with vdev->lock held. */
static void transport_notify(void *opaque, uint16_t vector)
{
	struct virtio_pci *vp = opaque;
	struct msix_vector *v;

	if (!msix_enabled(vp)) {
		intx_update(vp);
		return;
	}
	if (vector >= vp->nr_vectors)
		return;
	v = &vp->vectors[vector];
	pthread_mutex_lock(&vp->msix_lock);
	if (msix_masked(vp, vector) || !v->routed)
		v->pending = true;
	else
		msix_fire(vp, v);
	pthread_mutex_unlock(&vp->msix_lock);
}

static void msix_access(void *opaque, uint64_t off, uint8_t *data,
			uint32_t len, bool is_write)
{
	struct virtio_pci *vp = opaque;
	uint64_t table_end = MSIX_TABLE_OFF +
			     vp->nr_vectors * PCI_MSIX_ENTRY_SIZE;
	unsigned i;

	pthread_mutex_lock(&vp->msix_lock);
	if (off < table_end &&
	    off % PCI_MSIX_ENTRY_SIZE + len <= PCI_MSIX_ENTRY_SIZE) {
		struct msix_vector *v = &vp->vectors[off / PCI_MSIX_ENTRY_SIZE];

		if (is_write) {
			memcpy(v->entry + off % PCI_MSIX_ENTRY_SIZE, data, len);
			msix_update(vp, off / PCI_MSIX_ENTRY_SIZE);
		} else {
			memcpy(data, v->entry + off % PCI_MSIX_ENTRY_SIZE, len);
		}
	} else if (!is_write) {
		memset(data, 0, len);
		/* Pending bits: one per vector from MSIX_PBA_OFF. */
		for (i = 0; i < vp->nr_vectors && off >= MSIX_PBA_OFF; i++) {
			uint64_t byte = MSIX_PBA_OFF + i / 8;

			if (vp->vectors[i].pending && byte >= off &&
			    byte < off + len)
				data[byte - off] |= 1 << (i % 8);
		}
	}
	pthread_mutex_unlock(&vp->msix_lock);
}

static uint16_t checked_vector(struct virtio_pci *vp, uint16_t vector)
{
	/* A vector we do not have reads back as NO_VECTOR (spec 4.1.5.1.2). */
	return vector < vp->nr_vectors ? vector : VIRTIO_NO_VECTOR;
}

static void common_read(struct virtio_pci *vp, uint64_t off, uint8_t *data,
			uint32_t len)
{
	struct virtio_device *vdev = vp->vdev;
	uint16_t q = vp->queue_select;
	uint8_t r[COMMON_LEN];

#define OFF(field) offsetof(struct virtio_pci_common_cfg, field)
	put_le32(r + OFF(device_feature_select), vp->device_feature_select);
	put_le32(r + OFF(device_feature),
		 virtio_get_device_features(vdev, vp->device_feature_select));
	put_le32(r + OFF(guest_feature_select), vp->driver_feature_select);
	put_le32(r + OFF(guest_feature),
		 virtio_get_driver_features(vdev, vp->driver_feature_select));
	put_le16(r + OFF(msix_config), virtio_get_config_vector(vdev));
	put_le16(r + OFF(num_queues), vdev->nr_queues);
	r[OFF(device_status)] = virtio_get_status(vdev);
	r[OFF(config_generation)] = __atomic_load_n(&vdev->config_generation,
						    __ATOMIC_RELAXED);
	put_le16(r + OFF(queue_select), q);
	put_le16(r + OFF(queue_size), virtio_queue_read(vdev, q, VQ_REG_SIZE));
	put_le16(r + OFF(queue_msix_vector),
		 q < vdev->nr_queues ?
		 virtio_queue_read(vdev, q, VQ_REG_VECTOR) : VIRTIO_NO_VECTOR);
	put_le16(r + OFF(queue_enable),
		 virtio_queue_read(vdev, q, VQ_REG_ENABLE));
	put_le16(r + OFF(queue_notify_off), q);
	put_le64(r + OFF(queue_desc_lo), virtio_queue_read(vdev, q, VQ_REG_DESC));
	put_le64(r + OFF(queue_avail_lo),
		 virtio_queue_read(vdev, q, VQ_REG_AVAIL));
	put_le64(r + OFF(queue_used_lo), virtio_queue_read(vdev, q, VQ_REG_USED));
	memcpy(data, r + off, len);
}

/* A write of the low or high half (or all) of a 64-bit queue address. */
static void queue_addr_write(struct virtio_pci *vp, unsigned q,
			     enum virtio_queue_reg reg, uint64_t half_off,
			     const uint8_t *data, uint32_t len)
{
	uint64_t v = virtio_queue_read(vp->vdev, q, reg);

	if (len == 8 && half_off == 0)
		v = get_le64(data);
	else if (len == 4 && half_off == 0)
		v = (v & ~0xffffffffULL) | get_le32(data);
	else if (len == 4 && half_off == 4)
		v = (v & 0xffffffffULL) | (uint64_t)get_le32(data) << 32;
	else
		return;
	virtio_queue_write(vp->vdev, q, reg, v);
}

static void common_write(struct virtio_pci *vp, uint64_t off,
			 const uint8_t *data, uint32_t len)
{
	struct virtio_device *vdev = vp->vdev;
	uint16_t q = vp->queue_select;
	uint32_t v = len == 1 ? data[0] : len == 2 ? get_le16(data) :
		     get_le32(data);

	switch (off) {
	case OFF(device_feature_select):
		vp->device_feature_select = v;
		return;
	case OFF(guest_feature_select):
		vp->driver_feature_select = v;
		return;
	case OFF(guest_feature):
		virtio_set_driver_features(vdev, vp->driver_feature_select, v);
		return;
	case OFF(msix_config):
		virtio_set_config_vector(vdev, checked_vector(vp, v));
		return;
	case OFF(device_status):
		virtio_set_status(vdev, v);
		/* DRIVER_OK lets out on INTA what came before it. */
		pthread_mutex_lock(&vdev->lock);
		intx_update(vp);
		pthread_mutex_unlock(&vdev->lock);
		return;
	case OFF(queue_select):
		vp->queue_select = v;
		return;
	case OFF(queue_size):
		virtio_queue_write(vdev, q, VQ_REG_SIZE, v);
		return;
	case OFF(queue_msix_vector):
		virtio_queue_write(vdev, q, VQ_REG_VECTOR, checked_vector(vp, v));
		return;
	case OFF(queue_enable):
		virtio_queue_write(vdev, q, VQ_REG_ENABLE, v);
		return;
	}
	if (off >= OFF(queue_desc_lo) && off < OFF(queue_avail_lo))
		queue_addr_write(vp, q, VQ_REG_DESC, off - OFF(queue_desc_lo),
				 data, len);
	else if (off >= OFF(queue_avail_lo) && off < OFF(queue_used_lo))
		queue_addr_write(vp, q, VQ_REG_AVAIL,
				 off - OFF(queue_avail_lo), data, len);
	else if (off >= OFF(queue_used_lo) && off < COMMON_LEN)
		queue_addr_write(vp, q, VQ_REG_USED, off - OFF(queue_used_lo),
				 data, len);
#undef OFF
}

static void bar_virtio_access(void *opaque, uint64_t off, uint8_t *data,
			      uint32_t len, bool is_write)
{
	struct virtio_pci *vp = opaque;
	uint64_t area = off & ~(uint64_t)(AREA_SIZE - 1), rel = off - area;

	if (area == COMMON_OFF && rel + len <= COMMON_LEN) {
		if (is_write)
			common_write(vp, rel, data, len);
		else
			common_read(vp, rel, data, len);
	} else if (area == DEVICE_OFF) {
		virtio_config_access(vp->vdev, rel, data, len, is_write);
	} else if (area == NOTIFY_OFF && is_write &&
		   rel % NOTIFY_MULTIPLIER == 0) {
		/* Reached only when no ioeventfd took the write. */
		virtio_queue_kick(vp->vdev, rel / NOTIFY_MULTIPLIER);
	} else if (!is_write) {
		memset(data, 0, len);
		if (area == ISR_OFF && rel == 0)
			data[0] = virtio_read_isr(vp->vdev);
	}
}

static void bar_access(struct virtio_pci *vp, unsigned bar, uint64_t off,
		       uint8_t *data, uint32_t len, bool is_write)
{
	if (bar == BAR_VIRTIO && off < BAR_VIRTIO_SIZE)
		bar_virtio_access(vp, off, data, len, is_write);
	else if (bar == BAR_MSIX && off < BAR_MSIX_SIZE)
		msix_access(vp, off, data, len, is_write);
	else if (!is_write)
		memset(data, 0, len);
}

/* Whether an access of len bytes at reg touches [at, at + size). */
static bool access_touches(uint32_t reg, uint32_t len, uint32_t at,
			   uint32_t size)
{
	return reg < at + size && reg + len > at;
}

/* Configuration space side effects: MSI-X enable/mask, INTx (which
 * MSI-X and the command register switch), and the
 * VIRTIO_PCI_CAP_PCI_CFG window onto the BARs. */
static void cfg_hook(struct pci_device *dev, uint32_t reg, uint8_t *data,
		     uint32_t len, bool is_write)
{
	struct virtio_pci *vp = dev->opaque;
	uint32_t window = vp->cfg_cap + CAP_PCI_CFG_DATA;
	bool msix_ctrl = access_touches(reg, len, vp->msix_cap + 2, 2);
	unsigned i;

	if (is_write && msix_ctrl) {
		pthread_mutex_lock(&vp->msix_lock);
		for (i = 0; i < vp->nr_vectors; i++)
			msix_update(vp, i);
		pthread_mutex_unlock(&vp->msix_lock);
	}
	if (is_write && (msix_ctrl || access_touches(reg, len, PCI_COMMAND, 2))) {
		pthread_mutex_lock(&vp->vdev->lock);
		intx_update(vp);
		pthread_mutex_unlock(&vp->vdev->lock);
	}
	if (reg == window) {
		uint8_t *cap = dev->cfg + vp->cfg_cap;
		uint32_t n = get_le32(cap + CAP_LENGTH);

		/* The access width is cap.length (1, 2 or 4). */
		if (n != 1 && n != 2 && n != 4)
			return;
		if (is_write)
			bar_access(vp, cap[CAP_BAR], get_le32(cap + CAP_OFFSET),
				   dev->cfg + window, n, true);
		else
			bar_access(vp, cap[CAP_BAR], get_le32(cap + CAP_OFFSET),
				   data, n < len ? n : len, false);
	}
}

static uint8_t add_virtio_cap(struct virtio_pci *vp, uint8_t type,
			      uint32_t offset, uint32_t length, uint8_t len,
			      uint32_t extra)
{
	uint8_t cap[CAP_NOTIFY_LEN] = { PCI_CAP_ID_VNDR, 0, len, type,
					BAR_VIRTIO };

	put_le32(cap + CAP_OFFSET, offset);
	put_le32(cap + CAP_LENGTH, length);
	put_le32(cap + CAP_LEN, extra);
	return pci_device_add_cap(&vp->pci, cap, len);
}

static int add_caps(struct virtio_pci *vp)
{
	struct virtio_device *vdev = vp->vdev;
	uint8_t msix[12] = { PCI_CAP_ID_MSIX };
	uint8_t cfg;

	put_le16(msix + 2, vp->nr_vectors - 1);
	put_le32(msix + 4, MSIX_TABLE_OFF | BAR_MSIX);
	put_le32(msix + 8, MSIX_PBA_OFF | BAR_MSIX);
	vp->msix_cap = pci_device_add_cap(&vp->pci, msix, sizeof(msix));
	pci_device_set_wmask(&vp->pci, vp->msix_cap + 3, 1,
			     (MSIX_CTRL_ENABLE | MSIX_CTRL_FUNC_MASK) >> 8);

	if (!add_virtio_cap(vp, VIRTIO_PCI_CAP_COMMON_CFG, COMMON_OFF,
			    COMMON_LEN, CAP_LEN, 0) ||
	    !add_virtio_cap(vp, VIRTIO_PCI_CAP_NOTIFY_CFG, NOTIFY_OFF,
			    vdev->nr_queues * NOTIFY_MULTIPLIER, CAP_NOTIFY_LEN,
			    NOTIFY_MULTIPLIER) ||
	    !add_virtio_cap(vp, VIRTIO_PCI_CAP_ISR_CFG, ISR_OFF, 1, CAP_LEN, 0) ||
	    (vdev->config_size &&
	     !add_virtio_cap(vp, VIRTIO_PCI_CAP_DEVICE_CFG, DEVICE_OFF,
			     vdev->config_size, CAP_LEN, 0)))
		return -ENOSPC;
	/* The spec wants this window even though Linux does not use it. */
	cfg = add_virtio_cap(vp, VIRTIO_PCI_CAP_PCI_CFG, 0, 0, CAP_PCI_CFG_LEN, 0);
	if (!cfg || !vp->msix_cap)
		return -ENOSPC;
	vp->cfg_cap = cfg;
	pci_device_set_wmask(&vp->pci, cfg + CAP_BAR, 1, 0xff);
	pci_device_set_wmask(&vp->pci, cfg + CAP_OFFSET, 8, 0xff);
	pci_device_set_wmask(&vp->pci, cfg + CAP_PCI_CFG_DATA, 4, 0xff);
	return 0;
}

int virtio_pci_add(struct vm *vm, struct virtio_pci *vp,
		   struct virtio_device *vdev, uint32_t class_code)
{
	unsigned i;
	int err;

	memset(vp, 0, sizeof(*vp));
	pthread_mutex_init(&vp->msix_lock, NULL);
	vp->vdev = vdev;
	vp->vm = vm;
	vp->nr_vectors = vdev->nr_queues + 1;
	for (i = 0; i < VIRTIO_PCI_MAX_VECTORS; i++) {
		vp->vectors[i].irqfd = -1;
		put_le32(vp->vectors[i].entry + 12, MSIX_ENTRY_MASKED);
	}
	vdev->notify = transport_notify;
	vdev->isr_cleared = intx_isr_cleared;
	vdev->transport = vp;

	pci_device_init(&vp->pci, vdev->name, VIRTIO_PCI_VENDOR,
			VIRTIO_PCI_DEVICE_BASE + vdev->device_id, class_code, 1,
			VIRTIO_PCI_VENDOR, VIRTIO_PCI_SUBSYS);
	vp->pci.cfg_hook = cfg_hook;
	vp->pci.opaque = vp;
	err = irq_lines_alloc(&vm->lines, &vp->intx);
	if (err) {
		pr_err("%s: no interrupt line for INTx", vdev->name);
		return err;
	}
	/* The line register is for the guest's notes; 0xff: unknown. */
	vp->pci.cfg[PCI_INTERRUPT_LINE] = vp->intx.line < 0xff ?
					  vp->intx.line : 0xff;
	vp->pci.cfg[PCI_INTERRUPT_PIN] = PCI_INTERRUPT_PIN_A;
	pci_device_set_bar(&vp->pci, BAR_VIRTIO, BAR_VIRTIO_SIZE,
			   bar_virtio_access, vp);
	pci_device_set_bar(&vp->pci, BAR_MSIX, BAR_MSIX_SIZE, msix_access, vp);
	err = add_caps(vp);
	if (err) {
		pr_err("%s: PCI capabilities do not fit", vdev->name);
		return err;
	}
	for (i = 0; i < vp->nr_vectors; i++) {
		err = irq_msi_create(&vm->irq, &vp->vectors[i].gsi,
				     &vp->vectors[i].irqfd);
		if (err)
			return err;
	}
	err = pci_bus_add(&vm->pci, &vp->pci);
	if (err < 0)
		return err;
	vp->reg = (struct vm_device){
		.kind = VM_DEVICE_PCI_FUNCTION,
		.name = vdev->name,
		.pci_slot = err,
		.irq = vp->intx.line,
		.pause = virtio_registry_pause,
		.resume = virtio_registry_resume,
		.opaque = vdev,
	};
	vm_device_add(vm, &vp->reg);
	/* The spec's 16-bit write of the queue index, a register each. */
	return virtio_bind_notify(vdev, vm->vm_fd,
				  vp->pci.bars[BAR_VIRTIO].addr + NOTIFY_OFF,
				  NOTIFY_MULTIPLIER, 2);
}

void virtio_pci_destroy(struct virtio_pci *vp)
{
	unsigned i;

	for (i = 0; i < VIRTIO_PCI_MAX_VECTORS; i++) {
		if (vp->vectors[i].irqfd >= 0)
			close(vp->vectors[i].irqfd);
		vp->vectors[i].irqfd = -1;
	}
	pthread_mutex_destroy(&vp->msix_lock);
}
