/* The user-space IOAPIC (see ioapic.h). Register layout and entry bits:
 * Intel's 82093AA datasheet; behaviour at the edges (remote IRR on a
 * switch to edge, what the polarity bit does) as KVM's in-kernel IOAPIC
 * has it, so that a guest sees the same chip under either irqchip. */
#include "arch/x86/ioapic.h"

#include <errno.h>
#include <string.h>

#include "lib/log.h"

#define IOREGSEL 0x00
#define IOWIN 0x10
#define REG_WIDTH 4

/* Indirect registers. */
#define IOAPIC_ID 0x00
#define IOAPIC_VERSION 0x01
#define IOAPIC_ARBITRATION 0x02
#define IOAPIC_REDIR 0x10	/* two per pin: low, then high dword */
#define IOAPIC_VERSION_VALUE (0x11 | (IOAPIC_PINS - 1) << 16)
#define IOAPIC_ID_SHIFT 24
#define IOAPIC_ID_MASK 0xf

/* Delivery modes a LAPIC takes from a message; 3 and 6 are reserved and
 * ExtINT (7) needs the 8259 this platform does not have. */
#define MODE_FIXED 0
#define MODE_LOWEST 1
#define MODE_SMI 2
#define MODE_NMI 4
#define MODE_INIT 5

/* MSI address and data (Intel SDM vol. 3, 11.11). */
#define MSI_ADDR_BASE 0xfee00000ULL
#define MSI_ADDR_DEST_SHIFT 12
#define MSI_ADDR_REDIR_HINT (1u << 3)
#define MSI_ADDR_DEST_LOGICAL (1u << 2)
#define MSI_DATA_ASSERT (1u << 14)
#define MSI_DATA_LEVEL (1u << 15)

void ioapic_init(struct ioapic *io, uint8_t id, const struct ioapic_ops *ops,
		 void *opaque)
{
	unsigned pin;

	memset(io, 0, sizeof(*io));
	pthread_mutex_init(&io->lock, NULL);
	io->id = id & IOAPIC_ID_MASK;
	for (pin = 0; pin < IOAPIC_PINS; pin++)
		io->redir[pin] = RE_MASKED;
	io->ops = ops;
	io->opaque = opaque;
}

void ioapic_destroy(struct ioapic *io)
{
	pthread_mutex_destroy(&io->lock);
}

static unsigned entry_mode(uint64_t e)
{
	return (e & RE_MODE) >> RE_MODE_SHIFT;
}

/* A line's level is the device's logical one: the polarity bit is kept
 * but inverts nothing, as in KVM's IOAPIC and QEMU's. Linux programs PCI
 * INTx pins active-low (what a _PRT's GSI means); inverting them would
 * make every idle line an interrupt. */
static bool asserted(const struct ioapic *io, unsigned pin)
{
	return io->lines_high & 1u << pin;
}

static void msi_of(uint64_t e, uint64_t *addr, uint32_t *data)
{
	unsigned mode = entry_mode(e);

	*addr = MSI_ADDR_BASE | (e >> RE_DEST_SHIFT) << MSI_ADDR_DEST_SHIFT |
		(e & RE_DEST_LOGICAL ? MSI_ADDR_DEST_LOGICAL : 0) |
		(mode == MODE_LOWEST ? MSI_ADDR_REDIR_HINT : 0);
	*data = (uint32_t)(e & RE_VECTOR) | mode << 8 | MSI_DATA_ASSERT |
		(e & RE_LEVEL ? MSI_DATA_LEVEL : 0);
}

/* Makes KVM's route of the pin its entry's message: 0, or -errno after a
 * warning. Done when an unmasked entry is written, so that firing it
 * needs no routing change on a device's thread. */
static int route_locked(struct ioapic *io, unsigned pin)
{
	struct ioapic_route *r = &io->routes[pin];
	uint64_t addr;
	uint32_t data;
	int err;

	msi_of(io->redir[pin], &addr, &data);
	if (r->set && r->addr == addr && r->data == data)
		return 0;
	err = io->ops->route(io->opaque, pin, addr, data);
	if (err) {
		pr_warn_ratelimited("IOAPIC pin %u: cannot route it: %s", pin,
				    strerror(-err));
		return err;
	}
	*r = (struct ioapic_route){ true, addr, data };
	return 0;
}

static void fire_locked(struct ioapic *io, unsigned pin)
{
	uint64_t *e = &io->redir[pin];
	unsigned mode = entry_mode(*e);
	int err;

	if (*e & RE_MASKED)
		return;
	if (mode != MODE_FIXED && mode != MODE_LOWEST && mode != MODE_SMI &&
	    mode != MODE_NMI && mode != MODE_INIT) {
		pr_warn_ratelimited("IOAPIC pin %u: delivery mode %u dropped",
				    pin, mode);
		return;
	}
	if ((*e & RE_LEVEL) && (*e & RE_REMOTE_IRR))
		return;
	/* A route KVM refused at the entry's write is tried again here:
	 * through a stale one or none the message would go astray, and a
	 * level pin's remote IRR would wait for an EOI that never comes. */
	if (route_locked(io, pin))
		return;
	if (*e & RE_LEVEL)
		*e |= RE_REMOTE_IRR;
	err = io->ops->fire(io->opaque, pin);
	if (err) {
		/* Not delivered, so no EOI will come to clear it. */
		*e &= ~RE_REMOTE_IRR;
		pr_warn_ratelimited("IOAPIC pin %u: not delivered: %s", pin,
				    strerror(-err));
	}
}

