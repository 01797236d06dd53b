/* virtio-console (virtio 1.x, 5.3) with one port and no multiport: the
 * guest's console (Linux: hvc0) when thpvm runs with --console virtio.
 * What the guest sends on the transmit queue goes to the VM's console
 * output buffer (core/console_out.h), which never waits for stdout; what
 * is typed for the guest waits in a bounded buffer of the device's own
 * until the guest gives receive buffers. */
#ifndef THPVM_VIRTIO_CONSOLE_H
#define THPVM_VIRTIO_CONSOLE_H

#include <linux/virtio_console.h>
#include <stdint.h>

#include "core/console.h"
#include "core/console_out.h"
#include "lib/byte_ring.h"
#include "virtio/virtio.h"

#define VCONS_QUEUE_SIZE 64
/* Typed input not yet in a receive buffer; the input loop reads no
 * more while it is full (vm_console_ops.rx_room). */
#define VCONS_IN_SIZE 4096

struct virtio_console {
	struct virtio_device vdev;
	struct console_out *out;	/* NULL: output is discarded */
	struct virtio_console_config config;

	/* Under vdev.lock. */
	struct byte_ring in;
	uint8_t in_buf[VCONS_IN_SIZE];
	uint64_t tx_bytes, rx_bytes;	/* to the host, to the guest */
};

int virtio_console_create(struct virtio_console *c, struct console_out *out,
			  const struct guest_ram *ram);
void virtio_console_destroy(struct virtio_console *c);

/* The device as the VM's console (dev: the struct virtio_console). */
extern const struct vm_console_ops virtio_console_ops;

#endif
