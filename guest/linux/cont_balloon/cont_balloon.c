// SPDX-License-Identifier: GPL-2.0
/*
 * cont_balloon: a virtio-balloon driver for the continuous-pages protocol
 * that thpvm's device speaks (docs/balloon.md). Instead of 4 KiB pfns it
 * hands the host { le32 pfn; le32 size_in_bytes; } runs on two extra
 * queues, so a 2 MiB block of guest memory goes back whole and the host
 * never has to split the huge page behind it.
 *
 * Inflate allocates order-9 blocks (the allocator compacts to find them)
 * and falls back to smaller orders when that fails; deflate gives runs
 * back, splitting a block only when less than all of it is asked for.
 * Pages leave the balloon only after the device has used the deflate
 * buffer (MUST_TELL_HOST). One inflate or deflate buffer is in flight at
 * a time, under cb->lock, as in Linux's virtio_balloon.
 */

#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/oom.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/version.h>
#include <linux/virtio.h>
#include <linux/virtio_balloon.h>
#include <linux/virtio_config.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/* From the continuous-pages patch series; upstream headers lack it. */
#define VIRTIO_BALLOON_F_CONT_PAGES	6

/*
 * 2 MiB blocks, the host's huge page on x86-64, arm64 and ppc64 (radix):
 * order 9 with 4 KiB pages, 5 with ppc64's 64 KiB ones.
 */
#define CONT_ORDER		(21 - PAGE_SHIFT)
/* The protocol counts 4 KiB units (pfns, actual, num_pages). */
#define UNITS_PER_PAGE		(1UL << (PAGE_SHIFT - VIRTIO_BALLOON_PFN_SHIFT))
/* Elements per buffer, as Linux sends pfns. */
#define CONT_BATCH		256
/* Pages given back per OOM notification, as Linux's driver. */
#define CONT_OOM_PAGES		256
#define CONT_OOM_PRIORITY	80
/*
 * Compaction may assemble a block; nothing may dip into reserves, retry
 * hard or invoke the OOM killer for the balloon.
 */
#define CONT_GFP	(GFP_HIGHUSER_MOVABLE | __GFP_NOMEMALLOC | \
			 __GFP_NORETRY | __GFP_NOWARN)

/*
 * A block on cb->blocks is its first page, linked by page->lru, with its
 * size in page_private: the order of a whole allocation (freed with
 * __free_pages), or RUN_SPLIT | count for a run cut from a block by
 * split_page(), whose pages each hold a reference and are freed one by
 * one.
 */
#define RUN_SPLIT	BIT(30)

/* Queue indices as the transport numbers them with our features. */
enum cont_vq {
	CONT_VQ_INFLATE,
	CONT_VQ_DEFLATE,
	CONT_VQ_STATS,
	CONT_VQ_FREE_PAGE,	/* FREE_PAGE_HINT: never negotiated */
	CONT_VQ_REPORTING,	/* REPORTING: never negotiated */
	CONT_VQ_INFLATE_CONT,
	CONT_VQ_DEFLATE_CONT,
	CONT_VQ_MAX
};

struct cont_elem {
	__le32 pfn;
	__le32 size;		/* bytes */
};

#define CONT_NR_STATS	3

struct cont_balloon {
	struct virtio_device *vdev;
	struct virtqueue *inflate_vq, *deflate_vq, *stats_vq;

	struct work_struct size_work;
	struct work_struct stats_work;
	/* Keeps callbacks from queueing work once remove has begun. */
	spinlock_t stop_lock;
	bool stop;

	wait_queue_head_t acked;

	/* Guards everything below and the buffers in flight. */
	struct mutex lock;
	struct list_head blocks;
	unsigned long nr_pages;	/* pages (PAGE_SIZE) in the balloon */
	bool broken;		/* the device stopped answering */
	struct cont_elem elems[CONT_BATCH];

	/* Deflated on OOM: inflate waits for the host to set a target. */
	bool oom_hold;
	struct notifier_block oom_nb;

	struct virtio_balloon_stat stats[CONT_NR_STATS];
};

static const struct virtio_device_id id_table[] = {
	{ VIRTIO_ID_BALLOON, VIRTIO_DEV_ANY_ID },
	{ 0 },
};

static unsigned long run_pages(struct page *page)
{
	unsigned long p = page_private(page);

	return p & RUN_SPLIT ? p & ~RUN_SPLIT : 1UL << p;
}

