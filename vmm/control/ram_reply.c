/* The host's view of guest RAM in a reply (see ram_reply.h). */
#include "control/ram_reply.h"

#include "control/control_server.h"

int ram_reply_add(json_t *reply, const struct guest_ram_usage *u,
		  uint64_t whole)
{
	return control_reply_add(reply, json_pack("{s:o, s:o, s:o}",
		"resident", json_from_u64(u->resident),
		"huge", json_from_u64(u->huge),
		"huge_percent", json_from_double(whole ?
			100.0 * (double)u->huge / (double)whole : 0)));
}
