/* The virtio PCI transport (virtio/virtio_pci.c) in front of a virtio-blk,
 * on a real KVM VM (its irqfds, GSI routes and ioeventfds are KVM's; no
 * vCPU runs): a sequence of accesses from the input to the configuration
 * space (through ECAM where the arch has it: the header, BAR sizing and
 * moves, the capabilities, the PCI_CFG window), to BAR0 (common
 * configuration, ISR, device configuration, notifications) and to BAR2
 * (the MSI-X table and pending bits), each of 1, 2, 4 or 8 bytes, read or
 * written; then each queue's handler. The rest of the input is guest RAM
 * from guest-physical 0. Every input ends with a device reset, and the
 * function's registers are put back as they were after set-up. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/vm.h"
#include "fuzz_virtio.h"
#include "lib/util.h"
#include "virtio/virtio_pci.h"

#define ACCESS_SIZE 8	/* bytes of input per access */
#define BAR_VIRTIO 0
#define BAR_MSIX 2
#define PCI_CLASS_STORAGE_OTHER 0x018000

static struct vm_config cfg = {
	.name = "fuzz",
	.ram_size = VM_MIN_RAM,
	.nr_vcpus = 1,
	.ram_backing = RAM_BACKING_NO_THP,
};
static struct vm vm;
static struct virtio_blk blk;
static struct virtio_pci vp;
static struct virtio_pci pristine;	/* vp's registers after set-up */
static bool set_up;
static const char *unavailable;

static void pci_setup(void)
{
	set_up = true;
	cfg.console_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (access("/dev/kvm", R_OK | W_OK)) {
		unavailable = "no usable /dev/kvm";
		return;
	}
	if (cfg.console_fd < 0 || vm_create(&vm, &cfg)) {
		fprintf(stderr, "fuzz_virtio_pci: cannot create a VM\n");
		abort();
	}
	fuzz_blk_create(&blk, BLK_ENGINE_AUTO, &vm.ram);
	if (virtio_pci_add(&vm, &vp, &blk.vdev, PCI_CLASS_STORAGE_OTHER) < 0) {
		fprintf(stderr, "fuzz_virtio_pci: cannot add the device\n");
		abort();
	}
	pristine = vp;
}

const char *fuzz_unavailable(void)
{
	if (!set_up)
		pci_setup();
	return unavailable;
}

/* What a function-level reset would put back, besides the device. */
static void pci_restore(void)
{
	unsigned i;

	memcpy(vp.pci.cfg, pristine.pci.cfg, sizeof(vp.pci.cfg));
	vp.device_feature_select = vp.driver_feature_select = 0;
	vp.queue_select = 0;
	for (i = 0; i < VIRTIO_PCI_MAX_VECTORS; i++) {
		pthread_mutex_lock(&vp.msix_lock);
		memcpy(vp.vectors[i].entry, pristine.vectors[i].entry,
		       sizeof(vp.vectors[i].entry));
		vp.vectors[i].pending = false;
		pthread_mutex_unlock(&vp.msix_lock);
	}
}

static void pci_access(uint8_t kind, uint16_t off, uint32_t len,
		       uint8_t *data)
{
	bool is_write = kind & 0x80;
	uint64_t addr;

	switch ((kind & 0x7f) % 3) {
	case 0:
		off %= PCI_ECAM_FN_SIZE;
		if (!vm.pci.ecam_base) {
			pci_cfg_access(&vm.pci, vp.reg.pci_slot, 0, off % 256,
				       data, len, is_write);
			return;
		}
		addr = vm.pci.ecam_base +
		       (uint64_t)vp.reg.pci_slot * 8 * PCI_ECAM_FN_SIZE + off;
		break;
	case 1:
		addr = vp.pci.bars[BAR_VIRTIO].addr +
		       off % vp.pci.bars[BAR_VIRTIO].size;
		break;
	default:
		addr = vp.pci.bars[BAR_MSIX].addr +
		       off % vp.pci.bars[BAR_MSIX].size;
		break;
	}
	io_bus_dispatch(&vm.mmio, addr, data, len, is_write);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	unsigned n = fuzz_u8(&in), q;
	struct fuzz_input ops = { in.data, MIN(in.len, n * ACCESS_SIZE) };

	if (fuzz_unavailable())
		abort();
	fuzz_blk_clear(&blk);
	fuzz_ram_fill(&vm.ram, in.data + ops.len, in.len - ops.len);
	while (ops.len) {
		uint8_t kind = fuzz_u8(&ops);
		uint16_t off = fuzz_u16(&ops);
		uint32_t len = 1u << (fuzz_u8(&ops) % 4);
		uint8_t value[8];

		put_le64(value, fuzz_u32(&ops));
		pci_access(kind, off, len, value);
	}
	for (q = 0; q < blk.vdev.nr_queues; q++)
		fuzz_virtio_kick(&blk.vdev, q);
	virtio_set_status(&blk.vdev, 0);
	pci_restore();
	return 0;
}
