/* arch_boot_load for x86: recognise the image, choose the entry, and write
 * what every entry shares (command line, initrd, MP table, ACPI tables,
 * BIOS tables).
 *
 * Entry choice for --boot=auto (docs/booting.md has the measurements):
 * an ELF goes through PVH; a bzImage whose compressed payload we can unpack
 * and that contains a PVH note is unpacked on the host and entered through
 * PVH, which skips the in-guest decompressor; otherwise the 64-bit entry if
 * the image has one, else the real-mode setup entry, after a line that
 * says why PVH was not possible when the image has a payload. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch/x86/acpi.h"
#include "arch/x86/bios.h"
#include "arch/x86/boot.h"
#include "arch/x86/e820.h"
#include "arch/x86/layout.h"
#include "arch/x86/mptable.h"
#include "boot/decompress.h"
#include "boot/elf_image.h"
#include "core/arch.h"
#include "lib/log.h"
#include "lib/util.h"

/* " virtio_mmio.device=0x200@0xfe000000:16": room for the widest. */
#define MMIO_ENTRY_MAX 80

const char arch_linux_uart[] = "ttyS0";
const char arch_linux_params[] = "earlyprintk=serial reboot=k panic=-1";

const char *const arch_boot_entries[] = {
	[X86_ENTRY_AUTO] = "auto",
	[X86_ENTRY_PVH] = "pvh",
	[X86_ENTRY_64] = "64",
	[X86_ENTRY_16] = "16",
	NULL,
};

int x86_boot_copy(struct x86_boot *b, uint64_t gpa, const uint8_t *data,
		  uint64_t len, uint64_t mem_len)
{
	uint8_t *dst = guest_ram_ptr(&b->vm->ram, gpa, MAX(len, mem_len));

	if (!dst) {
		pr_err("%s: %llu bytes at 0x%llx do not fit in guest RAM "
		       "(try a larger -m)", b->src->kernel_name,
		       (unsigned long long)MAX(len, mem_len),
		       (unsigned long long)gpa);
		return -ENOSPC;
	}
	/* Guest RAM starts out zeroed (fresh anonymous or hugetlbfs
	 * memory), so the tail needs no clearing; touching it would only
	 * fault in host pages the guest may never use. */
	memcpy(dst, data, len);
	return 0;
}

int x86_boot_place_initrd(struct x86_boot *b, uint64_t max_addr)
{
	const struct boot_source *src = b->src;
	uint64_t top = guest_ram_contig(&b->vm->ram, 0);
	uint64_t addr;

	if (!src->initrd)
		return 0;
	/* max_addr is the highest byte the kernel can address. */
	if (max_addr < UINT64_MAX)
		top = MIN(top, max_addr + 1);
	addr = ALIGN_DOWN(top - MIN(top, (uint64_t)src->initrd_size), 4096);
	/* Never below 1 MiB either, where the boot data live. */
	if (src->initrd_size > top ||
	    addr < MAX(ALIGN_UP(b->kernel_end, 4096), X86_BIOS_END)) {
		pr_err("initrd of %zu bytes does not fit between the kernel "
		       "and 0x%llx (try a larger -m)", src->initrd_size,
		       (unsigned long long)top);
		return -ENOSPC;
	}
	b->initrd_addr = addr;
	return x86_boot_copy(b, addr, src->initrd, src->initrd_size,
			     src->initrd_size);
}

int x86_boot_write_cmdline(struct x86_boot *b, uint64_t max_len)
{
	size_t len = strlen(b->src->cmdline);

	if (len > max_len) {
		pr_err("the command line is %zu bytes long; this kernel "
		       "accepts at most %llu", len, (unsigned long long)max_len);
		return -E2BIG;
	}
	b->cmdline_len = len;
	return x86_boot_copy(b, X86_CMDLINE_ADDR,
			     (const uint8_t *)b->src->cmdline, len + 1,
			     len + 1);
}

/* Whether irqs[0..n) already map pin. */
static bool pin_listed(const struct mptable_irq *irqs, unsigned n,
		       unsigned pin)
{
	while (n--)
		if (irqs[n].ioapic_pin == pin)
			return true;
	return false;
}

/* The device registry's interrupts for the MP table: each PCI function's
 * INTA, then each line of a platform device that no entry maps yet. */
static unsigned device_irqs(const struct vm *vm, struct mptable_irq *irqs)
{
	const struct vm_device *d;
	unsigned n = 0;

	for (d = vm->devices; d && n < MPTABLE_MAX_IRQS; d = d->next)
		if (d->kind == VM_DEVICE_PCI_FUNCTION &&
		    d->irq != VM_DEVICE_NO_IRQ)
			irqs[n++] = (struct mptable_irq){ true, d->pci_slot,
							  d->irq };
	for (d = vm->devices; d && n < MPTABLE_MAX_IRQS; d = d->next)
		if (d->kind == VM_DEVICE_VIRTIO_MMIO &&
		    !pin_listed(irqs, n, d->irq))
			irqs[n++] = (struct mptable_irq){ false, 0, d->irq };
	return n;
}

