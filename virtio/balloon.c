/* virtio-balloon device (see balloon.h). All queue work and every
 * guest-memory access happen on the device thread under vdev->lock, as
 * for virtio-net, so a reset forgets everything at once. */
#include "virtio/balloon.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

#define BALLOON_NAME "virtio-balloon0"
/* Elements read and handed to the release logic at a time. Linux sends
 * at most 256 pfns per buffer, so a buffer is normally one batch. */
#define BATCH 1024
/* A buffer may not hold more than this: elements past it are ignored.
 * Linux's are 1 KiB. (The work a chain causes is bounded separately, by
 * the pages its elements cover: see handle_pages.) */
#define MAX_ARRAY_BYTES (1u << 20)
#define PFN_SIZE 4
#define CONT_SIZE 8
#define STAT_SIZE 10		/* packed: le16 tag, le64 value */
/* Entries looked at per stats buffer; Linux sends at most 10 tags. */
#define MAX_STATS 64
#define OFF(field) offsetof(struct virtio_balloon_config, field)

static struct virtio_balloon *to_balloon(struct virtio_device *vdev)
{
	return vdev->opaque;
}

static bool has(const struct virtio_balloon *b, unsigned feature)
{
	return b->vdev.features & 1ULL << feature;
}

/* Linux's virtballoon_find_vqs() asks for all five upstream queues plus
 * ours and skips those whose feature is missing; the transport numbers
 * only the ones that exist. */
static void assign_roles(struct virtio_balloon *b, uint64_t features)
{
	unsigned q = 0, i;

	for (i = 0; i < BALLOON_NR_QUEUES; i++)
		b->roles[i] = BVQ_NONE;
	b->roles[q++] = BVQ_INFLATE;
	b->roles[q++] = BVQ_DEFLATE;
	if (features & 1ULL << VIRTIO_BALLOON_F_STATS_VQ)
		b->roles[q++] = BVQ_STATS;
	if (features & 1ULL << VIRTIO_BALLOON_F_REPORTING)
		b->roles[q++] = BVQ_REPORTING;
	if (features & 1ULL << VIRTIO_BALLOON_F_CONT_PAGES) {
		b->roles[q++] = BVQ_INFLATE_CONT;
		b->roles[q++] = BVQ_DEFLATE_CONT;
	}
}

/* One element of an inflate/deflate array as a range; false (and the
 * range left out) for a cont element whose size is no page multiple. */
static bool element_range(const uint8_t *e, bool cont,
			  struct balloon_range *r)
{
	uint32_t size;

	r->pfn = get_le32(e);
	r->nr_pages = 1;
	if (!cont)
		return true;
	size = get_le32(e + 4);
	r->nr_pages = size >> BALLOON_PAGE_SHIFT;
	return IS_ALIGNED(size, BALLOON_PAGE_SIZE);
}

/* An array of pfns (or cont pairs) in the chain's readable part. */
static void handle_pages(struct virtio_balloon *b, const struct virtq_chain *c,
			 bool inflate, bool cont)
{
	unsigned esize = cont ? CONT_SIZE : PFN_SIZE;
	uint8_t buf[BATCH * CONT_SIZE];
	uint64_t off = 0, got;
	/* Work is per page, and elements may repeat the same gigabytes: no
	 * chain gets to cover more pages than guest RAM has (a real driver
	 * never does), so one chain costs at most one pass over RAM while
	 * vdev->lock is held. */
	uint64_t budget = b->vdev.ram->total >> BALLOON_PAGE_SHIFT;
	uint64_t left = MIN(c->out_bytes, MAX_ARRAY_BYTES) / esize, over = 0;
	unsigned i, n, bad = 0;

	if (c->out_bytes > MAX_ARRAY_BYTES)
		pr_warn_ratelimited("%s: %s buffer of %llu bytes: only the "
				    "first %u are used", BALLOON_NAME,
				    inflate ? "inflate" : "deflate",
				    (unsigned long long)c->out_bytes,
				    MAX_ARRAY_BYTES);
	else if (c->out_bytes % esize)
		pr_warn_ratelimited("%s: %s buffer of %llu bytes, not whole "
				    "%u-byte elements: the rest is ignored",
				    BALLOON_NAME, inflate ? "inflate" :
				    "deflate", (unsigned long long)c->out_bytes,
				    esize);
	while (off < MAX_ARRAY_BYTES &&
	       (got = virtq_chain_read(c, off, buf, BATCH * esize)) >= esize) {
		got -= got % esize;
		off += got;
		for (i = n = 0; i < got / esize && !over; i++, left--) {
			if (!element_range(buf + i * esize, cont,
					   &b->scratch[n]))
				bad++;
			else if (b->scratch[n].nr_pages > budget)
				over = left;	/* this one and the rest */
			else
				budget -= b->scratch[n++].nr_pages;
		}
		if (inflate)
			balloon_inflate(&b->release, b->scratch, n);
		else
			balloon_deflate(&b->release, b->scratch, n);
		if (over)
			break;
	}
	if (over) {
		b->release.stats.ignored += over;
		pr_warn_ratelimited("%s: %s buffer covers more pages than guest "
				    "RAM has: the last %llu elements are "
				    "ignored",
				    BALLOON_NAME, inflate ? "inflate" :
				    "deflate", (unsigned long long)over);
	}
	if (bad) {
		b->release.stats.ignored += bad;
		pr_warn_ratelimited("%s: ignored %u continuous ranges whose "
				    "size is not a multiple of 4 KiB",
				    BALLOON_NAME, bad);
	}
}

