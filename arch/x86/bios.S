/*
 * The smallest BIOS a real-mode kernel entry needs: an interrupt handler
 * that returns at once for every vector, and int 0x15, eax=0xe820 (the
 * memory map), served from a table thpvm fills in. Linux's real-mode setup
 * code asks for the e820 map this way and discards what the boot loader
 * put in the zero page. Copied to 0xf0000 and run with CS=0xf000; every
 * address below is an offset in that segment.
 */
	.section .rodata.x86_bios, "a"
	.code16

#define SMAP 0x534d4150
#define E820_ENTRY_SIZE 20
#define E820_MAX_ENTRIES 128

	.globl x86_bios_start, x86_bios_end, x86_bios_int15
	.globl x86_bios_e820_count, x86_bios_e820_table

x86_bios_start:
	/* Vectors nobody serves: return with the flags as they were. */
	iret

	.balign 16
x86_bios_int15:
	cmpl	$0xe820, %eax
	jne	.Lfail
	cmpl	$SMAP, %edx
	jne	.Lfail
	cmpl	%cs:(x86_bios_e820_count - x86_bios_start), %ebx
	jae	.Lfail
	pushw	%ds
	pushw	%si
	pushw	%di
	pushw	%cs
	popw	%ds
	/* si = table + ebx * 20 (ebx is below E820_MAX_ENTRIES here) */
	movw	%bx, %si
	shlw	$2, %si
	movw	%si, %ax
	shlw	$2, %si
	addw	%ax, %si
	addw	$(x86_bios_e820_table - x86_bios_start), %si
	movw	$E820_ENTRY_SIZE, %cx
	cld
	rep movsb
	popw	%di
	popw	%si
	popw	%ds
	incl	%ebx
	cmpl	%cs:(x86_bios_e820_count - x86_bios_start), %ebx
	jb	1f
	xorl	%ebx, %ebx		/* that was the last entry */
1:	movl	$SMAP, %eax
	movl	$E820_ENTRY_SIZE, %ecx
	/* Success: clear CF in the flags iret restores. */
	pushw	%bp
	movw	%sp, %bp
	andw	$0xfffe, 6(%bp)
	popw	%bp
	iret
.Lfail:
	pushw	%bp
	movw	%sp, %bp
	orw	$1, 6(%bp)
	popw	%bp
	movb	$0x86, %ah		/* function not supported */
	iret

	.balign 16
x86_bios_e820_count:
	.long	0
x86_bios_e820_table:
	.space	E820_ENTRY_SIZE * E820_MAX_ENTRIES
x86_bios_end:

	.section .note.GNU-stack, "", @progbits
