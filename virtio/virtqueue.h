/* The device side of a split virtqueue (virtio 1.x, 2.7). Everything in the
 * rings is written by the guest at any time, so each descriptor is read
 * once into a local copy and checked before use: indices against the ring
 * size, addresses and lengths against guest RAM (through guest_ram_ptr),
 * chains against loops and the queue size, readable buffers before
 * writable ones, indirect tables not nested. A chain that breaks a rule
 * marks the queue broken with a reason; the device then asks for a reset.
 *
 * Not thread-safe: the device serialises pops and pushes on one queue. */
#ifndef THPVM_VIRTQUEUE_H
#define THPVM_VIRTQUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/guest_ram.h"

/* Largest queue any thpvm device offers; also the longest chain. */
#define VIRTQ_MAX_SIZE 256

struct virtq {
	uint16_t size;		/* 0: not mapped */
	bool event_idx;		/* VIRTIO_RING_F_EVENT_IDX negotiated */
	bool indirect;		/* VIRTIO_RING_F_INDIRECT_DESC negotiated */
	uint8_t *desc;		/* host views of the three areas */
	uint8_t *avail;
	uint8_t *used;
	const struct guest_ram *ram;
	uint16_t last_avail;	/* next avail ring slot to take */
	uint16_t used_idx;	/* our copy of used->idx */
	uint16_t signalled_used;	/* used_idx at the last interrupt */
	bool signalled_valid;
	const char *error;	/* why the queue broke, NULL while healthy */
};

/* One descriptor chain: device-readable buffers (out) first in iov, then
 * device-writable ones (in), each with the guest-physical address it was
 * given at (gpa[i] for iov[i]). Zero-length descriptors are skipped. */
struct virtq_chain {
	uint16_t head;
	unsigned nr_out;
	unsigned nr_in;
	uint64_t out_bytes;
	uint64_t in_bytes;
	struct iovec iov[VIRTQ_MAX_SIZE];
	uint64_t gpa[VIRTQ_MAX_SIZE];
};

/* Checks the three areas (size a power of two up to VIRTQ_MAX_SIZE, each
 * area aligned as the spec requires and inside guest RAM) and maps them.
 * features are the negotiated ones (event index, indirect descriptors).
 * Returns 0, or -EINVAL with vq->error set. */
int virtq_map(struct virtq *vq, const struct guest_ram *ram, uint16_t size,
	      uint64_t desc_gpa, uint64_t avail_gpa, uint64_t used_gpa,
	      uint64_t features);
void virtq_unmap(struct virtq *vq);

/* Takes the next available chain: 1 if one was taken, 0 if the ring is
 * empty, -EIO if the guest broke a rule (vq->error says which; the queue
 * stays broken until it is mapped again). */
int virtq_pop(struct virtq *vq, struct virtq_chain *chain);
/* Puts the chain virtq_pop just took back: the next virtq_pop takes it
 * again, read anew from the ring (and checked anew), for a device that
 * cannot use it yet. Only with nothing taken since. */
void virtq_unpop(struct virtq *vq);
/* Whether the guest made a chain available that is not taken yet. */
bool virtq_has_avail(const struct virtq *vq);
/* Returns a chain to the guest; written is the number of bytes the device
 * wrote into its writable buffers. */
void virtq_push(struct virtq *vq, uint16_t head, uint32_t written);
/* For chains the guest must see used together (one network packet over
 * several receive buffers): fill writes the used element i places after
 * the last pushed one, flush then publishes n elements at once. */
void virtq_fill(struct virtq *vq, unsigned i, uint16_t head,
		uint32_t written);
void virtq_flush(struct virtq *vq, unsigned n);
/* After one or more pushes: whether the guest wants an interrupt now
 * (VRING_AVAIL_F_NO_INTERRUPT, or used_event with EVENT_IDX). */
bool virtq_need_interrupt(struct virtq *vq);

/* Notification suppression around a processing loop: disable while
 * draining, then enable; virtq_enable_notify returns true if buffers were
 * added meanwhile, and the caller must drain again. */
void virtq_disable_notify(struct virtq *vq);
bool virtq_enable_notify(struct virtq *vq);

/* Copies between a chain's buffers and a flat buffer, starting skip bytes
 * into the readable (out) or writable (in) part. Return the bytes copied. */
uint64_t virtq_chain_read(const struct virtq_chain *chain, uint64_t skip,
			  void *dst, uint64_t len);
uint64_t virtq_chain_write(const struct virtq_chain *chain, uint64_t skip,
			   const void *src, uint64_t len);

#endif
