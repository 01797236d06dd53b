/* VM commands for the control socket. They run on the server thread and
 * use only the thread-safe vm_* calls and the guest RAM layout, which does
 * not change while the VM runs. */
#include "control/vm_control.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "control/balloon_control.h"
#include "control/control_server.h"
#include "control/mem_control.h"
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

static void write_info(struct machine *m, struct json_writer *reply)
{
	struct vm *vm = &m->vm;

	json_field_string(reply, "name", vm->cfg->name);
	json_field_int(reply, "pid", getpid());
	json_field_string(reply, "state", vm_state_name(vm_get_state(vm)));
	json_field_uint(reply, "vcpus", vm->nr_vcpus);
	json_field_uint(reply, "ram", vm->ram.total);
	json_field_string(reply, "backing", backing_name(vm->ram.backing));
	if (m->cfg->console_socket)
		json_field_string(reply, "console_socket",
				  m->cfg->console_socket);
}

static int handle_info(void *opaque, const struct json_value *request,
		       struct json_writer *reply)
{
	write_info(opaque, reply);
	return 0;
}

/* The rng's figures, where the VM has one. */
static void write_rng(struct machine *m, struct json_writer *reply)
{
	struct virtio_rng *rng = machine_rng(m);
	struct virtio_rng_info ri;

	if (!rng)
		return;
	virtio_rng_info(rng, &ri);
	json_field_uint(reply, "rng_bytes", ri.served);
	json_field_uint(reply, "rng_requests", ri.requests);
	json_field_uint(reply, "rng_bytes_per_sec", ri.bytes_per_sec);
}

/* stat's summary of the hotplug region (hotplug_*), where the VM has
 * virtio-mem; `thpvm mem` answers with all of its figures
 * (mem_control.c). */
static int write_hotplug(struct machine *m, struct json_writer *reply)
{
	struct virtio_mem *mem = machine_mem(m);
	struct virtio_mem_info mi;
	struct guest_ram_usage u;
	int err;

	if (!mem)
		return 0;
	err = guest_ram_hotplug_usage(&m->vm.ram, &u);
	if (err)
		return err;
	virtio_mem_info(mem, &mi);
	json_field_uint(reply, "hotplug_region", mi.region_size);
	json_field_uint(reply, "hotplug_requested", mi.requested_size);
	json_field_uint(reply, "hotplug_plugged", mi.plugged_size);
	json_field_uint(reply, "hotplug_resident", u.resident);
	json_field_uint(reply, "hotplug_huge", u.huge);
	return 0;
}

/* Each disk with how its requests run, and on how many queues. */
static void write_disks(struct machine *m, struct json_writer *reply)
{
	struct virtio_blk *blk;
	unsigned i;

	json_write_key(reply, "disks");
	json_write_array_begin(reply);
	for (i = 0; (blk = machine_disk(m, i)); i++) {
		json_write_object_begin(reply);
		json_field_string(reply, "name", blk->name);
		json_field_string(reply, "path", blk->disk.path);
		json_field_string(reply, "engine", blk_engine_name(blk->engine));
		json_field_uint(reply, "queues", blk->nr_queues);
		json_field_bool(reply, "direct", blk->disk.direct);
		json_field_bool(reply, "read_only", blk->disk.read_only);
		json_write_object_end(reply);
	}
	json_write_array_end(reply);
}

static int handle_stat(void *opaque, const struct json_value *request,
		       struct json_writer *reply)
{
	struct vm *vm = vm_of(opaque);
	struct console_out_stats con;
	struct guest_ram_usage u;
	int err;

	err = guest_ram_usage(&vm->ram, &u);
	if (err)
		return control_reply_error(reply, err,
					   "cannot read RAM usage: %s",
					   strerror(-err));
	write_info(opaque, reply);
	json_field_uint(reply, "resident", u.resident);
	json_field_uint(reply, "huge", u.huge);
	json_field_double(reply, "huge_percent",
			  u.size ? 100.0 * (double)u.huge / (double)u.size : 0);
	err = write_hotplug(opaque, reply);
	if (err)
		return control_reply_error(reply, err,
					   "cannot read the hotplug region's "
					   "usage: %s", strerror(-err));
	console_out_stats(&vm->console_out, &con);
	json_field_uint(reply, "console_pending", con.pending);
	json_field_uint(reply, "console_dropped", con.dropped);
	if (vm->cfg->console_filter)
		json_field_uint(reply, "console_filtered", con.filtered);
	write_rng(opaque, reply);
	write_disks(opaque, reply);
	return 0;
}

static int handle_pause(void *opaque, const struct json_value *request,
			struct json_writer *reply)
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

static int handle_resume(void *opaque, const struct json_value *request,
			 struct json_writer *reply)
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
static int handle_stop(void *opaque, const struct json_value *request,
		       struct json_writer *reply)
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