static void free_run(struct page *page)
{
	unsigned long p = page_private(page), i;

	set_page_private(page, 0);
	if (!(p & RUN_SPLIT)) {
		__free_pages(page, p);
		return;
	}
	/* The memmap of one buddy block is contiguous. */
	for (i = 0; i < (p & ~RUN_SPLIT); i++)
		__free_page(page + i);
}

/*
 * Managed pages are what the guest may use. With DEFLATE_ON_OOM the
 * balloon gives pages back under pressure, so they stay counted, as in
 * Linux's driver.
 */
static void account(struct cont_balloon *cb, struct page *page, long pages)
{
	if (!virtio_has_feature(cb->vdev, VIRTIO_BALLOON_F_DEFLATE_ON_OOM))
		adjust_managed_page_count(page, pages);
}

static void balloon_ack(struct virtqueue *vq)
{
	struct cont_balloon *cb = vq->vdev->priv;

	wake_up(&cb->acked);
}

static bool host_done(struct virtqueue *vq, bool *used)
{
	unsigned int len;

	*used = virtqueue_get_buf(vq, &len) != NULL;
	return *used || virtqueue_is_broken(vq);
}

/*
 * Sends elems[0..n) on vq and sleeps until the device has used them.
 * False if the device broke: then nothing more is sent.
 */
static bool tell_host(struct cont_balloon *cb, struct virtqueue *vq,
		      unsigned int n)
{
	struct scatterlist sg;
	bool used = false;
	int err;

	sg_init_one(&sg, cb->elems, n * sizeof(cb->elems[0]));
	/*
	 * One entry needs no indirect table: nothing is allocated here,
	 * which matters on the OOM path.
	 */
	err = virtqueue_add_outbuf(vq, &sg, 1, cb, GFP_NOWAIT | __GFP_NOWARN);
	if (!err) {
		virtqueue_kick(vq);
		/* Nothing wakes us when the transport breaks the queue. */
		while (!wait_event_timeout(cb->acked, host_done(vq, &used), HZ))
			;
	}
	if (err)
		dev_err(&cb->vdev->dev, "cannot queue a buffer (%d)\n", err);
	else if (!used)
		dev_err(&cb->vdev->dev, "virtqueue %s broke\n", vq->name);
	if (!used) {
		dev_err(&cb->vdev->dev, "balloon stopped where it is\n");
		cb->broken = true;
	}
	return used;
}

static void update_actual(struct cont_balloon *cb)
{
	u32 actual = cb->nr_pages * UNITS_PER_PAGE;

	virtio_cwrite_le(cb->vdev, struct virtio_balloon_config, actual,
			 &actual);
}

static void put_elem(struct cont_balloon *cb, unsigned int n,
		     struct page *page, unsigned long pages)
{
	cb->elems[n].pfn = cpu_to_le32(page_to_pfn(page) * UNITS_PER_PAGE);
	cb->elems[n].size = cpu_to_le32(pages << PAGE_SHIFT);
}

/*
 * Up to CONT_BATCH blocks toward @want pages, the largest that fit.
 * Returns the pages ballooned.
 */
static unsigned long inflate(struct cont_balloon *cb, unsigned long want)
{
	unsigned int n = 0, top = CONT_ORDER, order;
	unsigned long got = 0;
	struct page *page, *next;
	LIST_HEAD(new);

	/*
	 * Allocate outside the lock, so the OOM notifier never waits on
	 * reclaim or compaction done for the balloon.
	 */
	while (n < CONT_BATCH && got < want) {
		order = min_t(unsigned int, top, ilog2(want - got));
		/* An order that failed stays failed for this buffer. */
		while (!(page = alloc_pages(CONT_GFP, order)) && order)
			top = --order;
		if (!page)
			break;
		if (page_to_pfn(page) > U32_MAX / UNITS_PER_PAGE) {
			dev_warn_ratelimited(&cb->vdev->dev,
					     "pfn %#lx does not fit the protocol: not ballooned\n",
					     page_to_pfn(page));
			__free_pages(page, order);
			break;
		}
		set_page_private(page, order);
		list_add_tail(&page->lru, &new);
		n++;
		got += 1UL << order;
	}
	if (!n) {
		dev_info_ratelimited(&cb->vdev->dev,
				     "out of memory: no page for the balloon\n");
		/* Give the rest of the guest a moment before retrying. */
		msleep(200);
		return 0;
	}

	mutex_lock(&cb->lock);
	if (cb->broken) {
		list_for_each_entry_safe(page, next, &new, lru) {
			list_del(&page->lru);
			free_run(page);
		}
		mutex_unlock(&cb->lock);
		return 0;
	}
	n = 0;
	list_for_each_entry(page, &new, lru)
		put_elem(cb, n++, page, run_pages(page));
	/*
	 * Blocks stay in the balloon even if the device broke meanwhile: it
	 * may have released them, and only a reset makes them the guest's
	 * again (see cont_remove).
	 */
	tell_host(cb, cb->inflate_vq, n);
	list_for_each_entry(page, &new, lru)
		account(cb, page, -(long)run_pages(page));
	list_splice(&new, &cb->blocks);
	cb->nr_pages += got;
	update_actual(cb);
	mutex_unlock(&cb->lock);
	return got;
}

