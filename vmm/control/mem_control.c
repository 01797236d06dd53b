/* The control socket's mem command: a new requested size for the guest's
 * hotplugged memory, checked here so that the user hears why, and the
 * device's figures with the host's view of the region. */
#include "control/mem_control.h"

#include <errno.h>
#include <string.h>

#include "control/control_server.h"
#include "lib/util.h"
#include "virtio/mem.h"
#include "machine/machine.h"

const char *const mem_control_args[] = { "set", NULL };

static int set_requested(struct virtio_mem *m, const struct json_value *req,
			 struct json_writer *reply)
{
	struct virtio_mem_info mi;
	char a[32], b[32];
	uint64_t n;

	if (!json_get(req, "set"))
		return 0;
	if (!json_get_u64(req, "set", &n))
		return control_reply_error(reply, -EINVAL,
					   "\"set\" must be a size in bytes");
	virtio_mem_info(m, &mi);
	size_format(n, a, sizeof(a));
	if (n > mi.region_size)
		return control_reply_error(reply, -ERANGE,
					   "cannot plug %s: the hotplug region "
					   "holds %s", a,
					   size_format(mi.region_size, b,
						       sizeof(b)));
	if (n % mi.block_size)
		return control_reply_error(reply, -EINVAL,
					   "cannot plug %s: not a multiple of "
					   "the %s block", a,
					   size_format(mi.block_size, b,
						       sizeof(b)));
	return virtio_mem_set_requested(m, n);
}

static void write_mem_info(struct json_writer *reply,
			   const struct virtio_mem_info *mi,
			   const struct guest_ram_usage *u)
{
	json_field_uint(reply, "block_size", mi->block_size);
	json_field_uint(reply, "addr", mi->addr);
	json_field_uint(reply, "region_size", mi->region_size);
	json_field_uint(reply, "usable_region_size", mi->usable_region_size);
	json_field_uint(reply, "requested_size", mi->requested_size);
	json_field_uint(reply, "plugged_size", mi->plugged_size);
	json_field_uint(reply, "plugs", mi->plugs);
	json_field_uint(reply, "unplugs", mi->unplugs);
	json_field_uint(reply, "refused", mi->refused);
	json_field_uint(reply, "released", mi->released);
	json_field_uint(reply, "release_calls", mi->release_calls);
	json_field_uint(reply, "release_errors", mi->release_errors);
	json_field_bool(reply, "driver_ok", mi->driver_ok);
	json_field_uint(reply, "resident", u->resident);
	json_field_uint(reply, "huge", u->huge);
	json_field_double(reply, "huge_percent",
			  mi->plugged_size ? 100.0 * (double)u->huge /
						     (double)mi->plugged_size :
					     0);
}

int mem_control_handle(void *opaque, const struct json_value *request,
		       struct json_writer *reply)
{
	struct virtio_mem *m = machine_mem(opaque);
	struct virtio_mem_info mi;
	struct guest_ram_usage u;
	int err;

	if (!m)
		return control_reply_error(reply, -ENODEV,
					   "this VM has no virtio-mem device "
					   "(start it with thpvm run "
					   "--mem-hotplug=SIZE)");
	err = set_requested(m, request, reply);
	if (err)
		return err;
	err = guest_ram_hotplug_usage(m->vdev.ram, &u);
	if (err)
		return control_reply_error(reply, err,
					   "cannot read the region's host "
					   "memory: %s", strerror(-err));
	virtio_mem_info(m, &mi);
	write_mem_info(reply, &mi, &u);
	return 0;
}
