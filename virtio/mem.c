/* virtio-mem device (see mem.h). Requests, the block bitmap and the
 * configuration change under vdev->lock, on the device thread or the
 * control socket's; an unplug gives the blocks' host memory back before
 * it is acknowledged, so a block the guest sees unplugged holds none. */
#include "virtio/mem.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"

#define MEM_NAME "virtio-mem0"
#define REQ_QUEUE 0
#define WORD_BITS 64

/* The blocks a request names: the first, and how many. */
struct block_range {
	uint64_t first, nr;
};

static struct virtio_mem *to_mem(struct virtio_device *vdev)
{
	return vdev->opaque;
}

static bool block_plugged(const struct virtio_mem *m, uint64_t b)
{
	return m->plugged[b / WORD_BITS] >> (b % WORD_BITS) & 1;
}

static void block_set(struct virtio_mem *m, uint64_t b, bool plugged)
{
	uint64_t bit = 1ULL << (b % WORD_BITS);

	if (plugged)
		m->plugged[b / WORD_BITS] |= bit;
	else
		m->plugged[b / WORD_BITS] &= ~bit;
}

/* How many blocks of r are plugged. */
static uint64_t count_plugged(const struct virtio_mem *m,
			      const struct block_range *r)
{
	uint64_t b, n = 0;

	for (b = r->first; b < r->first + r->nr; b++)
		n += block_plugged(m, b);
	return n;
}

static void config_update(struct virtio_mem *m)
{
	put_le64(&m->config.plugged_size, m->plugged_size);
	put_le64(&m->config.requested_size, m->requested_size);
}

/* One line, at a limited rate, for a request the device answers with an
 * error: a driver that follows the spec sends none. */
static void refuse(struct virtio_mem *m, const char *what, uint64_t addr,
		   uint16_t nb_blocks)
{
	m->refused++;
	pr_warn_ratelimited("%s: refused a request for %u blocks at 0x%llx: "
			    "%s", MEM_NAME, nb_blocks,
			    (unsigned long long)addr, what);
}

/* The blocks [addr, addr + nb_blocks * block_size) name, if they lie
 * block-aligned inside the region (all of it usable here); NULL when they
 * do not, and why. */
static const char *range_of(const struct virtio_mem *m, uint64_t addr,
			    uint16_t nb_blocks, struct block_range *r)
{
	uint64_t off;

	if (!nb_blocks)
		return "no blocks";
	if (addr < m->addr || addr - m->addr >= m->region_size)
		return "outside the region";
	off = addr - m->addr;
	if (off % m->block_size)
		return "not block-aligned";
	r->first = off / m->block_size;
	r->nr = nb_blocks;
	if (r->nr > m->nr_blocks - r->first)
		return "past the end of the region";
	return NULL;
}

/* Gives the host memory behind blocks r back, in whole blocks (whole huge
 * pages). */
static int release(struct virtio_mem *m, const struct block_range *r)
{
	struct ram_range ext = {
		m->addr + r->first * m->block_size, r->nr * m->block_size
	};

	if (guest_ram_discard(m->vdev.ram, &ext, 1, &m->release_calls) != 1) {
		m->release_errors++;
		pr_warn_ratelimited("%s: cannot give back %llu MiB at 0x%llx: "
				    "%s", MEM_NAME,
				    (unsigned long long)(ext.size >> 20),
				    (unsigned long long)ext.gpa,
				    strerror(errno));
		return -EIO;
	}
	m->released += ext.size;
	return 0;
}

static void mark(struct virtio_mem *m, const struct block_range *r,
		 bool plugged)
{
	uint64_t b;

	for (b = r->first; b < r->first + r->nr; b++)
		block_set(m, b, plugged);
	if (plugged)
		m->plugged_size += r->nr * m->block_size;
	else
		m->plugged_size -= r->nr * m->block_size;
	config_update(m);
}

static uint16_t do_plug(struct virtio_mem *m, uint64_t addr, uint16_t nb)
{
	struct block_range r;
	const char *why = range_of(m, addr, nb, &r);

	if (!why && count_plugged(m, &r))
		why = "a block is plugged already";
	if (why) {
		refuse(m, why, addr, nb);
		return VIRTIO_MEM_RESP_ERROR;
	}
	if (r.nr * m->block_size > m->requested_size - MIN(m->requested_size,
							   m->plugged_size)) {
		refuse(m, "more than the requested size", addr, nb);
		return VIRTIO_MEM_RESP_NACK;
	}
	/* Nothing to do on the host: the guest's first touch faults in a
	 * huge page. */
	mark(m, &r, true);
	m->plugs++;
	return VIRTIO_MEM_RESP_ACK;
}