/* A level-triggered pin fires while its line is asserted, once per EOI. */
static void service_level_locked(struct ioapic *io, unsigned pin)
{
	if ((io->redir[pin] & RE_LEVEL) && asserted(io, pin))
		fire_locked(io, pin);
}

int ioapic_set_line(void *ioapic, unsigned pin, bool level)
{
	struct ioapic *io = ioapic;
	bool was;

	if (pin >= IOAPIC_PINS)
		return -EINVAL;
	pthread_mutex_lock(&io->lock);
	was = asserted(io, pin);
	if (level)
		io->lines_high |= 1u << pin;
	else
		io->lines_high &= ~(1u << pin);
	if (!(io->redir[pin] & RE_LEVEL)) {
		if (!was && asserted(io, pin))
			fire_locked(io, pin);
	} else {
		service_level_locked(io, pin);
	}
	pthread_mutex_unlock(&io->lock);
	return 0;
}

void ioapic_eoi(struct ioapic *io, uint8_t vector)
{
	unsigned pin;

	pthread_mutex_lock(&io->lock);
	for (pin = 0; pin < IOAPIC_PINS; pin++) {
		uint64_t *e = &io->redir[pin];

		if ((*e & RE_VECTOR) != vector || !(*e & RE_LEVEL) ||
		    !(*e & RE_REMOTE_IRR))
			continue;
		*e &= ~RE_REMOTE_IRR;
		service_level_locked(io, pin);
	}
	pthread_mutex_unlock(&io->lock);
}

static uint32_t indirect_read(const struct ioapic *io)
{
	unsigned sel = io->select, pin;

	switch (sel) {
	case IOAPIC_ID:
	case IOAPIC_ARBITRATION:
		/* The arbitration ID is the APIC ID after a reset, which
		 * nothing here changes (KVM's reads the same). */
		return (uint32_t)io->id << IOAPIC_ID_SHIFT;
	case IOAPIC_VERSION:
		return IOAPIC_VERSION_VALUE;
	}
	if (sel < IOAPIC_REDIR)
		return 0;
	pin = (sel - IOAPIC_REDIR) / 2;
	if (pin >= IOAPIC_PINS)
		return 0;
	return sel & 1 ? io->redir[pin] >> 32 : (uint32_t)io->redir[pin];
}

static void redir_write(struct ioapic *io, unsigned pin, bool high,
			uint32_t val)
{
	uint64_t *e = &io->redir[pin];

	if (high) {
		*e = (uint32_t)*e | (uint64_t)(val & RE_HIGH_WRITABLE) << 32;
	} else {
		*e = (*e & ~0xffffffffULL) | (*e & RE_REMOTE_IRR) |
		     (val & RE_LOW_WRITABLE);
		/* Linux and Xen clear a stuck remote IRR by switching the
		 * pin to edge and back, as KVM lets them. */
		if (!(*e & RE_LEVEL))
			*e &= ~RE_REMOTE_IRR;
	}
	/* A route refused here was warned about, and is tried again when
	 * the pin fires. */
	if (!(*e & RE_MASKED))
		route_locked(io, pin);
	/* An unmasked or re-armed level pin with its line up fires now. */
	service_level_locked(io, pin);
}

static void indirect_write(struct ioapic *io, uint32_t val)
{
	unsigned sel = io->select;

	if (sel == IOAPIC_ID)
		io->id = (val >> IOAPIC_ID_SHIFT) & IOAPIC_ID_MASK;
	else if (sel >= IOAPIC_REDIR && (sel - IOAPIC_REDIR) / 2 < IOAPIC_PINS)
		redir_write(io, (sel - IOAPIC_REDIR) / 2, sel & 1, val);
	/* The version and arbitration registers are read-only. */
}

/* IOREGSEL and IOWIN are 32 bits wide at 0x00 and 0x10; an access may
 * take part of one (bytes written merge into the register), bytes
 * outside both read as 0 and take no writes. */
void ioapic_mmio(void *ioapic, uint64_t offset, uint8_t *data, uint32_t len,
		 bool is_write)
{
	struct ioapic *io = ioapic;
	uint64_t reg = offset & ~(uint64_t)(REG_WIDTH - 1);
	unsigned shift = offset & (REG_WIDTH - 1), i;
	uint32_t v, n = REG_WIDTH - shift < len ? REG_WIDTH - shift : len;

	if (!is_write)
		memset(data, 0, len);
	if (reg != IOREGSEL && reg != IOWIN)
		return;
	pthread_mutex_lock(&io->lock);
	v = reg == IOREGSEL ? io->select : indirect_read(io);
	for (i = 0; i < n; i++) {
		unsigned bit = 8 * (shift + i);

		if (is_write)
			v = (v & ~(0xffu << bit)) | (uint32_t)data[i] << bit;
		else
			data[i] = v >> bit;
	}
	if (is_write && reg == IOREGSEL)
		io->select = v;
	else if (is_write)
		indirect_write(io, v);
	pthread_mutex_unlock(&io->lock);
}
