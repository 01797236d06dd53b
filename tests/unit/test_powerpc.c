/* Tests for arch/powerpc/ without KVM: the device tree written for a VM
 * made by hand (read back through libfdt, with what Linux's pseries code
 * looks for), the host's timebase from /proc/cpuinfo, and the checks the
 * hypercalls and RTAS make on what the guest hands them (none of the
 * refused cases reaches KVM). */
#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/fdt.h"
#include "arch/powerpc/hcall.h"
#include "arch/powerpc/layout.h"
#include "arch/powerpc/phb.h"
#include "arch/powerpc/platform.h"
#include "arch/powerpc/rtas.h"
#include "arch/powerpc/xics.h"
#include "core/arch.h"
#include "core/pci.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/util.h"
#include "unit.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <libfdt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RAM_SIZE (64 * MiB)
#define RTAS_BASE (32 * MiB)
#define ARGS_GPA (16 * MiB)

static struct vm vm;
static struct arch_vm arch;
static struct vcpu vcpu = { .vm = &vm };

static int setup(void)
{
	const struct ram_range r = { PPC_RAM_START, RAM_SIZE };

	memset(&vm, 0, sizeof(vm));
	memset(&arch, 0, sizeof(arch));
	guest_ram_init(&vm.ram);
	if (guest_ram_map(&vm.ram, &r, 1, RAM_BACKING_THP, NULL))
		return -1;
	arch.timebase_hz = 512000000;
	arch.dcache_block = arch.icache_block = 128;
	vm.arch = &arch;
	vm.nr_vcpus = 1;
	return 0;
}

static const void *prop(const void *fdt, const char *path, const char *name,
			int *len)
{
	int node = fdt_path_offset(fdt, path);

	return node < 0 ? NULL : fdt_getprop(fdt, node, name, len);
}

static uint32_t cell(const void *fdt, const char *path, const char *name)
{
	const fdt32_t *p;
	int len;

	p = prop(fdt, path, name, &len);
	return p && len >= 4 ? fdt32_to_cpu(*p) : ~0u;
}

static void test_device_tree(void)
{
	struct ppc_boot_data boot = {
		.cmdline = "console=hvc0", .initrd_start = 8 * MiB,
		.initrd_end = 9 * MiB, .rtas_base = RTAS_BASE,
		.rtas_size = PPC_RTAS_SIZE,
	};
	const uint8_t *bytes;
	uint64_t addr, size;
	size_t fdt_size;
	void *fdt;
	int len;

	CHECK_EQ(setup(), 0);
	CHECK_EQ(ppc_fdt_build(&vm, &boot, &fdt, &fdt_size), 0);
	CHECK_EQ(fdt_check_header(fdt), 0);
	CHECK_STR(prop(fdt, "/", "device_type", &len), "chrp");
	CHECK_STR(prop(fdt, "/chosen", "bootargs", &len), "console=hvc0");
	CHECK_STR(prop(fdt, "/chosen", "linux,stdout-path", &len),
		  "/vdevice/vty@30000000");
	CHECK_STR(prop(fdt, "/vdevice/vty@30000000", "compatible", &len),
		  "hvterm1");
	CHECK_EQ(cell(fdt, "/vdevice/vty@30000000", "reg"), PPC_VTY_REG);
	/* Radix only, with the guest's own TLB invalidations. */
	bytes = prop(fdt, "/chosen", "ibm,architecture-vec-5", &len);
	CHECK(bytes && len > 26);
	CHECK_EQ(bytes ? bytes[24] & 0xc0 : 0, 0x40);
	CHECK_EQ(bytes ? bytes[26] & 0x40 : 0, 0x40);
	bytes = prop(fdt, "/cpus/PowerPC,POWER9@0", "ibm,pa-features", &len);
	CHECK(bytes && len > 2 + 40 && bytes[0] == len - 2);
	CHECK(bytes && bytes[2 + 40] & 0x80);
	CHECK_EQ(cell(fdt, "/cpus/PowerPC,POWER9@0", "timebase-frequency"),
		 512000000);
	CHECK_EQ(cell(fdt, "/cpus/PowerPC,POWER9@0", "d-cache-block-size"),
		 128);
	/* RTAS where the guest is told, kept out of its memory. */
	CHECK_EQ(cell(fdt, "/rtas", "linux,rtas-base"), RTAS_BASE);
	CHECK_EQ(cell(fdt, "/rtas", "linux,rtas-entry"), RTAS_BASE);
	CHECK_EQ(cell(fdt, "/rtas", "rtas-size"), PPC_RTAS_SIZE);
	CHECK(cell(fdt, "/rtas", "power-off") != ~0u);
	CHECK(cell(fdt, "/rtas", "ibm,set-xive") != ~0u);
	CHECK(prop(fdt, "/rtas", "ibm,hypertas-functions", &len));
	CHECK_EQ(fdt_num_mem_rsv(fdt), 1);
	CHECK_EQ(fdt_get_mem_rsv(fdt, 0, &addr, &size), 0);
	CHECK_EQ(addr, RTAS_BASE);
	CHECK_EQ(size, PPC_RTAS_SIZE);
	CHECK_STR(prop(fdt, "/interrupt-controller", "compatible", &len),
		  "IBM,ppc-xicp");
	CHECK_EQ(cell(fdt, "/memory@0", "reg"), 0);
	free(fdt);
	guest_ram_unmap(&vm.ram);
}

