/* The sPAPR virtual terminal's byte queues. */
#include "arch/powerpc/vty.h"

void spapr_vty_init(struct spapr_vty *vty, struct console_out *out)
{
	vty->out = out;
	byte_ring_init(&vty->in, vty->in_buf, sizeof(vty->in_buf));
	pthread_mutex_init(&vty->lock, NULL);
}

void spapr_vty_destroy(struct spapr_vty *vty)
{
	pthread_mutex_destroy(&vty->lock);
}

void spapr_vty_put(struct spapr_vty *vty, const uint8_t *buf, size_t len)
{
	console_out_put(vty->out, buf, len);
}

size_t spapr_vty_get(struct spapr_vty *vty, uint8_t *buf, size_t max)
{
	size_t n;

	pthread_mutex_lock(&vty->lock);
	n = byte_ring_get(&vty->in, buf, max);
	pthread_mutex_unlock(&vty->lock);
	return n;
}

static size_t vty_receive(void *dev, const uint8_t *buf, size_t len)
{
	struct spapr_vty *vty = dev;
	size_t n;

	pthread_mutex_lock(&vty->lock);
	n = byte_ring_put(&vty->in, buf, len);
	pthread_mutex_unlock(&vty->lock);
	return n;
}

static size_t vty_rx_room(void *dev)
{
	struct spapr_vty *vty = dev;
	size_t room;

	pthread_mutex_lock(&vty->lock);
	room = byte_ring_room(&vty->in);
	pthread_mutex_unlock(&vty->lock);
	return room;
}

const struct vm_console_ops spapr_vty_console_ops = {
	.receive = vty_receive,
	.rx_room = vty_rx_room,
};