static uint16_t do_unplug(struct virtio_mem *m, uint64_t addr, uint16_t nb)
{
	struct block_range r;
	const char *why = range_of(m, addr, nb, &r);

	if (!why && count_plugged(m, &r) != r.nr)
		why = "a block is not plugged";
	if (why) {
		refuse(m, why, addr, nb);
		return VIRTIO_MEM_RESP_ERROR;
	}
	/* The host kept the memory: the guest may ask again. */
	if (release(m, &r))
		return VIRTIO_MEM_RESP_BUSY;
	mark(m, &r, false);
	m->unplugs++;
	return VIRTIO_MEM_RESP_ACK;
}

/* Every plugged run of blocks, given back and unplugged. */
static uint16_t do_unplug_all(struct virtio_mem *m)
{
	struct block_range r;
	uint64_t b = 0;

	while (b < m->nr_blocks) {
		if (!block_plugged(m, b)) {
			b++;
			continue;
		}
		r.first = b;
		while (b < m->nr_blocks && block_plugged(m, b))
			b++;
		r.nr = b - r.first;
		if (release(m, &r))
			return VIRTIO_MEM_RESP_BUSY;
		mark(m, &r, false);
	}
	m->unplugs++;
	return VIRTIO_MEM_RESP_ACK;
}

static uint16_t do_state(struct virtio_mem *m, uint64_t addr, uint16_t nb,
			 uint16_t *state)
{
	struct block_range r;
	const char *why = range_of(m, addr, nb, &r);
	uint64_t n;

	if (why) {
		refuse(m, why, addr, nb);
		return VIRTIO_MEM_RESP_ERROR;
	}
	n = count_plugged(m, &r);
	*state = n == r.nr ? VIRTIO_MEM_STATE_PLUGGED :
		 !n ? VIRTIO_MEM_STATE_UNPLUGGED : VIRTIO_MEM_STATE_MIXED;
	return VIRTIO_MEM_RESP_ACK;
}

/* One request chain: the request readable, then room for the response.
 * Returns the bytes written, or -EIO for a chain no driver sends (the
 * device then needs a reset). */
static int64_t serve(struct virtio_device *vdev, unsigned q,
		     const struct virtq_chain *c)
{
	struct virtio_mem *m = to_mem(vdev);
	struct virtio_mem_req req;
	struct virtio_mem_resp resp;
	uint16_t state = 0, type;
	uint64_t addr;
	uint16_t nb;

	if (c->out_bytes < sizeof(req) || c->in_bytes < sizeof(resp)) {
		virtio_device_error(&m->vdev, "request of %llu readable and "
				    "%llu writable bytes",
				    (unsigned long long)c->out_bytes,
				    (unsigned long long)c->in_bytes);
		return -EIO;
	}
	virtq_chain_read(c, 0, &req, sizeof(req));
	type = get_le16(&req.type);
	/* Plug, unplug and state share their layout. */
	addr = get_le64(&req.u.plug.addr);
	nb = get_le16(&req.u.plug.nb_blocks);
	memset(&resp, 0, sizeof(resp));
	switch (type) {
	case VIRTIO_MEM_REQ_PLUG:
		type = do_plug(m, addr, nb);
		break;
	case VIRTIO_MEM_REQ_UNPLUG:
		type = do_unplug(m, addr, nb);
		break;
	case VIRTIO_MEM_REQ_UNPLUG_ALL:
		type = do_unplug_all(m);
		break;
	case VIRTIO_MEM_REQ_STATE:
		type = do_state(m, addr, nb, &state);
		break;
	default:
		refuse(m, "unknown request type", addr, nb);
		type = VIRTIO_MEM_RESP_ERROR;
	}
	put_le16(&resp.type, type);
	put_le16(&resp.u.state.state, state);
	return virtq_chain_write(c, 0, &resp, sizeof(resp));
}

static const struct virtio_queue_server server = {
	.serve = serve,
};

static void mem_queue_notify(struct virtio_device *vdev, unsigned q)
{
	pthread_mutex_lock(&vdev->lock);
	virtio_queue_serve(vdev, REQ_QUEUE, &server);
	pthread_mutex_unlock(&vdev->lock);
}

/* No reset hook: plugged blocks outlive a reset of the device (virtio
 * 1.2, 5.15.6.3), and a new driver finds them in plugged_size. */
