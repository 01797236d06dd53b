/* virtio-rng (virtio 1.x, 5.4): one request queue whose device-writable
 * buffers the device fills from the host's getrandom(). What it serves
 * is limited per period of one second, so that a guest asking without
 * end costs the host a bounded amount of work: once a period's bytes are
 * spent, requests wait on the ring until a timer starts the next one. */
#ifndef THPVM_VIRTIO_RNG_H
#define THPVM_VIRTIO_RNG_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "virtio/virtio.h"

#define RNG_QUEUE_SIZE 64
/* --rng's bytes_per_sec: its default and range (docs/virtio.md). */
#define RNG_DEFAULT_BYTES_PER_SEC (1ULL << 20)
#define RNG_MAX_BYTES_PER_SEC (64ULL << 20)
/* What a request costs the period at least, however few bytes it asks
 * for: the rate then also bounds requests, at bytes_per_sec / 64. */
#define RNG_MIN_CHARGE 64

struct virtio_rng {
	struct virtio_device vdev;
	uint64_t bytes_per_sec;
	int timer_fd;			/* the next period's start */

	/* Under vdev.lock. */
	uint64_t budget;		/* bytes the period has left */
	struct timespec period_end;	/* CLOCK_MONOTONIC */
	bool waiting;			/* requests wait for the timer */
	uint64_t served;		/* bytes given to the guest */
	uint64_t requests;		/* chains used */
};

struct virtio_rng_info {
	uint64_t bytes_per_sec;
	uint64_t served;
	uint64_t requests;
};

/* bytes_per_sec from 1 to RNG_MAX_BYTES_PER_SEC. */
int virtio_rng_create(struct virtio_rng *r, uint64_t bytes_per_sec,
		      const struct guest_ram *ram);
void virtio_rng_destroy(struct virtio_rng *r);
void virtio_rng_info(struct virtio_rng *r, struct virtio_rng_info *info);

#endif
