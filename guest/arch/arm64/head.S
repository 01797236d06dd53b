/*
 * The arm64 Image header and the entries (Linux's
 * Documentation/arch/arm64/booting.rst): the boot CPU at the first byte
 * with x0 = the device tree, the MMU off, at EL1 (or EL2); secondary CPUs
 * at secondary_entry, from PSCI CPU_ON, with x0 = their struct cpu_start.
 *
 * The image is linked at 0 and runs wherever the loader put it (thpvm:
 * the start of RAM; QEMU: 2 MiB above it): its code is PC-relative and
 * the absolute addresses in its data are R_AARCH64_RELATIVE relocations,
 * applied here before anything reads them.
 */

#define R_AARCH64_RELATIVE	1027
/* Image flags: little endian, 4 KiB pages, placeable anywhere. */
#define IMAGE_FLAGS		((1 << 1) | (1 << 3))

	.section .head.text, "ax"
	.globl	_head
_head:
	b	primary_entry		/* code0 */
	.long	0			/* code1 */
	.quad	0			/* text_offset */
	.quad	__image_size		/* image_size: to _end, heap included */
	.quad	IMAGE_FLAGS
	.quad	0, 0, 0			/* res2-res4 */
	.ascii	"ARM\x64"		/* magic */
	.long	0			/* res5: no PE/COFF header */

primary_entry:
	mov	x19, x0			/* the device tree */
	adr	x20, _head		/* where the loader put us */
	mov	x21, #0			/* an unknown relocation type, if any */
	adrp	x1, __rela_start
	add	x1, x1, :lo12:__rela_start
	adrp	x2, __rela_end
	add	x2, x2, :lo12:__rela_end
1:	cmp	x1, x2
	b.hs	3f
	ldp	x3, x4, [x1], #16	/* r_offset, r_info */
	ldr	x5, [x1], #8		/* r_addend */
	cmp	w4, #R_AARCH64_RELATIVE
	b.ne	2f
	add	x5, x5, x20
	str	x5, [x20, x3]
	b	1b
2:	cbnz	x21, 1b
	mov	w21, w4			/* reported once there is a console */
	b	1b
3:	ic	iallu			/* nothing stale of the image's code */
	dsb	nsh
	isb
	adrp	x0, boot_stack_top
	add	sp, x0, :lo12:boot_stack_top
	adrp	x0, vectors
	add	x0, x0, :lo12:vectors
	msr	vbar_el1, x0
	isb
	mov	x0, x19
	mov	x1, x20
	mov	w2, w21
	bl	c_entry
4:	wfi
	b	4b

/*
 * struct cpu_start (smp.c): the boot CPU's MMU settings and this CPU's
 * stack. Read with the MMU off: the boot CPU cleaned it to
 * the point of coherency first.
 */
	.text
	.globl	secondary_entry
secondary_entry:
	ldp	x1, x2, [x0]		/* mair, tcr */
	msr	mair_el1, x1
	msr	tcr_el1, x2
	ldp	x1, x2, [x0, #16]	/* ttbr0, sctlr */
	msr	ttbr0_el1, x1
	isb
	tlbi	vmalle1
	dsb	nsh
	isb
	msr	sctlr_el1, x2
	isb
	ldr	x1, [x0, #32]		/* stack top */
	mov	sp, x1
	adrp	x1, vectors
	add	x1, x1, :lo12:vectors
	msr	vbar_el1, x1
	isb
	bl	secondary_main
5:	wfi
	b	5b

/*
 * void mmu_enable(const struct mmu_regs *r): the boot CPU's translation
 * on. What was written with the MMU off went straight to memory; lines
 * of [r->inval_start, r->inval_end) a cache may still hold from before
 * are dropped first, so that cacheable reads see memory. A leaf: the
 * stack is not touched between the invalidation and the switch.
 */
	.globl	mmu_enable
mmu_enable:
	ldp	x4, x5, [x0, #32]	/* inval_start, inval_end */
	mrs	x6, ctr_el0
	ubfx	x6, x6, #16, #4		/* DminLine: log2 of words */
	mov	x7, #4
	lsl	x7, x7, x6		/* line size */
	sub	x6, x7, #1
	bic	x4, x4, x6
	dsb	sy
6:	dc	ivac, x4
	add	x4, x4, x7
	cmp	x4, x5
	b.lo	6b
	dsb	sy
	ldp	x1, x2, [x0]		/* mair, tcr */
	msr	mair_el1, x1
	msr	tcr_el1, x2
	ldp	x1, x2, [x0, #16]	/* ttbr0, sctlr */
	msr	ttbr0_el1, x1
	isb
	tlbi	vmalle1
	dsb	nsh
	isb
	msr	sctlr_el1, x2
	isb
	ret

	.section .noinit, "aw", %nobits
	.balign	16
	.space	16384
boot_stack_top:
