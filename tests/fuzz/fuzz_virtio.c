/* The device fuzz targets' driver sessions (see fuzz_virtio.h), on the
 * unit tests' hand-made driver (tests/unit/fake_virtio.h). */
#include "fuzz_virtio.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_virtio.h"
#include "lib/util.h"

static void ignore_irq(void *transport, uint16_t vector)
{
}

static void ignore_isr_cleared(void *transport)
{
}

void fuzz_virtio_attach(struct virtio_device *vdev)
{
	vdev->notify = ignore_irq;
	vdev->isr_cleared = ignore_isr_cleared;
}

void fuzz_virtio_kick(struct virtio_device *vdev, unsigned q)
{
	vdev->ops->queue_notify(vdev, q);
	if (vdev->ops->quiesce) {
		pthread_mutex_lock(&vdev->lock);
		vdev->ops->quiesce(vdev);
		pthread_mutex_unlock(&vdev->lock);
	}
}

/* Configuration writes: a count, then an offset, a size selector and a
 * value for each. */
static void config_writes(struct virtio_device *vdev, struct fuzz_input *in)
{
	unsigned n = fuzz_u8(in) % 8;

	while (n--) {
		uint8_t off = fuzz_u8(in), len = 1u << (fuzz_u8(in) % 3);
		uint8_t value[4];

		put_le32(value, fuzz_u32(in));
		virtio_config_access(vdev, off, value, len, true);
	}
}

void fuzz_virtio_run(struct virtio_device *vdev, const uint8_t *data,
		     size_t size, fuzz_host_fn host)
{
	struct fuzz_input in = { data, size };
	uint64_t features = vdev->host_features & fuzz_u64(&in);
	uint16_t qsize = 1u << (fuzz_u8(&in) % 7);
	unsigned nr_kicks = fuzz_u8(&in), q;
	struct fuzz_input kicks = { in.data, MIN(in.len, nr_kicks) };
	struct fuzz_input host_in;
	size_t host_len;

	in.data += kicks.len;
	in.len -= kicks.len;
	/* The host side's bytes (and the configuration writes) come from
	 * the end, 16 for each of a count; guest RAM is what lies between. */
	host_len = fuzz_u8(&in) * 16u;
	host_len = MIN(in.len, host_len);
	host_in = (struct fuzz_input){ in.data + in.len - host_len, host_len };
	fuzz_ram_load(in.data, in.len - host_len);

	if (!fake_virtio_negotiate(vdev, features))
		goto reset;
	config_writes(vdev, &host_in);
	for (q = 0; q < vdev->nr_queues; q++)
		fake_virtio_queue(vdev, q, MIN(qsize, vdev->queues[q].max_size),
				  FUZZ_DESC_GPA(q), FUZZ_AVAIL_GPA(q),
				  FUZZ_USED_GPA(q));
	fake_virtio_driver_ok(vdev);
	while (kicks.len) {
		uint8_t kick = fuzz_u8(&kicks);

		q = kick % vdev->nr_queues;
		if (host)
			host(vdev, q, kick, &host_in);
		fuzz_virtio_kick(vdev, q);
	}
reset:
	virtio_set_status(vdev, 0);
}

void fuzz_blk_create(struct virtio_blk *blk, enum blk_engine engine,
		     const struct guest_ram *ram)
{
	/* Two queues: the input's kicks pick one, so that requests on
	 * both share the device's spares and its rings' ordering. */
	struct blk_options opts = { .engine = engine, .queues = 2 };
	char path[] = "/tmp/thpvm-fuzz-blk-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, FUZZ_DISK_SIZE) ||
	    virtio_blk_create(blk, 0, path, &opts, ram)) {
		fprintf(stderr, "fuzz: cannot set up a disk at %s\n", path);
		abort();
	}
	close(fd);
	unlink(path);
}

void fuzz_blk_clear(const struct virtio_blk *blk)
{
	if (ftruncate(blk->disk.file.fd, 0) ||
	    ftruncate(blk->disk.file.fd, FUZZ_DISK_SIZE))
		abort();
}
