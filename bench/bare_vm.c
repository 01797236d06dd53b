/* The floor for start-up time: open /dev/kvm, create a VM with 2 MiB of
 * RAM holding one `out` instruction, run one vCPU until that exit, exit.
 * With --irqchip it also creates the in-kernel interrupt controllers and
 * PIT, as thpvm and QEMU do, whose teardown at exit costs milliseconds.
 * bench/startup.py compares thpvm's start-to-exit time with both. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define RAM_SIZE (2 << 20)
#define IOAPIC_PINS 24	/* GSIs a split irqchip leaves to user space */

static int fail(const char *what)
{
	perror(what);
	return 1;
}

int main(int argc, char **argv)
{
	/* Real mode at 0x1000: out %al, $0x10 */
	static const unsigned char code[] = { 0xe6, 0x10 };
	struct kvm_userspace_memory_region slot = { 0 };
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = 0x1000, .rflags = 2 };
	struct kvm_run *run;
	int kvm, vm, vcpu, size;
	const char *mode = argc > 1 ? argv[1] : "";
	void *ram;

	if (argc > 2 || (*mode && strcmp(mode, "--irqchip") &&
			 strcmp(mode, "--split-irqchip"))) {
		fprintf(stderr, "usage: bare_vm [--irqchip|--split-irqchip]\n");
		return 2;
	}
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return fail("/dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return fail("KVM_CREATE_VM");
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		return fail("mmap");
	memcpy((char *)ram + 0x1000, code, sizeof(code));
	slot.memory_size = RAM_SIZE;
	slot.userspace_addr = (unsigned long)ram;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &slot) < 0)
		return fail("KVM_SET_USER_MEMORY_REGION");
	if (!strcmp(mode, "--split-irqchip")) {
		struct kvm_enable_cap cap = { .cap = KVM_CAP_SPLIT_IRQCHIP,
					      .args = { IOAPIC_PINS } };

		if (ioctl(vm, KVM_ENABLE_CAP, &cap) < 0)
			return fail("KVM_CAP_SPLIT_IRQCHIP");
	} else if (!strcmp(mode, "--irqchip")) {
		struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };

		if (ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0)
			return fail("KVM_CREATE_IRQCHIP");
		if (ioctl(vm, KVM_CREATE_PIT2, &pit) < 0)
			return fail("KVM_CREATE_PIT2");
	}
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < 0)
		return fail("KVM_GET_VCPU_MMAP_SIZE");
	if (size < (int)sizeof(*run)) {
		fprintf(stderr, "KVM_GET_VCPU_MMAP_SIZE: %d bytes, less than "
			"struct kvm_run\n", size);
		return 1;
	}
	run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		return fail("mmap vcpu");
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return fail("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 ||
	    ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return fail("KVM_SET_*REGS");
	if (ioctl(vcpu, KVM_RUN, 0) < 0)
		return fail("KVM_RUN");
	if (run->exit_reason != KVM_EXIT_IO) {
		fprintf(stderr, "unexpected exit %u\n", run->exit_reason);
		return 1;
	}
	return 0;
}
