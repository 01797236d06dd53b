/* virtio-9p (virtio 1.x, 5.x "9P transport"): one host directory shared
 * with the guest over the 9P2000.L file server (backend/p9_server.h),
 * found by the guest under its mount tag (the configuration space). One
 * request queue; its chains are answered by a few worker threads, so
 * that a slow call (a large read, an fsync) holds up no other request.
 * A Tflush is the device's to answer: after the reply of the request it
 * names, if that one is still held, at once otherwise. */
#ifndef THPVM_VIRTIO_P9_H
#define THPVM_VIRTIO_P9_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/p9_server.h"
#include "virtio/virtio.h"

#define P9_QUEUE_SIZE 128
#define P9_WORKERS 4
/* The window in which a worker that answered a request polls for the
 * next (p9.c, answer_and_poll): as blk's. */
#define P9_POLL_MIN_NS 2000
#define P9_POLL_MAX_NS 32000
/* The longest mount tag thpvm offers: a name typed at a mount command,
 * for which 31 bytes are plenty. */
#define P9_TAG_MAX 31

struct p9_request;

struct virtio_p9 {
	struct virtio_device vdev;
	struct p9_server *server;
	char name[24];
	/* Fixed once made: what `thpvm stat` shows, with the server's
	 * figures (p9_server_stats, thread-safe). */
	const char *dir;		/* the share, as the user named it */
	char tag[P9_TAG_MAX + 1];
	bool read_only;
	/* le16 tag_len, then the tag without a terminator. */
	uint8_t config[2 + P9_TAG_MAX];

	/* Under vdev.lock: every request is spare, pending (waiting for
	 * a worker), running (with a worker), or a Tflush held on the
	 * flushes list of the pending or running request it names. */
	struct p9_request *requests;	/* P9_QUEUE_SIZE of them */
	struct p9_request *spare;
	struct p9_request *pending, **pending_tail;
	struct p9_request *running;
	unsigned inflight;		/* taken and not yet used */
	pthread_cond_t idle;		/* inflight dropped to 0 */
	pthread_cond_t work;		/* pending not empty, or stopping */
	bool stopping;
	bool polling;			/* a worker polls the queue */
	uint64_t poll_ns;		/* its window */
	uint64_t poll_missed;		/* when one last found nothing, or 0 */
	pthread_t workers[P9_WORKERS];
	unsigned nr_workers;
};

/* Opens dir as the share (one message on failure) and starts the
 * workers; index names the device (virtio-9p0...). tag: 1 to P9_TAG_MAX
 * bytes. */
int virtio_p9_create(struct virtio_p9 *p9, unsigned index, const char *dir,
		     const char *tag, bool read_only,
		     const struct guest_ram *ram);
void virtio_p9_destroy(struct virtio_p9 *p9);

#endif