static const struct virtio_device_ops mem_ops = {
	.queue_notify = mem_queue_notify,
};

static int check_geometry(const struct virtio_mem *m, uint64_t huge)
{
	char a[32], b[32], c[32];

	if (m->block_size < huge || m->block_size & (m->block_size - 1) ||
	    m->addr % m->block_size || m->region_size % m->block_size) {
		pr_err("%s: a block of %s is not a power of two of at least "
		       "%s (the host's huge page) that divides the %s region",
		       MEM_NAME, size_format(m->block_size, a, sizeof(a)),
		       size_format(huge, b, sizeof(b)),
		       size_format(m->region_size, c, sizeof(c)));
		return -EINVAL;
	}

	if (m->requested_size > m->region_size ||
	    m->requested_size % m->block_size) {
		pr_err("%s: a requested size of %s is not a multiple of the "
		       "%s block within the %s region", MEM_NAME,
		       size_format(m->requested_size, a, sizeof(a)),
		       size_format(m->block_size, b, sizeof(b)),
		       size_format(m->region_size, c, sizeof(c)));
		return -EINVAL;
	}
	return 0;
}

int virtio_mem_create(struct virtio_mem *m, uint64_t block_size,
		      uint64_t requested, const struct guest_ram *ram)
{
	const uint16_t size = MEM_QUEUE_SIZE;
	struct ram_range region;
	int err;

	memset(m, 0, sizeof(*m));
	if (!guest_ram_hotplug(ram, &region)) {
		pr_err("%s: guest RAM has no hotplug region", MEM_NAME);
		return -EINVAL;
	}
	m->addr = region.gpa;
	m->region_size = region.size;
	m->block_size = block_size ?: ram->huge_page_size;
	m->requested_size = requested;
	err = check_geometry(m, ram->huge_page_size);
	if (err)
		return err;
	m->nr_blocks = m->region_size / m->block_size;
	m->plugged = calloc((m->nr_blocks + WORD_BITS - 1) / WORD_BITS,
			    sizeof(*m->plugged));
	if (!m->plugged) {
		pr_err("%s: out of memory", MEM_NAME);
		return -ENOMEM;
	}
	put_le64(&m->config.block_size, m->block_size);
	put_le64(&m->config.addr, m->addr);
	put_le64(&m->config.region_size, m->region_size);
	/* All of the region is usable from the start: it never needs to
	 * grow, and UNPLUG_ALL need not shrink it. */
	put_le64(&m->config.usable_region_size, m->region_size);
	config_update(m);
	err = virtio_device_init(&m->vdev, MEM_NAME, VIRTIO_ID_MEM,
				 1ULL << VIRTIO_MEM_F_UNPLUGGED_INACCESSIBLE,
				 1, &size, &m->config, sizeof(m->config),
				 &mem_ops, m, ram);
	if (err) {
		pr_err("%s: cannot set up the device: %s", MEM_NAME,
		       strerror(-err));
		virtio_mem_destroy(m);
	}
	return err;
}

void virtio_mem_destroy(struct virtio_mem *m)
{
	virtio_device_destroy(&m->vdev);
	free(m->plugged);
	m->plugged = NULL;
}

int virtio_mem_set_requested(struct virtio_mem *m, uint64_t bytes)
{
	if (bytes > m->region_size)
		return -ERANGE;
	if (bytes % m->block_size)
		return -EINVAL;
	pthread_mutex_lock(&m->vdev.lock);
	if (bytes != m->requested_size) {
		m->requested_size = bytes;
		config_update(m);
		virtio_config_changed(&m->vdev);
	}
	pthread_mutex_unlock(&m->vdev.lock);
	return 0;
}

void virtio_mem_info(struct virtio_mem *m, struct virtio_mem_info *info)
{
	pthread_mutex_lock(&m->vdev.lock);
	*info = (struct virtio_mem_info){
		.addr = m->addr,
		.region_size = m->region_size,
		.usable_region_size = get_le64(&m->config.usable_region_size),
		.block_size = m->block_size,
		.plugged_size = m->plugged_size,
		.requested_size = m->requested_size,
		.plugs = m->plugs,
		.unplugs = m->unplugs,
		.refused = m->refused,
		.released = m->released,
		.release_calls = m->release_calls,
		.release_errors = m->release_errors,
		.driver_ok = m->vdev.status & VIRTIO_CONFIG_S_DRIVER_OK,
	};
	pthread_mutex_unlock(&m->vdev.lock);
}
