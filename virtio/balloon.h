/* virtio-balloon (virtio 1.x, 5.5) with the continuous-pages extension.
 * The guest gives pages up on the inflate queues and takes them back on
 * the deflate queues; core/balloon_release.c decides when their host
 * memory is released. Also: free page reporting, memory statistics
 * polled on a host timer, deflate on OOM (a guest-side promise only).
 * See docs/balloon.md. */
#ifndef THPVM_VIRTIO_BALLOON_H
#define THPVM_VIRTIO_BALLOON_H

#include <linux/virtio_balloon.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/balloon_release.h"
#include "virtio/virtio.h"

/* Not upstream: the continuous-pages series (feature bit 6) adds
 * inflate_cont_vq and deflate_cont_vq after the upstream queues; their
 * elements are { le32 pfn; le32 size in bytes }. */
#define VIRTIO_BALLOON_F_CONT_PAGES 6

/* --balloon[=OPTIONS]; defaults and why in docs/balloon.md. */
struct balloon_config {
	unsigned stats_interval;	/* seconds; 0: no stats queue */
	bool deflate_on_oom;
	bool reporting;			/* free page reporting */
	bool cont_pages;		/* VIRTIO_BALLOON_F_CONT_PAGES */
	enum balloon_policy policy;
};

#define BALLOON_DEFAULT_STATS_INTERVAL 5
#define BALLOON_MAX_STATS_INTERVAL 3600

/* inflate, deflate, stats, reporting, inflate_cont, deflate_cont: the
 * most any feature set uses (free page hints are not offered). */
#define BALLOON_NR_QUEUES 6
#define BALLOON_QUEUE_SIZE 256

/* What a queue index means; it depends on the negotiated features,
 * since Linux numbers only the queues that exist. */
enum balloon_vq_role {
	BVQ_INFLATE,
	BVQ_DEFLATE,
	BVQ_STATS,
	BVQ_REPORTING,
	BVQ_INFLATE_CONT,
	BVQ_DEFLATE_CONT,
	BVQ_NONE,
};

/* Work a pass over one queue may do, in pages handed to the release
 * logic (each chain and each element counts at least one): the device
 * lets its lock go at least this often, and what is left waits for the
 * queue's next pass, after the device thread's other events. */
#define BALLOON_PASS_BUDGET (1u << 16)

/* An inflate or deflate chain being worked through: a pass that runs
 * out of budget puts the chain back at the head of its ring and keeps
 * how far it got here, and the queue's next pass takes it again and
 * goes on. */
struct balloon_work {
	bool held;			/* the chain at the head is begun */
	uint64_t off;			/* array bytes looked at */
	uint64_t pages_left;		/* what the chain may still cover */
	struct balloon_range rest;	/* of an element cut at the budget */
};

struct virtio_balloon_info {
	uint64_t ram;			/* guest RAM, bytes */
	uint64_t target;		/* bytes the balloon should hold */
	uint64_t actual;		/* bytes the driver says it holds */
	uint64_t ballooned;		/* bytes the host saw inflated */
	uint64_t held;			/* of which in partial blocks */
	uint64_t partial_blocks;
	uint64_t released;		/* bytes given back so far */
	uint64_t release_calls;
	uint64_t release_errors;	/* calls that failed */
	uint64_t ignored;		/* refused elements (pfns, ranges) */
	uint64_t features;		/* negotiated */
	bool driver_ok;
	enum balloon_policy policy;
	uint64_t stats[VIRTIO_BALLOON_S_NR];
	uint32_t stats_mask;
	double stats_age;		/* seconds; negative: none yet */
};

struct virtio_balloon {
	struct virtio_device vdev;
	struct virtio_balloon_config config;
	struct balloon_config opts;
	struct balloon_release release;	/* under vdev.lock */
	enum balloon_vq_role roles[BALLOON_NR_QUEUES];
	uint32_t target_pages;		/* num_pages as the device has it */
	int timer_fd;			/* stats requests; -1 without */
	struct balloon_range *scratch;	/* one batch of ranges */
	struct balloon_work work[BALLOON_NR_QUEUES];
	uint64_t budget;		/* what the running pass has left */

	/* The stats buffer the driver posted, held until the next request,
	 * and the last statistics it carried. */
	uint16_t stats_head;
	bool stats_held;
	uint64_t stats[VIRTIO_BALLOON_S_NR];
	uint32_t stats_mask;		/* which tags were present */
	struct timespec stats_time;	/* CLOCK_MONOTONIC */

	/* The host side (the control socket) uses these under host_lock and
	 * never waits for vdev.lock, so that it never waits for queue work:
	 * the target it asked for, which goes into num_pages as soon as the
	 * device lock is free, and what the device showed at the end of its
	 * last pass or change of state (no ram, target or stats_age). */
	pthread_mutex_t host_lock;
	uint32_t host_target;		/* pages */
	struct virtio_balloon_info shown;
	struct timespec shown_stats_time;
};

/* release NULL: the real release calls (tests pass a recorder). */
int virtio_balloon_create(struct virtio_balloon *b,
			  const struct balloon_config *opts,
			  const struct guest_ram *ram,
			  balloon_release_fn release, void *release_opaque);
void virtio_balloon_destroy(struct virtio_balloon *b);

/* The host wants the balloon to hold bytes (rounded down to pages):
 * num_pages changes and the driver gets a configuration interrupt, at
 * once or, while a pass of queue work holds the device, from the device
 * thread after it. -ERANGE beyond guest RAM. Neither call waits for
 * queue work. */
int virtio_balloon_set_target(struct virtio_balloon *b, uint64_t bytes);
void virtio_balloon_info(struct virtio_balloon *b,
			 struct virtio_balloon_info *info);

#endif
