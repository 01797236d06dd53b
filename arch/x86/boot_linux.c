/* The Linux boot protocol for bzImages: the zero page (struct boot_params)
 * for the 64-bit entry, and the setup code in low memory, with only its
 * header filled in, for the real-mode entry. */
#include <errno.h>
#include <string.h>

#include "arch/x86/boot.h"
#include "arch/x86/boot_regs.h"
#include "arch/x86/layout.h"
#include "lib/log.h"
#include "lib/util.h"

#define LOADER_TYPE_UNDEFINED 0xff
#define VID_MODE_NORMAL 0xffff
#define HDR_OFFSET 0x1f1

/* What the loader fills in of the setup header. In the 16-bit path the
 * header lies inside the image's own setup code, so these fields are all
 * it may write there. They all lie below cmdline_size's end, which
 * bzimage_parse checked is within the header. */
static void set_loader_fields(struct x86_boot *b, struct setup_header *hdr,
			      uint64_t load_addr)
{
	hdr->type_of_loader = LOADER_TYPE_UNDEFINED;
	hdr->vid_mode = VID_MODE_NORMAL;
	hdr->cmd_line_ptr = X86_CMDLINE_ADDR;
	hdr->code32_start = load_addr;
	hdr->ramdisk_image = (uint32_t)b->initrd_addr;
	hdr->ramdisk_size = b->src->initrd ? (uint32_t)b->src->initrd_size : 0;
}

/* A zero page for the 64-bit entry: the image's setup header with the
 * loader's fields, the memory map, and the initrd's upper halves. */
static void fill_zero_page(struct x86_boot *b, const struct bzimage *img,
			   struct boot_params *bp, uint64_t load_addr)
{
	size_t hdr_len = 0x202 + img->data[0x201] - HDR_OFFSET;
	uint64_t initrd_size = b->src->initrd ? b->src->initrd_size : 0;

	memset(bp, 0, sizeof(*bp));
	memcpy(&bp->hdr, img->data + HDR_OFFSET, MIN(hdr_len, sizeof(bp->hdr)));
	set_loader_fields(b, &bp->hdr, load_addr);
	bp->ext_ramdisk_image = b->initrd_addr >> 32;
	bp->ext_ramdisk_size = initrd_size >> 32;
	memcpy(bp->e820_table, b->e820, b->nr_e820 * sizeof(b->e820[0]));
	bp->e820_entries = b->nr_e820;
	/* Linux scans the BIOS area for it otherwise, as it must after
	 * the real-mode entry, whose setup code keeps only the header. */
	bp->acpi_rsdp_addr = b->rsdp;
}

/* Loads the protected-mode kernel, the command line and the initrd. */
static int load_kernel(struct x86_boot *b, const struct bzimage *img,
		       uint64_t load_addr)
{
	uint64_t max_initrd = img->initrd_addr_max ? img->initrd_addr_max :
						     0x37ffffff;
	int err;

	err = x86_boot_copy(b, load_addr, img->kernel, img->kernel_size,
			    img->init_size);
	if (err)
		return err;
	b->kernel_end = load_addr + img->init_size;
	return x86_boot_write_cmdline(b, img->cmdline_size) ?:
	       x86_boot_place_initrd(b, max_initrd);
}

int x86_boot_bzimage_64(struct x86_boot *b, const struct bzimage *img)
{
	uint64_t load_addr = bzimage_load_address(img);
	struct boot_params *bp;
	int err;

	err = load_kernel(b, img, load_addr);
	if (err)
		return err;
	bp = guest_ram_ptr(&b->vm->ram, X86_ZERO_PAGE_ADDR, sizeof(*bp));
	if (!bp)
		return -ENOSPC;
	fill_zero_page(b, img, bp, load_addr);
	pr_debug("%s: booting through the 64-bit entry", b->src->kernel_name);
	/* startup_64 is 0x200 past the start of the protected-mode code. */
	return x86_enter_64(b->vm, &b->vm->vcpus[0], load_addr + 0x200,
			    X86_ZERO_PAGE_ADDR);
}

int x86_boot_bzimage_16(struct x86_boot *b, const struct bzimage *img)
{
	uint64_t load_addr = bzimage_load_address(img);
	struct setup_header *hdr;
	int err;

	/* The setup code, its heap and its stack share one 64 KiB segment. */
	if (img->setup_size > X86_SETUP_HEAP_END) {
		pr_err("%s: setup code of %zu bytes is too large",
		       b->src->kernel_name, img->setup_size);
		return -EINVAL;
	}
	err = load_kernel(b, img, load_addr) ?:
	      x86_boot_copy(b, X86_SETUP_ADDR, img->data, img->setup_size,
			    img->setup_size);
	if (err)
		return err;
	/* The header, in place in the setup code just copied. Nothing else
	 * of a zero page is written here: the rest of the segment is the
	 * image's code, and setup asks the BIOS (bios.S) for the memory map.
	 * The initrd lies below 4 GiB (initrd_addr_max is 32-bit), so the
	 * header's 32-bit fields hold it. */
	hdr = guest_ram_ptr(&b->vm->ram, X86_SETUP_ADDR + HDR_OFFSET,
			    sizeof(*hdr));
	if (!hdr)
		return -ENOSPC;
	set_loader_fields(b, hdr, load_addr);
	hdr->loadflags |= CAN_USE_HEAP;
	hdr->heap_end_ptr = X86_SETUP_HEAP_END - 0x200;
	pr_debug("%s: booting through the 16-bit entry", b->src->kernel_name);
	return x86_enter_16(&b->vm->vcpus[0], X86_SETUP_SEG, X86_SETUP_STACK);
}
