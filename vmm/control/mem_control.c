/* The control socket's mem command: a new requested size for the guest's
 * hotplugged memory, checked here so that the user hears why, and the
 * device's figures with the host's view of the region. */
#include "control/mem_control.h"

#include <errno.h>
#include <string.h>

#include "control/control_server.h"
#include "control/ram_reply.h"
#include "lib/util.h"
#include "virtio/mem.h"
#include "machine/machine.h"

const char *const mem_control_args[] = { "set", NULL };

static int set_requested(struct virtio_mem *m, json_t *req, json_t *reply)
{
	struct virtio_mem_info mi;
	char a[32], b[32];
	uint64_t n;

	if (!json_object_get(req, "set"))
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

static int write_mem_info(json_t *reply, const struct virtio_mem_info *mi,
			  const struct guest_ram_usage *u)
{
	int err;

	err = control_reply_add(reply, json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
		" s:b}",
		"block_size", json_from_u64(mi->block_size),
		"addr", json_from_u64(mi->addr),
		"region_size", json_from_u64(mi->region_size),
		"usable_region_size", json_from_u64(mi->usable_region_size),
		"requested_size", json_from_u64(mi->requested_size),
		"plugged_size", json_from_u64(mi->plugged_size),
		"plugs", json_from_u64(mi->plugs),
		"unplugs", json_from_u64(mi->unplugs),
		"refused", json_from_u64(mi->refused),
		"released", json_from_u64(mi->released),
		"release_calls", json_from_u64(mi->release_calls),
		"release_errors", json_from_u64(mi->release_errors),
		"driver_ok", mi->driver_ok));
	if (err)
		return err;
	/* The region's backing, against what the guest plugged. */
	return ram_reply_add(reply, u, mi->plugged_size);
}

int mem_control_handle(void *opaque, json_t *request, json_t *reply)
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
	return write_mem_info(reply, &mi, &u);
}
