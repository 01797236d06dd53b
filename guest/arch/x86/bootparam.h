/* Offsets in struct boot_params (Documentation/x86/zero-page.rst and
 * boot.rst), shared by assembly, C and mkbzimage. */
#ifndef TG_BOOTPARAM_H
#define TG_BOOTPARAM_H

#define BP_ACPI_RSDP_ADDR	0x070
#define BP_EXT_RAMDISK_IMAGE	0x0c0
#define BP_EXT_RAMDISK_SIZE	0x0c4
#define BP_EXT_CMD_LINE_PTR	0x0c8
#define BP_E820_ENTRIES		0x1e8
#define BP_SETUP_SECTS		0x1f1
#define BP_SYSSIZE		0x1f4
#define BP_HEADER		0x202
#define BP_LOADFLAGS		0x211
#define BP_CODE32_START		0x214
#define BP_RAMDISK_IMAGE	0x218
#define BP_RAMDISK_SIZE		0x21c
#define BP_HEAP_END_PTR		0x224
#define BP_CMD_LINE_PTR		0x228
#define BP_INIT_SIZE		0x260
#define BP_E820_TABLE		0x2d0
#define BP_E820_MAX		128
#define BP_E820_ENTRY_SIZE	20

#define LOADFLAG_CAN_USE_HEAP	0x80

/* Offset of kernel_info inside the protected-mode image (head.S). */
#define KERNEL_INFO_OFFSET	0x1c0

/* Set in %ebp by our own real-mode setup before jumping to startup_32, so
 * that the report can tell the 16-bit entry from a direct 32-bit one (the
 * 32-bit protocol requires %ebp = 0). */
#define SETUP_MAGIC		0x16e2f00d

/* The entry a guest run came through, passed from head.S to c_entry(). */
#define ENTRY_16	16
#define ENTRY_32	32
#define ENTRY_64	64
#define ENTRY_PVH	1

/* GDT selectors (Linux layout, as the boot protocol expects). */
#define SEL_CODE32	0x08
#define SEL_KCODE	0x10
#define SEL_KDATA	0x18
#define SEL_UDATA	0x2b
#define SEL_UCODE	0x33
#define SEL_TSS		0x40	/* CPU n's at SEL_TSS + 16 * n */

/* CPUs that can run ring-3 work (a TSS each); and the size and
 * alignment of each one's ring-0 stack, whose first word keeps the
 * kernel stack pointer user_call left from. */
#define USER_CPUS	8
#define KSTACK_SIZE	0x4000

/* Vector of the DPL-3 gate through which ring 3 returns to the kernel. */
#define VEC_USER_RETURN	0x80
/* The IPI that wakes an idle AP to look for ring-3 work. */
#define VEC_WAKE	0xf0

/* Where the AP trampoline is copied; the SIPI vector is its page number. */
#define TRAMP_BASE	0x8000

#endif
