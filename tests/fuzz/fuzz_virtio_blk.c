/* virtio-blk request handling (virtio/blk.c) on guest RAM and a scratch
 * image that the input's driver fills (fuzz_virtio.h): headers, data and
 * status split anywhere, reads, writes, flushes, discards, write-zeroes
 * and get-id, served by the device's own worker threads. The image is
 * emptied before each input, and has no name once the device has it. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_virtio.h"
#include "virtio/blk.h"

#define DISK_SIZE (64 * 1024)

static struct virtio_blk blk;
static int image_fd = -1;

static void blk_setup(void)
{
	char path[] = "/tmp/thpvm-fuzz-blk-XXXXXX";

	fuzz_ram_load(NULL, 0);
	image_fd = mkstemp(path);
	if (image_fd < 0 || ftruncate(image_fd, DISK_SIZE) ||
	    virtio_blk_create(&blk, 0, path, false, false, &fuzz_ram)) {
		fprintf(stderr, "fuzz_virtio_blk: cannot set up %s\n", path);
		abort();
	}
	unlink(path);
	fuzz_virtio_attach(&blk.vdev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (image_fd < 0)
		blk_setup();
	if (ftruncate(image_fd, 0) || ftruncate(image_fd, DISK_SIZE))
		abort();
	fuzz_virtio_run(&blk.vdev, data, size, NULL);
	return 0;
}
