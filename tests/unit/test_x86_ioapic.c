/* The user-space IOAPIC (arch/x86/ioapic.c): its register file, edge and
 * level pins with remote IRR and EOI, masking, the routes it gives KVM,
 * and what a guest's odd accesses get. */
#include <errno.h>

#include "arch/x86/ioapic.h"
#include "unit.h"

#define VEC 0x31
#define LEVEL (1u << 15)
#define MASKED (1u << 16)
#define REMOTE_IRR (1u << 14)
#define POLARITY_LOW (1u << 13)
#define LOGICAL (1u << 11)

static unsigned fires[IOAPIC_PINS];
static unsigned routes;
static uint64_t route_addr[IOAPIC_PINS];
static uint32_t route_data[IOAPIC_PINS];
static int route_fails, fire_fails;	/* errnos the ops return, or 0 */

static int route(void *opaque, unsigned pin, uint64_t addr, uint32_t data)
{
	CHECK(pin < IOAPIC_PINS);
	if (route_fails)
		return -route_fails;
	route_addr[pin] = addr;
	route_data[pin] = data;
	routes++;
	return 0;
}

static int fire(void *opaque, unsigned pin)
{
	CHECK(pin < IOAPIC_PINS);
	if (fire_fails)
		return -fire_fails;
	fires[pin]++;
	return 0;
}

static const struct ioapic_ops ops = { route, fire };

static void setup(struct ioapic *io)
{
	memset(fires, 0, sizeof(fires));
	routes = 0;
	route_fails = fire_fails = 0;
	ioapic_init(io, 3, &ops, NULL);
}

static void put32(struct ioapic *io, uint64_t off, uint32_t v)
{
	uint8_t b[4] = { v, v >> 8, v >> 16, v >> 24 };

	ioapic_mmio(io, off, b, 4, true);
}

