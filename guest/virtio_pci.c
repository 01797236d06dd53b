/* virtio 1.x modern PCI transport (virtio spec 4.1): the vendor
 * capabilities, MSI-X, reset, feature negotiation, queue set-up and
 * sleeping until the device interrupts. */
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
#define RESET_MS		1000
#define NO_VECTOR		0xffff
/* ISR status bits (spec 4.1.4.5): read to clear. */
#define ISR_QUEUE		1
#define ISR_CONFIG		2
/* Without MSI-X: how long to wait between looks at the ISR. */
#define POLL_US			20

static unsigned slots_used;	/* MSI-X vector pairs handed out */

static bool msix_setup(struct virtio_dev *d, const char **why)
{
	const struct pci_func *f = d->pci;
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
		uint64_t e = table + i * MSIX_ENTRY;

		mmio_write32(e, LAPIC_BASE | lapic_id() << 12);
		mmio_write32(e + 4, 0);
		mmio_write32(e + 8, VEC_VIRTIO_BASE + 2 * d->slot + i);
		mmio_write32(e + 12, 0);
	}
	pci_write16(f, cap + MSIX_CTRL, (ctrl | MSIX_ENABLE) & ~MSIX_MASKALL);
	return true;
}

/* Finds the structures the transport needs (the first capability of
 * each type, as the spec asks), maps their BARs, takes the next pair of
 * interrupt vectors and enables MSI-X; nvq queues from then on. A device
 * without MSI-X is driven by polling its ISR status if the driver set
 * may_poll (QEMU 7.2's virtio-balloon-pci has no MSI-X; the guest takes
 * no INTx). */
bool virtio_probe(struct virtio_dev *d, const struct pci_func *f,
		  unsigned nvq, const char **why)
{
	uint64_t addr[CAP_DEVICE + 1] = { 0 }, len[CAP_DEVICE + 1] = { 0 };

	if (slots_used == VIRTIO_MAX_DEVS) {
		*why = "no-free-vectors";
		return false;
	}
	d->pci = f;
	d->slot = slots_used++;
	d->nvq = nvq;
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
	else if (!addr[CAP_DEVICE])
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
	for (unsigned q = 0; q < nvq; q++)
		vq_alloc(&d->vq[q]);
	d->polled = d->may_poll && !pci_find_cap(f, 0, PCI_CAP_MSIX);
	return d->polled || msix_setup(d, why);
}

uint8_t virtio_status(struct virtio_dev *d)
{
	return mmio_read8(d->common + STATUS);
}

uint8_t virtio_cfg_generation(struct virtio_dev *d)
{
	return mmio_read8(d->common + CFG_GENERATION);
}

/* Writes 0 and waits until the device reads back 0, as 1.x requires
 * before the next initialisation. */
bool virtio_reset(struct virtio_dev *d)
{
	uint64_t deadline = tsc_deadline(RESET_MS);

	mmio_write8(d->common + STATUS, 0);
	while (virtio_status(d)) {
		if (rdtsc() > deadline)
			return false;
		cpu_relax();
	}
	return true;
}

static void write64(uint64_t addr, uint64_t v)
{
	mmio_write32(addr, (uint32_t)v);
	mmio_write32(addr + 4, v >> 32);
}

static bool give_up(struct virtio_dev *d, const char *what, const char **why)
{
	mmio_write8(d->common + STATUS, virtio_status(d) | VIRTIO_S_FAILED);
	*why = what;
	return false;
}

/* One queue: the device's size, at most VQ_MAX_SIZE and a power of
 * two, the rings, MSI-X entry 1, the notify address; enabled. */
static bool queue_setup(struct virtio_dev *d, unsigned q, const char **why)
{
	uint64_t c = d->common;
	struct virtq *vq = &d->vq[q];
	uint16_t size, noff;

	mmio_write16(c + Q_SELECT, q);
	size = MIN(mmio_read16(c + Q_SIZE), VQ_MAX_SIZE);
	while (size & (size - 1))
		size &= size - 1;
	if (!size)
		return give_up(d, "queue-size-0", why);
	mmio_write16(c + Q_SIZE, size);
	vq_init(vq, size, virtio_has(d, VIRTIO_F_EVENT_IDX));
	vq->index = q;
	write64(c + Q_DESC, (uint64_t)vq->desc);
	write64(c + Q_DRIVER, (uint64_t)vq->avail);
	write64(c + Q_DEVICE, (uint64_t)vq->used);
	/* A device out of vectors answers NO_VECTOR. */
	if (!d->polled) {
		mmio_write16(c + Q_MSIX, 1);
		if (mmio_read16(c + Q_MSIX) != 1)
			return give_up(d, "queue-msix-vector", why);
	}
	noff = mmio_read16(c + Q_NOTIFY_OFF);
	if ((uint64_t)noff * d->notify_mult + 2 > d->notify_len)
		return give_up(d, "notify-outside-cap", why);
	vq->notify = d->notify_base + (uint64_t)noff * d->notify_mult;
	mmio_write16(c + Q_ENABLE, 1);
	return true;
}

