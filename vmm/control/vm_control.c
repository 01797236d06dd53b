/* VM commands for the control socket. They run on the server thread and
 * use only the thread-safe vm_* calls and the guest RAM layout, which does
 * not change while the VM runs. */
#include "control/vm_control.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "backend/net_user.h"
#include "control/balloon_control.h"
#include "control/control_server.h"
#include "control/mem_control.h"
#include "control/ram_reply.h"
#include "core/vm.h"
#include "lib/util.h"
#include "machine/machine.h"

/* Each command's opaque is the struct machine. */
static struct vm *vm_of(void *machine)
{
	return &((struct machine *)machine)->vm;
}

static const char *backing_name(enum ram_backing backing)
{
	switch (backing) {
	case RAM_BACKING_THP: return "thp";
	case RAM_BACKING_NO_THP: return "no-thp";
	case RAM_BACKING_HUGETLBFS: return "hugetlbfs";
	}
	return "unknown";
}

static int write_info(struct machine *m, json_t *reply)
{
	struct vm *vm = &m->vm;
	int err;

	err = control_reply_add(reply, json_pack(
		"{s:o, s:i, s:s, s:o, s:o, s:s}",
		"name", json_string_lossy(vm->cfg->name),
		"pid", (int)getpid(),
		"state", vm_state_name(vm_get_state(vm)),
		"vcpus", json_from_u64(vm->nr_vcpus),
		"ram", json_from_u64(vm->ram.total),
		"backing", backing_name(vm->ram.backing)));
	if (!err && m->cfg->console_socket)
		err = control_reply_add(reply, json_pack("{s:o}",
			"console_socket",
			json_string_lossy(m->cfg->console_socket)));
	return err;
}

static int handle_info(void *opaque, json_t *request, json_t *reply)
{
	return write_info(opaque, reply);
}

/* The rng's figures, where the VM has one. */
static int write_rng(struct machine *m, json_t *reply)
{
	struct virtio_rng *rng = machine_rng(m);
	struct virtio_rng_info ri;

	if (!rng)
		return 0;
	virtio_rng_info(rng, &ri);
	return control_reply_add(reply, json_pack("{s:o, s:o, s:o}",
		"rng_bytes", json_from_u64(ri.served),
		"rng_requests", json_from_u64(ri.requests),
		"rng_bytes_per_sec", json_from_u64(ri.bytes_per_sec)));
}

/* stat's summary of the hotplug region (hotplug_*), where the VM has
 * virtio-mem; `thpvm mem` answers with all of its figures
 * (mem_control.c). */
static int write_hotplug(struct machine *m, json_t *reply)
{
	struct virtio_mem *mem = machine_mem(m);
	struct virtio_mem_info mi;
	struct guest_ram_usage u;
	int err;

	if (!mem)
		return 0;
	err = guest_ram_hotplug_usage(&m->vm.ram, &u);
	if (err)
		return control_reply_error(reply, err,
					   "cannot read the hotplug region's "
					   "usage: %s", strerror(-err));
	virtio_mem_info(mem, &mi);
	return control_reply_add(reply, json_pack("{s:o, s:o, s:o, s:o, s:o}",
		"hotplug_region", json_from_u64(mi.region_size),
		"hotplug_requested", json_from_u64(mi.requested_size),
		"hotplug_plugged", json_from_u64(mi.plugged_size),
		"hotplug_resident", json_from_u64(u.resident),
		"hotplug_huge", json_from_u64(u.huge)));
}

/* How much of the console's output waits or was lost. */
static int write_console(struct vm *vm, json_t *reply)
{
	struct console_out_stats con;
	int err;

	console_out_stats(&vm->console_out, &con);
	err = control_reply_add(reply, json_pack("{s:o, s:o}",
		"console_pending", json_from_u64(con.pending),
		"console_dropped", json_from_u64(con.dropped)));
	if (!err && vm->cfg->console_filter)
		err = control_reply_add(reply, json_pack("{s:o}",
			"console_filtered", json_from_u64(con.filtered)));
	return err;
}

/* Each disk with how its requests run, and on how many queues. */
static int write_disks(struct machine *m, json_t *reply)
{
	json_t *disks = json_array();
	struct virtio_blk *blk;
	unsigned i;
	int err = 0;

	for (i = 0; (blk = machine_disk(m, i)); i++)
		err |= json_array_append_new(disks, json_pack(
			"{s:s, s:o, s:s, s:s, s:o, s:b, s:b}",
			"name", blk->name,
			"path", json_string_lossy(blk->disk.file.path),
			"format", disk_format_name(blk->disk.format),
			"engine", blk_engine_name(blk->engine),
			"queues", json_from_u64(blk->nr_queues),
			"direct", blk->disk.file.direct,
			"read_only", blk->disk.read_only));
	if (err) {
		json_decref(disks);
		return -ENOMEM;
	}
	return control_reply_add(reply, json_pack("{s:o}", "disks", disks));
}