static void test_timebase(void)
{
	uint32_t hz = 0;

	CHECK_EQ(ppc_cpuinfo_timebase("timebase\t: 512000000\n", &hz), 0);
	CHECK_EQ(hz, 512000000);
	CHECK(ppc_cpuinfo_timebase("processor\t: 0\n", &hz) < 0);
	CHECK(ppc_cpuinfo_timebase("timebase\t: fast\n", &hz) < 0);
	CHECK(ppc_cpuinfo_timebase("timebase\t: 0\n", &hz) < 0);
	CHECK(ppc_cpuinfo_timebase("timebase\t: 99999999999\n", &hz) < 0);
	CHECK(ppc_cpuinfo_timebase("timebase\t: 512 MHz\n", &hz) < 0);
	CHECK(ppc_cpuinfo_timebase("timebase", &hz) < 0);
}

/* What a hostile guest may pass to the hypercalls thpvm serves. */
static void test_hcall_checks(void)
{
	uint64_t args[9] = { 0 }, first;

	CHECK_EQ(setup(), 0);
	/* Another terminal, or more than 16 bytes. */
	args[0] = PPC_VTY_REG + 1;
	CHECK_EQ(spapr_hcall(&vcpu, H_PUT_TERM_CHAR, args), H_PARAMETER);
	CHECK_EQ(spapr_hcall(&vcpu, H_GET_TERM_CHAR, args), H_PARAMETER);
	args[0] = PPC_VTY_REG;
	args[1] = 17;
	CHECK_EQ(spapr_hcall(&vcpu, H_PUT_TERM_CHAR, args), H_P2);
	/* Process tables: reserved flags, hash, misplaced, too large. */
	memset(args, 0, sizeof(args));
	args[0] = 0x20;
	CHECK_EQ(spapr_hcall(&vcpu, H_REGISTER_PROC_TBL, args), H_PARAMETER);
	args[0] = 0x18;
	CHECK_EQ(spapr_hcall(&vcpu, H_REGISTER_PROC_TBL, args), H_PARAMETER);
	args[0] = 0x1c;
	args[1] = 0x1234;
	CHECK_EQ(spapr_hcall(&vcpu, H_REGISTER_PROC_TBL, args), H_P2);
	args[1] = 1ULL << 61;
	CHECK_EQ(spapr_hcall(&vcpu, H_REGISTER_PROC_TBL, args), H_P2);
	args[1] = 0x10000;
	args[2] = 1;
	CHECK_EQ(spapr_hcall(&vcpu, H_REGISTER_PROC_TBL, args), H_P3);
	args[2] = 0;
	args[3] = 25;
	CHECK_EQ(spapr_hcall(&vcpu, H_REGISTER_PROC_TBL, args), H_P4);
	/* H_SET_MODE: unknown resource, stray values, unknown mode. */
	memset(args, 0, sizeof(args));
	args[1] = 9;
	CHECK_EQ(spapr_hcall(&vcpu, H_SET_MODE, args), H_P2);
	args[1] = 4;
	args[2] = 1;
	CHECK_EQ(spapr_hcall(&vcpu, H_SET_MODE, args), H_P3);
	args[2] = 0;
	args[3] = 1;
	CHECK_EQ(spapr_hcall(&vcpu, H_SET_MODE, args), H_P4);
	args[3] = 0;
	args[0] = 7;
	CHECK_EQ(spapr_hcall(&vcpu, H_SET_MODE, args), H_UNSUPPORTED_FLAG);
	/* AIL 3 where KVM does not offer it. */
	args[0] = 3;
	args[1] = 3;
	CHECK_EQ(spapr_hcall(&vcpu, H_SET_MODE, args), H_UNSUPPORTED_FLAG);
	CHECK_EQ(spapr_hcall(&vcpu, 0x4242, args), H_FUNCTION);
	CHECK_EQ(spapr_hcall(&vcpu, H_QUERY_VAS_CAPABILITIES, args),
		 H_FUNCTION);
	/* Speculation characteristics: none known, or KVM's, masked. */
	CHECK_EQ(spapr_hcall(&vcpu, H_GET_CPU_CHARACTERISTICS, args),
		 H_FUNCTION);
	arch.cpu_char = (struct kvm_ppc_cpu_char){
		.character = 0xf0, .character_mask = 0x30,
		.behaviour = 0x0f, .behaviour_mask = 0x0c,
	};
	CHECK_EQ(spapr_hcall(&vcpu, H_GET_CPU_CHARACTERISTICS, args),
		 H_SUCCESS);
	CHECK_EQ(args[0], 0x30);
	CHECK_EQ(args[1], 0x0c);
	/* H_RANDOM: 64 fresh bits each time in r4. */
	CHECK_EQ(spapr_hcall(&vcpu, H_RANDOM, args), H_SUCCESS);
	first = args[0];
	CHECK_EQ(spapr_hcall(&vcpu, H_RANDOM, args), H_SUCCESS);
	CHECK(args[0] != first);
	guest_ram_unmap(&vm.ram);
}

