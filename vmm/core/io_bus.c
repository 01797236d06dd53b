/* Port-I/O and MMIO range registry with binary-search dispatch. */
#include "core/io_bus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int io_bus_register(struct io_bus *bus, uint64_t base, uint64_t len,
		    io_handler_fn handler, void *opaque)
{
	unsigned i;

	if (!len || base + len - 1 < base)
		return -EINVAL;
	for (i = 0; i < bus->nr; i++) {
		const struct io_range *r = &bus->ranges[i];

		if (base <= r->base + r->len - 1 && r->base <= base + len - 1)
			return -EEXIST;
		if (r->base > base)
			break;
	}
	if (bus->nr == bus->cap) {
		unsigned cap = bus->cap ? bus->cap * 2 : 16;
		struct io_range *n = realloc(bus->ranges, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		bus->ranges = n;
		bus->cap = cap;
	}
	memmove(&bus->ranges[i + 1], &bus->ranges[i],
		(bus->nr - i) * sizeof(bus->ranges[0]));
	bus->ranges[i] = (struct io_range){ base, len, handler, opaque };
	bus->nr++;
	return 0;
}

bool io_bus_dispatch(const struct io_bus *bus, uint64_t addr, uint8_t *data,
		     uint32_t len, bool is_write)
{
	unsigned lo = 0, hi = bus->nr;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const struct io_range *r = &bus->ranges[mid];

		if (addr < r->base) {
			hi = mid;
		} else if (addr - r->base >= r->len) {
			lo = mid + 1;
		} else if (addr - r->base + len > r->len) {
			/* Straddles the end of the device: devices only ever
			 * see accesses that lie wholly inside their range. */
			if (!is_write)
				memset(data, 0xff, len);
			return true;
		} else {
			r->handler(r->opaque, addr - r->base, data, len,
				   is_write);
			return true;
		}
	}
	return false;
}

void io_bus_free(struct io_bus *bus)
{
	free(bus->ranges);
	*bus = (struct io_bus){ 0 };
}
