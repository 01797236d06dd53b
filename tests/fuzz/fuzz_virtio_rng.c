/* virtio-rng (virtio/rng.c): request chains from the input's driver
 * (fuzz_virtio.h), filled from getrandom() within the device's rate. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_virtio.h"
#include "virtio/rng.h"

static struct virtio_rng rng;
static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		fuzz_ram_load(NULL, 0);
		if (virtio_rng_create(&rng, RNG_MAX_BYTES_PER_SEC, &fuzz_ram)) {
			fprintf(stderr, "fuzz_virtio_rng: cannot set up\n");
			abort();
		}
		fuzz_virtio_attach(&rng.vdev);
		ready = true;
	}
	fuzz_virtio_run(&rng.vdev, data, size, NULL);
	return 0;
}
