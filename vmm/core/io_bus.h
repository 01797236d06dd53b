/* Dispatch of guest port I/O and MMIO exits to emulated devices. A bus is
 * a sorted array of non-overlapping ranges; devices register before the
 * vCPUs start, so lookups need no lock. */
#ifndef THPVM_IO_BUS_H
#define THPVM_IO_BUS_H

#include <stdbool.h>
#include <stdint.h>

/* offset is relative to the range's base; data holds len bytes (1, 2, 4 or
 * 8), little-endian; for reads the handler fills it. */
typedef void (*io_handler_fn)(void *opaque, uint64_t offset, uint8_t *data,
			      uint32_t len, bool is_write);

struct io_range {
	uint64_t base;
	uint64_t len;
	io_handler_fn handler;
	void *opaque;
};

struct io_bus {
	struct io_range *ranges;
	unsigned nr;
	unsigned cap;
};

/* -EEXIST if the range overlaps a registered one, -EINVAL if empty or
 * wrapping, -ENOMEM. */
int io_bus_register(struct io_bus *bus, uint64_t base, uint64_t len,
		    io_handler_fn handler, void *opaque);
/* Returns false when no device claims addr (the caller decides what an
 * unclaimed access does). An access that runs past the end of a device's
 * range reads as all ones and is not passed to the device. */
bool io_bus_dispatch(const struct io_bus *bus, uint64_t addr, uint8_t *data,
		     uint32_t len, bool is_write);
void io_bus_free(struct io_bus *bus);

#endif
