/* Port/MMIO dispatch. */
#include <errno.h>

#include "core/io_bus.h"
#include "unit.h"

struct probe {
	uint64_t offset;
	uint32_t len;
	bool is_write;
	unsigned calls;
};

static void probe_handler(void *opaque, uint64_t offset, uint8_t *data,
			  uint32_t len, bool is_write)
{
	struct probe *p = opaque;

	p->offset = offset;
	p->len = len;
	p->is_write = is_write;
	p->calls++;
	if (!is_write)
		data[0] = 0x5a;
}

static void test_dispatch(void)
{
	struct io_bus bus = { 0 };
	struct probe a = { 0 }, b = { 0 };
	uint8_t data[8] = { 0 };

	CHECK_EQ(io_bus_register(&bus, 0x3f8, 8, probe_handler, &a), 0);
	CHECK_EQ(io_bus_register(&bus, 0x70, 2, probe_handler, &b), 0);
	CHECK(io_bus_dispatch(&bus, 0x3fd, data, 1, false));
	CHECK_EQ(a.offset, 5);
	CHECK_EQ(data[0], 0x5a);
	CHECK(io_bus_dispatch(&bus, 0x71, data, 1, true));
	CHECK_EQ(b.offset, 1);
	CHECK(b.is_write);
	CHECK(!io_bus_dispatch(&bus, 0x400, data, 1, false));
	CHECK(!io_bus_dispatch(&bus, 0x3f7, data, 1, false));
	io_bus_free(&bus);
}

static void test_straddling_access_stays_out(void)
{
	struct io_bus bus = { 0 };
	struct probe a = { 0 };
	uint8_t data[4] = { 0 };

	CHECK_EQ(io_bus_register(&bus, 0x500, 2, probe_handler, &a), 0);
	CHECK(io_bus_dispatch(&bus, 0x501, data, 4, false));
	CHECK_EQ(a.calls, 0);
	CHECK_EQ(data[0], 0xff);
	CHECK_EQ(data[3], 0xff);
	io_bus_free(&bus);
}

static void test_register_rejects_overlap(void)
{
	struct io_bus bus = { 0 };
	struct probe a = { 0 };
	unsigned i;

	CHECK_EQ(io_bus_register(&bus, 0x100, 0x10, probe_handler, &a), 0);
	CHECK_EQ(io_bus_register(&bus, 0x10f, 1, probe_handler, &a), -EEXIST);
	CHECK_EQ(io_bus_register(&bus, 0xf0, 0x11, probe_handler, &a), -EEXIST);
	CHECK_EQ(io_bus_register(&bus, 0x0, 0, probe_handler, &a), -EINVAL);
	CHECK_EQ(io_bus_register(&bus, UINT64_MAX, 2, probe_handler, &a),
		 -EINVAL);
	/* Many ranges in any order stay sorted and reachable. */
	for (i = 0; i < 40; i++)
		CHECK_EQ(io_bus_register(&bus, 0x1000 + ((i * 7) % 40) * 0x10,
					 0x10, probe_handler, &a), 0);
	for (i = 0; i + 1 < bus.nr; i++)
		CHECK(bus.ranges[i].base < bus.ranges[i + 1].base);
	CHECK(io_bus_dispatch(&bus, 0x1000 + 39 * 0x10 + 3, (uint8_t[1]){ 0 },
			      1, false));
	CHECK_EQ(a.offset, 3);
	io_bus_free(&bus);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_dispatch),
		UNIT_TEST(test_straddling_access_stays_out),
		UNIT_TEST(test_register_rejects_overlap),
	};

	return UNIT_RUN(tests);
}
