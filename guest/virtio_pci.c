/* virtio 1.x modern PCI transport (virtio spec 4.1): finding virtio
 * functions, the vendor capabilities, MSI-X, and the register accesses
 * of the generic sequence (virtio.c) in the common configuration. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "virtio.h"

/* struct virtio_pci_cap */
#define CAP_TYPE		3
#define CAP_BAR			4
#define CAP_OFFSET		8
#define CAP_LENGTH		12
#define CAP_NOTIFY_MULT		16
#define CAP_COMMON		1
#define CAP_NOTIFY		2
#define CAP_ISR			3
#define CAP_DEVICE		4

/* struct virtio_pci_common_cfg */
#define DFSELECT		0x00
#define DF			0x04
#define GFSELECT		0x08
#define GF			0x0c
#define MSIX_CONFIG		0x10
#define NUM_QUEUES		0x12
#define STATUS			0x14
#define CFG_GENERATION		0x15
#define Q_SELECT		0x16
#define Q_SIZE			0x18
#define Q_MSIX			0x1a
#define Q_ENABLE		0x1c
#define Q_NOTIFY_OFF		0x1e
#define Q_DESC			0x20
#define Q_DRIVER		0x28
#define Q_DEVICE		0x30
#define COMMON_LEN		0x38

#define MSIX_CTRL		2
#define MSIX_TABLE		4
#define MSIX_ENABLE		0x8000
#define MSIX_MASKALL		0x4000
#define MSIX_ENTRY		16
#define NO_VECTOR		0xffff

static const struct virtio_ops pci_ops;

/* Modern (1.x-only) virtio functions are 0x1040 + the device ID;
 * transitional ones 0x1000-0x103f with the ID in the subsystem ID. */
void virtio_pci_scan(void)
{
	for (unsigned i = 0; i < pci_nfuncs; i++) {
		const struct pci_func *f = &pci_funcs[i];
		struct virtio_cand c = { .pci = f };

		if (f->vendor != VIRTIO_PCI_VENDOR || f->device < 0x1000 ||
		    f->device > 0x107f)
			continue;
		c.id = f->device >= 0x1040 ? f->device - 0x1040u
					   : pci_read16(f, PCI_SUBSYSTEM_ID);
		sprint(c.where, sizeof(c.where), "bdf=00:%02x.%x", f->dev,
		       f->fn);
		/* Its INTA, should there be no MSIs. */
		pci_intx_line(f, &c.gsi);
		virtio_add_cand(&c);
	}
}

static bool msix_setup(struct virtio_dev *d, const char **why)
{
	const struct pci_func *f = d->cand->pci;
	unsigned cap = pci_find_cap(f, 0, PCI_CAP_MSIX);
	uint64_t base, size, table;
	uint16_t ctrl;
	uint32_t tab;

	if (!cap) {
		*why = "no-msix";
		return false;
	}
	ctrl = pci_read16(f, cap + MSIX_CTRL);
	tab = pci_read32(f, cap + MSIX_TABLE);
	if ((ctrl & 0x7ff) < 1) {
		*why = "msix-too-few-vectors";
		return false;
	}
	base = pci_bar(f, tab & 7, &size);
	if (!base || (tab & ~7u) + 2 * MSIX_ENTRY > size) {
		*why = "msix-table-outside-bar";
		return false;
	}
	table = base + (tab & ~7u);
	/* Entries are programmed with the whole function masked. */
	pci_write16(f, cap + MSIX_CTRL, ctrl | MSIX_ENABLE | MSIX_MASKALL);
	for (unsigned i = 0; i < 2; i++) {
		uint64_t e = table + i * MSIX_ENTRY, addr = msi_address(f);

		mmio_write32(e, addr);
		mmio_write32(e + 4, addr >> 32);
		mmio_write32(e + 8,
			     msi_data(f, VEC_VIRTIO_BASE + 2 * d->slot + i));
		mmio_write32(e + 12, 0);
	}
	pci_write16(f, cap + MSIX_CTRL, (ctrl | MSIX_ENABLE) & ~MSIX_MASKALL);
	return true;
}

/* Without MSIs (an arm64 GICv2 has no ITS): the function's INTA, a
 * wired line, level-triggered to the slot's queue vector; the ISR says
 * what it was for (virtio_interrupt). */
static bool intx_setup(struct virtio_dev *d, const char **why)
{
	unsigned gsi, line;

	if (!pci_intx_line(d->cand->pci, &gsi)) {
		*why = "no-msi-no-intx";
		return false;
	}
	line = irq_line(gsi);
	if (irq_line_missing(gsi, line)) {
		*why = IRQ_LINE_MISSING;
		return false;
	}
	d->wired = true;
	irq_line_route(line, VEC_VIRTIO_BASE + 2 * d->slot + 1);
	/* pci_bar() turned INTx off, for MSI-X's sake. */
	pci_write16(d->cand->pci, PCI_COMMAND,
		    pci_read16(d->cand->pci, PCI_COMMAND) & ~PCI_CMD_INTX_OFF);
	return true;
}

/* Finds the structures the transport needs (the first capability of
 * each type, as the spec asks), maps their BARs and enables MSI-X for
 * the device's slot, or its INTA where there are no MSIs. A device
 * without MSI-X is driven by polling its ISR status if the driver set
 * may_poll (QEMU 7.2's virtio-balloon-pci has no MSI-X). A device type
 * without a configuration space (virtio-rng) may lack that structure. */
