/* The transport-independent half of the virtio 1.x driver side: the
 * devices the transports found, the initialisation sequence (spec 3.1.1)
 * with feature negotiation, sleeping until a device interrupts, and the
 * interrupt counts. virtio_pci.c and virtio_mmio.c do the register
 * accesses (struct virtio_ops). */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "virtio.h"

#define RESET_MS		1000
/* Without an interrupt: how long to wait between looks at the ISR. */
#define POLL_US			20

struct virtio_cand virtio_cands[VIRTIO_MAX_CANDS];
unsigned virtio_ncands;
/* Probed devices by slot, for the interrupt handler. */
static struct virtio_dev *slot_dev[VIRTIO_MAX_DEVS];
static unsigned slots_used;

void virtio_add_cand(const struct virtio_cand *c)
{
	if (virtio_ncands == VIRTIO_MAX_CANDS) {
		print("tg: virtio %s id=%u skipped reason=too-many\n",
		      c->where, c->id);
		return;
	}
	virtio_cands[virtio_ncands++] = *c;
}

/* PCI first (pci_scan has run), then virtio-mmio, as virtio= allows. */
void virtio_scan(void)
{
	if (params.virtio & VIRTIO_T_PCI)
		virtio_pci_scan();
	if (params.virtio & VIRTIO_T_MMIO)
		virtio_mmio_scan();
}

/* Takes the next slot (interrupt vectors), lets the transport find its
 * registers and set up interrupts, and allocates nvq queues' rings. */
bool virtio_probe(struct virtio_dev *d, const struct virtio_cand *c,
		  unsigned nvq, const char **why)
{
	if (slots_used == VIRTIO_MAX_DEVS) {
		*why = "no-free-vectors";
		return false;
	}
	d->cand = c;
	d->slot = slots_used++;
	d->nvq = nvq;
	slot_dev[d->slot] = d;
	if (!(c->pci ? virtio_pci_probe(d, why) : virtio_mmio_probe(d, why)))
		return false;
	for (unsigned q = 0; q < nvq; q++)
		vq_alloc(&d->vq[q]);
	return true;
}

uint8_t virtio_status(struct virtio_dev *d)
{
	return d->ops->status(d);
}

uint32_t virtio_cfg_generation(struct virtio_dev *d)
{
	return d->ops->generation(d);
}

/* Writes 0 and waits until the device reads back 0, as 1.x requires
 * before the next initialisation. */
bool virtio_reset(struct virtio_dev *d)
{
	uint64_t deadline = clock_deadline(RESET_MS);

	d->ops->set_status(d, 0);
	while (virtio_status(d)) {
		if (clock_now() > deadline)
			return false;
		cpu_relax();
	}
	return true;
}

/* Sets FAILED and says why: false, for the caller to return. */
bool virtio_fail(struct virtio_dev *d, const char *what, const char **why)
{
	d->ops->set_status(d, virtio_status(d) | VIRTIO_S_FAILED);
	*why = what;
	return false;
}

/* The driver initialisation sequence (spec 3.1.1) up to FEATURES_OK:
 * want is the device-specific features to accept; VERSION_1 is required
 * and the ring features are taken when offered unless vfeat= turns them
 * off. */
bool virtio_negotiate(struct virtio_dev *d, uint64_t want, const char **why)
{
	uint8_t st = VIRTIO_S_ACKNOWLEDGE | VIRTIO_S_DRIVER;
	uint64_t offered;

	if (!virtio_reset(d)) {
		*why = "reset-timeout";
		return false;
	}
	d->ops->set_status(d, VIRTIO_S_ACKNOWLEDGE);
	d->ops->set_status(d, st);
	offered = d->ops->features(d);
	if (!(offered >> VIRTIO_F_VERSION_1 & 1))
		return virtio_fail(d, "no-version-1", why);
	want |= 1ULL << VIRTIO_F_VERSION_1;
	if (!(params.vfeat_off & VFEAT_NOINDIRECT))
		want |= 1ULL << VIRTIO_F_INDIRECT_DESC;
	if (!(params.vfeat_off & VFEAT_NOEVENT))
		want |= 1ULL << VIRTIO_F_EVENT_IDX;
	d->features = offered & want;
	d->ops->set_features(d, d->features);
	st |= VIRTIO_S_FEATURES_OK;
	d->ops->set_status(d, st);
	if (!(virtio_status(d) & VIRTIO_S_FEATURES_OK))
		return virtio_fail(d, "features-not-ok", why);
	return true;
}

