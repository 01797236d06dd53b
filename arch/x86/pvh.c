/* PVH boot: load an ELF kernel's segments at their physical addresses and
 * enter it in 32-bit protected mode with an hvm_start_info. */
#include "arch/x86/pvh.h"

#include <errno.h>
#include <string.h>

#include "arch/x86/boot.h"
#include "arch/x86/boot_regs.h"
#include "arch/x86/layout.h"
#include "boot/elf_image.h"
#include "lib/log.h"
#include "lib/util.h"

/* The entry note holds a 32-bit address; Linux emits it as a 64-bit word.
 * Returns -ENOENT, quietly, if there is no note; -EINVAL after one error
 * line if the notes are malformed. */
static int pvh_entry(struct x86_boot *b, const uint8_t *elf, size_t len,
		     uint32_t *entry)
{
	char why[ELF_WHY_MAX];
	const uint8_t *desc;
	size_t desc_len;
	uint64_t v;
	int err;

	err = elf_find_note(elf, len, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &desc,
			    &desc_len, why);
	if (err == -EINVAL)
		pr_err("%s: ELF: %s", b->src->kernel_name, why);
	if (err)
		return err;
	if (desc_len != 4 && desc_len != 8) {
		pr_err("%s: malformed PVH entry note: %zu bytes, not 4 or 8",
		       b->src->kernel_name, desc_len);
		return -EINVAL;
	}
	v = desc_len == 4 ? get_le32(desc) : get_le64(desc);
	if (v > UINT32_MAX) {
		pr_err("%s: PVH entry note gives 0x%llx, beyond 32 bits",
		       b->src->kernel_name, (unsigned long long)v);
		return -EINVAL;
	}
	*entry = v;
	return 0;
}

static int load_segments(struct x86_boot *b, const uint8_t *elf,
			 const struct elf_image *img)
{
	unsigned i;
	int err;

	for (i = 0; i < img->nr_segments; i++) {
		const struct elf_segment *s = &img->segments[i];

		/* Below 1 MiB are the boot data and BIOS tables, already
		 * written; a kernel there would overwrite them. */
		if (s->paddr < X86_BIOS_END) {
			pr_err("%s: segment at 0x%llx lies below 1 MiB, where "
			       "thpvm keeps the boot data", b->src->kernel_name,
			       (unsigned long long)s->paddr);
			return -EINVAL;
		}
		err = x86_boot_copy(b, s->paddr, elf + s->offset, s->filesz,
				    s->memsz);
		if (err)
			return err;
		b->kernel_end = MAX(b->kernel_end, s->paddr + s->memsz);
	}
	return 0;
}

static int write_start_info(struct x86_boot *b)
{
	struct guest_ram *ram = &b->vm->ram;
	struct hvm_start_info *si;
	struct hvm_memmap_table_entry *mm;
	struct hvm_modlist_entry *mod;
	unsigned i;

	si = guest_ram_ptr(ram, X86_ZERO_PAGE_ADDR, sizeof(*si));
	mod = guest_ram_ptr(ram, X86_PVH_MODLIST_ADDR, sizeof(*mod));
	mm = guest_ram_ptr(ram, X86_PVH_MEMMAP_ADDR, b->nr_e820 * sizeof(*mm));
	if (!si || !mod || !mm)
		return -ENOSPC;
	*si = (struct hvm_start_info){
		.magic = HVM_START_MAGIC,
		.version = HVM_START_VERSION,
		.cmdline_paddr = X86_CMDLINE_ADDR,
		.memmap_paddr = X86_PVH_MEMMAP_ADDR,
		.memmap_entries = b->nr_e820,
		.rsdp_paddr = b->rsdp,
	};
	for (i = 0; i < b->nr_e820; i++)
		mm[i] = (struct hvm_memmap_table_entry){
			.addr = b->e820[i].addr,
			.size = b->e820[i].size,
			.type = b->e820[i].type,
		};
	if (b->src->initrd) {
		*mod = (struct hvm_modlist_entry){
			.paddr = b->initrd_addr,
			.size = b->src->initrd_size,
		};
		si->nr_modules = 1;
		si->modlist_paddr = X86_PVH_MODLIST_ADDR;
	}
	return 0;
}

int x86_boot_pvh(struct x86_boot *b, const uint8_t *elf, size_t len)
{
	char why[ELF_WHY_MAX];
	struct elf_image img;
	uint32_t entry;
	int err;

	err = pvh_entry(b, elf, len, &entry);
	if (err)
		return err;
	err = elf_parse(elf, len, &img, why);
	if (err) {
		pr_err("%s: ELF: %s", b->src->kernel_name, why);
		return err;
	}
	err = load_segments(b, elf, &img) ?:
	      x86_boot_write_cmdline(b, X86_CMDLINE_MAX - 1) ?:
	      x86_boot_place_initrd(b, UINT64_MAX) ?: write_start_info(b);
	if (err)
		return err;
	pr_debug("%s: booting through the PVH entry", b->src->kernel_name);
	return x86_enter_pvh(b->vm, &b->vm->vcpus[0], entry,
			     X86_ZERO_PAGE_ADDR);
}
