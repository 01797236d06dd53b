/*
 * Entry points. startup_32 (0x100000, bzImage 32-bit protocol and the end of
 * our real-mode setup), startup_64 (0x100200, 64-bit protocol) and pvh_start
 * (Xen PVH note) all reach long_mode with %edi = entry kind and %rsi =
 * boot_params or hvm_start_info, then call c_entry(kind, ptr).
 */
#include "bootparam.h"

	.section .head.text, "ax"
	.code32
	.globl startup_32
startup_32:
	cli
	cld
	movl	$ENTRY_32, %edi
	cmpl	$SETUP_MAGIC, %ebp
	jne	go_long32
	movl	$ENTRY_16, %edi
	jmp	go_long32

	/* Boot protocol 2.15 kernel_info: header, size, size_total,
	 * setup_type_max. */
	.org KERNEL_INFO_OFFSET
	.ascii "LToP"
	.long 16
	.long 16
	.long 0

	.org 0x200
	.code64
	.globl startup_64
startup_64:
	cli
	cld
	/* The 64-bit protocol promises no stack. */
	leaq	boot_stack_top(%rip), %rsp
	lgdt	gdt_desc(%rip)
	movl	$ENTRY_64, %edi
	pushq	$SEL_KCODE
	leaq	long_mode(%rip), %rax
	pushq	%rax
	lretq

	.text
	.code32
	.globl pvh_start
pvh_start:
	cli
	cld
	movl	$ENTRY_PVH, %edi
	movl	%ebx, %esi

	/* Flat 32-bit protected mode, paging off: enable long mode with the
	 * static 1 GiB identity map below. */
go_long32:
	lgdt	gdt_desc
	movl	$SEL_KDATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%cr4, %eax
	orl	$0x20, %eax		/* PAE */
	movl	%eax, %cr4
	movl	$early_pml4, %eax
	movl	%eax, %cr3
	movl	$0xc0000080, %ecx	/* EFER */
	rdmsr
	orl	$0x100, %eax		/* LME */
	wrmsr
	movl	%cr0, %eax
	orl	$0x80000001, %eax	/* PG | PE */
	movl	%eax, %cr0
	ljmp	$SEL_KCODE, $long_mode32

	.code64
long_mode32:
	/* Upper register halves are undefined after the mode switch. */
	movl	%edi, %edi
	movl	%esi, %esi
long_mode:
	movl	$SEL_KDATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	xorl	%eax, %eax
	movl	%eax, %fs
	movl	%eax, %gs
	leaq	boot_stack_top(%rip), %rsp
	xorl	%ebp, %ebp
	call	c_entry
1:	cli
	hlt
	jmp	1b

	/* PVH entry note: name "Xen", type XEN_ELFNOTE_PHYS32_ENTRY (18),
	 * 4-byte physical entry address. The trailing zero word keeps readers
	 * that load the descriptor as 64 bits (QEMU) correct. */
	.section .note.Xen, "a"
	.balign 4
	.long 4
	.long 4
	.long 18
	.asciz "Xen"
	.long pvh_start
	.long 0

	.data
	/* Early identity map of the first 1 GiB with 2 MiB pages (U/S set
	 * everywhere), for the 32-bit entries; static so nothing is built
	 * at run time. */
	.balign 4096
early_pml4:
	.quad early_pdpt + 0x7
	.fill 511, 8, 0
early_pdpt:
	.quad early_pd + 0x7
	.fill 511, 8, 0
early_pd:
	.set .Lpage, 0
	.rept 512
	.quad (.Lpage << 21) + 0x87
	.set .Lpage, .Lpage + 1
	.endr

	/* Linux-style GDT; the TSS descriptor is filled in by desc.c. */
	.balign 16
	.globl gdt
gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* 0x08: 32-bit code (AP trampoline) */
	.quad 0x00af9a000000ffff	/* 0x10: kernel code */
	.quad 0x00cf92000000ffff	/* 0x18: kernel data */
	.quad 0x00cffa000000ffff	/* 0x20: user 32-bit code */
	.quad 0x00cff2000000ffff	/* 0x28: user data */
	.quad 0x00affa000000ffff	/* 0x30: user code */
	.quad 0
	.rept USER_CPUS			/* 0x40: a TSS per CPU */
	.quad 0, 0
	.endr
gdt_end:
	/* Read as 6 bytes by 32-bit lgdt and 10 by 64-bit lgdt. */
	.globl gdt_desc
gdt_desc:
	.word gdt_end - gdt - 1
	.quad gdt

	.section .noinit, "aw", @nobits
	.balign 16
	.space 16384
boot_stack_top:
