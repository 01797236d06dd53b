/* The user-space IOAPIC (arch/x86/ioapic.c) as a guest and its devices
 * drive it: register accesses of any offset and width in its page, line
 * changes on any pin number, EOIs of any vector, and a KVM that refuses
 * routes or messages when the input says. Each input is a list of
 * operations, one byte of kind then its arguments. What must hold: the
 * ops only ever see a real pin, and a pin fires only unmasked, through a
 * route KVM took for its entry as it is, and (level) with remote IRR
 * set. That is safety only: nothing checks that a raised line is
 * delivered in the end (the unit tests do, case by case). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/ioapic.h"
#include "fuzz.h"

#define OP_WRITE 0
#define OP_READ 1
#define OP_LINE 2
#define OP_EOI 3
#define OP_KVM 4	/* whether route and fire fail from now on */
#define NR_OPS 5

#define MSI_DATA_LEVEL (1u << 15)

static struct ioapic io;
static bool route_fails, fire_fails;
/* The route KVM has for each pin: a route it refuses leaves the one
 * before, as KVM_SET_GSI_ROUTING does. */
static struct { bool set; uint32_t data; } routed[IOAPIC_PINS];

static int route(void *opaque, unsigned pin, uint64_t addr, uint32_t data)
{
	if (pin >= IOAPIC_PINS)
		abort();
	if (route_fails)
		return -ENOMEM;
	routed[pin].set = true;
	routed[pin].data = data;
	return 0;
}

static int fire(void *opaque, unsigned pin)
{
	uint64_t e;

	if (pin >= IOAPIC_PINS)
		abort();
	e = io.redir[pin];
	if ((e & RE_MASKED) || ((e & RE_LEVEL) && !(e & RE_REMOTE_IRR)))
		abort();
	/* KVM's route is the entry's: its vector and trigger mode. */
	if (!routed[pin].set ||
	    (routed[pin].data & 0xff) != (e & 0xff) ||
	    !(routed[pin].data & MSI_DATA_LEVEL) != !(e & RE_LEVEL))
		abort();
	return fire_fails ? -EINVAL : 0;
}

static const struct ioapic_ops ops = { route, fire };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	uint8_t buf[8];

	ioapic_init(&io, 1, &ops, NULL);
	memset(routed, 0, sizeof(routed));
	route_fails = fire_fails = false;
	while (in.len) {
		uint8_t op = fuzz_u8(&in) % NR_OPS, arg = fuzz_u8(&in);
		uint64_t offset;
		uint32_t len;

		switch (op) {
		case OP_WRITE:
		case OP_READ:
			offset = fuzz_u16(&in) % IOAPIC_MMIO_SIZE;
			len = 1 + arg % sizeof(buf);
			if (offset + len > IOAPIC_MMIO_SIZE)
				len = IOAPIC_MMIO_SIZE - offset;
			memset(buf, 0, sizeof(buf));
			if (op == OP_WRITE) {
				uint64_t v = fuzz_u64(&in);

				memcpy(buf, &v, sizeof(v));
			}
			ioapic_mmio(&io, offset, buf, len, op == OP_WRITE);
			break;
		case OP_LINE:
			/* Pin numbers past the last are refused. */
			if (ioapic_set_line(&io, arg >> 1, arg & 1) !=
			    ((arg >> 1) < IOAPIC_PINS ? 0 : -EINVAL))
				abort();
			break;
		case OP_EOI:
			ioapic_eoi(&io, arg);
			break;
		case OP_KVM:
			route_fails = arg & 1;
			fire_fails = arg & 2;
			break;
		}
	}
	ioapic_destroy(&io);
	return 0;
}