/*
 * Cuts the first @pages pages off the block at @page, which has more;
 * the rest stays in its place on the list.
 */
static void cut_run(struct page *page, unsigned long pages)
{
	unsigned long have = run_pages(page);
	struct page *rest = page + pages;

	if (!(page_private(page) & RUN_SPLIT))
		split_page(page, page_private(page));
	set_page_private(rest, RUN_SPLIT | (have - pages));
	list_add(&rest->lru, &page->lru);
	set_page_private(page, RUN_SPLIT | pages);
}

/*
 * Up to CONT_BATCH runs toward @want pages, most recently ballooned
 * first; freed once the device has used the buffer. Returns the pages
 * given back.
 */
static unsigned long deflate(struct cont_balloon *cb, unsigned long want)
{
	struct page *page, *next;
	unsigned long got = 0, pages;
	unsigned int n = 0;
	LIST_HEAD(out);

	mutex_lock(&cb->lock);
	if (cb->broken) {
		mutex_unlock(&cb->lock);
		return 0;
	}
	while (n < CONT_BATCH && got < want && !list_empty(&cb->blocks)) {
		page = list_first_entry(&cb->blocks, struct page, lru);
		pages = run_pages(page);
		if (pages > want - got) {
			pages = want - got;
			cut_run(page, pages);
		}
		list_move_tail(&page->lru, &out);
		put_elem(cb, n++, page, pages);
		got += pages;
	}
	if (!n) {
		mutex_unlock(&cb->lock);
		return 0;
	}
	if (!tell_host(cb, cb->deflate_vq, n)) {
		/* The host was not told: the pages stay out of reach. */
		list_splice(&out, &cb->blocks);
		mutex_unlock(&cb->lock);
		return 0;
	}
	list_for_each_entry_safe(page, next, &out, lru) {
		list_del(&page->lru);
		account(cb, page, run_pages(page));
		free_run(page);
	}
	cb->nr_pages -= got;
	update_actual(cb);
	mutex_unlock(&cb->lock);
	return got;
}

static long towards_target(struct cont_balloon *cb)
{
	u32 target;

	virtio_cread_le(cb->vdev, struct virtio_balloon_config, num_pages,
			&target);
	return (long)(target / UNITS_PER_PAGE) - (long)READ_ONCE(cb->nr_pages);
}

/* One buffer toward the host's target per run; requeued until there. */
static void size_work_fn(struct work_struct *work)
{
	struct cont_balloon *cb = container_of(work, struct cont_balloon,
					       size_work);
	long diff = towards_target(cb);

	if (!diff || READ_ONCE(cb->broken))
		return;
	if (diff > 0) {
		if (READ_ONCE(cb->oom_hold))
			return;
		diff -= inflate(cb, diff);
	} else {
		diff += deflate(cb, -diff);
	}
	if (diff && !READ_ONCE(cb->broken))
		queue_work(system_freezable_wq, work);
}

static void cont_changed(struct virtio_device *vdev)
{
	struct cont_balloon *cb = vdev->priv;
	unsigned long flags;

	spin_lock_irqsave(&cb->stop_lock, flags);
	if (!cb->stop) {
		/* A new target from the host ends an OOM hold. */
		WRITE_ONCE(cb->oom_hold, false);
		queue_work(system_freezable_wq, &cb->size_work);
	}
	spin_unlock_irqrestore(&cb->stop_lock, flags);
}

static int cont_oom_notify(struct notifier_block *nb, unsigned long unused,
			   void *parm)
{
	struct cont_balloon *cb = container_of(nb, struct cont_balloon,
					       oom_nb);
	unsigned long *freed = parm, got;

	got = deflate(cb, CONT_OOM_PAGES);
	if (got)
		WRITE_ONCE(cb->oom_hold, true);
	*freed += got;
	return NOTIFY_OK;
}

