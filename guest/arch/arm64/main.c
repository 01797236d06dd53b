/* The arm64 test guest's flow: the device tree read, the boot report,
 * the checks and workloads x86 runs where they apply, then the exit
 * (or serve). */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "pci.h"
#include "virtio.h"

extern char __bss_start[], __bss_end[], __image_start[], _end[];
void c_entry(uint64_t dtb, uint64_t base, uint32_t bad_reloc);

/* thpvm's exit register ends the VM with the status; elsewhere (QEMU)
 * PSCI SYSTEM_OFF ends it and only the output tells how it went. */
void guest_exit(unsigned status)
{
	if (plat.exit_dev)
		mmio_write32(plat.exit_dev, status);
	if (plat.psci)
		psci_system_off();
	for (;;)
		asm volatile("wfi");
}

static bool skipped(enum check_id c)
{
	return params.skip & 1u << c;
}

/* Sorted (dt.c sorts), non-overlapping, holding the image; ram=
 * matches. */
static void check_memory(void)
{
	uint64_t ram = 0, kstart = (uint64_t)__image_start;
	uint64_t kend = (uint64_t)_end;
	const char *why = 0;
	bool holds_kernel = false;

	for (unsigned i = 0; i < boot.nmem; i++) {
		const struct mem_range *m = &boot.mem[i];

		print("tg: memory start=0x%lx end=0x%lx\n", m->addr,
		      m->addr + m->size);
		if (i && m->addr < boot.mem[i - 1].addr + boot.mem[i - 1].size)
			why = "overlapping";
		ram += m->size;
		if (m->addr <= kstart && m->addr + m->size >= kend)
			holds_kernel = true;
	}
	if (skipped(CHK_MEMORY))
		return;
	if (!boot.nmem)
		why = "empty";
	else if (!holds_kernel)
		why = "kernel-not-in-ram";
	else if (params.has_ram &&
		 (ram > params.ram || ram + (2ULL << 20) <= params.ram))
		why = "ram-mismatch";
	if (why)
		report(false, "memory", "ram=%lu ranges=%u expected=%lu "
		       "reason=%s", ram, boot.nmem, params.ram, why);
	else
		report(true, "memory", "ram=%lu ranges=%u", ram, boot.nmem);
}

static void check_echo(void)
{
	char line[64];
	int n;

	print("tg: echo ready\n");
	n = serial_getline(line, sizeof(line), 10000);
	report(n >= 0, "echo", "text=%s", line);
}

void c_entry(uint64_t dtb, uint64_t base, uint32_t bad_reloc)
{
	unsigned el = sysreg_read(CurrentEL) >> 2 & 3;
	bool ballooning, virtio;

	memset(__bss_start, 0, __bss_end - __bss_start);
	/* Without a console nothing can be said: thpvm's exit register
	 * still gives the status. */
	if (!dt_parse(dtb))
		guest_exit(1);
	if (cmdline_has_token(boot.cmdline, "exit"))
		guest_exit(0);
	serial_init();
	print("tg: boot entry=image el=%u base=0x%lx dtb=0x%lx\n", el, base,
	      dtb);
	print("tg: cmdline=%s\n", boot.cmdline);
	if (bad_reloc)
		report(false, "boot", "relocation-type=%u "
		       "reason=unknown-relocation", bad_reloc);
	if (el != 1) {
		report(false, "boot", "el=%u reason=not-el1", el);
		guest_exit(1);
	}
	/* After dt_parse: ecam= wins over the device tree's ECAM. */
	parse_params(boot.cmdline);
	dt_report();
	virtio = params_want_blk() || params.net || params.netbench ||
		 params.balloon || params.rng || params.vcons ||
		 params_want_9p();
	check_memory();

	mm_init();
	exceptions_init();
	timer_init();
	gic_init();
	print("tg: platform cpus=%u psci=%s psci_version=0x%x uart=%s@0x%lx "
	      "exit=0x%lx\n", plat.ncpus,
	      !plat.psci ? "none" : plat.psci_smc ? "smc" : "hvc",
	      plat.psci ? psci_version() : 0,
	      plat.uart_kind == UART_PL011 ? "pl011" : "8250", plat.uart,
	      plat.exit_dev);
	if (!skipped(CHK_SMP))
		check_smp();
	check_timers();
	if (!skipped(CHK_INITRD))
		check_initrd();
	if (params.pci || (virtio && params.virtio & VIRTIO_T_PCI))
		pci_scan();
	if (virtio)
		virtio_scan();
	if (params_want_blk())
		run_blk();
	if (params.net || params.netbench)
		run_net();
	if (params.rng)
		run_rng();
	if (params.vcons)
		run_vcons();
	if (params_want_9p())
		run_9p();
	run_touch_rand();
	if (params.balloon || params.usemem)
		buddy_init(0);
	ballooning = params.balloon && run_balloon();
	if (params.usemem)
		run_usemem();
	if (params.echo)
		check_echo();

	print("tg: done passed=%u failed=%u\n", checks_passed, checks_failed);
	if (params.serve) {
		print("tg: serving\n");
		if (ballooning)
			balloon_serve();
		for (;;)
			wait_irq();
	}
	guest_exit(params.has_exit_status ? params.exit_status :
		   checks_failed != 0);
}
