/* The vCPU thread: enter the guest, dispatch the exit, repeat, parking
 * while the VM is paused and leaving when it stops.
 *
 * Kicking: the kick signal is blocked in every thread and unblocked only
 * inside KVM_RUN (KVM_SET_SIGNAL_MASK), so a kick that arrives while the
 * thread is outside the guest stays pending and makes the next KVM_RUN
 * return at once: no window in which a kick is lost. */
#include "core/vcpu.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/thread_name.h"

#define VCPU_KICK_SIGNAL SIGUSR1

static void kick_handler(int sig)
{
	(void)sig;
}

int vcpu_signals_init(void)
{
	struct sigaction sa = { .sa_handler = kick_handler };
	sigset_t set;

	sigemptyset(&sa.sa_mask);
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0)
		return -errno;
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* The mask KVM_RUN runs with: the thread's mask minus the kick signal. */
static int set_run_signal_mask(struct vcpu *vcpu)
{
	struct {
		struct kvm_signal_mask hdr;
		uint8_t sigset[8];	/* the kernel's sigset_t on 64-bit */
	} mask;
	sigset_t set;

	if (pthread_sigmask(SIG_BLOCK, NULL, &set))
		return -EINVAL;
	sigdelset(&set, VCPU_KICK_SIGNAL);
	mask.hdr.len = sizeof(mask.sigset);
	memcpy(mask.sigset, &set, sizeof(mask.sigset));
	if (ioctl(vcpu->fd, KVM_SET_SIGNAL_MASK, &mask) < 0)
		return -errno;
	return 0;
}

/* A kick stays pending after KVM_RUN returns; take it so the next KVM_RUN
 * does not return at once again. */
static void consume_kicks(void)
{
	static const struct timespec zero;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	while (sigtimedwait(&set, NULL, &zero) > 0)
		;
}

int vcpu_create(struct vm *vm, struct vcpu *vcpu, unsigned id)
{
	void *run;

	vcpu->vm = vm;
	vcpu->id = id;
	vcpu->thread_started = false;
	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (vcpu->fd < 0) {
		pr_err("KVM_CREATE_VCPU %u: %s", id, strerror(errno));
		return -errno;
	}
	run = mmap(NULL, vm->vcpu_mmap_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, vcpu->fd, 0);
	if (run == MAP_FAILED) {
		int err = -errno;

		pr_err("mmap of vCPU %u state: %s", id, strerror(errno));
		close(vcpu->fd);
		vcpu->fd = -1;
		return err;
	}
	vcpu->run = run;
	return 0;
}

static void handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;
	uint32_t i;

	/* String I/O (rep ins/outs) arrives as count back-to-back items. */
	for (i = 0; i < run->io.count; i++, data += run->io.size) {
		if (!io_bus_dispatch(&vcpu->vm->pio, run->io.port, data,
				     run->io.size, is_write) &&
		    !is_write)
			memset(data, 0xff, run->io.size);
	}
}

static void handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t len = run->mmio.len;

	if (len > sizeof(run->mmio.data))
		len = sizeof(run->mmio.data);
	if (!io_bus_dispatch(&vcpu->vm->mmio, run->mmio.phys_addr,
			     run->mmio.data, len, run->mmio.is_write)) {
		if (!run->mmio.is_write)
			memset(run->mmio.data, 0xff, len);
		pr_debug("vCPU %u: %s of unclaimed MMIO 0x%llx", vcpu->id,
			 run->mmio.is_write ? "write" : "read",
			 (unsigned long long)run->mmio.phys_addr);
	}
}

