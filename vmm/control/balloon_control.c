/* The control socket's balloon command: the target a request asks for,
 * and the reply that shows the balloon. Like the VM's other commands
 * (vm_control.c) it runs on the server thread. */
#include "control/balloon_control.h"

#include <errno.h>
#include <string.h>

#include "control/control_server.h"
#include "control/ram_reply.h"
#include "lib/util.h"
#include "virtio/balloon.h"
#include "machine/machine.h"

const char *const balloon_control_args[] = {
	"inflate", "deflate", "set", NULL
};

int balloon_control_target(json_t *request, uint64_t ram, uint64_t target,
			   uint64_t *out, json_t *reply)
{
	const char *const *keys = balloon_control_args;
	const char *key = NULL;
	char a[32], b[32];
	uint64_t n = 0;
	unsigned i;

	/* Which one first: its value is checked only when it is alone. */
	for (i = 0; keys[i]; i++) {
		if (!json_object_get(request, keys[i]))
			continue;
		if (key)
			return control_reply_error(reply, -EINVAL,
						   "balloon takes one of "
						   "\"inflate\", \"deflate\" "
						   "and \"set\"");
		key = keys[i];
	}
	*out = target;
	if (!key)
		return 0;
	if (!json_get_u64(request, key, &n))
		return control_reply_error(reply, -EINVAL,
					   "\"%s\" must be a size in bytes",
					   key);
	/* The device counts in pages; rounding would change a request
	 * the user made into a smaller one unannounced. */
	if (n % BALLOON_PAGE_SIZE)
		return control_reply_error(reply, -EINVAL,
					   "\"%s\" must be a multiple of 4 "
					   "KiB, the balloon's page size", key);
	size_format(n, a, sizeof(a));
	size_format(ram, b, sizeof(b));
	if (!strcmp(key, "inflate")) {
		if (n > ram - target)
			return control_reply_error(reply, -ERANGE,
						   "cannot inflate by %s: the "
						   "balloon would hold more "
						   "than the guest's %s of RAM",
						   a, b);
		*out = target + n;
	} else if (!strcmp(key, "deflate")) {
		if (n > target)
			return control_reply_error(reply, -ERANGE,
						   "cannot deflate by %s: the "
						   "balloon target is %s", a,
						   size_format(target, b,
							       sizeof(b)));
		*out = target - n;
	} else {
		if (!n || n > ram)
			return control_reply_error(reply, -ERANGE,
						   "cannot set guest memory to "
						   "%s: it must be more than 0 "
						   "and at most its %s of RAM",
						   a, b);
		*out = ram - n;
	}
	return 0;
}

static int write_balloon(json_t *reply,
			 const struct virtio_balloon_info *bi,
			 const struct guest_ram_usage *u)
{
	static const char *const names[] = VIRTIO_BALLOON_S_NAMES;
	json_t *stats;
	unsigned i;
	int err;

	err = control_reply_add(reply, json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
		" s:s, s:b}",
		"ram", json_from_u64(bi->ram),
		"target", json_from_u64(bi->target),
		"guest_target", json_from_u64(bi->ram - bi->target),
		"actual", json_from_u64(bi->actual),
		"ballooned", json_from_u64(bi->ballooned),
		"held", json_from_u64(bi->held),
		"partial_blocks", json_from_u64(bi->partial_blocks),
		"released", json_from_u64(bi->released),
		"release_calls", json_from_u64(bi->release_calls),
		"release_errors", json_from_u64(bi->release_errors),
		"ignored", json_from_u64(bi->ignored),
		"policy", balloon_policy_name(bi->policy),
		"driver_ok", bi->driver_ok));
	if (!err)
		err = ram_reply_add(reply, u, u->size);
	if (err || bi->stats_age < 0)
		return err;
	stats = json_object();
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (bi->stats_mask & 1U << i)
			err |= json_object_set_new(stats, names[i],
						   json_from_u64(bi->stats[i]));
	if (err) {
		json_decref(stats);
		return -ENOMEM;
	}
	return control_reply_add(reply, json_pack("{s:o, s:o}",
		"stats_age", json_from_double(bi->stats_age),
		"stats", stats));
}

int balloon_control_handle(void *opaque, json_t *request, json_t *reply)
{
	struct virtio_balloon *b = machine_balloon(opaque);
	struct virtio_balloon_info bi;
	struct guest_ram_usage u;
	uint64_t target;
	int err;

	if (!b)
		return control_reply_error(reply, -ENODEV,
					   "this VM has no balloon (start it "
					   "with thpvm run --balloon)");
	virtio_balloon_info(b, &bi);
	err = balloon_control_target(request, bi.ram, bi.target, &target,
				     reply);
	if (err)
		return err;
	if (target != bi.target) {
		err = virtio_balloon_set_target(b, target);
		if (err)
			return control_reply_error(reply, err,
						   "cannot set the balloon "
						   "target: %s",
						   strerror(-err));
		virtio_balloon_info(b, &bi);
	}
	err = guest_ram_usage(b->vdev.ram, &u);
	if (err)
		return control_reply_error(reply, err,
					   "cannot read RAM usage: %s",
					   strerror(-err));
	return write_balloon(reply, &bi, &u);
}
