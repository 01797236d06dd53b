/* Wired interrupt lines (x86: IOAPIC pins; arm64: SPIs; powerpc: XICS
 * sources), level-triggered and shareable: a line is high while any
 * device that holds it asserts it, as PCI INTx lines are wired-OR. The
 * arch says how many lines there are, which of them devices may be
 * given, and how a line is written in KVM_IRQ_LINE (arch_irq_line_kvm). */
#ifndef THPVM_CORE_IRQ_LINES_H
#define THPVM_CORE_IRQ_LINES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Drives a line's level (the VM's: KVM_IRQ_LINE, or x86's user-space
 * IOAPIC). */
typedef int (*irq_line_set_fn)(void *opaque, unsigned line, bool level);

struct irq_lines {
	pthread_mutex_t lock;
	unsigned nr;			/* lines 0 .. nr-1 exist */
	unsigned first, count;		/* the ones devices are given */
	unsigned handed_out;
	uint16_t *holders_high;		/* per line: devices asserting it */
	irq_line_set_fn set;
	void *opaque;
};

/* One device's hold on a line, and the level it asserts there. */
struct irq_source {
	unsigned line;
	bool level;
};

/* nr lines, of which [first, first + count) go to devices, round robin
 * (so lines are shared once there are more devices than lines). */
int irq_lines_init(struct irq_lines *l, unsigned nr, unsigned first,
		   unsigned count, irq_line_set_fn set, void *opaque);
void irq_lines_free(struct irq_lines *l);
/* Lines go to set instead (an interrupt controller in user space), from
 * now on: before any device raises one. */
void irq_lines_set_driver(struct irq_lines *l, irq_line_set_fn set,
			  void *opaque);

/* A line for a new device; -ENOSPC if the arch gave devices none. */
int irq_lines_alloc(struct irq_lines *l, struct irq_source *src);
/* A source on a fixed line (a legacy device's ISA IRQ); -EINVAL when the
 * line does not exist. */
int irq_lines_claim(struct irq_lines *l, struct irq_source *src,
		    unsigned line);
/* The device asserts (true) or releases its line; the line changes only
 * when the first holder raises it or the last one lowers it. Errors are
 * warned about (rate limited): an interrupt that cannot be delivered is
 * not the device's to handle. */
void irq_source_set(struct irq_lines *l, struct irq_source *src, bool level);

#endif