static void set_stat(struct cont_balloon *cb, unsigned int n, u16 tag,
		     unsigned long pages)
{
	cb->stats[n].tag = cpu_to_virtio16(cb->vdev, tag);
	cb->stats[n].val = cpu_to_virtio64(cb->vdev, (u64)pages << PAGE_SHIFT);
}

static void fill_stats(struct cont_balloon *cb)
{
	struct sysinfo i;

	si_meminfo(&i);
	set_stat(cb, 0, VIRTIO_BALLOON_S_MEMFREE, i.freeram);
	set_stat(cb, 1, VIRTIO_BALLOON_S_MEMTOT, i.totalram);
	set_stat(cb, 2, VIRTIO_BALLOON_S_AVAIL, si_mem_available());
}

static int post_stats(struct cont_balloon *cb)
{
	struct scatterlist sg;
	int err;

	fill_stats(cb);
	sg_init_one(&sg, cb->stats, sizeof(cb->stats));
	err = virtqueue_add_outbuf(cb->stats_vq, &sg, 1, cb, GFP_KERNEL);
	if (!err)
		virtqueue_kick(cb->stats_vq);
	return err;
}

/* The device returns the stats buffer to ask for fresh figures. */
static void stats_work_fn(struct work_struct *work)
{
	struct cont_balloon *cb = container_of(work, struct cont_balloon,
					       stats_work);
	unsigned int len;

	if (virtqueue_get_buf(cb->stats_vq, &len))
		post_stats(cb);
}

static void stats_request(struct virtqueue *vq)
{
	struct cont_balloon *cb = vq->vdev->priv;

	spin_lock(&cb->stop_lock);
	if (!cb->stop)
		queue_work(system_freezable_wq, &cb->stats_work);
	spin_unlock(&cb->stop_lock);
}

static int init_vqs(struct cont_balloon *cb)
{
	bool stats = virtio_has_feature(cb->vdev, VIRTIO_BALLOON_F_STATS_VQ);
	struct virtqueue *vqs[CONT_VQ_MAX];
	int err;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	/* A queue without a name is not created and takes no index. */
	struct virtqueue_info info[CONT_VQ_MAX] = {
		[CONT_VQ_INFLATE] = { "inflate", balloon_ack },
		[CONT_VQ_DEFLATE] = { "deflate", balloon_ack },
		[CONT_VQ_STATS] = { stats ? "stats" : NULL, stats_request },
		[CONT_VQ_INFLATE_CONT] = { "inflate_cont", balloon_ack },
		[CONT_VQ_DEFLATE_CONT] = { "deflate_cont", balloon_ack },
	};

	err = virtio_find_vqs(cb->vdev, CONT_VQ_MAX, vqs, info, NULL);
#else
	vq_callback_t *callbacks[CONT_VQ_MAX] = {
		[CONT_VQ_INFLATE] = balloon_ack,
		[CONT_VQ_DEFLATE] = balloon_ack,
		[CONT_VQ_STATS] = stats_request,
		[CONT_VQ_INFLATE_CONT] = balloon_ack,
		[CONT_VQ_DEFLATE_CONT] = balloon_ack,
	};
	/* A queue without a name is not created and takes no index. */
	const char *names[CONT_VQ_MAX] = {
		[CONT_VQ_INFLATE] = "inflate",
		[CONT_VQ_DEFLATE] = "deflate",
		[CONT_VQ_STATS] = stats ? "stats" : NULL,
		[CONT_VQ_INFLATE_CONT] = "inflate_cont",
		[CONT_VQ_DEFLATE_CONT] = "deflate_cont",
	};

	err = virtio_find_vqs(cb->vdev, CONT_VQ_MAX, vqs, callbacks, names,
			      NULL);
#endif
	if (err)
		return err;
	/* Queues 0 and 1 exist for the numbering; runs go on the cont pair. */
	cb->inflate_vq = vqs[CONT_VQ_INFLATE_CONT];
	cb->deflate_vq = vqs[CONT_VQ_DEFLATE_CONT];
	if (stats) {
		cb->stats_vq = vqs[CONT_VQ_STATS];
		/* The device answers this first buffer when it wants stats. */
		err = post_stats(cb);
		if (err) {
			cb->vdev->config->del_vqs(cb->vdev);
			return err;
		}
	}
	return 0;
}