/* The ACPI tables, unless --no-acpi: b->rsdp says where the guest finds
 * them. */
static int write_acpi_tables(struct x86_boot *b)
{
	struct vm *vm = b->vm;
	size_t len = X86_BIOS_ADDR - X86_ACPI_ADDR;
	uint8_t *buf = guest_ram_ptr(&vm->ram, X86_ACPI_ADDR, len);
	int n;

	if (b->src->no_acpi)
		return 0;
	if (!buf)
		return -ENOSPC;
	n = x86_acpi_write(buf, len, X86_ACPI_ADDR, vm->nr_vcpus,
			   vm->cfg->irqchip == IRQCHIP_KERNEL, vm->devices);
	if (n < 0)
		return n;
	b->rsdp = X86_ACPI_ADDR;
	pr_debug("ACPI tables: %d bytes at 0x%x", n, X86_ACPI_ADDR);
	return 0;
}

/* Tables every entry gets: e820 (also for the BIOS), the MP table (for
 * guests without ACPI, and with --no-acpi), the ACPI tables. */
static int write_platform_tables(struct x86_boot *b)
{
	struct vm *vm = b->vm;
	struct mptable_irq irqs[MPTABLE_MAX_IRQS];
	unsigned nr_irqs = device_irqs(vm, irqs);
	size_t len = mptable_size(vm->nr_vcpus, nr_irqs);
	uint8_t *mpt = guest_ram_ptr(&vm->ram, X86_MPTABLE_ADDR, len);
	int nr;

	nr = x86_e820_build(&vm->ram, b->e820, ARRAY_SIZE(b->e820));
	if (nr < 0)
		return nr;
	b->nr_e820 = nr;
	if (!mpt || mptable_write(mpt, len, X86_MPTABLE_ADDR, vm->nr_vcpus,
				  irqs, nr_irqs) < 0)
		return -ENOSPC;
	return write_acpi_tables(b) ?:
	       x86_bios_setup(vm, b->e820, b->nr_e820);
}

/* The most a bzImage payload may unpack to: what the kernel's own
 * decompressor has room for, init_size (protocol 2.10 on; Linux's
 * header.S makes it at least the unpacked vmlinux's size), and never more
 * than the 1 GiB an x86-64 kernel's image can span (KERNEL_IMAGE_SIZE)
 * or guest RAM. Beyond that a payload is hostile, not a kernel. */
#define X86_UNPACKED_MAX (1ULL << 30)

static uint64_t unpack_limit(const struct x86_boot *b,
			     const struct bzimage *img, const char **what)
{
	uint64_t limit = X86_UNPACKED_MAX;

	*what = "the 1 GiB an x86-64 kernel can span";
	if (img->version >= 0x020a && img->init_size < limit) {
		limit = img->init_size;
		*what = "its init_size, the room its own decompressor has";
	}
	if (b->vm->ram.total < limit) {
		limit = b->vm->ram.total;
		*what = "guest RAM (try a larger -m)";
	}
	return limit;
}

/* Unpacks the bzImage payload into *elf (the caller frees it). Returns 0;
 * -ENOENT with *why set when the payload is not a kernel to boot through
 * PVH, for the caller to say so; or another error, already reported
 * (corrupt or oversized payload). */
