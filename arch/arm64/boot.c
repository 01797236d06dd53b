/* arch_boot_load for arm64 (Documentation/arch/arm64/booting.rst): the
 * Image (unpacked on the host when compressed, as Debian ships it,
 * straight into guest RAM) at text_offset from the start of RAM, the
 * device tree in the last 2 MiB of RAM, the initrd just below it, and the
 * boot vCPU at the Image's first instruction with x0 = the device tree. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arm64/fdt.h"
#include "arch/arm64/image.h"
#include "arch/arm64/layout.h"
#include "arch/arm64/vcpu.h"
#include "boot/decompress.h"
#include "boot/fdt_writer.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

const char *const arch_boot_entries[] = { "auto", NULL };

const char arch_linux_uart[] = "ttyS0";
const char arch_linux_params[] = "earlycon panic=-1";

struct layout {
	uint64_t kernel, kernel_end;
	uint64_t initrd;
	uint64_t fdt;
};

/* Where the device tree goes: the last 2 MiB block that holds it whole. */
static uint64_t fdt_addr(const struct ram_range *r)
{
	return ALIGN_DOWN(r->gpa + r->size - ARM64_FDT_MAX, ARM64_FDT_ALIGN);
}

/* Where each piece goes, or -ENOSPC after saying what does not fit. */
static int place(const struct vm *vm, const struct boot_source *src,
		 const struct arm64_image *img, struct layout *l)
{
	struct ram_range r;
	bool fits;

	if (!guest_ram_range(&vm->ram, 0, &r))
		return -EINVAL;
	/* image_size is the kernel's to say: first bounded by RAM, so that
	 * nothing below wraps. */
	fits = img->image_size <= r.size;
	l->kernel = r.gpa + img->text_offset;
	l->kernel_end = l->kernel + (fits ? img->image_size : 0);
	l->fdt = fdt_addr(&r);
	l->initrd = ALIGN_DOWN(l->fdt - MIN(l->fdt, src->initrd_size), 4096);
	fits = fits && l->kernel_end <= l->fdt &&
	       src->initrd_size <= l->fdt &&
	       l->initrd >= ALIGN_UP(l->kernel_end, 4096);
	if (!fits) {
		pr_err("%s: kernel (%llu KiB in memory)%s and device tree do "
		       "not fit in %llu MiB of RAM (try a larger -m)",
		       src->kernel_name,
		       (unsigned long long)(img->image_size >> 10),
		       src->initrd ? ", initrd" : "",
		       (unsigned long long)(r.size >> 20));
		return -ENOSPC;
	}
	return 0;
}

/* The Image: src's bytes or, when compressed, what they unpack to,
 * straight into guest RAM from its start up to the device tree. That is
 * where the kernel runs (load moves it up by text_offset), so it costs
 * no copy on the host, and it bounds the output whatever the data
 * claims. */
static int unpack(struct vm *vm, const struct boot_source *src,
		  const uint8_t **data, size_t *len)
{
	enum compression c = compression_detect(src->kernel, src->kernel_size);
	struct ram_range r;
	uint64_t room;
	uint8_t *dst;
	int err;

	*data = src->kernel;
	*len = src->kernel_size;
	if (c == COMPRESSION_NONE)
		return 0;
	if (!guest_ram_range(&vm->ram, 0, &r))
		return -EINVAL;
	room = fdt_addr(&r) - r.gpa;
	dst = guest_ram_ptr(&vm->ram, r.gpa, room);
	if (!dst)
		return -EINVAL;
	pr_debug("%s: %s-compressed, unpacking", src->kernel_name,
		 compression_name(c));
	err = decompress_into(c, src->kernel, src->kernel_size, dst, room,
			      len);
	if (err == -ENOTSUP)
		pr_err("%s: thpvm cannot unpack %s-compressed kernels",
		       src->kernel_name, compression_name(c));
	else if (err == -EFBIG)
		pr_err("%s: unpacks to more than the %llu MiB of RAM below the "
		       "device tree (try a larger -m)", src->kernel_name,
		       (unsigned long long)(room >> 20));
	if (err)
		return -EINVAL;
	*data = dst;
	return 0;
}

static int load(struct vm *vm, const struct boot_source *src,
		const uint8_t *kernel, size_t kernel_size)
{
	struct arm64_boot_data boot = { .cmdline = src->cmdline };
	struct arm64_image img;
	struct layout l;
	const char *why;
	size_t fdt_size;
	void *fdt;
	int err;

	err = arm64_image_parse(kernel, kernel_size, &img, &why);
	if (err) {
		pr_err("%s: not an arm64 Linux Image: %s", src->kernel_name,
		       why);
		return err;
	}
	err = place(vm, src, &img, &l);
	if (err)
		return err;
	if (src->initrd) {
		boot.initrd_start = l.initrd;
		boot.initrd_end = l.initrd + src->initrd_size;
	}
	err = arm64_fdt_build(vm, &boot, &fdt, &fdt_size);
	if (err)
		return err;
	/* An unpacked Image is in guest RAM already, at its start: moved up
	 * by text_offset here. */
	err = guest_ram_write(&vm->ram, l.kernel, kernel, kernel_size) ?:
	      guest_ram_write(&vm->ram, l.fdt, fdt, fdt_size);
	if (!err && src->initrd)
		err = guest_ram_write(&vm->ram, l.initrd, src->initrd,
				      src->initrd_size);
	if (!err && src->dump_dtb)
		err = fdtw_dump(src->dump_dtb, fdt, fdt_size);
	free(fdt);
	if (err)
		return err;
	pr_debug("kernel at 0x%llx, initrd at 0x%llx, device tree at 0x%llx",
		 (unsigned long long)l.kernel, (unsigned long long)l.initrd,
		 (unsigned long long)l.fdt);
	return arm64_vcpu_set_boot_regs(&vm->vcpus[0], l.kernel, l.fdt);
}

int arch_boot_load(struct vm *vm, const struct boot_source *src)
{
	const uint8_t *kernel;
	size_t kernel_size;

	/* The device tree's bootargs: the command line as the guest gets it. */
	pr_debug("kernel command line: %s", src->cmdline);
	return unpack(vm, src, &kernel, &kernel_size) ?:
	       load(vm, src, kernel, kernel_size);
}
