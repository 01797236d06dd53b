/* virtio-console (virtio/console.c): transmit chains from the input's
 * driver (fuzz_virtio.h), output discarded, and before notifications of
 * the receive queue, host input of the input's bytes for the guest. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_virtio.h"
#include "virtio/console.h"

static struct virtio_console con;
static bool ready;

static void console_host(struct virtio_device *vdev, unsigned q,
			 uint8_t kick, struct fuzz_input *in)
{
	uint8_t buf[256];
	size_t len = kick, i;

	if (q)
		return;
	for (i = 0; i < len; i++)
		buf[i] = fuzz_u8(in);
	virtio_console_ops.rx_room(&con);
	virtio_console_ops.receive(&con, buf, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		fuzz_ram_load(NULL, 0);
		if (virtio_console_create(&con, NULL, &fuzz_ram)) {
			fprintf(stderr, "fuzz_virtio_console: cannot set up\n");
			abort();
		}
		fuzz_virtio_attach(&con.vdev);
		ready = true;
	}
	/* Typed input outlives a device reset, as a UART's would: drop
	 * what the last input left. */
	byte_ring_clear(&con.in);
	fuzz_virtio_run(&con.vdev, data, size, console_host);
	return 0;
}
