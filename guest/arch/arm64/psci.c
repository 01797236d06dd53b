/* PSCI 0.2 and later (Arm DEN 0022) through the conduit the device tree
 * names: hvc (KVM, QEMU without EL3) or smc. */
#include "guest.h"

#define PSCI_VERSION		0x84000000u
#define PSCI_CPU_ON		0xc4000003u	/* SMC64 */
#define PSCI_SYSTEM_OFF		0x84000008u

static uint64_t call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 asm("x0") = fn;
	register uint64_t x1 asm("x1") = a1;
	register uint64_t x2 asm("x2") = a2;
	register uint64_t x3 asm("x3") = a3;

	/* SMCCC: x4-x17 may come back changed. */
	if (plat.psci_smc)
		asm volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
			     : : "x4", "x5", "x6", "x7", "x8", "x9", "x10",
			     "x11", "x12", "x13", "x14", "x15", "x16", "x17",
			     "memory");
	else
		asm volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
			     : : "x4", "x5", "x6", "x7", "x8", "x9", "x10",
			     "x11", "x12", "x13", "x14", "x15", "x16", "x17",
			     "memory");
	return x0;
}

uint32_t psci_version(void)
{
	return call(PSCI_VERSION, 0, 0, 0);
}

/* 0 or PSCI's negative error code. */
int64_t psci_cpu_on(uint64_t mpidr, uint64_t entry, uint64_t context)
{
	return call(PSCI_CPU_ON, mpidr, entry, context);
}

void psci_system_off(void)
{
	call(PSCI_SYSTEM_OFF, 0, 0, 0);
	for (;;)
		asm volatile("wfi");
}