static int cont_probe(struct virtio_device *vdev)
{
	struct cont_balloon *cb;
	int err;

	/* Pages are whole 4 KiB units of the protocol. */
	BUILD_BUG_ON(PAGE_SHIFT < VIRTIO_BALLOON_PFN_SHIFT);
	BUILD_BUG_ON(RUN_SPLIT <= (1UL << CONT_ORDER));

	if (!vdev->config->get) {
		dev_err(&vdev->dev, "config space access is disabled\n");
		return -EINVAL;
	}
	if (!virtio_has_feature(vdev, VIRTIO_BALLOON_F_CONT_PAGES)) {
		dev_err(&vdev->dev,
			"device does not offer continuous pages (feature 6); use virtio_balloon\n");
		return -ENODEV;
	}
	/*
	 * The elements are little-endian as in virtio 1.x; a legacy device
	 * leaves that open.
	 */
	if (!virtio_has_feature(vdev, VIRTIO_F_VERSION_1)) {
		dev_err(&vdev->dev, "device is not virtio 1.x\n");
		return -ENODEV;
	}

	cb = kzalloc(sizeof(*cb), GFP_KERNEL);
	if (!cb)
		return -ENOMEM;
	vdev->priv = cb;
	cb->vdev = vdev;
	INIT_WORK(&cb->size_work, size_work_fn);
	INIT_WORK(&cb->stats_work, stats_work_fn);
	spin_lock_init(&cb->stop_lock);
	init_waitqueue_head(&cb->acked);
	mutex_init(&cb->lock);
	INIT_LIST_HEAD(&cb->blocks);

	err = init_vqs(cb);
	if (err)
		goto out_free;

	if (virtio_has_feature(vdev, VIRTIO_BALLOON_F_DEFLATE_ON_OOM)) {
		cb->oom_nb.notifier_call = cont_oom_notify;
		cb->oom_nb.priority = CONT_OOM_PRIORITY;
		err = register_oom_notifier(&cb->oom_nb);
		if (err)
			goto out_del_vqs;
	}

	virtio_device_ready(vdev);
	dev_info(&vdev->dev, "continuous-pages balloon, %s stats, %s deflate on OOM\n",
		 cb->stats_vq ? "with" : "without",
		 virtio_has_feature(vdev, VIRTIO_BALLOON_F_DEFLATE_ON_OOM) ?
		 "with" : "without");
	if (towards_target(cb))
		cont_changed(vdev);
	return 0;

out_del_vqs:
	vdev->config->del_vqs(vdev);
out_free:
	vdev->priv = NULL;
	kfree(cb);
	return err;
}

static void cont_remove(struct virtio_device *vdev)
{
	struct cont_balloon *cb = vdev->priv;
	struct page *page, *next;

	if (virtio_has_feature(vdev, VIRTIO_BALLOON_F_DEFLATE_ON_OOM))
		unregister_oom_notifier(&cb->oom_nb);
	spin_lock_irq(&cb->stop_lock);
	cb->stop = true;
	spin_unlock_irq(&cb->stop_lock);
	cancel_work_sync(&cb->size_work);
	cancel_work_sync(&cb->stats_work);

	/* Tell the host about everything we give back. */
	while (cb->nr_pages && deflate(cb, cb->nr_pages))
		;
	virtio_reset_device(vdev);

	/*
	 * After the reset the device has forgotten the balloon; whatever a
	 * broken device kept is the guest's again.
	 */
	list_for_each_entry_safe(page, next, &cb->blocks, lru) {
		list_del(&page->lru);
		account(cb, page, run_pages(page));
		free_run(page);
	}
	cb->nr_pages = 0;

	vdev->config->del_vqs(vdev);
	kfree(cb);
}

static unsigned int features[] = {
	VIRTIO_BALLOON_F_MUST_TELL_HOST,
	VIRTIO_BALLOON_F_STATS_VQ,
	VIRTIO_BALLOON_F_DEFLATE_ON_OOM,
	VIRTIO_BALLOON_F_CONT_PAGES,
};

static struct virtio_driver cont_balloon_driver = {
	.feature_table = features,
	.feature_table_size = ARRAY_SIZE(features),
	.driver.name = KBUILD_MODNAME,
	.driver.owner = THIS_MODULE,
	.id_table = id_table,
	.probe = cont_probe,
	.remove = cont_remove,
	.config_changed = cont_changed,
};

module_virtio_driver(cont_balloon_driver);
MODULE_DEVICE_TABLE(virtio, id_table);
MODULE_DESCRIPTION("virtio-balloon driver for thpvm's continuous-pages protocol");
MODULE_LICENSE("GPL");
