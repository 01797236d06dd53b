/* The hardware-reduced ACPI power-management registers (acpi_pm.h). */
#include "arch/x86/acpi_pm.h"

#include <string.h>

#include "core/vm.h"

#define SLP_TYP_SHIFT	2
#define SLP_TYP_MASK	7
#define SLP_EN		(1u << 5)

void x86_acpi_pm_access(void *vm, uint64_t offset, uint8_t *data,
			uint32_t len, bool is_write)
{
	uint8_t v = data[0];

	if (!is_write) {
		memset(data, 0, len);
		return;
	}
	switch (offset) {
	case X86_ACPI_SLEEP_CONTROL:
		if ((v & SLP_EN) &&
		    (v >> SLP_TYP_SHIFT & SLP_TYP_MASK) == X86_ACPI_SLP_TYP_S5)
			vm_request_exit(vm, 0, VM_EXIT_RESET);
		break;
	case X86_ACPI_RESET:
		if (v == X86_ACPI_RESET_VALUE)
			vm_request_exit(vm, 0, VM_EXIT_RESET);
		break;
	}
}
