/* virtio-balloon device (see balloon.h). All queue work and every
 * guest-memory access happen on the device thread under vdev->lock, as
 * for virtio-net, so a reset forgets everything at once; a pass over a
 * queue does at most BALLOON_PASS_BUDGET of work before it lets the lock
 * go. The host side (control/balloon_control.c) never waits for
 * vdev->lock: it reads what the device last published, and its target
 * goes into the configuration at once if the lock is free, else through
 * ops->deferred after the pass; a guest that keeps its queues fed cannot
 * stall it. Lock order: vdev->lock, then host_lock. */
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

/* Whether r lies wholly inside one boot RAM region: only such a range can be
 * cut at the budget and stay what the guest asked for. */
static bool range_in_ram(const struct guest_ram *ram,
			 const struct balloon_range *r)
{
	return r->nr_pages &&
	       guest_ram_boot_contig(ram, r->pfn << BALLOON_PAGE_SHIFT) >=
		       r->nr_pages << BALLOON_PAGE_SHIFT;
}

/* Charges r to the pass budget: its pages, or 1 for a range the release
 * logic refuses without looking at its pages. A range in RAM larger than
 * what is left is cut there, and *rest gets the other part. */
static void charge(const struct guest_ram *ram, struct balloon_range *r,
		   uint64_t *budget, struct balloon_range *rest)
{
	if (!range_in_ram(ram, r)) {
		(*budget)--;
	} else if (r->nr_pages > *budget) {
		*rest = (struct balloon_range){ r->pfn + *budget,
						r->nr_pages - *budget };
		r->nr_pages = *budget;
		*budget = 0;
	} else {
		*budget -= r->nr_pages;
	}
}

static void update(struct virtio_balloon *b, unsigned n, bool inflate)
{
	if (inflate)
		balloon_inflate(&b->release, b->scratch, n);
	else
		balloon_deflate(&b->release, b->scratch, n);
}

/* The elements of an inflate or deflate array (pfns, or cont pairs) in
 * the chain's readable part, from where the last pass stopped, until the
 * pass budget (*budget) runs out. Returns whether the chain is done. */
