/* vCPUs: one host thread each, running KVM_RUN and dispatching exits. */
#ifndef THPVM_VCPU_H
#define THPVM_VCPU_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>

struct vm;

struct vcpu {
	struct vm *vm;
	unsigned id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool thread_started;
	/* Waits outside KVM_RUN until the guest starts it, where KVM does not
	 * hold CPUs off itself (powerpc's RTAS start-cpu); under vm->lock
	 * once the thread runs. */
	bool powered_off;
};

/* Installs the kick signal handler and blocks the signal in the calling
 * thread (and so in threads it creates). Call once, before any vCPU. */
int vcpu_signals_init(void);
int vcpu_create(struct vm *vm, struct vcpu *vcpu, unsigned id);
int vcpu_start(struct vcpu *vcpu);
/* Powers the vCPU on or off: off, its thread waits before its next
 * KVM_RUN (and counts as parked for vm_pause); on, it runs again. */
void vcpu_set_powered_off(struct vcpu *vcpu, bool off);
bool vcpu_powered_off(struct vcpu *vcpu);
/* Makes the vCPU leave KVM_RUN (or not enter it) soon. */
void vcpu_kick(struct vcpu *vcpu);
void vcpu_join(struct vcpu *vcpu);
void vcpu_destroy(struct vcpu *vcpu);

#endif