/* An RTAS argument block at ARGS_GPA: token, nargs, nret. */
static uint32_t *rtas_block(uint32_t token, uint32_t nargs, uint32_t nret)
{
	uint32_t *b = guest_ram_ptr(&vm.ram, ARGS_GPA, 12 + 4 * 16);

	memset(b, 0xee, 12 + 4 * 16);
	b[0] = htobe32(token);
	b[1] = htobe32(nargs);
	b[2] = htobe32(nret);
	return b;
}

static uint32_t token_of(const char *name)
{
	const struct rtas_token *t;

	for (t = spapr_rtas_tokens; t->name; t++)
		if (!strcmp(t->name, name))
			return t->token;
	return 0;
}

static void test_rtas(void)
{
	uint32_t tod = token_of("get-time-of-day");
	uint32_t *b;

	CHECK_EQ(setup(), 0);
	CHECK(tod != 0);
	/* A block outside RAM, or claiming more cells than there are. */
	CHECK_EQ(spapr_rtas_call(&vcpu, RAM_SIZE - 4), H_PARAMETER);
	CHECK_EQ(spapr_rtas_call(&vcpu, UINT64_MAX - 2), H_PARAMETER);
	rtas_block(tod, 9, 8);
	CHECK_EQ(spapr_rtas_call(&vcpu, ARGS_GPA), H_PARAMETER);
	rtas_block(tod, 0xffffffff, 2);
	CHECK_EQ(spapr_rtas_call(&vcpu, ARGS_GPA), H_PARAMETER);
	/* The time: status 0, then a plausible date. */
	b = rtas_block(tod, 0, 8);
	CHECK_EQ(spapr_rtas_call(&vcpu, ARGS_GPA), H_SUCCESS);
	CHECK_EQ(be32toh(b[3]), 0);
	CHECK(be32toh(b[4]) >= 2024 && be32toh(b[5]) >= 1 &&
	      be32toh(b[5]) <= 12);
	/* The wrong number of cells, an unknown token: parameter error. */
	b = rtas_block(tod, 1, 8);
	CHECK_EQ(spapr_rtas_call(&vcpu, ARGS_GPA), H_SUCCESS);
	CHECK_EQ((int32_t)be32toh(b[4]), -3);
	b = rtas_block(0x7777, 0, 1);
	CHECK_EQ(spapr_rtas_call(&vcpu, ARGS_GPA), H_SUCCESS);
	CHECK_EQ((int32_t)be32toh(b[3]), -3);
	guest_ram_unmap(&vm.ram);
}