static bool handle_pages(struct virtio_balloon *b, struct balloon_work *w,
			 const struct virtq_chain *c, bool inflate, bool cont,
			 uint64_t *budget)
{
	const struct guest_ram *ram = b->vdev.ram;
	unsigned esize = cont ? CONT_SIZE : PFN_SIZE;
	uint64_t end = MIN(c->out_bytes, MAX_ARRAY_BYTES), got, over = 0;
	uint8_t buf[BATCH * CONT_SIZE];
	unsigned i, n, bad = 0;

	end -= end % esize;
	if (!w->off && !w->rest.nr_pages) {
		if (c->out_bytes > MAX_ARRAY_BYTES)
			pr_warn_ratelimited("%s: %s buffer of %llu bytes: "
					    "only the first %u are used",
					    BALLOON_NAME, inflate ? "inflate" :
					    "deflate",
					    (unsigned long long)c->out_bytes,
					    MAX_ARRAY_BYTES);
		else if (c->out_bytes % esize)
			pr_warn_ratelimited("%s: %s buffer of %llu bytes, not "
					    "whole %u-byte elements: the rest "
					    "is ignored", BALLOON_NAME,
					    inflate ? "inflate" : "deflate",
					    (unsigned long long)c->out_bytes,
					    esize);
	}
	if (w->rest.nr_pages && *budget) {
		b->scratch[0] = w->rest;
		w->rest.nr_pages = 0;
		charge(ram, &b->scratch[0], budget, &w->rest);
		update(b, 1, inflate);
	}
	while (*budget && !w->rest.nr_pages && w->off < end &&
	       (got = virtq_chain_read(c, w->off, buf,
				       MIN(BATCH * esize, end - w->off))) >=
		       esize) {
		got -= got % esize;
		for (i = n = 0; i < got / esize && *budget; i++) {
			struct balloon_range *r = &b->scratch[n];

			if (!element_range(buf + i * esize, cont, r)) {
				bad++;
				(*budget)--;
			} else if (r->nr_pages > w->pages_left) {
				/* This one and the rest. */
				over = (end - w->off) / esize - i;
				break;
			} else {
				w->pages_left -= r->nr_pages;
				charge(ram, r, budget, &w->rest);
				n++;
			}
		}
		w->off = over ? end : w->off + i * esize;
		update(b, n, inflate);
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
	/* A short read (a chain shorter than it said) ends it too. */
	return !w->rest.nr_pages && (w->off >= end || *budget);
}

/* Each buffer of a reporting chain is a free range. With page poisoning
 * the guest expects free pages to keep the poison value, and a released
 * page comes back as zeros: a nonzero poison value keeps them. A chain
 * is reported whole (at most a queue's worth of ranges), and its pages
 * count against the pass budget. */
static void handle_report(struct virtio_balloon *b, const struct virtq_chain *c,
			  uint64_t *budget)
{
	uint64_t pages = 0;
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
		pages += (end - start) >> BALLOON_PAGE_SHIFT;
	}
	balloon_report(&b->release, b->scratch, n);
	*budget -= MIN(*budget, pages);
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

/* With vdev->lock held, or before the device thread runs: what the host
 * side sees from now on. */
static void publish_info(struct virtio_balloon *b)
{
	const struct balloon_release_stats *s = &b->release.stats;
	struct virtio_balloon_info *i = &b->shown;

	pthread_mutex_lock(&b->host_lock);
	i->actual = (uint64_t)get_le32(&b->config.actual)
		    << BALLOON_PAGE_SHIFT;
	i->ballooned = s->ballooned_pages << BALLOON_PAGE_SHIFT;
	i->held = s->held_pages << BALLOON_PAGE_SHIFT;
	i->partial_blocks = s->partial_blocks;
	i->released = s->released_bytes;
	i->release_calls = s->release_calls;
	i->release_errors = s->release_errors;
	i->ignored = s->ignored;
	i->driver_ok = b->vdev.status & VIRTIO_CONFIG_S_DRIVER_OK;
	i->features = i->driver_ok ? b->vdev.features : 0;
	i->policy = b->release.policy;
	memcpy(i->stats, b->stats, sizeof(i->stats));
	i->stats_mask = b->stats_mask;
	b->shown_stats_time = b->stats_time;
	pthread_mutex_unlock(&b->host_lock);
}

/* A chain just taken: from its start. Work is per page, and elements
 * may repeat the same gigabytes: no chain gets to cover more pages than
 * guest RAM has (a real driver never does). */
static void work_start(struct balloon_work *w, const struct guest_ram *ram)
{
	w->held = true;
	w->off = 0;
	w->pages_left = ram->total >> BALLOON_PAGE_SHIFT;
	w->rest.nr_pages = 0;
}

/* Before each look at the ring: a pass does no more than its budget.
 * The rest waits for the queue's next pass, which its own notification
 * brings after the device thread's other events (a target from the
 * host, the other queues), as virtio-net does. */
static bool wants(struct virtio_device *vdev, unsigned q)
{
	struct virtio_balloon *b = to_balloon(vdev);

	if (b->budget)
		return true;
	virtio_queue_kick(vdev, q);
	return false;
}

/* One chain, as far as the pass budget goes. One done with goes back to
 * the driver, but for the stats buffer, which is kept (until the next
 * stats request); one the budget cut short goes back to the ring for
 * the queue's next pass, which goes on where this one stopped. */
static int64_t serve(struct virtio_device *vdev, unsigned q,
		     const struct virtq_chain *c)
{
	struct virtio_balloon *b = to_balloon(vdev);
	struct balloon_work *w = &b->work[q];
	enum balloon_vq_role role = b->roles[q];

	if (!w->held) {
		work_start(w, vdev->ram);
		b->budget--;
	}
	if (role == BVQ_STATS) {
		/* A second buffer while one is held: the older goes back
		 * (a request, which the driver may answer again). */
		stats_request(b, q);
		record_stats(b, c);
		b->stats_head = c->head;
		b->stats_held = true;
		w->held = false;
		return -EINPROGRESS;
	}
	if (role == BVQ_REPORTING) {
		handle_report(b, c, &b->budget);
	} else if (!handle_pages(b, w, c, role == BVQ_INFLATE ||
					  role == BVQ_INFLATE_CONT,
				 role == BVQ_INFLATE_CONT ||
					 role == BVQ_DEFLATE_CONT,
				 &b->budget)) {
		virtio_queue_kick(vdev, q);
		return -EAGAIN;
	}
	w->held = false;
	return 0;
}

static const struct virtio_queue_server server = {
	.wants = wants,
	.serve = serve,
};

/* A pass over queue q: chains until it is empty or the budget is
 * spent. */
static void process(struct virtio_balloon *b, unsigned q)
{
	b->budget = BALLOON_PASS_BUDGET;
	virtio_queue_serve(&b->vdev, q, &server);
	publish_info(b);
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

static void balloon_watch_event(struct virtio_device *vdev, unsigned q,
				uint32_t events)
{
	struct virtio_balloon *b = to_balloon(vdev);
	uint64_t expirations;
	int stats;

	if (read(b->timer_fd, &expirations, sizeof(expirations)) < 0)
		return;
	pthread_mutex_lock(&vdev->lock);
	stats = stats_queue(b);
	if (stats >= 0 && stats_request(b, stats))
		virtio_queue_interrupt(vdev, stats);
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
	virtio_device_watch(&b->vdev, 0, b->timer_fd, seconds ? EPOLLIN : 0);
}

static void balloon_start(struct virtio_device *vdev)
{
	struct virtio_balloon *b = to_balloon(vdev);

	assign_roles(b, vdev->features);
	if (has(b, VIRTIO_BALLOON_F_STATS_VQ))
		timer_set(b, b->opts.stats_interval);
	publish_info(b);
}

static void balloon_reset(struct virtio_device *vdev)
{
	struct virtio_balloon *b = to_balloon(vdev);
	unsigned q;

	timer_set(b, 0);
	balloon_release_reset(&b->release);
	b->stats_held = false;
	b->stats_mask = 0;
	memset(b->stats, 0, sizeof(b->stats));
	put_le32(&b->config.actual, 0);
	put_le32(&b->config.poison_val, 0);
	assign_roles(b, 0);
	/* A chain taken is the driver's again, or gone. */
	for (q = 0; q < BALLOON_NR_QUEUES; q++) {
		b->work[q].held = false;
		b->work[q].rest.nr_pages = 0;
	}
	publish_info(b);
}

/* The driver may write actual and poison_val; num_pages and the hint
 * command id are the host's and are put back. */
static void balloon_config_write(struct virtio_device *vdev, uint32_t offset,
				 uint32_t len)
{
	struct virtio_balloon *b = to_balloon(vdev);

	put_le32(&b->config.num_pages, b->target_pages);
	put_le32(&b->config.free_page_hint_cmd_id, 0);
	publish_info(b);
}

/* With vdev->lock held: the target the host side set, into num_pages. */
static void apply_target(struct virtio_balloon *b)
{
	uint32_t target;

	pthread_mutex_lock(&b->host_lock);
	target = b->host_target;
	pthread_mutex_unlock(&b->host_lock);
	if (target == b->target_pages)
		return;
	b->target_pages = target;
	put_le32(&b->config.num_pages, target);
	virtio_config_changed(&b->vdev);
}

/* A target the host side could not apply: the device lock was taken. */
static void balloon_deferred(struct virtio_device *vdev)
{
	pthread_mutex_lock(&vdev->lock);
	apply_target(to_balloon(vdev));
	pthread_mutex_unlock(&vdev->lock);
}

static const struct virtio_device_ops balloon_ops = {
	.queue_notify = balloon_queue_notify,
	.reset = balloon_reset,
	.start = balloon_start,
	.config_write = balloon_config_write,
	.watch_event = balloon_watch_event,
	.deferred = balloon_deferred,
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
	pthread_mutex_init(&b->host_lock, NULL);
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
		return err;
	}
	publish_info(b);
	return 0;
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
	pthread_mutex_destroy(&b->host_lock);
}

int virtio_balloon_set_target(struct virtio_balloon *b, uint64_t bytes)
{
	if (bytes > b->vdev.ram->total)
		return -ERANGE;
	pthread_mutex_lock(&b->host_lock);
	b->host_target = bytes >> BALLOON_PAGE_SHIFT;
	pthread_mutex_unlock(&b->host_lock);
	/* Free (no pass running; always while the VM is paused): now.
	 * Else the device thread applies it once its pass is over. */
	if (pthread_mutex_trylock(&b->vdev.lock))
		return virtio_device_defer(&b->vdev);
	apply_target(b);
	pthread_mutex_unlock(&b->vdev.lock);
	return 0;
}

void virtio_balloon_info(struct virtio_balloon *b,
			 struct virtio_balloon_info *info)
{
	pthread_mutex_lock(&b->host_lock);
	*info = b->shown;
	info->target = (uint64_t)b->host_target << BALLOON_PAGE_SHIFT;
	info->stats_age = info->stats_mask ?
				  time_ms_since(&b->shown_stats_time) / 1e3 :
				  -1;
	pthread_mutex_unlock(&b->host_lock);
	info->ram = b->vdev.ram->total;
}
