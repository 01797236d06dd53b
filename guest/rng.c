/* virtio-rng check (virtio spec 5.4) on the first virtio-rng device:
 * RNG_BYTES read in requests of RNG_REQ, one at a time as Linux's driver
 * sends them; a device may fill less than asked (a rate limit), so the
 * rest is asked again until all has come or the deadline passes. The
 * bytes must not be all zero, must take many values, and no request may
 * repeat the last one's bytes. */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "virtio.h"

#define VIRTIO_ID_RNG		4
#define RNG_BYTES		4096
#define RNG_REQ			1024
/* A rate-limited device may take seconds (thpvm's --rng=bytes_per_sec). */
#define RNG_WAIT_MS		10000
/* 4096 random bytes take nearly all 256 values; a device returning a
 * pattern of a few would not. */
#define RNG_MIN_VALUES		64
#define IRQ_WAIT_MS		1000

static struct virtio_dev dev;

/* One request for len bytes at buf; sleeps until it is used. Returns
 * the bytes the device wrote, or -1 with *why. */
static int request(uint8_t *buf, uint32_t len, uint64_t deadline,
		   const char **why)
{
	struct vq_buf b = { (uint64_t)buf, len, true };
	struct virtq *vq = &dev.vq[0];
	unsigned cfg = virtio_config_irqs(&dev);
	uint32_t used;
	void *token;
	int rc;

	vq_add(vq, &b, 1, 0, buf);
	vq_kick(vq);
	while (!(rc = vq_get_used(vq, &token, &used))) {
		if (cfg != virtio_config_irqs(&dev) &&
		    virtio_status(&dev) & VIRTIO_S_NEEDS_RESET) {
			*why = "needs-reset";
			return -1;
		}
		if (clock_now() > deadline) {
			*why = "timeout";
			return -1;
		}
		virtio_idle(&dev);
	}
	if (rc < 0 || token != buf) {
		*why = "bad-used-id";
		return -1;
	}
	if (used > len) {
		*why = "bad-used-len";
		return -1;
	}
	return used;
}

/* Why the bytes do not look random, or 0. */
static const char *judge(const uint8_t *p, unsigned n, unsigned *values,
			 unsigned *zeros)
{
	bool seen[256] = { false };

	*values = *zeros = 0;
	for (unsigned i = 0; i < n; i++) {
		*zeros += !p[i];
		if (!seen[p[i]])
			(*values)++;
		seen[p[i]] = true;
	}
	if (*zeros == n)
		return "all-zero";
	return *values < RNG_MIN_VALUES ? "few-values" : 0;
}

void run_rng(void)
{
	const struct virtio_cand *c = 0;
	unsigned got = 0, requests = 0, last = 0, values = 0, zeros = 0;
	uint64_t start, deadline;
	const char *why = 0;
	uint8_t *buf;

	for (unsigned i = 0; i < virtio_ncands && !c; i++)
		if (virtio_cands[i].id == VIRTIO_ID_RNG)
			c = &virtio_cands[i];
	if (!c) {
		report(false, "rng", "reason=no-device");
		return;
	}
	buf = alloc_pages(RNG_BYTES / 4096);
	memset(buf, 0, RNG_BYTES);
	dev.may_poll = true;
	dev.config_optional = true;
	if (!virtio_probe(&dev, c, 1, &why) || !virtio_start(&dev, 0, &why)) {
		report(false, "rng-init", "%s reason=%s", c->where, why);
		return;
	}
	watchdog_start();
	start = clock_now();
	deadline = clock_deadline(RNG_WAIT_MS);
	while (got < RNG_BYTES && !why) {
		int n = request(buf + got, MIN(RNG_REQ, RNG_BYTES - got),
				deadline, &why);

		if (n < 0)
			break;
		requests++;
		/* The same bytes twice: a device replaying a buffer. */
		if (n >= 16 && last >= 16 &&
		    !memcmp(buf + got, buf + got - last, MIN(last, (unsigned)n)))
			why = "repeated";
		got += n;
		if (n)
			last = n;
	}
	if (!why)
		why = judge(buf, RNG_BYTES, &values, &zeros);
	/* The device's first completion always interrupts, but a guest
	 * that never had to sleep has not taken it yet. */
	deadline = clock_deadline(IRQ_WAIT_MS);
	while (!why && !dev.polled && !virtio_queue_irqs(&dev) &&
	       clock_now() < deadline)
		wait_irq();
	if (!why && !dev.polled && !virtio_queue_irqs(&dev))
		why = "no-interrupt";
	if (why)
		report(false, "rng", "%s bytes=%u requests=%u reason=%s",
		       c->where, got, requests, why);
	else
		report(true, "rng", "%s bytes=%u requests=%u values=%u "
		       "zeros=%u ns=%lu irq=%s queue_irqs=%u", c->where, got,
		       requests, values, zeros,
		       clock_to_ns(clock_now() - start), virtio_irq_mode(&dev),
		       virtio_queue_irqs(&dev));
	/* Quiet the device for whatever runs next. */
	virtio_reset(&dev);
	watchdog_stop();
}
