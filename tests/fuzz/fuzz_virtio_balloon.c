/* virtio-balloon (virtio/balloon.c) with every feature offered: inflate
 * and deflate page lists, continuous-page runs, free page reports and
 * statistics from the input's driver (fuzz_virtio.h), under either
 * release policy (the first byte), pages given back from guest RAM for
 * real; and, before notifications whose kick byte has its top bit set, a
 * new target from the host. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_virtio.h"
#include "virtio/balloon.h"

static struct virtio_balloon balloons[2];	/* by policy */
static bool ready;

static void balloon_setup(void)
{
	struct balloon_config opts = {
		/* Long enough that no statistics request comes by timer. */
		.stats_interval = BALLOON_MAX_STATS_INTERVAL,
		.deflate_on_oom = true,
		.reporting = true,
		.cont_pages = true,
	};
	unsigned i;

	fuzz_ram_load(NULL, 0);
	for (i = 0; i < 2; i++) {
		opts.policy = i ? BALLOON_PRESERVE : BALLOON_EAGER;
		if (virtio_balloon_create(&balloons[i], &opts, &fuzz_ram, NULL,
					  NULL)) {
			fprintf(stderr, "fuzz_virtio_balloon: cannot set up\n");
			abort();
		}
		fuzz_virtio_attach(&balloons[i].vdev);
	}
	ready = true;
}

static void balloon_host(struct virtio_device *vdev, unsigned q,
			 uint8_t kick, struct fuzz_input *in)
{
	struct virtio_balloon *b = vdev->opaque;
	struct virtio_balloon_info info;

	if (!(kick & 0x80))
		return;
	virtio_balloon_set_target(b, fuzz_u32(in) % (FUZZ_RAM_SIZE + 1));
	virtio_balloon_info(b, &info);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct virtio_balloon *b;

	if (!ready)
		balloon_setup();
	b = &balloons[fuzz_u8(&in) & 1];
	virtio_balloon_set_target(b, 0);
	fuzz_virtio_run(&b->vdev, in.data, in.len, balloon_host);
	return 0;
}
