/* The test guest's flow: fast exit, boot report, checks, workloads, then
 * exit through isa-debug-exit (or serve). */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "pci.h"
#include "virtio.h"

extern char __bss_start[], __bss_end[], __image_start[], _end[];

/* isa-debug-exit, then an i8042 reset for VMMs without that port. */
void guest_exit(unsigned status)
{
	outb(0x501, status);
	outb(0x64, 0xfe);
	for (;;)
		asm volatile("cli; hlt");
}

static const char *entry_name(int entry)
{
	switch (entry) {
	case ENTRY_16: return "16";
	case ENTRY_32: return "32";
	case ENTRY_64: return "64";
	default: return "pvh";
	}
}

static bool skipped(enum check_id c)
{
	return params.skip & 1u << c;
}

/* Sorted, non-overlapping, usable RAM holding the kernel, ram= matches. */
static void check_e820(void)
{
	uint64_t ram = 0, kstart = (uint64_t)__image_start, kend = (uint64_t)_end;
	const char *why = 0;
	bool holds_kernel = false;

	for (unsigned i = 0; i < boot.nmem; i++) {
		const struct mem_range *e = &boot.mem[i];

		print("tg: e820 start=0x%lx end=0x%lx type=%u\n", e->addr,
		      e->addr + e->size, e->type);
		if (i && e->addr < boot.mem[i - 1].addr + boot.mem[i - 1].size)
			why = "unsorted-or-overlapping";
		if (e->type != MEM_RAM)
			continue;
		ram += e->size;
		if (e->addr <= kstart && e->addr + e->size >= kend)
			holds_kernel = true;
	}
	if (skipped(CHK_E820))
		return;
	if (!boot.nmem)
		why = "empty";
	else if (!holds_kernel)
		why = "kernel-not-in-ram";
	else if (params.has_ram &&
		 (ram > params.ram || ram + (2ULL << 20) <= params.ram))
		why = "ram-mismatch";
	if (why)
		report(false, "e820", "ram=%lu entries=%u expected=%lu reason=%s",
		       ram, boot.nmem, params.ram, why);
	else
		report(true, "e820", "ram=%lu entries=%u", ram, boot.nmem);
}

/* What the host typed on thpvm's stdin reaches the UART: one line, read
 * back and printed. */
static void check_echo(void)
{
	char line[64];
	int n;

	print("tg: echo ready\n");
	n = serial_getline(line, sizeof(line), 10000);
	report(n >= 0, "echo", "text=%s", line);
}

/* triple_fault: an exception with no IDT to deliver it through, which
 * is how a crashed kernel ends; thpvm is to say so in one line. */
static void triple_fault(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) none = { 0, 0 };

	print("tg: triple fault\n");
	asm volatile("lidt %0; int3" : : "m"(none));
}

void c_entry(int entry, uint64_t ptr)
{
	bool ballooning, virtio, mem = false;

	/* Start-up benchmarks: nothing before the exit. */
	if (cmdline_has_token(raw_cmdline(entry, ptr), "exit"))
		guest_exit(0);

	memset(__bss_start, 0, __bss_end - __bss_start);
	boot_info_init(entry, ptr);
	serial_init();
	print("tg: boot entry=%s\n", entry_name(entry));
	print("tg: cmdline=%s\n", boot.cmdline);
	parse_params(boot.cmdline);
	virtio = params_want_blk() || params.net || params.netbench ||
		 params.balloon || params.rng || params.vcons ||
		 params_want_9p() || params.mem;
	check_e820();

	mm_init();
	desc_init();
	pic_mask_all();
	tsc_calibrate();
	/* Defaults of a PC without tables: one CPU, IRQ0 on IOAPIC pin 2. */
	mp.ioapic_addr = 0xfec00000;
	mp.irq0_pin = 2;
	if (!madt_scan())
		mptable_scan();
	print("tg: firmware source=%s cpus=%u ioapic=0x%lx irq0_pin=%u\n",
	      mp.found ? mp.source : "none", mp.ncpus, mp.ioapic_addr,
	      mp.irq0_pin);
	check_acpi();
	if (!skipped(CHK_SMP))
		check_smp();
	check_timers();
	if (!skipped(CHK_INITRD))
		check_initrd();
	/* PCI only when asked for: each config access is a VM exit. */
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
	/* The region sizes the allocator's metadata. */
	if (params.mem)
		mem = run_mem();
	/* After touch, which overwrites all free RAM. */
	if (params.balloon || params.usemem || params.mem)
		buddy_init(mem_region_end());
	ballooning = params.balloon && run_balloon();
	if (mem)
		mem_follow();
	if (params.usemem)
		run_usemem();
	if (params.echo)
		check_echo();

	print("tg: done passed=%u failed=%u\n", checks_passed, checks_failed);
	acpi_exit();
	if (cmdline_has_token(boot.cmdline, "triple_fault"))
		triple_fault();
	if (params.serve) {
		print("tg: serving\n");
		if (ballooning)
			balloon_serve();
		if (mem)
			mem_serve();
		for (;;)
			asm volatile("sti; hlt; cli");
	}
	guest_exit(params.has_exit_status ? params.exit_status :
		   checks_failed != 0);
}
