/* A virtual machine: KVM handles, guest RAM, vCPUs, device buses, and the
 * run state that the control socket acts on. */
#ifndef THPVM_VM_H
#define THPVM_VM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/console.h"
#include "core/console_out.h"
#include "core/device.h"
#include "core/guest_ram.h"
#include "core/io_bus.h"
#include "core/irq_lines.h"
#include "core/irq_routing.h"
#include "core/pci.h"

struct arch_vm;
struct vcpu;

#define VM_NAME_MAX 64
#define VM_DEFAULT_RAM (256ULL << 20)
#define VM_MIN_RAM (16ULL << 20)

/* Where an x86 VM's interrupt controllers live (thpvm run --irqchip);
 * other arches have one way, KVM's. */
enum irqchip_mode {
	IRQCHIP_SPLIT,		/* LAPICs in KVM, the IOAPIC in thpvm */
	IRQCHIP_KERNEL,		/* LAPICs, IOAPIC and 8259 PICs in KVM */
};

/* What the core needs to make a VM; devices and the kernel to boot are
 * the layers' above (machine/machine.h). */
struct vm_config {
	char name[VM_NAME_MAX + 1];	/* its control socket's */
	uint64_t ram_size;
	uint64_t hotplug_size;		/* memory hotplug region; 0: none */
	unsigned nr_vcpus;
	enum ram_backing ram_backing;
	const char *hugetlbfs_dir;	/* RAM_BACKING_HUGETLBFS */
	int console_fd;			/* the console output's: stdout, or
					 * a console socket's pipe */
	bool console_filter;		/* --console-filter */
	enum irqchip_mode irqchip;
	bool pit;			/* --pit: KVM's i8254 */
};

/* Why a VM ended (thpvm run --json reports it). */
enum vm_exit_reason {
	VM_EXIT_GUEST,		/* the guest's debug-exit write */
	VM_EXIT_RESET,		/* guest reset or power-off */
	VM_EXIT_STOP,		/* thpvm stop, Ctrl-A x */
	VM_EXIT_SIGNAL,		/* SIGTERM, SIGINT, SIGHUP */
	VM_EXIT_FAILURE,	/* the VM could not go on */
};

enum vm_state {
	VM_CREATED,
	VM_RUNNING,
	VM_PAUSED,
	VM_STOPPING,
};

struct vm {
	const struct vm_config *cfg;
	int kvm_fd;
	int vm_fd;
	int vcpu_mmap_size;
	struct guest_ram ram;
	struct io_bus pio;
	struct io_bus mmio;
	struct irq_routing irq;
	struct irq_lines lines;
	struct pci_bus pci;
	struct vm_device *devices;	/* the registry (core/device.h) */
	/* Where platform devices (virtio-mmio) go: the arch's window. */
	uint64_t mmio_next, mmio_end;
	struct vcpu *vcpus;
	unsigned nr_vcpus;

	pthread_mutex_t lock;		/* protects state and the counters */
	pthread_cond_t state_changed;
	enum vm_state state;
	unsigned vcpus_parked;		/* vCPU threads waiting while paused */
	unsigned vcpus_exited;
	int exit_status;
	enum vm_exit_reason exit_reason;
	int exit_eventfd;		/* written once when the VM must end */

	struct vm_console console;	/* set by the arch */
	struct console_out console_out;	/* to cfg->console_fd */
	struct arch_vm *arch;		/* the arch's own state */
};

/* KVM, guest RAM, the arch's platform and the vCPUs; devices are added
 * afterwards, before vm_start. On failure, vm_destroy undoes what was
 * made. */
int vm_create(struct vm *vm, const struct vm_config *cfg);
/* Starts one thread per vCPU. */
int vm_start(struct vm *vm);
/* Stops the vCPUs at their next exit and waits until all are parked. */
int vm_pause(struct vm *vm);
int vm_resume(struct vm *vm);
/* Asks the VM to end with this exit status (first caller wins); safe from
 * any thread. The main loop sees exit_eventfd become readable. */
void vm_request_exit(struct vm *vm, int status, enum vm_exit_reason reason);
const char *vm_exit_reason_name(enum vm_exit_reason reason);
/* Stops and joins the vCPU threads; returns the exit status. */
int vm_stop(struct vm *vm);
void vm_destroy(struct vm *vm);

/* size bytes, page aligned, from the platform MMIO window the arch set;
 * -ENOSPC when it is full. Before vm_start only. */
int vm_alloc_mmio(struct vm *vm, uint64_t size, uint64_t *base);

enum vm_state vm_get_state(struct vm *vm);
const char *vm_state_name(enum vm_state state);

#endif