static uint32_t get32(struct ioapic *io, uint64_t off)
{
	uint8_t b[4];

	ioapic_mmio(io, off, b, 4, false);
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

static void reg_write(struct ioapic *io, uint8_t reg, uint32_t v)
{
	put32(io, 0x00, reg);
	put32(io, 0x10, v);
}

static uint32_t reg_read(struct ioapic *io, uint8_t reg)
{
	put32(io, 0x00, reg);
	return get32(io, 0x10);
}

static void entry(struct ioapic *io, unsigned pin, uint32_t low, uint8_t dest)
{
	reg_write(io, 0x11 + 2 * pin, (uint32_t)dest << 24);
	reg_write(io, 0x10 + 2 * pin, low);
}

/* ID, version and arbitration; every pin masked at reset; what is
 * read-only stays so. */
static void test_registers(void)
{
	struct ioapic io;

	setup(&io);
	CHECK_EQ(reg_read(&io, 0x01), 0x00170011);
	CHECK_EQ(reg_read(&io, 0x00), 3u << 24);
	reg_write(&io, 0x00, 0x0f000000);
	CHECK_EQ(reg_read(&io, 0x00), 0x0f000000);
	CHECK_EQ(reg_read(&io, 0x02), 0x0f000000);
	reg_write(&io, 0x01, 0);
	CHECK_EQ(reg_read(&io, 0x01), 0x00170011);
	for (unsigned pin = 0; pin < IOAPIC_PINS; pin++) {
		CHECK_EQ(reg_read(&io, 0x10 + 2 * pin), MASKED);
		CHECK_EQ(reg_read(&io, 0x11 + 2 * pin), 0);
	}
	/* Delivery status (12) and remote IRR (14) take no writes; of the
	 * high dword only the destination. */
	reg_write(&io, 0x10, 0xffffffff);
	CHECK_EQ(reg_read(&io, 0x10), 0x1afff);
	reg_write(&io, 0x11, 0xffffffff);
	CHECK_EQ(reg_read(&io, 0x11), 0xff000000);
	/* Past the last pin, and unused registers: 0, no writes. */
	reg_write(&io, 0x10 + 2 * IOAPIC_PINS, 0x1234);
	CHECK_EQ(reg_read(&io, 0x10 + 2 * IOAPIC_PINS), 0);
	CHECK_EQ(reg_read(&io, 0x03), 0);
	CHECK_EQ(reg_read(&io, 0xff), 0);
	ioapic_destroy(&io);
}

/* Accesses of other widths and places: bytes merge into the register,
 * the rest of the page reads 0. */
static void test_odd_accesses(void)
{
	struct ioapic io;
	uint8_t b[8];

	setup(&io);
	b[0] = 0x01;
	ioapic_mmio(&io, 0x00, b, 1, true);
	ioapic_mmio(&io, 0x12, b, 2, false);
	CHECK_EQ(b[0], 0x17);
	CHECK_EQ(b[1], 0x00);
	memset(b, 0xaa, sizeof(b));
	ioapic_mmio(&io, 0x10, b, 8, false);	/* 4 bytes, then nothing */
	CHECK_EQ(b[0], 0x11);
	CHECK_EQ(b[4], 0);
	CHECK_EQ(b[7], 0);
	ioapic_mmio(&io, 0x20, b, 4, false);
	CHECK_EQ(b[0] | b[1] | b[2] | b[3], 0);
	/* Writes outside both registers change neither. */
	memset(b, 0x5a, sizeof(b));
	ioapic_mmio(&io, 0xff8, b, 8, true);
	ioapic_mmio(&io, 0x04, b, 4, true);
	CHECK_EQ(get32(&io, 0x00), 0x01);
	CHECK_EQ(get32(&io, 0x10), 0x00170011);
	/* Writing the vector byte alone leaves the rest of the entry. */
	entry(&io, 5, MASKED | LEVEL | 0x40, 1);
	put32(&io, 0x00, 0x10 + 2 * 5);
	b[0] = VEC;
	ioapic_mmio(&io, 0x10, b, 1, true);
	CHECK_EQ(reg_read(&io, 0x10 + 2 * 5), MASKED | LEVEL | VEC);
	CHECK_EQ(ioapic_set_line(&io, IOAPIC_PINS, true), -EINVAL);
	ioapic_destroy(&io);
}

/* An unmasked entry's MSI route: destination, mode and vector, the
 * level bit for level pins; a change of the mask alone routes nothing
 * anew, a masked entry is not routed. */
static void test_routes(void)
{
	struct ioapic io;

	setup(&io);
	entry(&io, 4, MASKED | VEC, 2);
	CHECK_EQ(routes, 0);
	entry(&io, 4, VEC, 2);
	CHECK_EQ(routes, 1);
	CHECK_EQ(route_addr[4], 0xfee02000);
	CHECK_EQ(route_data[4], 1u << 14 | VEC);
	entry(&io, 4, MASKED | VEC, 2);
	entry(&io, 4, VEC, 2);
	CHECK_EQ(routes, 1);
	/* Level, logical destination, lowest priority (redirection hint). */
	entry(&io, 9, LEVEL | LOGICAL | 1u << 8 | 0x52, 0x0f);
	CHECK_EQ(routes, 2);
	CHECK_EQ(route_addr[9], 0xfee0f000 | 1u << 3 | 1u << 2);
	CHECK_EQ(route_data[9], 1u << 15 | 1u << 14 | 1u << 8 | 0x52);
	/* A route KVM refused is tried again at the next write. */
	route_fails = ENOMEM;
	entry(&io, 4, VEC + 1, 2);
	route_fails = 0;
	CHECK_EQ(routes, 2);
	entry(&io, 4, VEC + 1, 2);
	CHECK_EQ(routes, 3);
	CHECK_EQ(route_data[4] & 0xff, VEC + 1);
	ioapic_destroy(&io);
}

/* A pin whose route KVM refused does not fire through a stale one (or
 * none): it routes again first, and fires only once that is taken; a
 * level pin is not left waiting for an EOI that cannot come. */
static void test_refused_route(void)
{
	struct ioapic io;

	setup(&io);
	route_fails = ENOMEM;
	entry(&io, 6, VEC, 0);
	ioapic_set_line(&io, 6, true);
	CHECK_EQ(fires[6], 0);
	route_fails = 0;
	ioapic_set_line(&io, 6, false);
	ioapic_set_line(&io, 6, true);
	CHECK_EQ(fires[6], 1);
	CHECK_EQ(route_data[6] & 0xff, VEC);
	route_fails = ENOMEM;
	entry(&io, 16, LEVEL | VEC, 0);
	ioapic_set_line(&io, 16, true);
	CHECK_EQ(fires[16], 0);
	CHECK_EQ(reg_read(&io, 0x10 + 2 * 16) & REMOTE_IRR, 0);
	route_fails = 0;
	entry(&io, 16, LEVEL | VEC, 0);
	CHECK_EQ(fires[16], 1);
	CHECK_EQ(route_data[16], 1u << 15 | 1u << 14 | VEC);
	ioapic_destroy(&io);
}

/* Edge: one message per rising edge, none while masked (an edge that
 * comes while masked is gone, as on the chip). */
static void test_edge(void)
{
	struct ioapic io;

	setup(&io);
	entry(&io, 4, VEC, 0);
	CHECK_EQ(ioapic_set_line(&io, 4, true), 0);
	CHECK_EQ(fires[4], 1);
	ioapic_set_line(&io, 4, true);
	CHECK_EQ(fires[4], 1);
	ioapic_set_line(&io, 4, false);
	ioapic_set_line(&io, 4, true);
	CHECK_EQ(fires[4], 2);
	ioapic_set_line(&io, 4, false);
	entry(&io, 4, MASKED | VEC, 0);
	ioapic_set_line(&io, 4, true);
	entry(&io, 4, VEC, 0);
	CHECK_EQ(fires[4], 2);
	/* No remote IRR for edge pins, and EOIs change nothing. */
	CHECK_EQ(reg_read(&io, 0x10 + 2 * 4) & REMOTE_IRR, 0);
	ioapic_eoi(&io, VEC);
	CHECK_EQ(fires[4], 2);
	ioapic_destroy(&io);
}

/* Level: one message, then remote IRR until the EOI of its vector; an
 * EOI while the line is still up sends the next one. */
static void test_level(void)
{
	struct ioapic io;

	setup(&io);
	entry(&io, 16, LEVEL | VEC, 0);
	ioapic_set_line(&io, 16, true);
	CHECK_EQ(fires[16], 1);
	CHECK(reg_read(&io, 0x10 + 2 * 16) & REMOTE_IRR);
	ioapic_set_line(&io, 16, false);
	ioapic_set_line(&io, 16, true);
	CHECK_EQ(fires[16], 1);
	ioapic_eoi(&io, VEC + 1);		/* another vector's */
	CHECK_EQ(fires[16], 1);
	ioapic_eoi(&io, VEC);
	CHECK_EQ(fires[16], 2);
	ioapic_set_line(&io, 16, false);
	ioapic_eoi(&io, VEC);
	CHECK_EQ(fires[16], 2);
	CHECK_EQ(reg_read(&io, 0x10 + 2 * 16) & REMOTE_IRR, 0);
	/* Masked and unmasked while in service (what Linux writes): remote
	 * IRR stays, so nothing more before the EOI. */
	ioapic_set_line(&io, 16, true);
	CHECK_EQ(fires[16], 3);
	entry(&io, 16, MASKED | LEVEL | VEC, 0);
	entry(&io, 16, LEVEL | VEC, 0);
	CHECK_EQ(fires[16], 3);
	CHECK(reg_read(&io, 0x10 + 2 * 16) & REMOTE_IRR);
	ioapic_set_line(&io, 16, false);
	ioapic_eoi(&io, VEC);
	CHECK_EQ(fires[16], 3);
	/* Raised while masked: sent at the unmask. */
	entry(&io, 16, MASKED | LEVEL | VEC, 0);
	ioapic_set_line(&io, 16, true);
	CHECK_EQ(fires[16], 3);
	entry(&io, 16, LEVEL | VEC, 0);
	CHECK_EQ(fires[16], 4);
	/* Two pins on one vector: each EOI serves both. */
	entry(&io, 17, LEVEL | VEC, 0);
	ioapic_set_line(&io, 17, true);
	CHECK_EQ(fires[17], 1);
	ioapic_eoi(&io, VEC);
	CHECK_EQ(fires[16], 5);
	CHECK_EQ(fires[17], 2);
	ioapic_destroy(&io);
}

/* A switch to edge clears a stuck remote IRR (how Linux clears one);
 * a message KVM_IRQ_LINE failed to send leaves none behind. */
static void test_remote_irr_cleared(void)
{
	struct ioapic io;

	setup(&io);
	entry(&io, 18, LEVEL | VEC, 0);
	ioapic_set_line(&io, 18, true);
	CHECK(reg_read(&io, 0x10 + 2 * 18) & REMOTE_IRR);
	entry(&io, 18, MASKED | VEC, 0);
	CHECK_EQ(reg_read(&io, 0x10 + 2 * 18) & REMOTE_IRR, 0);
	fire_fails = EINVAL;
	entry(&io, 18, LEVEL | VEC, 0);
	CHECK_EQ(reg_read(&io, 0x10 + 2 * 18) & REMOTE_IRR, 0);
	fire_fails = 0;
	ioapic_eoi(&io, VEC);
	CHECK_EQ(fires[18], 1);
	entry(&io, 18, LEVEL | VEC, 0);
	CHECK_EQ(fires[18], 2);
	ioapic_destroy(&io);
}

/* An active-low pin (Linux's PCI INTx) fires on its line's logical
 * level, as in KVM's IOAPIC: an idle line is quiet; modes no LAPIC takes
 * from a message (ExtINT, reserved) are dropped. */
static void test_polarity_and_modes(void)
{
	struct ioapic io;

	setup(&io);
	entry(&io, 20, LEVEL | POLARITY_LOW | VEC, 0);
	CHECK_EQ(fires[20], 0);
	ioapic_set_line(&io, 20, true);
	CHECK_EQ(fires[20], 1);
	CHECK_EQ(reg_read(&io, 0x10 + 2 * 20) & POLARITY_LOW, POLARITY_LOW);
	ioapic_set_line(&io, 20, false);
	ioapic_eoi(&io, VEC);
	CHECK_EQ(fires[20], 1);
	entry(&io, 21, 7u << 8 | VEC, 0);	/* ExtINT */
	entry(&io, 22, 3u << 8 | VEC, 0);	/* reserved */
	ioapic_set_line(&io, 21, true);
	ioapic_set_line(&io, 22, true);
	CHECK_EQ(fires[21] + fires[22], 0);
	entry(&io, 23, 4u << 8 | VEC, 0);	/* NMI */
	ioapic_set_line(&io, 23, true);
	CHECK_EQ(fires[23], 1);
	ioapic_destroy(&io);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_registers),
		UNIT_TEST(test_odd_accesses),
		UNIT_TEST(test_routes),
		UNIT_TEST(test_refused_route),
		UNIT_TEST(test_edge),
		UNIT_TEST(test_level),
		UNIT_TEST(test_remote_irr_cleared),
		UNIT_TEST(test_polarity_and_modes),
	};

	return UNIT_RUN(tests);
}
