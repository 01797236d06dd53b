/*
 * AP start-up code, copied to TRAMP_BASE (SIPI vector TRAMP_BASE >> 12).
 * Real mode -> 32-bit protected mode -> long mode on the BSP's page
 * tables, then each AP takes its own stack slot and calls the entry in
 * tramp_entry. smp.c fills the tramp_* parameters in the copy.
 */
#include "bootparam.h"

#define ABS(x) (TRAMP_BASE + (x) - tramp_start)

	.section .tramp, "ax"
	.code16
	.globl tramp_start
tramp_start:
	cli
	cld
	xorw	%ax, %ax
	movw	%ax, %ds
	lgdtl	ABS(tramp_gdtr)
	movl	%cr0, %eax
	orl	$1, %eax
	movl	%eax, %cr0
	ljmpl	$SEL_CODE32, $ABS(tramp32)

	.code32
tramp32:
	movl	$SEL_KDATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%cr4, %eax
	orl	$0x20, %eax		/* PAE */
	movl	%eax, %cr4
	movl	ABS(tramp_cr3), %eax
	movl	%eax, %cr3
	movl	$0xc0000080, %ecx	/* EFER.LME */
	rdmsr
	orl	$0x100, %eax
	wrmsr
	movl	%cr0, %eax
	orl	$0x80000000, %eax	/* PG */
	movl	%eax, %cr0
	ljmp	$SEL_KCODE, $ABS(tramp64)

	.code64
tramp64:
	xorl	%eax, %eax
	movl	%eax, %fs
	movl	%eax, %gs
	/* Stack slot: top of stack number (index + 1). */
	movl	$1, %eax
	lock xaddl %eax, ABS(tramp_next)
	incl	%eax
	imulq	ABS(tramp_stack_size), %rax
	addq	ABS(tramp_stack_base), %rax
	movq	%rax, %rsp
	xorl	%ebp, %ebp
	movq	ABS(tramp_entry), %rax
	call	*%rax
1:	cli
	hlt
	jmp	1b

	.balign 8
	.globl tramp_gdtr, tramp_cr3, tramp_stack_base, tramp_stack_size
	.globl tramp_next, tramp_entry
tramp_gdtr:
	.word 0
	.long 0
	.word 0
tramp_cr3:		.quad 0
tramp_stack_base:	.quad 0
tramp_stack_size:	.quad 0
tramp_next:		.long 0
			.long 0
tramp_entry:		.quad 0
	.globl tramp_end
tramp_end:
