/* The IOAPIC in user space, for KVM's split irqchip (the LAPICs stay in
 * the kernel): an 82093AA as KVM's own models it (version 0x11, 24 pins,
 * no EOI register), its registers behind IOREGSEL/IOWIN, its input
 * lines, and remote IRR for level-triggered pins.
 *
 * It delivers through KVM's MSI routing: each pin's redirection entry
 * becomes the MSI route of the GSI with the pin's number, committed
 * whenever an unmasked entry changes, and a pin fires by raising that
 * GSI. The routes of level-triggered pins carry the trigger bit, which
 * makes KVM exit with KVM_EXIT_IOAPIC_EOI when a LAPIC takes their EOI;
 * ioapic_eoi then clears remote IRR and fires again while the line is
 * still high. */
#ifndef THPVM_X86_IOAPIC_H
#define THPVM_X86_IOAPIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define IOAPIC_PINS 24
#define IOAPIC_MMIO_SIZE 0x1000

/* Redirection entry bits (82093AA), also for its tests. */
#define RE_VECTOR 0xffULL
#define RE_MODE_SHIFT 8
#define RE_MODE (7ULL << RE_MODE_SHIFT)
#define RE_DEST_LOGICAL (1ULL << 11)
#define RE_POLARITY_LOW (1ULL << 13)
#define RE_REMOTE_IRR (1ULL << 14)
#define RE_LEVEL (1ULL << 15)
#define RE_MASKED (1ULL << 16)
#define RE_DEST_SHIFT 56
#define RE_LOW_WRITABLE (RE_VECTOR | RE_MODE | RE_DEST_LOGICAL | \
			 RE_POLARITY_LOW | RE_LEVEL | RE_MASKED)
#define RE_HIGH_WRITABLE 0xff000000u	/* the destination */

/* What the IOAPIC asks of KVM (or of a test). Both return 0 or -errno. */
struct ioapic_ops {
	/* Points pin's GSI at this MSI. */
	int (*route)(void *opaque, unsigned pin, uint64_t addr, uint32_t data);
	/* Sends the pin's MSI once. */
	int (*fire)(void *opaque, unsigned pin);
};

struct ioapic {
	pthread_mutex_t lock;
	uint8_t id;
	uint8_t select;			/* IOREGSEL */
	uint64_t redir[IOAPIC_PINS];	/* redirection table */
	uint32_t lines_high;		/* pins whose input is asserted */
	/* The MSI each pin's GSI routes to in KVM, where routed. */
	struct ioapic_route {
		bool set;
		uint64_t addr;
		uint32_t data;
	} routes[IOAPIC_PINS];
	const struct ioapic_ops *ops;
	void *opaque;
};

/* Every pin masked, as at reset; id is the one the MP table and MADT
 * give it. */
void ioapic_init(struct ioapic *io, uint8_t id, const struct ioapic_ops *ops,
		 void *opaque);
void ioapic_destroy(struct ioapic *io);

/* The guest's accesses to the register window (an io_bus handler). */
void ioapic_mmio(void *ioapic, uint64_t offset, uint8_t *data, uint32_t len,
		 bool is_write);

/* A device drives pin's input line (the irq_lines driver). */
int ioapic_set_line(void *ioapic, unsigned pin, bool level);

/* A LAPIC took the EOI of vector (KVM_EXIT_IOAPIC_EOI). */
void ioapic_eoi(struct ioapic *io, uint8_t vector);

#endif
