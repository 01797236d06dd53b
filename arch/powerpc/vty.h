/* The sPAPR virtual terminal ("hvterm1" under /vdevice): the guest's
 * console through the H_PUT_TERM_CHAR and H_GET_TERM_CHAR hypercalls,
 * up to 16 bytes a call. The guest polls it (its node names no
 * interrupt), so input waits here until asked for. */
#ifndef THPVM_PPC_VTY_H
#define THPVM_PPC_VTY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/console.h"
#include "core/console_out.h"
#include "lib/byte_ring.h"

#define VTY_CHARS_MAX	16	/* per hypercall: two registers' worth */
#define VTY_INPUT_SIZE	4096

struct spapr_vty {
	struct console_out *out;
	pthread_mutex_t lock;
	struct byte_ring in;		/* typed bytes, under lock */
	uint8_t in_buf[VTY_INPUT_SIZE];
};

extern const struct vm_console_ops spapr_vty_console_ops;

void spapr_vty_init(struct spapr_vty *vty, struct console_out *out);
void spapr_vty_destroy(struct spapr_vty *vty);
/* The guest writes len bytes (H_PUT_TERM_CHAR). */
void spapr_vty_put(struct spapr_vty *vty, const uint8_t *buf, size_t len);
/* The guest reads: up to max bytes into buf; returns how many. */
size_t spapr_vty_get(struct spapr_vty *vty, uint8_t *buf, size_t max);

#endif
