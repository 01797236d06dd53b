/* VM lifecycle: create (KVM, RAM, platform, vCPUs), start, pause, resume,
 * exit. Run-state changes go through vm->lock so the control socket thread,
 * the vCPU threads and the main thread agree on them. */
#include "core/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/vcpu.h"
#include "lib/log.h"
#include "lib/util.h"

/* How long the guest's last output may wait at exit for a reader that
 * does not read (console_out_close). */
#define CONSOLE_DRAIN_MS 500

static int kvm_open(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	switch (errno) {
	case ENOENT:
		pr_err("/dev/kvm does not exist: this host has no KVM (load "
		       "the kvm module, or enable virtualization)");
		break;
	case EACCES:
	case EPERM:
		pr_err("/dev/kvm: permission denied (run as root or join "
		       "the group that owns /dev/kvm)");
		break;
	default:
		pr_err("cannot open /dev/kvm: %s", strerror(errno));
	}
	return -errno;
}

/* What every arch uses: memslots, and notifications and interrupts
 * through eventfds with a GSI routing table. */
static const struct kvm_cap_need core_kvm_caps[] = {
	KVM_CAP_NEED(USER_MEMORY),
	KVM_CAP_NEED(IOEVENTFD),
	KVM_CAP_NEED(IRQFD),
	{ 0, NULL },
};

static int kvm_check_caps(int kvm_fd, const struct kvm_cap_need *caps)
{
	for (; caps->name; caps++) {
		if (ioctl(kvm_fd, KVM_CHECK_EXTENSION, caps->cap) <= 0) {
			pr_err("KVM lacks KVM_CAP_%s", caps->name);
			return -ENOTSUP;
		}
	}
	return 0;
}

static int kvm_check(struct vm *vm)
{
	int version, max_vcpus, err;

	version = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION) {
		pr_err("KVM API version %d, thpvm needs %d", version,
		       KVM_API_VERSION);
		return -EINVAL;
	}
	err = kvm_check_caps(vm->kvm_fd, core_kvm_caps) ?:
	      kvm_check_caps(vm->kvm_fd, arch_kvm_caps);
	if (err)
		return err;
	max_vcpus = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (max_vcpus <= 0)
		max_vcpus = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
				  KVM_CAP_NR_VCPUS);
	if (max_vcpus <= 0)
		max_vcpus = 1;
	if ((unsigned)max_vcpus > arch_max_vcpus())
		max_vcpus = arch_max_vcpus();
	if (vm->cfg->nr_vcpus > (unsigned)max_vcpus) {
		pr_err("%u vCPUs requested, at most %d are supported here",
		       vm->cfg->nr_vcpus, max_vcpus);
		return -EINVAL;
	}
	vm->vcpu_mmap_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->vcpu_mmap_size <= 0) {
		pr_err("KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
		return -EINVAL;
	}
	return 0;
}

static int kvm_irq_line(void *opaque, unsigned line, bool level)
{
	struct vm *vm = opaque;
	struct kvm_irq_level irq = {
		.irq = arch_irq_line_kvm(line),
		.level = level,
	};

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0 ? -errno : 0;
}

static int vm_map_ram(struct vm *vm)
{
	struct ram_range ranges[GUEST_RAM_MAX_REGIONS];
	uint64_t hotplug_gpa;
	int nr, err;

	nr = arch_ram_layout(vm->cfg->ram_size, guest_ram_align(), ranges);
	if (nr < 0) {
		pr_err("cannot lay out %llu MiB of guest RAM",
		       (unsigned long long)(vm->cfg->ram_size >> 20));
		return nr;
	}
	err = guest_ram_map(&vm->ram, ranges, nr, vm->cfg->ram_backing,
			    vm->cfg->hugetlbfs_dir);
	if (!err && vm->cfg->hotplug_size)
		err = arch_hotplug_base(&vm->ram, vm->cfg->hotplug_size,
					&hotplug_gpa) ?:
		      guest_ram_map_hotplug(&vm->ram, hotplug_gpa,
					    vm->cfg->hotplug_size);
	if (err)
		return err;
	return guest_ram_register(&vm->ram, vm->vm_fd);
}