/* Each buffer of a reporting chain is a free range. With page poisoning
 * the guest expects free pages to keep the poison value, and a released
 * page comes back as zeros: a nonzero poison value keeps them. */
static void handle_report(struct virtio_balloon *b, const struct virtq_chain *c)
{
	unsigned i, n = 0;

	if (has(b, VIRTIO_BALLOON_F_PAGE_POISON) &&
	    get_le32(&b->config.poison_val))
		return;
	for (i = 0; i < c->nr_out + c->nr_in; i++) {
		uint64_t gpa = c->gpa[i];
		uint64_t start = ALIGN_UP(gpa, BALLOON_PAGE_SIZE);
		uint64_t end = ALIGN_DOWN(gpa + c->iov[i].iov_len,
					  BALLOON_PAGE_SIZE);

		if (start >= end)
			continue;
		b->scratch[n].pfn = start >> BALLOON_PAGE_SHIFT;
		b->scratch[n++].nr_pages = (end - start) >> BALLOON_PAGE_SHIFT;
	}
	balloon_report(&b->release, b->scratch, n);
}

static void record_stats(struct virtio_balloon *b, const struct virtq_chain *c)
{
	uint8_t e[STAT_SIZE];
	uint64_t off;

	b->stats_mask = 0;
	for (off = 0; off < MAX_STATS * STAT_SIZE &&
		      virtq_chain_read(c, off, e, STAT_SIZE) == STAT_SIZE;
	     off += STAT_SIZE) {
		uint16_t tag = get_le16(e);

		/* Tags this host does not know are skipped. */
		if (tag < VIRTIO_BALLOON_S_NR) {
			b->stats[tag] = get_le64(e + 2);
			b->stats_mask |= 1U << tag;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b->stats_time);
}

/* Hands the held stats buffer back: that asks the driver for new ones.
 * Returns whether a buffer went back. */
static bool stats_request(struct virtio_balloon *b, unsigned q)
{
	if (!b->stats_held || !virtio_queue_ready(&b->vdev, q))
		return false;
	virtq_push(&b->vdev.queues[q].vq, b->stats_head, 0);
	b->stats_held = false;
	return true;
}

static int stats_queue(const struct virtio_balloon *b)
{
	unsigned q;

	for (q = 0; q < BALLOON_NR_QUEUES; q++)
		if (b->roles[q] == BVQ_STATS)
			return q;
	return -1;
}

/* One chain; false when it is kept (the stats buffer). */
static bool handle_chain(struct virtio_balloon *b, unsigned q,
			 const struct virtq_chain *c)
{
	enum balloon_vq_role role = b->roles[q];

	if (role == BVQ_STATS) {
		/* A second buffer while one is held: the older goes back
		 * (a request, which the driver may answer again). */
		stats_request(b, q);
		record_stats(b, c);
		b->stats_head = c->head;
		b->stats_held = true;
		return false;
	}
	if (role == BVQ_REPORTING)
		handle_report(b, c);
	else
		handle_pages(b, c, role == BVQ_INFLATE ||
				   role == BVQ_INFLATE_CONT,
			     role == BVQ_INFLATE_CONT ||
				     role == BVQ_DEFLATE_CONT);
	return true;
}

static void process(struct virtio_balloon *b, unsigned q)
{
	struct virtio_device *vdev = &b->vdev;
	struct virtq *vq = &vdev->queues[q].vq;
	uint16_t used = vq->used_idx;
	struct virtq_chain chain;
	int got;

	do {
		virtq_disable_notify(vq);
		while (virtio_queue_ready(vdev, q)) {
			got = virtq_pop(vq, &chain);
			if (got < 0)
				virtio_device_error(vdev, "queue %u: %s", q,
						    vq->error);
			if (got <= 0)
				break;
			if (handle_chain(b, q, &chain))
				virtq_push(vq, chain.head, 0);
		}
	} while (virtio_queue_ready(vdev, q) && virtq_enable_notify(vq));
	if (vq->used_idx != used)
		virtio_queue_interrupt(vdev, q);
}

static void balloon_queue_notify(struct virtio_device *vdev, unsigned q)
{
	struct virtio_balloon *b = to_balloon(vdev);

	pthread_mutex_lock(&vdev->lock);
	/* A reset may have come since the device thread looked; queues
	 * that no negotiated feature uses are not looked at. */
	if (q < BALLOON_NR_QUEUES && b->roles[q] != BVQ_NONE &&
	    virtio_queue_ready(vdev, q))
		process(b, q);
	pthread_mutex_unlock(&vdev->lock);
}

static void balloon_watch_event(struct virtio_device *vdev, uint32_t events)
{
	struct virtio_balloon *b = to_balloon(vdev);
	uint64_t expirations;
	int q;

	if (read(b->timer_fd, &expirations, sizeof(expirations)) < 0)
		return;
	pthread_mutex_lock(&vdev->lock);
	q = stats_queue(b);
	if (q >= 0 && stats_request(b, q))
		virtio_queue_interrupt(vdev, q);
	pthread_mutex_unlock(&vdev->lock);
}

static void timer_set(struct virtio_balloon *b, unsigned seconds)
{
	struct itimerspec its = {
		.it_interval.tv_sec = seconds,
		.it_value.tv_sec = seconds,
	};

	if (b->timer_fd < 0)
		return;
	if (timerfd_settime(b->timer_fd, 0, &its, NULL) < 0)
		pr_warn("%s: cannot set the stats timer: %s", BALLOON_NAME,
			strerror(errno));
	virtio_device_watch(&b->vdev, b->timer_fd, seconds ? EPOLLIN : 0);
}

static void balloon_start(struct virtio_device *vdev)
{
	struct virtio_balloon *b = to_balloon(vdev);

	assign_roles(b, vdev->features);
	if (has(b, VIRTIO_BALLOON_F_STATS_VQ))
		timer_set(b, b->opts.stats_interval);
}

static void balloon_reset(struct virtio_device *vdev)
{
	struct virtio_balloon *b = to_balloon(vdev);

	timer_set(b, 0);
	balloon_release_reset(&b->release);
	b->stats_held = false;
	b->stats_mask = 0;
	memset(b->stats, 0, sizeof(b->stats));
	put_le32(&b->config.actual, 0);
	put_le32(&b->config.poison_val, 0);
	assign_roles(b, 0);
}

/* The driver may write actual and poison_val; num_pages and the hint
 * command id are the host's and are put back. */
static void balloon_config_write(struct virtio_device *vdev, uint32_t offset,
				 uint32_t len)
{
	struct virtio_balloon *b = to_balloon(vdev);

	put_le32(&b->config.num_pages, b->target_pages);
	put_le32(&b->config.free_page_hint_cmd_id, 0);
}

static const struct virtio_device_ops balloon_ops = {
	.queue_notify = balloon_queue_notify,
	.reset = balloon_reset,
	.start = balloon_start,
	.config_write = balloon_config_write,
	.watch_event = balloon_watch_event,
};

int virtio_balloon_create(struct virtio_balloon *b,
			  const struct balloon_config *opts,
			  const struct guest_ram *ram,
			  balloon_release_fn release, void *release_opaque)
{
	uint16_t sizes[BALLOON_NR_QUEUES];
	uint64_t features = 1ULL << VIRTIO_BALLOON_F_MUST_TELL_HOST |
			    1ULL << VIRTIO_BALLOON_F_PAGE_POISON;
	unsigned i;
	int err;

	memset(b, 0, sizeof(*b));
	b->timer_fd = -1;
	b->opts = *opts;
	if (opts->stats_interval)
		features |= 1ULL << VIRTIO_BALLOON_F_STATS_VQ;
	if (opts->deflate_on_oom)
		features |= 1ULL << VIRTIO_BALLOON_F_DEFLATE_ON_OOM;
	if (opts->reporting)
		features |= 1ULL << VIRTIO_BALLOON_F_REPORTING;
	if (opts->cont_pages)
		features |= 1ULL << VIRTIO_BALLOON_F_CONT_PAGES;
	for (i = 0; i < BALLOON_NR_QUEUES; i++)
		sizes[i] = BALLOON_QUEUE_SIZE;
	assign_roles(b, 0);
	err = virtio_device_init(&b->vdev, BALLOON_NAME, VIRTIO_ID_BALLOON,
				 features, BALLOON_NR_QUEUES, sizes, &b->config,
				 sizeof(b->config), &balloon_ops, b, ram);
	if (!err)
		err = balloon_release_init(&b->release, BALLOON_NAME, ram,
					   opts->policy, release,
					   release_opaque);
	if (!err) {
		/* Enough for a reporting chain or one batch of elements. */
		b->scratch = calloc(MAX(BATCH, VIRTQ_MAX_SIZE),
				    sizeof(*b->scratch));
		if (!b->scratch)
			err = -ENOMEM;
	}
	if (!err && opts->stats_interval) {
		b->timer_fd = timerfd_create(CLOCK_MONOTONIC,
					     TFD_NONBLOCK | TFD_CLOEXEC);
		if (b->timer_fd < 0)
			err = -errno;
	}
	if (err) {
		pr_err("%s: cannot set up the device: %s", BALLOON_NAME,
		       strerror(-err));
		virtio_balloon_destroy(b);
	}
	return err;
}

void virtio_balloon_destroy(struct virtio_balloon *b)
{
	virtio_device_destroy(&b->vdev);
	balloon_release_destroy(&b->release);
	if (b->timer_fd >= 0)
		close(b->timer_fd);
	b->timer_fd = -1;
	free(b->scratch);
	b->scratch = NULL;
}

int virtio_balloon_set_target(struct virtio_balloon *b, uint64_t bytes)
{
	struct virtio_device *vdev = &b->vdev;

	if (bytes > vdev->ram->total)
		return -ERANGE;
	pthread_mutex_lock(&vdev->lock);
	b->target_pages = bytes >> BALLOON_PAGE_SHIFT;
	put_le32(&b->config.num_pages, b->target_pages);
	virtio_config_changed(vdev);
	pthread_mutex_unlock(&vdev->lock);
	return 0;
}

void virtio_balloon_info(struct virtio_balloon *b,
			 struct virtio_balloon_info *info)
{
	struct virtio_device *vdev = &b->vdev;
	const struct balloon_release_stats *s = &b->release.stats;

	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&vdev->lock);
	info->ram = vdev->ram->total;
	info->target = (uint64_t)b->target_pages << BALLOON_PAGE_SHIFT;
	info->actual = (uint64_t)get_le32(&b->config.actual)
		       << BALLOON_PAGE_SHIFT;
	info->ballooned = s->ballooned_pages << BALLOON_PAGE_SHIFT;
	info->held = s->held_pages << BALLOON_PAGE_SHIFT;
	info->partial_blocks = s->partial_blocks;
	info->released = s->released_bytes;
	info->release_calls = s->release_calls;
	info->release_errors = s->release_errors;
	info->ignored = s->ignored;
	info->features = vdev->features;
	info->driver_ok = vdev->status & VIRTIO_CONFIG_S_DRIVER_OK;
	info->policy = b->release.policy;
	memcpy(info->stats, b->stats, sizeof(info->stats));
	info->stats_mask = b->stats_mask;
	info->stats_age = b->stats_mask ?
				  time_ms_since(&b->stats_time) / 1e3 : -1;
	pthread_mutex_unlock(&vdev->lock);
}