/* Secondary vCPUs: their state, and start-cpu's refusals. */
static void test_rtas_cpus(void)
{
	struct vcpu cpus[2] = { { .vm = &vm, .id = 0, .fd = -1 },
				{ .vm = &vm, .id = 1, .fd = -1,
				  .powered_off = true } };
	uint32_t *b;

	CHECK_EQ(setup(), 0);
	vm.vcpus = cpus;
	vm.nr_vcpus = 2;
	b = rtas_block(token_of("query-cpu-stopped-state"), 1, 2);
	b[3] = htobe32(1);
	CHECK_EQ(spapr_rtas_call(&cpus[0], ARGS_GPA), H_SUCCESS);
	CHECK_EQ(be32toh(b[4]), 0);
	CHECK_EQ(be32toh(b[5]), 0);		/* stopped */
	b = rtas_block(token_of("query-cpu-stopped-state"), 1, 2);
	b[3] = htobe32(0);
	CHECK_EQ(spapr_rtas_call(&cpus[0], ARGS_GPA), H_SUCCESS);
	CHECK_EQ(be32toh(b[5]), 2);		/* running */
	/* No such CPU; one already running. */
	b = rtas_block(token_of("start-cpu"), 3, 1);
	b[3] = htobe32(7);
	CHECK_EQ(spapr_rtas_call(&cpus[0], ARGS_GPA), H_SUCCESS);
	CHECK_EQ((int32_t)be32toh(b[6]), -3);
	b = rtas_block(token_of("start-cpu"), 3, 1);
	b[3] = htobe32(0);
	CHECK_EQ(spapr_rtas_call(&cpus[0], ARGS_GPA), H_SUCCESS);
	CHECK_EQ((int32_t)be32toh(b[6]), -1);
	CHECK(cpus[1].powered_off);
	/* stop-self parks the caller. */
	rtas_block(token_of("stop-self"), 0, 1);
	CHECK_EQ(spapr_rtas_call(&cpus[0], ARGS_GPA), H_SUCCESS);
	CHECK(cpus[0].powered_off);
	vm.vcpus = NULL;
	guest_ram_unmap(&vm.ram);
}

static void nop_bar(void *opaque, uint64_t offset, uint8_t *data,
		    uint32_t len, bool is_write)
{
}

/* RTAS configuration accesses: the one bridge, aligned 1/2/4-byte
 * registers, extended register bits, nothing past bus 0. */
static void test_phb_config(void)
{
	static struct pci_device dev;
	uint32_t v = 0;
	int slot;

	CHECK_EQ(setup(), 0);
	CHECK_EQ(pci_bus_init(&vm.pci, &vm.mmio, PPC_PCI_MMIO_START,
			      PPC_PCI_MMIO_SIZE, 0), 0);
	pci_device_init(&dev, "test", 0x1af4, 0x1042, 0x010000, 1, 0x1af4,
			0x1100);
	pci_device_set_bar(&dev, 0, 0x4000, nop_bar, NULL);
	slot = pci_bus_add(&vm.pci, &dev);
	CHECK(slot > 0);
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, slot << 11, 4, &v, false),
		 0);
	CHECK_EQ(v, 0x10421af4);
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, slot << 11 | 2, 2, &v,
				false), 0);
	CHECK_EQ(v, 0x1042);
	/* The BAR, written and read back through RTAS: it stays put. */
	v = 0xffffffff;
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, slot << 11 | PCI_BAR0, 4,
				&v, true), 0);
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, slot << 11 | PCI_BAR0, 4,
				&v, false), 0);
	CHECK_EQ(v, (uint32_t)-0x4000);
	/* Extended space (register 0x100: bits 28-31) reads as zeros. */
	v = 1;
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, 1u << 28 | slot << 11, 4,
				&v, false), 0);
	CHECK_EQ(v, 0);
	/* No function, another bus: all ones. */
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, 31 << 11, 2, &v, false),
		 0);
	CHECK_EQ(v, 0xffff);
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, 1 << 16, 4, &v, false), 0);
	CHECK_EQ(v, 0xffffffff);
	/* Refused: another bridge, a size, a misaligned register. */
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID + 1, 0, 4, &v, false), -3);
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, 0, 3, &v, false), -3);
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, 2, 4, &v, false), -3);
	CHECK_EQ(phb_cfg_access(&vm, PPC_PHB_BUID, 1, 2, &v, true), -3);
	pci_bus_free(&vm.pci);
	guest_ram_unmap(&vm.ram);
}

