/*
 * bzImage real-mode part: boot sector stub, setup header (boot protocol
 * 2.15) and the setup code. The loader copies this to segment S and jumps
 * to S+0x20:0 with DS=ES=SS=S; the setup segment doubles as boot_params.
 * Setup collects the BIOS e820 map into boot_params, switches to flat
 * 32-bit protected mode and jumps to code32_start with %esi = boot_params.
 */
#include "bootparam.h"

	.code16
	.section .setup, "ax"
	.globl _start
_start:

	.org BP_SETUP_SECTS
setup_sects:	.byte 0			/* patched by mkbzimage */
root_flags:	.word 0
syssize:	.long 0			/* patched by mkbzimage */
ram_size:	.word 0
vid_mode:	.word 0xffff		/* "normal" */
root_dev:	.word 0
boot_flag:	.word 0xaa55

	/* 0x200: the loader jumps here; a 2-byte jump over the header. */
	.byte 0xeb, start_of_setup - 1f
1:	.ascii "HdrS"
	.word 0x020f			/* protocol 2.15 */
	.long 0				/* realmode_swtch */
	.word 0x1000			/* start_sys_seg (obsolete) */
	.word kernel_version - 0x200
	.byte 0				/* type_of_loader */
	.byte 0x01			/* loadflags: LOADED_HIGH */
	.word 0x8000			/* setup_move_size */
	.long 0x100000			/* code32_start */
	.long 0				/* ramdisk_image */
	.long 0				/* ramdisk_size */
	.long 0				/* bootsect_kludge */
	.word 0				/* heap_end_ptr */
	.byte 0				/* ext_loader_ver */
	.byte 0				/* ext_loader_type */
	.long 0				/* cmd_line_ptr */
	.long 0x7fffffff		/* initrd_addr_max */
	.long 0x200000			/* kernel_alignment */
	.byte 0				/* relocatable_kernel */
	.byte 0				/* min_alignment */
	.word 0x0001			/* xloadflags: XLF_KERNEL_64 */
	.long 4095			/* cmdline_size */
	.long 0				/* hardware_subarch */
	.quad 0				/* hardware_subarch_data */
	.long 0				/* payload_offset */
	.long 0				/* payload_length */
	.quad 0				/* setup_data */
	.quad 0x100000			/* pref_address */
	.long 0				/* init_size: patched by mkbzimage */
	.long 0				/* handover_offset */
	.long KERNEL_INFO_OFFSET	/* kernel_info_offset */

	/* 0x26c, still inside boot_params padding: make CS equal DS so
	 * that code offsets are file offsets. */
start_of_setup:
	pushw	%ds
	pushw	$setup_main
	lretw

	/* The rest of boot_params (e820_table at 0x2d0 ...) stays free. */
	.org 0x1000
setup_main:
	cli
	cld
	movw	%ds, %ax
	movw	%ax, %es
	movw	%ax, %ss
	/*
	 * Stack at the end of the heap the loader granted, if any, as
	 * Linux's header.S does: an end at or past 64 KiB (kvmtool grants
	 * heap_end_ptr 0xfe00, so the end is 0x10000) becomes 0xfffc, not
	 * SP = 0. BIOS handlers that run on our stack may touch a little
	 * above the iret frame (kvmtool's int 0x15 writes its saved FLAGS
	 * as 32 bits); with SP = 0 that crosses offset 0xffff and faults.
	 * The upper half of ESP is cleared: kvmtool's BIOS addresses the
	 * stack through ESP.
	 */
	movw	$0xfffc, %dx
	testb	$LOADFLAG_CAN_USE_HEAP, BP_LOADFLAGS
	jz	1f
	movw	BP_HEAP_END_PTR, %ax
	addw	$0x200, %ax
	jc	1f
	andw	$~3, %ax
	jz	1f
	movw	%ax, %dx
1:	movzwl	%dx, %esp
	/* BIOS e820: ebx continues, stop on CF, bad signature or ebx == 0. */
	xorl	%ebx, %ebx
	movw	$BP_E820_TABLE, %di
	xorw	%si, %si		/* entries so far */
3:	movl	$0xe820, %eax
	movl	$BP_E820_ENTRY_SIZE, %ecx
	movl	$0x534d4150, %edx	/* "SMAP" */
	int	$0x15
	jc	4f
	cmpl	$0x534d4150, %eax
	jne	4f
	incw	%si
	addw	$BP_E820_ENTRY_SIZE, %di
	cmpw	$BP_E820_MAX, %si
	jae	4f
	testl	%ebx, %ebx
	jnz	3b
4:	movw	%si, %ax
	movb	%al, BP_E820_ENTRIES

	/* Fast A20 gate (port 0x92), without touching the reset bit. */
	inb	$0x92, %al
	orb	$0x02, %al
	andb	$0xfe, %al
	outb	%al, $0x92

	/* Flat GDT at its linear address, then protected mode. */
	xorl	%ebx, %ebx
	movw	%ds, %bx
	shll	$4, %ebx		/* linear address of boot_params */
	movl	%ebx, %eax
	addl	$setup_gdt, %eax
	movl	%eax, setup_gdtr + 2
	lgdtl	setup_gdtr
	movl	%ebx, %eax
	addl	$pm32, %eax
	movl	%cr0, %edx
	orl	$1, %edx
	movl	%edx, %cr0
	pushl	$SEL_KCODE
	pushl	%eax
	lretl

	.code32
pm32:
	movl	$SEL_KDATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	movl	%ebx, %esi
	movl	BP_CODE32_START(%esi), %eax
	movl	$SETUP_MAGIC, %ebp
	xorl	%ebx, %ebx
	xorl	%edi, %edi
	jmp	*%eax

	.balign 8
setup_gdt:
	.quad 0
	.quad 0
	.quad 0x00cf9a000000ffff	/* 0x10: flat 32-bit code */
	.quad 0x00cf92000000ffff	/* 0x18: flat data */
setup_gdtr:
	.word 4 * 8 - 1
	.long 0

kernel_version:
	.asciz "thpvm-testguest"