int vm_create(struct vm *vm, const struct vm_config *cfg)
{
	unsigned i;
	long type;
	int err;

	memset(vm, 0, sizeof(*vm));
	vm->cfg = cfg;
	vm->kvm_fd = vm->vm_fd = vm->exit_eventfd = -1;
	guest_ram_init(&vm->ram);
	vm->state = VM_CREATED;
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->state_changed, NULL);

	vm->kvm_fd = kvm_open();
	if (vm->kvm_fd < 0)
		return vm->kvm_fd;
	err = kvm_check(vm);
	if (err)
		return err;
	type = arch_vm_type(vm->kvm_fd, cfg->ram_size, cfg->hotplug_size);
	if (type < 0)
		return type;
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, type);
	if (vm->vm_fd < 0) {
		pr_err("KVM_CREATE_VM: %s", strerror(errno));
		return -errno;
	}
	irq_routing_init(&vm->irq, vm->vm_fd);
	err = irq_lines_init(&vm->lines, arch_irq_layout.nr,
			     arch_irq_layout.first, arch_irq_layout.count,
			     kvm_irq_line, vm);
	if (err) {
		pr_err("cannot set up %u interrupt lines: %s",
		       arch_irq_layout.nr, strerror(-err));
		return err;
	}
	vm->exit_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->exit_eventfd < 0) {
		pr_err("cannot make the VM's exit eventfd: %s",
		       strerror(errno));
		return -errno;
	}
	err = vm_map_ram(vm);
	if (err)
		return err;
	err = console_out_init(&vm->console_out, cfg->console_fd,
			       CONSOLE_OUT_SIZE, cfg->console_filter);
	if (err)
		return err;
	err = arch_vm_init(vm);
	if (err)
		return err;
	err = vcpu_signals_init();
	if (err) {
		pr_err("cannot set up the signal that kicks vCPUs: %s",
		       strerror(-err));
		return err;
	}
	vm->vcpus = calloc(cfg->nr_vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		pr_err("cannot allocate %u vCPUs", cfg->nr_vcpus);
		return -ENOMEM;
	}
	for (i = 0; i < cfg->nr_vcpus; i++)
		vm->vcpus[i].fd = -1;
	for (i = 0; i < cfg->nr_vcpus; i++) {
		err = vcpu_create(vm, &vm->vcpus[i], i);
		if (err)
			return err;
		vm->nr_vcpus++;
		err = arch_vcpu_init(vm, &vm->vcpus[i]);
		if (err)
			return err;
	}
	return arch_vcpus_created(vm);
}

int vm_start(struct vm *vm)
{
	unsigned i;
	int err = 0;

	pthread_mutex_lock(&vm->lock);
	if (vm->state == VM_CREATED)
		vm->state = VM_RUNNING;
	for (i = 0; i < vm->nr_vcpus && !err; i++)
		err = vcpu_start(&vm->vcpus[i]);
	pthread_mutex_unlock(&vm->lock);
	if (err)
		vm_request_exit(vm, 1, VM_EXIT_FAILURE);
	return err;
}

/* Platform devices get whole pages, as a device tree describes them. */
#define PLATFORM_MMIO_ALIGN 4096

int vm_alloc_mmio(struct vm *vm, uint64_t size, uint64_t *base)
{
	uint64_t start = vm->mmio_next;

	size = ALIGN_UP(size, PLATFORM_MMIO_ALIGN);
	if (!size || size > vm->mmio_end - start)
		return -ENOSPC;
	vm->mmio_next = start + size;
	*base = start;
	return 0;
}