/* Whether arch_boot_load refuses src with an error that says why. */
static bool refused_saying(const struct boot_source *src, const char *why)
{
	char said[512] = "";
	FILE *log = tmpfile();
	int saved = dup(STDERR_FILENO), err;
	size_t n;

	fflush(stderr);
	if (!log || saved < 0 || dup2(fileno(log), STDERR_FILENO) < 0) {
		printf("# cannot capture stderr: %s\n", strerror(errno));
		if (log)
			fclose(log);
		if (saved >= 0)
			close(saved);
		return false;
	}
	err = arch_boot_load(&vm, src);
	fflush(stderr);
	/* Without stderr back, later failures would go unseen. */
	if (dup2(saved, STDERR_FILENO) < 0)
		abort();
	close(saved);
	rewind(log);
	n = fread(said, 1, sizeof(said) - 1, log);
	said[n] = '\0';
	fclose(log);
	if (err != -EINVAL || !strstr(said, why)) {
		printf("# refused with %d, saying: %s", err, said);
		return false;
	}
	return true;
}

/* Kernels thpvm cannot boot on powerpc are refused before anything is
 * loaded, each with its own reason: none, not ELF64, big-endian,
 * another machine's. */
static void test_boot_refusals(void)
{
	/* An x86-64 executable, whole enough for the ELF reader. */
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
	} elf = {
		.eh = { .e_ident = { 0x7f, 'E', 'L', 'F', ELFCLASS64,
				     ELFDATA2MSB, EV_CURRENT },
			.e_type = ET_EXEC, .e_machine = EM_X86_64,
			.e_version = EV_CURRENT, .e_phoff = sizeof(Elf64_Ehdr),
			.e_ehsize = sizeof(Elf64_Ehdr),
			.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1 },
		.ph = { .p_type = PT_LOAD, .p_filesz = sizeof(elf),
			.p_memsz = sizeof(elf) },
	};
	struct boot_source src = { .kernel_name = "test",
				   .kernel = (const uint8_t *)&elf,
				   .cmdline = "" };

	CHECK_EQ(setup(), 0);
	CHECK(refused_saying(&src, "give a kernel with -k"));
	src.kernel_size = sizeof(elf);
	CHECK(refused_saying(&src, "a big-endian kernel"));
	elf.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	CHECK(refused_saying(&src, "not ppc64"));
	elf.eh.e_ident[EI_CLASS] = ELFCLASS32;
	CHECK(refused_saying(&src, "not an ELF64 vmlinux"));
	guest_ram_unmap(&vm.ram);
}

static uint8_t msix_table[4 * PCI_MSIX_ENTRY_SIZE];

static void msix_table_access(void *opaque, uint64_t off, uint8_t *data,
			      uint32_t len, bool is_write)
{
	CHECK(is_write && off + len <= sizeof(msix_table));
	memcpy(msix_table + off, data, len);
}

/* MSIs through RTAS, with hostile arguments: another bridge, bus or
 * function, the host bridge, a function without MSI-X, MSI (not -X),
 * unknown functions, more vectors than the table has, queries of
 * vectors never given; the source check of MSI messages. (Giving
 * vectors needs KVM's XICS: here it fails and gives nothing.) */
