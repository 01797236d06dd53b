/* arch_boot_load for ppc64le sPAPR guests: Linux's ELF vmlinux at its
 * physical addresses from 0, then, at the top of the real mode area,
 * the initrd, the RTAS entry and the device tree; the boot vCPU enters
 * the kernel with r3 = the device tree and r5 = 0, so Linux takes the
 * tree as it is, with no Open Firmware to ask. */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/fdt.h"
#include "arch/powerpc/layout.h"
#include "arch/powerpc/rtas.h"
#include "arch/powerpc/vcpu.h"
#include "boot/elf_image.h"
#include "boot/fdt_writer.h"
#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

const char *const arch_boot_entries[] = { "auto", NULL };

const char arch_linux_uart[] = "hvc0";
const char arch_linux_params[] = "panic=-1";

struct layout {
	uint64_t kernel_end;
	uint64_t initrd, rtas, fdt;
};

/* The kernel's entry as a physical address: e_entry is virtual
 * (0xc000... on ppc64), in one of the segments. */
static int entry_paddr(const struct elf_image *img, uint64_t *pc)
{
	unsigned i;

	for (i = 0; i < img->nr_segments; i++) {
		const struct elf_segment *s = &img->segments[i];

		if (img->entry >= s->vaddr && img->entry - s->vaddr < s->memsz) {
			*pc = s->paddr + (img->entry - s->vaddr);
			return 0;
		}
	}
	return -EINVAL;
}

/* Where each piece goes, or -ENOSPC after saying what does not fit. */
static int place(const struct vm *vm, const struct boot_source *src,
		 const struct elf_image *img, struct layout *l)
{
	struct ram_range r;
	uint64_t top;
	unsigned i;

	if (!guest_ram_range(&vm->ram, 0, &r))
		return -EINVAL;
	l->kernel_end = 0;
	for (i = 0; i < img->nr_segments; i++)
		l->kernel_end = MAX(l->kernel_end, img->segments[i].paddr +
				    img->segments[i].memsz);
	top = MIN(r.gpa + r.size, PPC_RMA_SIZE);
	l->fdt = top - PPC_FDT_MAX;
	l->rtas = l->fdt - PPC_RTAS_SIZE;
	l->initrd = ALIGN_DOWN(l->rtas - MIN(l->rtas, src->initrd_size),
			       PPC_BOOT_ALIGN);
	if (l->kernel_end > l->initrd || src->initrd_size > l->rtas) {
		pr_err("%s: kernel (%llu KiB in memory)%s, RTAS and device "
		       "tree do not fit in the first %llu MiB of RAM (try a "
		       "larger -m)", src->kernel_name,
		       (unsigned long long)(l->kernel_end >> 10),
		       src->initrd ? ", initrd" : "",
		       (unsigned long long)(top >> 20));
		return -ENOSPC;
	}
	return 0;
}

/* Each segment's file bytes, then zeroes up to its memory size. The
 * layout has checked that all of them end below the initrd. */
static int load_segments(struct vm *vm, const struct boot_source *src,
			 const struct elf_image *img)
{
	unsigned i;

	for (i = 0; i < img->nr_segments; i++) {
		const struct elf_segment *s = &img->segments[i];
		uint8_t *dst = guest_ram_ptr(&vm->ram, s->paddr, s->memsz);

		if (!dst) {
			pr_err("%s: segment at 0x%llx (%llu bytes) is outside "
			       "RAM", src->kernel_name,
			       (unsigned long long)s->paddr,
			       (unsigned long long)s->memsz);
			return -EINVAL;
		}
		memcpy(dst, src->kernel + s->offset, s->filesz);
		memset(dst + s->filesz, 0, s->memsz - s->filesz);
	}
	return 0;
}

static int parse(const struct boot_source *src, struct elf_image *img,
		 uint64_t *pc)
{
	char why[ELF_WHY_MAX];

	if (!src->kernel_size) {
		pr_err("thpvm has no bundled test guest for powerpc yet: "
		       "give a kernel with -k");
		return -EINVAL;
	}
	if (!elf_is_elf64(src->kernel, src->kernel_size)) {
		pr_err("%s: not an ELF64 vmlinux (powerpc boots Linux's "
		       "vmlinux)", src->kernel_name);
		return -EINVAL;
	}
	if (src->kernel[EI_DATA] == ELFDATA2MSB) {
		pr_err("%s: a big-endian kernel; thpvm runs little-endian "
		       "(ppc64le) guests", src->kernel_name);
		return -EINVAL;
	}
	if (elf_parse(src->kernel, src->kernel_size, img, why)) {
		pr_err("%s: %s", src->kernel_name, why);
		return -EINVAL;
	}
	if (img->machine != EM_PPC64) {
		pr_err("%s: an ELF file for machine %u, not ppc64",
		       src->kernel_name, img->machine);
		return -EINVAL;
	}
	if (entry_paddr(img, pc)) {
		pr_err("%s: entry point 0x%llx is in none of its segments",
		       src->kernel_name, (unsigned long long)img->entry);
		return -EINVAL;
	}
	return 0;
}

int arch_boot_load(struct vm *vm, const struct boot_source *src)
{
	struct ppc_boot_data boot = { .cmdline = src->cmdline,
				      .rtas_size = PPC_RTAS_SIZE };
	struct elf_image img;
	struct layout l;
	size_t fdt_size;
	uint64_t pc;
	void *fdt;
	int err;

	pr_debug("kernel command line: %s", src->cmdline);
	err = parse(src, &img, &pc) ?: place(vm, src, &img, &l) ?:
	      load_segments(vm, src, &img);
	if (err)
		return err;
	boot.rtas_base = l.rtas;
	if (src->initrd) {
		boot.initrd_start = l.initrd;
		boot.initrd_end = l.initrd + src->initrd_size;
	}
	err = ppc_fdt_build(vm, &boot, &fdt, &fdt_size);
	if (err)
		return err;
	err = guest_ram_write(&vm->ram, l.fdt, fdt, fdt_size) ?:
	      guest_ram_write(&vm->ram, l.rtas, spapr_rtas_blob,
			      spapr_rtas_blob_size);
	if (!err && src->initrd)
		err = guest_ram_write(&vm->ram, l.initrd, src->initrd,
				      src->initrd_size);
	if (!err && src->dump_dtb)
		err = fdtw_dump(src->dump_dtb, fdt, fdt_size);
	free(fdt);
	if (err)
		return err;
	pr_debug("kernel entry 0x%llx, initrd at 0x%llx, RTAS at 0x%llx, "
		 "device tree at 0x%llx", (unsigned long long)pc,
		 (unsigned long long)l.initrd, (unsigned long long)l.rtas,
		 (unsigned long long)l.fdt);
	return ppc_vcpu_enter(&vm->vcpus[0], pc, l.fdt, PPC_RAM_START);
}