static int unpack_payload(struct x86_boot *b, const struct bzimage *img,
			  uint8_t **elf, size_t *elf_len, char *why,
			  size_t why_len)
{
	const char *name = b->src->kernel_name, *what;
	uint64_t limit = unpack_limit(b, img, &what);
	struct timespec t0;
	enum compression c;
	int err;

	if (!img->payload) {
		snprintf(why, why_len, "it has no compressed payload");
		return -ENOENT;
	}
	c = compression_detect(img->payload, img->payload_size);
	if (!compression_can_unpack(c)) {
		snprintf(why, why_len, "thpvm cannot unpack its %s payload",
			 compression_name(c));
		return -ENOENT;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = decompress(c, img->payload, img->payload_size, limit, elf,
			 elf_len);
	if (err == -EFBIG)
		pr_err("%s: its %s payload unpacks to more than %llu bytes, "
		       "%s", name, compression_name(c),
		       (unsigned long long)limit, what);
	if (err)
		return err;
	pr_debug("unpacked %zu bytes of %s into %zu in %.0f ms",
		 img->payload_size, compression_name(c), *elf_len,
		 time_ms_since(&t0));
	if (!elf_is_elf64(*elf, *elf_len)) {
		snprintf(why, why_len, "its %s payload is not an ELF64 kernel",
			 c == COMPRESSION_NONE ? "uncompressed or unknown" :
						 compression_name(c));
		free(*elf);
		return -ENOENT;
	}
	return 0;
}

/* Unpacks the bzImage payload and boots it through PVH. Returns -ENOENT
 * with *why set when that is not possible and auto mode may fall back to
 * the image's own entry; any other error is reported. */
static int boot_bzimage_pvh(struct x86_boot *b, const struct bzimage *img,
			    char *why, size_t why_len)
{
	uint8_t *elf;
	size_t elf_len;
	int err;

	err = unpack_payload(b, img, &elf, &elf_len, why, why_len);
	if (err)
		return err;
	err = x86_boot_pvh(b, elf, elf_len);
	free(elf);
	if (err == -ENOENT)
		snprintf(why, why_len, "its kernel has no PVH entry note "
			 "(XEN_ELFNOTE_PHYS32_ENTRY)");
	return err;
}

static int boot_bzimage(struct x86_boot *b, const struct bzimage *img)
{
	const char *name = b->src->kernel_name;
	bool has_64 = img->xloadflags & XLF_KERNEL_64;
	char why[128];
	int err;

	switch ((enum x86_entry)b->src->entry) {
	case X86_ENTRY_PVH:
		err = boot_bzimage_pvh(b, img, why, sizeof(why));
		if (err == -ENOENT)
			pr_err("%s: cannot boot through PVH: %s", name, why);
		return err == -ENOENT ? -EINVAL : err;
	case X86_ENTRY_64:
		if (!has_64) {
			pr_err("%s: the image has no 64-bit entry "
			       "(XLF_KERNEL_64)", name);
			return -EINVAL;
		}
		return x86_boot_bzimage_64(b, img);
	case X86_ENTRY_16:
		return x86_boot_bzimage_16(b, img);
	case X86_ENTRY_AUTO:
		break;
	}
	err = boot_bzimage_pvh(b, img, why, sizeof(why));
	if (err != -ENOENT)
		return err;
	/* Without a payload (the test guest) there is nothing to tell. */
	if (img->payload)
		pr_info("%s: %s; booting it through its %s entry, with its "
			"own decompressor", name, why,
			has_64 ? "64-bit" : "real-mode");
	return has_64 ? x86_boot_bzimage_64(b, img) :
			x86_boot_bzimage_16(b, img);
}

/* The command line with Linux's virtio_mmio.device=SIZE@BASE:IRQ for
 * each virtio-mmio device: how x86 guests without ACPI find them. NULL
 * when out of memory. */
static char *cmdline_with_mmio(const struct vm *vm, const char *cmdline)
{
	const struct vm_device *d;
	size_t len = strlen(cmdline) + 1, used;
	char *s;

	for (d = vm->devices; d; d = d->next)
		if (d->kind == VM_DEVICE_VIRTIO_MMIO)
			len += MMIO_ENTRY_MAX;
	s = malloc(len);
	if (!s)
		return NULL;
	used = snprintf(s, len, "%s", cmdline);
	for (d = vm->devices; d && used < len; d = d->next)
		if (d->kind == VM_DEVICE_VIRTIO_MMIO)
			used += snprintf(s + used, len - used,
					 "%svirtio_mmio.device=0x%llx@0x%llx:%d",
					 used ? " " : "",
					 (unsigned long long)d->size,
					 (unsigned long long)d->base, d->irq);
	return s;
}

static int boot_load(struct vm *vm, const struct boot_source *src)
{
	struct x86_boot b = { .vm = vm, .src = src };
	struct bzimage img;
	const char *why;
	int err;

	err = write_platform_tables(&b);
	if (err) {
		pr_err("cannot write the boot tables: %s", strerror(-err));
		return err;
	}
	if (elf_is_elf64(src->kernel, src->kernel_size)) {
		if (src->entry == X86_ENTRY_64 || src->entry == X86_ENTRY_16) {
			pr_err("%s: an ELF kernel can only be booted through "
			       "PVH", src->kernel_name);
			return -EINVAL;
		}
		err = x86_boot_pvh(&b, src->kernel, src->kernel_size);
		if (err == -ENOENT)
			pr_err("%s: ELF kernel without a PVH entry note "
			       "(XEN_ELFNOTE_PHYS32_ENTRY)", src->kernel_name);
		return err == -ENOENT ? -EINVAL : err;
	}
	err = bzimage_parse(src->kernel, src->kernel_size, &img, &why);
	if (err) {
		pr_err("%s: not a kernel image thpvm can boot: %s",
		       src->kernel_name, why);
		return err;
	}
	return boot_bzimage(&b, &img);
}

int arch_boot_load(struct vm *vm, const struct boot_source *user)
{
	struct boot_source src = *user;
	char *cmdline;
	int err;

	if (user->dump_dtb) {
		pr_err("--dump-dtb: x86 guests boot without a device tree");
		return -EINVAL;
	}
	/* With ACPI the DSDT is the devices' one description: a kernel that
	 * read both would register each twice, and the second would fail
	 * to claim its registers. */
	cmdline = user->no_acpi ? cmdline_with_mmio(vm, user->cmdline)
				: strdup(user->cmdline);
	if (!cmdline)
		return -ENOMEM;
	src.cmdline = cmdline;
	pr_debug("kernel command line: %s", cmdline);
	err = boot_load(vm, &src);
	free(cmdline);
	return err;
}
