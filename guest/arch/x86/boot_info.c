/* Turns boot_params (16/32/64-bit entries) or hvm_start_info (PVH) into
 * struct boot_info, copying everything the loader may later reuse. */
#include "guest.h"
#include "lib.h"

/* struct hvm_start_info, xen/include/public/arch-x86/hvm/start_info.h. */
#define PVH_MAGIC 0x336ec578
struct pvh_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};

struct pvh_memmap_entry {
	uint64_t addr, size;
	uint32_t type, reserved;
};

struct pvh_module {
	uint64_t paddr, size, cmdline_paddr, reserved;
};

__attribute__((section(".noinit"))) struct boot_info boot;

static uint32_t bp32(uint64_t bp, unsigned off)
{
	return *(const uint32_t *)(bp + off);
}

const char *raw_cmdline(int entry, uint64_t ptr)
{
	uint64_t addr;

	if (entry == ENTRY_PVH) {
		const struct pvh_start_info *si = (const void *)ptr;

		if (si->magic != PVH_MAGIC)
			return 0;
		addr = si->cmdline_paddr;
	} else {
		addr = bp32(ptr, BP_CMD_LINE_PTR) |
		       (uint64_t)bp32(ptr, BP_EXT_CMD_LINE_PTR) << 32;
	}
	return (const char *)addr;
}

static void copy_cmdline(const char *cl)
{
	size_t n = 0;

	if (cl)
		while (n < CMDLINE_MAX - 1 && cl[n])
			n++;
	memcpy(boot.cmdline, cl, n);
	boot.cmdline[n] = 0;
}

static void from_boot_params(uint64_t bp)
{
	const uint8_t *tab = (const uint8_t *)(bp + BP_E820_TABLE);
	unsigned n = *(const uint8_t *)(bp + BP_E820_ENTRIES);

	if (n > MEM_MAX)
		n = MEM_MAX;
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *e = tab + i * BP_E820_ENTRY_SIZE;

		memcpy(&boot.mem[i].addr, e, 8);
		memcpy(&boot.mem[i].size, e + 8, 8);
		memcpy(&boot.mem[i].type, e + 16, 4);
	}
	boot.nmem = n;
	boot.initrd_addr = bp32(bp, BP_RAMDISK_IMAGE) |
			   (uint64_t)bp32(bp, BP_EXT_RAMDISK_IMAGE) << 32;
	boot.initrd_size = bp32(bp, BP_RAMDISK_SIZE) |
			   (uint64_t)bp32(bp, BP_EXT_RAMDISK_SIZE) << 32;
	boot.rsdp = *(const uint64_t *)(bp + BP_ACPI_RSDP_ADDR);
}

static void from_pvh(const struct pvh_start_info *si)
{
	boot.nmem = 0;
	boot.initrd_addr = boot.initrd_size = 0;
	boot.rsdp = 0;
	if (si->magic != PVH_MAGIC)
		return;
	boot.rsdp = si->rsdp_paddr;
	if (si->version >= 1 && si->memmap_paddr) {
		const struct pvh_memmap_entry *m = (const void *)si->memmap_paddr;
		unsigned n = MIN(si->memmap_entries, (unsigned)MEM_MAX);

		for (unsigned i = 0; i < n; i++) {
			boot.mem[i].addr = m[i].addr;
			boot.mem[i].size = m[i].size;
			boot.mem[i].type = m[i].type;
		}
		boot.nmem = n;
	}
	if (si->nr_modules && si->modlist_paddr) {
		const struct pvh_module *mod = (const void *)si->modlist_paddr;

		boot.initrd_addr = mod->paddr;
		boot.initrd_size = mod->size;
	}
}

void boot_info_init(int entry, uint64_t ptr)
{
	boot.entry = entry;
	copy_cmdline(raw_cmdline(entry, ptr));
	if (entry == ENTRY_PVH)
		from_pvh((const void *)ptr);
	else
		from_boot_params(ptr);
	if (!boot.initrd_size)
		boot.initrd_addr = 0;
}
