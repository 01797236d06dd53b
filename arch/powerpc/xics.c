/* Setting up KVM's XICS. */
#include "arch/powerpc/xics.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/powerpc/rtas.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

/* Least favoured priority: a source at it is never presented. */
#define XICS_PRIORITY_MASKED	0xff

const struct rtas_token xics_rtas_tokens[] = {
	{ "ibm,set-xive", 0x2101 },
	{ "ibm,get-xive", 0x2102 },
	{ "ibm,int-off", 0x2103 },
	{ "ibm,int-on", 0x2104 },
	{ NULL, 0 },
};

static int define_tokens(int vm_fd)
{
	const struct rtas_token *t;

	for (t = xics_rtas_tokens; t->name; t++) {
		struct kvm_rtas_token_args args = { .token = t->token };

		snprintf(args.name, sizeof(args.name), "%s", t->name);
		if (ioctl(vm_fd, KVM_PPC_RTAS_DEFINE_TOKEN, &args) < 0) {
			int err = -errno;

			pr_err("KVM_PPC_RTAS_DEFINE_TOKEN %s: %s", t->name,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}

int xics_reset_sources(int xics_fd, unsigned first, unsigned n, bool level)
{
	/* Delivered to server 0 at the least favoured priority: masked
	 * until the guest routes it with ibm,set-xive. */
	uint64_t state = (uint64_t)XICS_PRIORITY_MASKED <<
			 KVM_XICS_PRIORITY_SHIFT | KVM_XICS_MASKED |
			 (level ? KVM_XICS_LEVEL_SENSITIVE : 0);
	struct kvm_device_attr attr = {
		.group = KVM_DEV_XICS_GRP_SOURCES,
		.addr = (uintptr_t)&state,
	};
	unsigned i;

	for (i = first; i < first + n; i++) {
		attr.attr = i;
		if (ioctl(xics_fd, KVM_SET_DEVICE_ATTR, &attr) < 0) {
			int err = -errno;

			pr_err("XICS source %u: %s", i, strerror(-err));
			return err;
		}
	}
	return 0;
}

int xics_create(struct vm *vm)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_XICS };
	int err;

	if (ioctl(vm->vm_fd, KVM_CREATE_DEVICE, &cd) < 0) {
		err = -errno;
		pr_err("cannot create the XICS interrupt controller: %s",
		       strerror(-err));
		return err;
	}
	/* thpvm's lines are level-triggered, as PCI INTx is. */
	err = xics_reset_sources(cd.fd, XICS_IRQ_BASE, XICS_NR_LINES, true) ?:
	      xics_reset_sources(cd.fd, XICS_MSI_BASE, XICS_NR_MSIS, false) ?:
	      define_tokens(vm->vm_fd);
	if (err) {
		close(cd.fd);
		return err;
	}
	return cd.fd;
}

int xics_connect_vcpu(int xics_fd, struct vcpu *vcpu)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_IRQ_XICS,
		.args = { (uint64_t)xics_fd, vcpu->id },
	};

	if (ioctl(vcpu->fd, KVM_ENABLE_CAP, &cap) < 0) {
		int err = -errno;

		pr_err("vCPU %u: connecting to XICS: %s", vcpu->id,
		       strerror(-err));
		return err;
	}
	return 0;
}