/* One queue: the device's size, at most VQ_MAX_SIZE and a power of
 * two, empty rings; the transport tells the device and enables it. */
static bool queue_setup(struct virtio_dev *d, unsigned q, const char **why)
{
	struct virtq *vq = &d->vq[q];
	uint16_t size = MIN(d->ops->queue_max(d, q), VQ_MAX_SIZE);

	while (size & (size - 1))
		size &= size - 1;
	if (!size)
		return virtio_fail(d, "queue-size-0", why);
	vq_init(vq, size, virtio_has(d, VIRTIO_F_EVENT_IDX));
	vq->index = q;
	return d->ops->queue_enable(d, q, why);
}

/* The rest of the sequence after virtio_negotiate: queues 0 to nvq - 1
 * (a driver whose queues depend on the features sets nvq in between),
 * the config interrupt, DRIVER_OK. */
bool virtio_finish(struct virtio_dev *d, const char **why)
{
	uint8_t st = VIRTIO_S_ACKNOWLEDGE | VIRTIO_S_DRIVER |
		     VIRTIO_S_FEATURES_OK;

	if (d->ops->num_queues(d) < d->nvq)
		return virtio_fail(d, "too-few-queues", why);
	for (unsigned q = 0; q < d->nvq; q++)
		if (!queue_setup(d, q, why))
			return false;
	if (d->ops->config_irq && !d->ops->config_irq(d, why))
		return false;
	d->ops->set_status(d, st | VIRTIO_S_DRIVER_OK);
	if (virtio_status(d) & VIRTIO_S_NEEDS_RESET)
		return virtio_fail(d, "needs-reset", why);
	return true;
}

/* Both halves, for drivers whose queues do not depend on features. */
bool virtio_start(struct virtio_dev *d, uint64_t want, const char **why)
{
	return virtio_negotiate(d, want, why) && virtio_finish(d, why);
}

/* Interrupt status bits counted as the interrupts MSI-X would have
 * raised; true if there were any. */
static bool count_isr(struct virtio_dev *d, uint8_t isr)
{
	if (isr & VIRTIO_ISR_CONFIG)
		virtio_irqs[2 * d->slot]++;
	if (isr & VIRTIO_ISR_QUEUE)
		virtio_irqs[2 * d->slot + 1]++;
	return isr != 0;
}

/* Vector VEC_VIRTIO_BASE + v fired (desc.c, before the EOI). An MSI-X
 * vector says by itself what happened. A wired line says only that some
 * device on it wants attention: each device on that line (two would
 * share it if the VMM gave them the same one) is asked and acknowledged,
 * which lowers the line before the EOI. */
void virtio_interrupt(unsigned v)
{
	struct virtio_dev *d = slot_dev[v / 2];

	if (!d || !d->wired) {
		virtio_irqs[v]++;
		return;
	}
	for (unsigned s = 0; s < slots_used; s++) {
		struct virtio_dev *o = slot_dev[s];

		if (o && o->wired && o->cand->gsi == d->cand->gsi)
			count_isr(o, o->ops->isr(o));
	}
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
		if (!count_isr(d, d->ops->isr(d)) && !used)
			clock_delay_us(POLL_US);
	} else if (!used) {
		wait_irq();
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

const char *virtio_irq_mode(const struct virtio_dev *d)
{
	return d->polled ? "polled" : d->wired ? WIRED_IRQ_NAME : "msix";
}
