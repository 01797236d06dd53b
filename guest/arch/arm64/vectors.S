/*
 * Exception vectors and the EL0 round trip. Every vector saves the same
 * frame (struct frame in exceptions.c) and calls
 * exception_dispatch(frame, vector index); the four groups of four are
 * EL1 on SP_EL0, EL1 on SP_EL1, EL0 in AArch64, EL0 in AArch32.
 */

#define FRAME_SIZE	272	/* x0-x30, elr, spsr, 16-byte aligned */

	.macro	VECTOR n
	.balign	128
	sub	sp, sp, #FRAME_SIZE
	stp	x0, x1, [sp, #0]
	mov	x1, #\n
	b	save_and_dispatch
	.endm

	.text
	.balign	2048
	.globl	vectors
vectors:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	VECTOR	\n
	.endr

save_and_dispatch:
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x19, [sp, #144]
	stp	x20, x21, [sp, #160]
	stp	x22, x23, [sp, #176]
	stp	x24, x25, [sp, #192]
	stp	x26, x27, [sp, #208]
	stp	x28, x29, [sp, #224]
	mrs	x2, elr_el1
	stp	x30, x2, [sp, #240]
	mrs	x2, spsr_el1
	str	x2, [sp, #256]
	mov	x0, sp
	bl	exception_dispatch
	ldr	x2, [sp, #256]
	msr	spsr_el1, x2
	ldp	x30, x2, [sp, #240]
	msr	elr_el1, x2
	ldp	x28, x29, [sp, #224]
	ldp	x26, x27, [sp, #208]
	ldp	x24, x25, [sp, #192]
	ldp	x22, x23, [sp, #176]
	ldp	x20, x21, [sp, #160]
	ldp	x18, x19, [sp, #144]
	ldp	x16, x17, [sp, #128]
	ldp	x14, x15, [sp, #112]
	ldp	x12, x13, [sp, #96]
	ldp	x10, x11, [sp, #80]
	ldp	x8, x9, [sp, #64]
	ldp	x6, x7, [sp, #48]
	ldp	x4, x5, [sp, #32]
	ldp	x2, x3, [sp, #16]
	ldp	x0, x1, [sp, #0]
	add	sp, sp, #FRAME_SIZE
	eret

/*
 * long user_call(long (*fn)(long), long arg, void *stack_top)
 * Runs fn(arg) at EL0 on stack_top with interrupts masked (they stay
 * pending until the kernel sleeps again); fn's result comes back through
 * svc #0, which exception_dispatch turns into user_return(result).
 */
	.globl	user_call
user_call:
	stp	x29, x30, [sp, #-96]!
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	mov	x3, sp
	mrs	x4, tpidr_el1		/* this CPU's struct el0_cpu */
	str	x3, [x4]
	msr	sp_el0, x2
	adr	x3, user_entry
	msr	elr_el1, x3
	mov	x3, #0x3c0		/* EL0t, D, A, I, F masked */
	msr	spsr_el1, x3
	mov	x3, x0
	mov	x0, x1
	eret

user_entry:
	blr	x3
	svc	#0
	b	.

/* void user_return(long result): back in user_call's caller. */
	.globl	user_return
user_return:
	mrs	x1, tpidr_el1
	ldr	x1, [x1]
	mov	sp, x1
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	x29, x30, [sp], #96
	ret
