/* The guest's console as the front end (cli/) sees it, whatever device
 * the arch made it: the bytes typed go in, and the front end asks how
 * many more fit before it reads them. Output goes from the device
 * through the VM's console_out (core/console_out.h) to stdout. */
#ifndef THPVM_CORE_CONSOLE_H
#define THPVM_CORE_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

struct vm_console_ops {
	/* Queues input for the guest; returns how many bytes fit. */
	size_t (*receive)(void *dev, const uint8_t *buf, size_t len);
	/* Bytes that receive would take now. */
	size_t (*rx_room)(void *dev);
};

struct vm_console {
	const struct vm_console_ops *ops;	/* NULL: no console */
	void *dev;
};

static inline size_t vm_console_receive(const struct vm_console *con,
					const uint8_t *buf, size_t len)
{
	return con->ops ? con->ops->receive(con->dev, buf, len) : 0;
}

static inline size_t vm_console_rx_room(const struct vm_console *con)
{
	return con->ops ? con->ops->rx_room(con->dev) : 0;
}

#endif