/* The driver initialisation sequence (spec 3.1.1) up to FEATURES_OK:
 * want is the device-specific features to accept; VERSION_1 is required
 * and the ring features are taken when offered unless vfeat= turns them
 * off. */
bool virtio_negotiate(struct virtio_dev *d, uint64_t want, const char **why)
{
	uint64_t c = d->common, offered;
	uint8_t st = VIRTIO_S_ACKNOWLEDGE | VIRTIO_S_DRIVER;

	if (!virtio_reset(d)) {
		*why = "reset-timeout";
		return false;
	}
	mmio_write8(c + STATUS, VIRTIO_S_ACKNOWLEDGE);
	mmio_write8(c + STATUS, st);
	mmio_write32(c + DFSELECT, 0);
	offered = mmio_read32(c + DF);
	mmio_write32(c + DFSELECT, 1);
	offered |= (uint64_t)mmio_read32(c + DF) << 32;
	if (!(offered >> VIRTIO_F_VERSION_1 & 1))
		return give_up(d, "no-version-1", why);
	want |= 1ULL << VIRTIO_F_VERSION_1;
	if (!(params.vfeat_off & VFEAT_NOINDIRECT))
		want |= 1ULL << VIRTIO_F_INDIRECT_DESC;
	if (!(params.vfeat_off & VFEAT_NOEVENT))
		want |= 1ULL << VIRTIO_F_EVENT_IDX;
	d->features = offered & want;
	mmio_write32(c + GFSELECT, 0);
	mmio_write32(c + GF, (uint32_t)d->features);
	mmio_write32(c + GFSELECT, 1);
	mmio_write32(c + GF, d->features >> 32);
	st |= VIRTIO_S_FEATURES_OK;
	mmio_write8(c + STATUS, st);
	if (!(virtio_status(d) & VIRTIO_S_FEATURES_OK))
		return give_up(d, "features-not-ok", why);
	return true;
}

/* The rest of the sequence after virtio_negotiate: queues 0 to nvq - 1
 * (a driver whose queues depend on the features sets nvq in between),
 * the config vector, DRIVER_OK. */
bool virtio_finish(struct virtio_dev *d, const char **why)
{
	uint64_t c = d->common;
	uint8_t st = VIRTIO_S_ACKNOWLEDGE | VIRTIO_S_DRIVER |
		     VIRTIO_S_FEATURES_OK;

	if (mmio_read16(c + NUM_QUEUES) < d->nvq)
		return give_up(d, "too-few-queues", why);
	for (unsigned q = 0; q < d->nvq; q++)
		if (!queue_setup(d, q, why))
			return false;
	if (!d->polled) {
		mmio_write16(c + MSIX_CONFIG, 0);
		if (mmio_read16(c + MSIX_CONFIG) != 0)
			return give_up(d, "config-msix-vector", why);
	}
	mmio_write8(c + STATUS, st | VIRTIO_S_DRIVER_OK);
	if (virtio_status(d) & VIRTIO_S_NEEDS_RESET)
		return give_up(d, "needs-reset", why);
	return true;
}

/* Both halves, for drivers whose queues do not depend on features. */
bool virtio_start(struct virtio_dev *d, uint64_t want, const char **why)
{
	return virtio_negotiate(d, want, why) && virtio_finish(d, why);
}

/* A polled device's ISR status counted as the interrupts MSI-X would
 * have raised; true if there was any. */
static bool poll_isr(struct virtio_dev *d)
{
	uint8_t isr = mmio_read8(d->isr);

	if (isr & ISR_CONFIG)
		virtio_irqs[2 * d->slot]++;
	if (isr & ISR_QUEUE)
		virtio_irqs[2 * d->slot + 1]++;
	return isr != 0;
}

/* Sleeps until an interrupt (a completion, a config change or the
 * watchdog tick) unless a queue already holds used buffers; a polled
 * device is looked at again after a short wait instead. */
void virtio_idle(struct virtio_dev *d)
{
	bool used = false;

	for (unsigned q = 0; q < d->nvq; q++)
		used |= vq_arm(&d->vq[q]);
	if (d->polled) {
		if (!poll_isr(d) && !used)
			tsc_delay_us(POLL_US);
	} else if (!used) {
		asm volatile("sti; hlt; cli");
	}
}

unsigned virtio_config_irqs(struct virtio_dev *d)
{
	return virtio_irqs[2 * d->slot];
}

unsigned virtio_queue_irqs(struct virtio_dev *d)
{
	return virtio_irqs[2 * d->slot + 1];
}
