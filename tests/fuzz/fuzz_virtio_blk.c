/* virtio-blk request handling (virtio/blk.c) on guest RAM and a scratch
 * image that the input's driver fills (fuzz_virtio.h): headers, data and
 * status split anywhere, reads, writes, flushes, discards, write-zeroes
 * and get-id, served by the device's own worker threads. The image is
 * emptied before each input. */
#include "fuzz_virtio.h"

static struct virtio_blk blk;
static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		fuzz_ram_load(NULL, 0);
		fuzz_blk_create(&blk, &fuzz_ram);
		fuzz_virtio_attach(&blk.vdev);
		ready = true;
	}
	fuzz_blk_clear();
	fuzz_virtio_run(&blk.vdev, data, size, NULL);
	return 0;
}