static void test_phb_msi(void)
{
	static struct pci_device with, without;
	uint8_t msix[12] = { PCI_CAP_ID_MSIX };
	uint32_t addr, plain, granted = 7, source = 7, *b;
	int slot;

	CHECK_EQ(setup(), 0);
	arch.xics_fd = -1;
	pthread_mutex_init(&arch.msi_lock, NULL);
	CHECK_EQ(pci_bus_init(&vm.pci, &vm.mmio, PPC_PCI_MMIO_START,
			      PPC_PCI_MMIO_SIZE, 0), 0);
	pci_device_init(&with, "with", 0x1af4, 0x1042, 0x010000, 1, 0x1af4,
			0x1100);
	pci_device_set_bar(&with, 2, 0x1000, msix_table_access, NULL);
	put_le16(msix + 2, 3);
	put_le32(msix + 4, 2);
	CHECK(pci_device_add_cap(&with, msix, sizeof(msix)));
	slot = pci_bus_add(&vm.pci, &with);
	CHECK(slot > 0);
	addr = slot << 11;
	pci_device_init(&without, "without", 0x1af4, 0x1042, 0x010000, 1,
			0x1af4, 0x1100);
	plain = pci_bus_add(&vm.pci, &without) << 11;

	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID + 1, addr, PHB_CHANGE_MSIX_FN,
				1, &granted), RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, addr | 1 << 16,
				PHB_CHANGE_MSIX_FN, 1, &granted),
		 RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, addr | 1 << 8,
				PHB_CHANGE_MSIX_FN, 1, &granted),
		 RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, 0, PHB_CHANGE_FN, 1,
				&granted), RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, 31 << 11, PHB_CHANGE_FN, 1,
				&granted), RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, plain, PHB_CHANGE_FN, 1,
				&granted), RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, addr, PHB_CHANGE_MSI_FN, 1,
				&granted), RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, addr, 2, 0, &granted),
		 RTAS_PARAM_ERROR);
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, addr, 0xffffffff, 1,
				&granted), RTAS_PARAM_ERROR);
	CHECK_EQ(granted, 7);
	/* Too many: the most it can have, and nothing given. */
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, addr, PHB_CHANGE_MSIX_FN,
				0xffffffff, &granted), RTAS_SUCCESS);
	CHECK_EQ(granted, 4);
	CHECK_EQ(phb_query_msi(&vm, PPC_PHB_BUID, addr, 0, &source),
		 RTAS_PARAM_ERROR);
	/* The controller refuses (no XICS here): an error, nothing given. */
	CHECK_EQ(phb_change_msi(&vm, PPC_PHB_BUID, addr, PHB_CHANGE_MSIX_FN,
				2, &granted), RTAS_HW_ERROR);
	CHECK_EQ(phb_query_msi(&vm, PPC_PHB_BUID, addr, 0, &source),
		 RTAS_PARAM_ERROR);
	CHECK_EQ(phb_query_msi(&vm, PPC_PHB_BUID, plain, 0, &source),
		 RTAS_PARAM_ERROR);
	CHECK_EQ(phb_query_msi(&vm, PPC_PHB_BUID + 1, addr, 0, &source),
		 RTAS_PARAM_ERROR);
	CHECK_EQ(source, 7);
	/* Through an RTAS block: the shape is checked first. */
	b = rtas_block(token_of("ibm,change-msi"), 5, 3);
	CHECK_EQ(spapr_rtas_call(&vcpu, ARGS_GPA), H_SUCCESS);
	CHECK_EQ((int32_t)be32toh(b[3 + 5]), RTAS_PARAM_ERROR);
	b = rtas_block(token_of("ibm,query-interrupt-source-number"), 4, 3);
	b[3] = htobe32(addr);
	b[4] = htobe32((uint32_t)(PPC_PHB_BUID >> 32));
	b[5] = htobe32((uint32_t)PPC_PHB_BUID);
	b[6] = htobe32(0);
	CHECK_EQ(spapr_rtas_call(&vcpu, ARGS_GPA), H_SUCCESS);
	CHECK_EQ((int32_t)be32toh(b[3 + 4]), RTAS_PARAM_ERROR);
	/* Messages: only those RTAS writes name a source. */
	CHECK_EQ(phb_msi_source(PPC_MSI_ADDR, XICS_MSI_BASE), XICS_MSI_BASE);
	CHECK_EQ(phb_msi_source(PPC_MSI_ADDR, XICS_MSI_BASE + XICS_NR_MSIS - 1),
		 XICS_MSI_BASE + XICS_NR_MSIS - 1);
	CHECK_EQ(phb_msi_source(PPC_MSI_ADDR, XICS_MSI_BASE + XICS_NR_MSIS), -1);
	CHECK_EQ(phb_msi_source(PPC_MSI_ADDR, XICS_IRQ_BASE), -1);
	CHECK_EQ(phb_msi_source(PPC_MSI_ADDR, 0), -1);
	CHECK_EQ(phb_msi_source(0, XICS_MSI_BASE), -1);
	pthread_mutex_destroy(&arch.msi_lock);
	pci_bus_free(&vm.pci);
	guest_ram_unmap(&vm.ram);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_device_tree),
		UNIT_TEST(test_timebase),
		UNIT_TEST(test_hcall_checks),
		UNIT_TEST(test_rtas),
		UNIT_TEST(test_rtas_cpus),
		UNIT_TEST(test_phb_msi),
		UNIT_TEST(test_boot_refusals),
		UNIT_TEST(test_phb_config),
	};

	return UNIT_RUN(tests);
}