static void kick_all_locked(struct vm *vm)
{
	unsigned i;

	for (i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
}

int vm_pause(struct vm *vm)
{
	int err = 0;

	pthread_mutex_lock(&vm->lock);
	if (vm->state == VM_PAUSED) {
		err = -EALREADY;
	} else if (vm->state != VM_RUNNING) {
		err = -EINVAL;
	} else {
		vm->state = VM_PAUSED;
		kick_all_locked(vm);
		while (vm->state == VM_PAUSED &&
		       vm->vcpus_parked + vm->vcpus_exited < vm->nr_vcpus)
			pthread_cond_wait(&vm->state_changed, &vm->lock);
	}
	pthread_mutex_unlock(&vm->lock);
	/* Then the devices, which no vCPU can notify any more. */
	if (!err)
		vm_devices_pause(vm);
	return err;
}

int vm_resume(struct vm *vm)
{
	int err = 0;

	pthread_mutex_lock(&vm->lock);
	if (vm->state == VM_RUNNING) {
		err = -EALREADY;
	} else if (vm->state != VM_PAUSED) {
		err = -EINVAL;
	} else {
		/* Devices first: a vCPU may notify one at once. */
		vm_devices_resume(vm);
		vm->state = VM_RUNNING;
		pthread_cond_broadcast(&vm->state_changed);
	}
	pthread_mutex_unlock(&vm->lock);
	return err;
}

void vm_request_exit(struct vm *vm, int status, enum vm_exit_reason reason)
{
	bool first;
	int err;

	pthread_mutex_lock(&vm->lock);
	first = vm->state != VM_STOPPING;
	if (first) {
		vm->state = VM_STOPPING;
		vm->exit_status = status;
		vm->exit_reason = reason;
		pthread_cond_broadcast(&vm->state_changed);
		kick_all_locked(vm);
	}
	pthread_mutex_unlock(&vm->lock);
	if (!first)
		return;
	err = eventfd_signal(vm->exit_eventfd);
	if (err)
		pr_err("cannot signal VM exit: %s", strerror(-err));
}

int vm_stop(struct vm *vm)
{
	unsigned i;

	vm_request_exit(vm, 0, VM_EXIT_STOP);
	for (i = 0; i < vm->nr_vcpus; i++)
		vcpu_join(&vm->vcpus[i]);
	return vm->exit_status;
}

void vm_destroy(struct vm *vm)
{
	unsigned i;

	for (i = 0; i < vm->nr_vcpus; i++)
		vcpu_destroy(&vm->vcpus[i]);
	free(vm->vcpus);
	vm->vcpus = NULL;
	vm->nr_vcpus = 0;
	vm->devices = NULL;
	arch_vm_destroy(vm);
	/* After the vCPUs and the UART: the last of the guest's output. */
	console_out_close(&vm->console_out, CONSOLE_DRAIN_MS);
	io_bus_free(&vm->pio);
	io_bus_free(&vm->mmio);
	pci_bus_free(&vm->pci);
	irq_routing_free(&vm->irq);
	irq_lines_free(&vm->lines);
	guest_ram_unmap(&vm->ram);
	if (vm->exit_eventfd >= 0)
		close(vm->exit_eventfd);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->exit_eventfd = vm->vm_fd = vm->kvm_fd = -1;
}

enum vm_state vm_get_state(struct vm *vm)
{
	enum vm_state state;

	pthread_mutex_lock(&vm->lock);
	state = vm->state;
	pthread_mutex_unlock(&vm->lock);
	return state;
}

const char *vm_exit_reason_name(enum vm_exit_reason reason)
{
	switch (reason) {
	case VM_EXIT_GUEST: return "guest";
	case VM_EXIT_RESET: return "reset";
	case VM_EXIT_STOP: return "stop";
	case VM_EXIT_SIGNAL: return "signal";
	case VM_EXIT_FAILURE: return "failure";
	}
	return "unknown";
}

const char *vm_state_name(enum vm_state state)
{
	switch (state) {
	case VM_CREATED: return "created";
	case VM_RUNNING: return "running";
	case VM_PAUSED: return "paused";
	case VM_STOPPING: return "stopping";
	}
	return "unknown";
}