/* Each 9p share with what its server answered and holds. */
static int write_shares(struct machine *m, json_t *reply)
{
	json_t *shares = json_array();
	struct p9_server_stats st;
	struct virtio_p9 *p9;
	unsigned i;
	int err = 0;

	for (i = 0; (p9 = machine_share(m, i)); i++) {
		p9_server_stats(p9->server, &st);
		err |= json_array_append_new(shares, json_pack(
			"{s:s, s:o, s:o, s:b, s:o, s:o, s:o, s:o}",
			"name", p9->name,
			"tag", json_string_lossy(p9->tag),
			"path", json_string_lossy(p9->dir),
			"read_only", p9->read_only,
			"requests", json_from_u64(st.requests),
			"errors", json_from_u64(st.errors),
			"fids", json_from_u64(st.fids),
			"open", json_from_u64(st.open)));
	}
	if (err) {
		json_decref(shares);
		return -ENOMEM;
	}
	return control_reply_add(reply, json_pack("{s:o}", "shares", shares));
}

/* The user-mode network: its forwards, frames both ways and libslirp's
 * connections now. */
static int write_net_user(struct machine *m, json_t *reply)
{
	struct net_user *nu = machine_net_user(m);
	const struct net_user_config *c;
	struct net_user_stats st;
	json_t *fwds;
	char text[64];
	unsigned i;
	int err = 0;

	if (!nu)
		return 0;
	err = net_user_stats(nu, &st);
	if (err)
		return err;
	c = net_user_config(nu);
	fwds = json_array();
	for (i = 0; i < c->nr_fwds; i++) {
		net_user_fwd_format(c, &c->fwds[i], text, sizeof(text));
		err |= json_array_append_new(fwds, json_string(text));
	}
	if (err) {
		json_decref(fwds);
		return -ENOMEM;
	}
	return control_reply_add(reply, json_pack("{s:{s:o, s:o, s:o, s:o, "
		"s:o, s:o, s:o}}", "net_user",
		"forwards", fwds,
		"frames_in", json_from_u64(st.frames_in),
		"frames_out", json_from_u64(st.frames_out),
		"dropped", json_from_u64(st.dropped),
		"tcp", json_from_u64(st.tcp),
		"udp", json_from_u64(st.udp),
		"icmp", json_from_u64(st.icmp)));
}

static int handle_stat(void *opaque, json_t *request, json_t *reply)
{
	struct vm *vm = vm_of(opaque);
	struct guest_ram_usage u;
	int err;

	err = guest_ram_usage(&vm->ram, &u);
	if (err)
		return control_reply_error(reply, err,
					   "cannot read RAM usage: %s",
					   strerror(-err));
	err = write_info(opaque, reply);
	if (!err)
		err = ram_reply_add(reply, &u, u.size);
	if (!err)
		err = write_hotplug(opaque, reply);
	if (!err)
		err = write_console(vm, reply);
	if (!err)
		err = write_rng(opaque, reply);
	if (!err)
		err = write_disks(opaque, reply);
	if (!err)
		err = write_shares(opaque, reply);
	if (!err)
		err = write_net_user(opaque, reply);
	return err;
}

static int handle_pause(void *opaque, json_t *request, json_t *reply)
{
	struct vm *vm = vm_of(opaque);
	int err = vm_pause(vm);

	if (err == -EALREADY)
		return control_reply_error(reply, err, "VM is already paused");
	if (err == -EINVAL)
		return control_reply_error(reply, err,
					   "cannot pause: the VM is %s",
					   vm_state_name(vm_get_state(vm)));
	return err;
}

static int handle_resume(void *opaque, json_t *request, json_t *reply)
{
	struct vm *vm = vm_of(opaque);
	int err = vm_resume(vm);

	if (err == -EALREADY)
		return control_reply_error(reply, err, "VM is not paused");
	if (err == -EINVAL)
		return control_reply_error(reply, err,
					   "cannot resume: the VM is %s",
					   vm_state_name(vm_get_state(vm)));
	return err;
}

/* Only asks the main loop to end the VM: the reply goes out from this
 * thread before the main loop closes the server. */
static int handle_stop(void *opaque, json_t *request, json_t *reply)
{
	vm_request_exit(vm_of(opaque), 0, VM_EXIT_STOP);
	return 0;
}

int vm_control_register(struct control_server *srv, struct machine *m)
{
	static const struct {
		const char *name;
		const char *const *args;
		control_handler_fn fn;
	} commands[] = {
		{ "info", NULL, handle_info },
		{ "stat", NULL, handle_stat },
		{ "pause", NULL, handle_pause },
		{ "resume", NULL, handle_resume },
		{ "stop", NULL, handle_stop },
		{ "balloon", balloon_control_args, balloon_control_handle },
		{ "mem", mem_control_args, mem_control_handle },
	};
	unsigned i;
	int err;

	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		err = control_server_add_command(srv, commands[i].name,
						 commands[i].args,
						 commands[i].fn, m);
		if (err)
			return err;
	}
	return 0;
}
