/* The sPAPR virtual terminal's byte queues. */
#include "arch/powerpc/vty.h"

#include "lib/util.h"

void spapr_vty_init(struct spapr_vty *vty, struct console_out *out)
{
	vty->out = out;
	vty->head = vty->len = 0;
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
	for (n = 0; n < max && vty->len; n++) {
		buf[n] = vty->in[vty->head];
		vty->head = (vty->head + 1) % VTY_INPUT_SIZE;
		vty->len--;
	}
	pthread_mutex_unlock(&vty->lock);
	return n;
}

static size_t vty_receive(void *dev, const uint8_t *buf, size_t len)
{
	struct spapr_vty *vty = dev;
	size_t n;

	pthread_mutex_lock(&vty->lock);
	for (n = 0; n < len && vty->len < VTY_INPUT_SIZE; n++) {
		vty->in[(vty->head + vty->len) % VTY_INPUT_SIZE] = buf[n];
		vty->len++;
	}
	pthread_mutex_unlock(&vty->lock);
	return n;
}

static size_t vty_rx_room(void *dev)
{
	struct spapr_vty *vty = dev;
	size_t room;

	pthread_mutex_lock(&vty->lock);
	room = VTY_INPUT_SIZE - vty->len;
	pthread_mutex_unlock(&vty->lock);
	return room;
}

const struct vm_console_ops spapr_vty_console_ops = {
	.receive = vty_receive,
	.rx_room = vty_rx_room,
};
