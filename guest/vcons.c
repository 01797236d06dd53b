/* virtio-console check (virtio spec 5.3) on the first virtio-console
 * device, one port as without VIRTIO_CONSOLE_F_MULTIPORT: a line sent on
 * the transmit queue ("tg: vcons ready", which the host sees on the VM's
 * console), then one line read from the receive queue, which the host
 * types after seeing the first, and reported through the UART. */
#include "guest.h"
#include "lib.h"
#include "virtio.h"

#define VIRTIO_ID_CONSOLE	3
#define RXQ			0
#define TXQ			1
#define LINE_MAX		64
#define VCONS_WAIT_MS		10000

static struct virtio_dev dev;

/* Waits for the one chain in flight on vq; *len its used length. */
static bool wait_used(struct virtq *vq, void *want, uint32_t *len,
		      uint64_t deadline, const char **why)
{
	void *token;
	int rc;

	while (!(rc = vq_get_used(vq, &token, len))) {
		if (virtio_status(&dev) & VIRTIO_S_NEEDS_RESET) {
			*why = "needs-reset";
			return false;
		}
		if (clock_now() > deadline) {
			*why = "timeout";
			return false;
		}
		virtio_idle(&dev);
	}
	if (rc < 0 || token != want) {
		*why = "bad-used-id";
		return false;
	}
	return true;
}

static bool transmit(const char *s, const char **why)
{
	uint32_t n = strlen(s), used;
	char *buf = alloc_pages(1);
	struct vq_buf b = { (uint64_t)buf, n, false };

	memcpy(buf, s, n);
	vq_add(&dev.vq[TXQ], &b, 1, 0, buf);
	vq_kick(&dev.vq[TXQ]);
	if (!wait_used(&dev.vq[TXQ], buf, &used, clock_deadline(VCONS_WAIT_MS),
		       why))
		return false;
	if (used) {
		*why = "tx-used-len";
		return false;
	}
	return true;
}

/* Receive buffers one at a time until a newline; line without it. */
static bool receive_line(char *line, const char **why)
{
	uint64_t deadline = clock_deadline(VCONS_WAIT_MS);
	char *buf = alloc_pages(1);
	unsigned got = 0;

	for (;;) {
		struct vq_buf b = { (uint64_t)buf, LINE_MAX, true };
		uint32_t used;

		vq_add(&dev.vq[RXQ], &b, 1, 0, buf);
		vq_kick(&dev.vq[RXQ]);
		if (!wait_used(&dev.vq[RXQ], buf, &used, deadline, why))
			return false;
		if (used > LINE_MAX) {
			*why = "rx-used-len";
			return false;
		}
		for (uint32_t i = 0; i < used; i++) {
			if (buf[i] == '\n' || buf[i] == '\r') {
				line[got] = 0;
				return true;
			}
			if (got < LINE_MAX - 1)
				line[got++] = buf[i];
		}
	}
}

void run_vcons(void)
{
	const struct virtio_cand *c = 0;
	char line[LINE_MAX] = "";
	const char *why = 0;

	for (unsigned i = 0; i < virtio_ncands && !c; i++)
		if (virtio_cands[i].id == VIRTIO_ID_CONSOLE)
			c = &virtio_cands[i];
	if (!c) {
		report(false, "vcons", "reason=no-device");
		return;
	}
	dev.may_poll = true;
	dev.config_optional = true;
	if (!virtio_probe(&dev, c, 2, &why) || !virtio_start(&dev, 0, &why)) {
		report(false, "vcons-init", "%s reason=%s", c->where, why);
		return;
	}
	watchdog_start();
	if (transmit("tg: vcons ready\n", &why) && receive_line(line, &why))
		report(true, "vcons", "%s text=%s irq=%s", c->where, line,
		       virtio_irq_mode(&dev));
	else
		report(false, "vcons", "%s reason=%s", c->where, why);
	virtio_reset(&dev);
	watchdog_stop();
}
