/* The exit port of QEMU's isa-debug-exit device (iobase 0x501): a guest
 * ends the VM with an exit status by writing it there. Unlike QEMU, which
 * exits with (value << 1) | 1, thpvm exits with the value itself, so a
 * guest that writes 0 makes thpvm exit 0. */
#ifndef THPVM_X86_DEBUG_EXIT_H
#define THPVM_X86_DEBUG_EXIT_H

#include <stdbool.h>
#include <stdint.h>

#define DEBUG_EXIT_PORT 0x501
#define DEBUG_EXIT_PORTS 4

/* opaque is the struct vm. */
void debug_exit_access(void *vm, uint64_t offset, uint8_t *data, uint32_t len,
		       bool is_write);

#endif
