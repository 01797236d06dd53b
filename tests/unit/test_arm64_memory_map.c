/* The arm64 guest-physical memory map without KVM: RAM from 1 GiB, the
 * memory hotplug region at the first 1 GiB boundary above it, and the
 * address size asked of KVM covering both (here KVM offers no choice,
 * so its default 40 bits bound them). */
#include <errno.h>

#include "arch/arm64/layout.h"
#include "core/arch.h"
#include "core/guest_ram.h"
#include "lib/util.h"
#include "unit.h"

static void test_ram(void)
{
	struct ram_range r[GUEST_RAM_MAX_REGIONS];

	CHECK_EQ(arch_ram_layout(256 * MiB, 2 * MiB, r), 1);
	CHECK_EQ(r[0].gpa, ARM64_RAM_START);
	CHECK_EQ(r[0].size, 256 * MiB);
	CHECK_EQ(arch_ram_layout(0, 2 * MiB, r), -EINVAL);
	CHECK_EQ(arch_ram_layout(3 * MiB, 2 * MiB, r), -EINVAL);
	CHECK_EQ(arch_ram_layout(UINT64_MAX - 2 * MiB + 1, 2 * MiB, r),
		 -EINVAL);
}

static void test_hotplug_region(void)
{
	struct guest_ram ram = { .total = 256 * MiB };
	uint64_t gpa = 0;

	CHECK_EQ(arch_hotplug_base(&ram, 512 * MiB, &gpa), 0);
	CHECK_EQ(gpa, 2 * GiB);
	ram.total = 1 * GiB;
	CHECK_EQ(arch_hotplug_base(&ram, 512 * MiB, &gpa), 0);
	CHECK_EQ(gpa, 2 * GiB);
	ram.total = 1 * GiB + 2 * MiB;
	CHECK_EQ(arch_hotplug_base(&ram, 512 * MiB, &gpa), 0);
	CHECK_EQ(gpa, 3 * GiB);
}

/* Without KVM_CAP_ARM_VM_IPA_SIZE (no KVM here): type 0 while RAM and
 * the region end within 40 bits, refused beyond. */
static void test_address_size(void)
{
	CHECK_EQ(arch_vm_type(-1, 256 * MiB, 0), 0);
	CHECK_EQ(arch_vm_type(-1, 256 * MiB, 512 * MiB), 0);
	CHECK_EQ(arch_vm_type(-1, 256 * MiB, (1ULL << 40) - 2 * GiB), 0);
	CHECK_EQ(arch_vm_type(-1, 256 * MiB, (1ULL << 40) - 2 * GiB + 2 * MiB),
		 -EINVAL);
	CHECK_EQ(arch_vm_type(-1, (1ULL << 40) - 1 * GiB, 0), 0);
	CHECK_EQ(arch_vm_type(-1, (1ULL << 40), 0), -EINVAL);
	CHECK_EQ(arch_vm_type(-1, 256 * MiB, UINT64_MAX), -EINVAL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_ram),
		UNIT_TEST(test_hotplug_region),
		UNIT_TEST(test_address_size),
	};

	return UNIT_RUN(tests);
}