bool virtio_pci_probe(struct virtio_dev *d, const char **why)
{
	const struct pci_func *f = d->cand->pci;
	uint64_t addr[CAP_DEVICE + 1] = { 0 }, len[CAP_DEVICE + 1] = { 0 };

	d->ops = &pci_ops;
	for (unsigned cap = pci_find_cap(f, 0, PCI_CAP_VENDOR); cap;
	     cap = pci_find_cap(f, cap, PCI_CAP_VENDOR)) {
		uint8_t type = pci_read8(f, cap + CAP_TYPE);
		uint8_t bar = pci_read8(f, cap + CAP_BAR);
		uint32_t off = pci_read32(f, cap + CAP_OFFSET);
		uint32_t n = pci_read32(f, cap + CAP_LENGTH);
		uint64_t base, size;

		if (type < CAP_COMMON || type > CAP_DEVICE || addr[type] ||
		    bar > 5)
			continue;
		base = pci_bar(f, bar, &size);
		if (!base || off > size || n > size - off) {
			*why = "cap-outside-bar";
			return false;
		}
		addr[type] = base + off;
		len[type] = n;
		if (type == CAP_NOTIFY)
			d->notify_mult = pci_read32(f, cap + CAP_NOTIFY_MULT);
	}
	if (!addr[CAP_COMMON] || len[CAP_COMMON] < COMMON_LEN)
		*why = "no-common-cfg";
	else if (!addr[CAP_NOTIFY] || len[CAP_NOTIFY] < 2)
		*why = "no-notify-cfg";
	else if (!addr[CAP_ISR] || !len[CAP_ISR])
		*why = "no-isr-cfg";
	else if (!addr[CAP_DEVICE] && !d->config_optional)
		*why = "no-device-cfg";
	else
		*why = 0;
	if (*why)
		return false;
	d->common = addr[CAP_COMMON];
	d->notify_base = addr[CAP_NOTIFY];
	d->notify_len = len[CAP_NOTIFY];
	d->device = addr[CAP_DEVICE];
	d->isr = addr[CAP_ISR];
	d->polled = d->may_poll && !pci_find_cap(f, 0, PCI_CAP_MSIX);
	if (d->polled)
		return true;
	return pci_msi_ready() ? msix_setup(d, why) : intx_setup(d, why);
}

static uint8_t pci_status(struct virtio_dev *d)
{
	return mmio_read8(d->common + STATUS);
}

static void pci_set_status(struct virtio_dev *d, uint8_t st)
{
	mmio_write8(d->common + STATUS, st);
}

static uint32_t pci_generation(struct virtio_dev *d)
{
	return mmio_read8(d->common + CFG_GENERATION);
}

static uint64_t pci_features(struct virtio_dev *d)
{
	uint64_t f;

	mmio_write32(d->common + DFSELECT, 0);
	f = mmio_read32(d->common + DF);
	mmio_write32(d->common + DFSELECT, 1);
	return f | (uint64_t)mmio_read32(d->common + DF) << 32;
}

static void pci_set_features(struct virtio_dev *d, uint64_t f)
{
	mmio_write32(d->common + GFSELECT, 0);
	mmio_write32(d->common + GF, (uint32_t)f);
	mmio_write32(d->common + GFSELECT, 1);
	mmio_write32(d->common + GF, f >> 32);
}

static unsigned pci_num_queues(struct virtio_dev *d)
{
	return mmio_read16(d->common + NUM_QUEUES);
}

static uint16_t pci_queue_max(struct virtio_dev *d, unsigned q)
{
	mmio_write16(d->common + Q_SELECT, q);
	return mmio_read16(d->common + Q_SIZE);
}

static void write64(uint64_t addr, uint64_t v)
{
	mmio_write32(addr, (uint32_t)v);
	mmio_write32(addr + 4, v >> 32);
}

/* The size, the rings, MSI-X entry 1 (none on INTx), the notify
 * address; enabled. */
static bool pci_queue_enable(struct virtio_dev *d, unsigned q,
			     const char **why)
{
	uint64_t c = d->common;
	struct virtq *vq = &d->vq[q];
	uint16_t noff;

	mmio_write16(c + Q_SIZE, vq->size);
	write64(c + Q_DESC, (uint64_t)vq->desc);
	write64(c + Q_DRIVER, (uint64_t)vq->avail);
	write64(c + Q_DEVICE, (uint64_t)vq->used);
	/* A device out of vectors answers NO_VECTOR. */
	if (!d->polled && !d->wired) {
		mmio_write16(c + Q_MSIX, 1);
		if (mmio_read16(c + Q_MSIX) != 1)
			return virtio_fail(d, "queue-msix-vector", why);
	}
	noff = mmio_read16(c + Q_NOTIFY_OFF);
	if ((uint64_t)noff * d->notify_mult + 2 > d->notify_len)
		return virtio_fail(d, "notify-outside-cap", why);
	vq->notify = d->notify_base + (uint64_t)noff * d->notify_mult;
	vq->notify32 = false;
	mmio_write16(c + Q_ENABLE, 1);
	return true;
}

/* MSI-X entry 0 for config changes, read back. */
static bool pci_config_irq(struct virtio_dev *d, const char **why)
{
	if (d->polled || d->wired)
		return true;
	mmio_write16(d->common + MSIX_CONFIG, 0);
	if (mmio_read16(d->common + MSIX_CONFIG) != 0)
		return virtio_fail(d, "config-msix-vector", why);
	return true;
}

/* The ISR status (spec 4.1.4.5): reading it clears it. */
static uint8_t pci_isr(struct virtio_dev *d)
{
	return mmio_read8(d->isr);
}

static const struct virtio_ops pci_ops = {
	.status = pci_status,
	.set_status = pci_set_status,
	.generation = pci_generation,
	.features = pci_features,
	.set_features = pci_set_features,
	.num_queues = pci_num_queues,
	.queue_max = pci_queue_max,
	.queue_enable = pci_queue_enable,
	.config_irq = pci_config_irq,
	.isr = pci_isr,
};
