/* virtio-blk request handling (virtio/blk.c and its engines) on guest
 * RAM and a scratch image that the input's driver fills (fuzz_virtio.h):
 * headers, data and status split anywhere, reads, writes, flushes,
 * discards, write-zeroes and get-id, on a disk's two queues. Each input
 * runs on both engines, io_uring (where the kernel has it) and worker
 * threads, whose request paths differ (a short transfer is resubmitted,
 * a flush drains the io_uring). The images are emptied before each
 * input. */
#include "fuzz_virtio.h"

#include "lib/util.h"

static struct virtio_blk disks[2];
static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum blk_engine engines[] = {
		BLK_ENGINE_AUTO, BLK_ENGINE_THREADS,
	};
	unsigned i;

	if (!ready) {
		fuzz_ram_load(NULL, 0);
		for (i = 0; i < ARRAY_SIZE(disks); i++) {
			fuzz_blk_create(&disks[i], engines[i], &fuzz_ram);
			fuzz_virtio_attach(&disks[i].vdev);
		}
		ready = true;
	}
	for (i = 0; i < ARRAY_SIZE(disks); i++) {
		fuzz_blk_clear(&disks[i]);
		fuzz_virtio_run(&disks[i].vdev, data, size, NULL);
	}
	return 0;
}
