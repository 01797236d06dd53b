/* A guest's way to end the VM with an exit status: the exit port of
 * QEMU's isa-debug-exit device on x86 (port 0x501), the "thpvm,exit"
 * register on arm64. A write at offset 0, of any width, ends the VM with
 * its low byte as the status; unlike QEMU, which exits with (value << 1)
 * | 1, thpvm exits with the value itself, so a guest that writes 0 makes
 * thpvm exit 0. Reads give all ones, as unclaimed MMIO does. */
#ifndef THPVM_DEBUG_EXIT_H
#define THPVM_DEBUG_EXIT_H

#include <stdbool.h>
#include <stdint.h>

/* An io_bus handler; opaque is the struct vm. */
void debug_exit_access(void *vm, uint64_t offset, uint8_t *data, uint32_t len,
		       bool is_write);

#endif
