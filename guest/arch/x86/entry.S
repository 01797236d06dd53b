/*
 * Interrupt entry stubs and the ring-3 round trip. Every stub leaves the
 * same frame (struct regs in desc.h) and calls interrupt_dispatch().
 */
#include "bootparam.h"

	.text
	.macro STUB vec, err
	.globl isr\vec
isr\vec:
	.if \err == 0
	pushq	$0
	.endif
	pushq	$\vec
	jmp	isr_common
	.endm

	/* Exceptions that push an error code: 8, 10-14, 17, 21, 29, 30. */
	.irp v, 0,1,2,3,4,5,6,7,9,15,16,18,19,20,22,23,24,25,26,27,28,31,32,33,240,255
	STUB \v, 0
	.endr
	/* MSI-X vectors of virtio devices: VEC_VIRTIO_BASE (0x40) on. */
	.irp v, 64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79
	STUB \v, 0
	.endr
	.irp v, 8,10,11,12,13,14,17,21,29,30
	STUB \v, 1
	.endr

isr_common:
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, %rdi
	cld
	call	interrupt_dispatch
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
	addq	$16, %rsp
	iretq

	.section .rodata
	.balign 8
	.globl exception_stubs
exception_stubs:
	.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.quad isr\v
	.endr
	.globl virtio_stubs
virtio_stubs:
	.irp v, 64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79
	.quad isr\v
	.endr

	.text
/*
 * long user_call(long (*fn)(long), long arg, void *stack_top, void *kstack)
 * Runs fn(arg) in ring 3 with IF=0; fn's result comes back through the
 * DPL-3 gate at vector 0x80 (user_return), which resumes the kernel
 * context saved here. kstack is this CPU's ring-0 stack (its TSS's rsp0
 * stack, KSTACK_SIZE-aligned); the saved stack pointer goes in its first
 * word, where user_return finds it from any depth of that stack.
 */
	.globl user_call
user_call:
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, (%rcx)
	pushq	$SEL_UDATA
	pushq	%rdx
	pushq	$0x2
	pushq	$SEL_UCODE
	leaq	user_entry(%rip), %rax
	pushq	%rax
	movq	%rdi, %rax
	movq	%rsi, %rdi
	iretq

user_entry:
	call	*%rax
	movq	%rax, %rdi
	.globl user_int
user_int:
	int	$VEC_USER_RETURN
	ud2

	/* Also called from interrupt_dispatch with the result in %rdi; on
	 * the ring-0 stack either way, as ring 3 came through the TSS. */
	.globl user_return
user_return:
	movq	%rdi, %rax
	movq	%rsp, %rcx
	andq	$-KSTACK_SIZE, %rcx
	movq	(%rcx), %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret
