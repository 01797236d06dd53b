/* How the host backs guest RAM, as the stat, balloon and mem replies
 * show it (docs/control-protocol.md). */
#ifndef THPVM_RAM_REPLY_H
#define THPVM_RAM_REPLY_H

#include <stdint.h>

#include "core/guest_ram.h"
#include "lib/json.h"

/* Adds "resident", "huge" and "huge_percent" (u->huge as a percentage of
 * whole bytes; 0 when whole is 0) to reply. Returns 0 or -ENOMEM. */
int ram_reply_add(json_t *reply, const struct guest_ram_usage *u,
		  uint64_t whole);

#endif