/* Returns false when the vCPU must stop running. */
static bool handle_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		handle_io(vcpu);
		return true;
	case KVM_EXIT_MMIO:
		handle_mmio(vcpu);
		return true;
	case KVM_EXIT_INTR:
	case KVM_EXIT_IRQ_WINDOW_OPEN:
		return true;
	case KVM_EXIT_SYSTEM_EVENT:
		switch (run->system_event.type) {
		case KVM_SYSTEM_EVENT_SHUTDOWN:
		case KVM_SYSTEM_EVENT_RESET:
			vm_request_exit(vm, 0, VM_EXIT_RESET);
			return false;
		default:
			pr_err("vCPU %u: guest reported a crash (system event %u)",
			       vcpu->id, run->system_event.type);
			vm_request_exit(vm, 1, VM_EXIT_FAILURE);
			return false;
		}
	default:
		if (arch_vcpu_exit(vcpu))
			return true;
		/* Triple faults, emulation and entry failures, anything
		 * unknown: one line from the arch code that knows the
		 * registers. */
		arch_vcpu_report_failure(vcpu);
		vm_request_exit(vm, 1, VM_EXIT_FAILURE);
		return false;
	}
}

void vcpu_set_powered_off(struct vcpu *vcpu, bool off)
{
	struct vm *vm = vcpu->vm;

	pthread_mutex_lock(&vm->lock);
	vcpu->powered_off = off;
	pthread_cond_broadcast(&vm->state_changed);
	pthread_mutex_unlock(&vm->lock);
}

bool vcpu_powered_off(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	bool off;

	pthread_mutex_lock(&vm->lock);
	off = vcpu->powered_off;
	pthread_mutex_unlock(&vm->lock);
	return off;
}

/* Waits while the VM is paused or the vCPU powered off. Returns false
 * when the vCPU must exit. */
static bool wait_runnable(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	bool run;

	pthread_mutex_lock(&vm->lock);
	while (vm->state == VM_PAUSED ||
	       (vcpu->powered_off && vm->state != VM_STOPPING)) {
		vm->vcpus_parked++;
		pthread_cond_broadcast(&vm->state_changed);
		pthread_cond_wait(&vm->state_changed, &vm->lock);
		vm->vcpus_parked--;
	}
	run = vm->state != VM_STOPPING;
	pthread_mutex_unlock(&vm->lock);
	return run;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	int err;

	thread_name_set(pthread_self(), "vcpu%u", vcpu->id);
	err = set_run_signal_mask(vcpu);
	if (err) {
		pr_err("vCPU %u: KVM_SET_SIGNAL_MASK: %s", vcpu->id,
		       strerror(-err));
		vm_request_exit(vm, 1, VM_EXIT_FAILURE);
	}
	/* Before the first guest exit reaches this thread. */
	sandbox_enter(SANDBOX_VCPU);
	while (wait_runnable(vcpu)) {
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			/* EINTR: kicked. EAGAIN: an AP woke from
			 * wait-for-SIPI. Either way, look at the state. */
			if (errno == EINTR || errno == EAGAIN) {
				consume_kicks();
				continue;
			}
			pr_err("vCPU %u: KVM_RUN: %s", vcpu->id,
			       strerror(errno));
			vm_request_exit(vm, 1, VM_EXIT_FAILURE);
			break;
		}
		if (!handle_exit(vcpu))
			break;
	}
	pthread_mutex_lock(&vm->lock);
	vm->vcpus_exited++;
	pthread_cond_broadcast(&vm->state_changed);
	pthread_mutex_unlock(&vm->lock);
	return NULL;
}

int vcpu_start(struct vcpu *vcpu)
{
	int err = pthread_create(&vcpu->thread, NULL, vcpu_thread, vcpu);

	if (err) {
		pr_err("cannot start the thread of vCPU %u: %s", vcpu->id,
		       strerror(err));
		return -err;
	}
	vcpu->thread_started = true;
	return 0;
}

void vcpu_kick(struct vcpu *vcpu)
{
	if (vcpu->thread_started)
		pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
}

void vcpu_join(struct vcpu *vcpu)
{
	if (vcpu->thread_started) {
		pthread_join(vcpu->thread, NULL);
		vcpu->thread_started = false;
	}
}

void vcpu_destroy(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vcpu->vm->vcpu_mmap_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	vcpu->run = NULL;
	vcpu->fd = -1;
}
