/* The GIC as a KVM device: create, place, finalise. KVM insists on the
 * order: addresses and the interrupt count before CTRL_INIT, and
 * CTRL_INIT after every vCPU exists. */
#include "arch/arm64/gic.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/arm64/layout.h"
#include "core/vm.h"
#include "lib/log.h"

unsigned gic_max_vcpus(enum gic_version version)
{
	return version == GIC_V2 ? GICV2_MAX_VCPUS :
				   ARM64_GICR_SIZE / ARM64_GICR_STRIDE;
}

static int device_attr(int fd, uint32_t group, uint64_t attr,
		       const void *value, const char *what)
{
	struct kvm_device_attr a = {
		.group = group,
		.attr = attr,
		.addr = (uint64_t)(uintptr_t)value,
	};

	if (ioctl(fd, KVM_SET_DEVICE_ATTR, &a) < 0) {
		pr_err("GIC: %s: %s", what, strerror(errno));
		return -errno;
	}
	return 0;
}

static int create_device(int vm_fd, uint32_t type)
{
	struct kvm_create_device dev = { .type = type };

	if (ioctl(vm_fd, KVM_CREATE_DEVICE, &dev) < 0)
		return -errno;
	return dev.fd;
}

static int place_v3(struct gic *gic, int vm_fd)
{
	static const uint64_t dist = ARM64_GICD_ADDR, redist = ARM64_GICR_ADDR,
			      its = ARM64_GITS_ADDR;
	int err;

	err = device_attr(gic->fd, KVM_DEV_ARM_VGIC_GRP_ADDR,
			  KVM_VGIC_V3_ADDR_TYPE_DIST, &dist,
			  "placing the distributor") ?:
	      device_attr(gic->fd, KVM_DEV_ARM_VGIC_GRP_ADDR,
			  KVM_VGIC_V3_ADDR_TYPE_REDIST, &redist,
			  "placing the redistributors");
	if (err)
		return err;
	/* Without an ITS there are no MSIs: PCI devices fall back to
	 * INTx. */
	gic->its_fd = create_device(vm_fd, KVM_DEV_TYPE_ARM_VGIC_ITS);
	if (gic->its_fd < 0) {
		pr_debug("GIC: no ITS (%s): PCI devices get no MSIs",
			 strerror(-gic->its_fd));
		gic->its_fd = -1;
		return 0;
	}
	return device_attr(gic->its_fd, KVM_DEV_ARM_VGIC_GRP_ADDR,
			   KVM_VGIC_ITS_ADDR_TYPE, &its, "placing the ITS");
}

static int place_v2(struct gic *gic)
{
	static const uint64_t dist = ARM64_GICD_ADDR, cpu = ARM64_GICC_ADDR;

	return device_attr(gic->fd, KVM_DEV_ARM_VGIC_GRP_ADDR,
			   KVM_VGIC_V2_ADDR_TYPE_DIST, &dist,
			   "placing the distributor") ?:
	       device_attr(gic->fd, KVM_DEV_ARM_VGIC_GRP_ADDR,
			   KVM_VGIC_V2_ADDR_TYPE_CPU, &cpu,
			   "placing the CPU interface");
}

int gic_create(struct gic *gic, struct vm *vm)
{
	gic->its_fd = -1;
	gic->version = GIC_V3;
	gic->fd = create_device(vm->vm_fd, KVM_DEV_TYPE_ARM_VGIC_V3);
	if (gic->fd < 0) {
		gic->version = GIC_V2;
		gic->fd = create_device(vm->vm_fd, KVM_DEV_TYPE_ARM_VGIC_V2);
	}
	if (gic->fd < 0) {
		pr_err("KVM can make neither a GICv3 nor a GICv2: %s",
		       strerror(-gic->fd));
		return gic->fd;
	}
	if (vm->cfg->nr_vcpus > gic_max_vcpus(gic->version)) {
		pr_err("a GICv%d takes at most %u vCPUs, not %u",
		       gic->version, gic_max_vcpus(gic->version),
		       vm->cfg->nr_vcpus);
		return -EINVAL;
	}
	return gic->version == GIC_V3 ? place_v3(gic, vm->vm_fd) :
					place_v2(gic);
}

int gic_finalize(struct gic *gic, struct vm *vm)
{
	static const uint32_t nr_irqs = GIC_SPI_BASE + GIC_NR_SPIS;
	int err;

	err = device_attr(gic->fd, KVM_DEV_ARM_VGIC_GRP_NR_IRQS, 0, &nr_irqs,
			  "setting the number of interrupts") ?:
	      device_attr(gic->fd, KVM_DEV_ARM_VGIC_GRP_CTRL,
			  KVM_DEV_ARM_VGIC_CTRL_INIT, NULL, "initialising");
	if (err || gic->its_fd < 0)
		return err;
	return device_attr(gic->its_fd, KVM_DEV_ARM_VGIC_GRP_CTRL,
			   KVM_DEV_ARM_VGIC_CTRL_INIT, NULL,
			   "initialising the ITS");
}

void gic_destroy(struct gic *gic)
{
	if (gic->its_fd >= 0)
		close(gic->its_fd);
	if (gic->fd >= 0)
		close(gic->fd);
	gic->its_fd = gic->fd = -1;
}
