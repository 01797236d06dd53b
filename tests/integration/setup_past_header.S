/*
 * A minimal bzImage for the real-mode setup entry whose setup code and
 * data lie right after the setup header, from 0x26c through 0x3ff, as
 * Linux's do: where a zero page keeps e820_table (0x2d0). A loader may
 * write only the setup header into the setup segment; anything more
 * overwrites this code. The setup asks the BIOS for the memory map
 * (int 0x15, eax=0xe820), prints on COM1
 *   setup16: e820 entries=N cmdline=<the command line>
 * and exits through port 0x501 with status 0. Built by meson.build here
 * into the whole image (setup.ld keeps file offsets); test_boot.py and
 * test_qemu.py boot it.
 */
	.code16
	.section .setup, "ax"
	.globl _start
_start:

#define COM1		0x3f8
#define LSR_THRE	0x20
#define SMAP		0x534d4150
#define DEBUG_EXIT	0x501
#define E820_BUF	0x800		/* in the setup segment, past us */

	.org 0x1f1
	.byte 1				/* setup_sects: this sector and one */
	.word 0				/* root_flags */
	.long 1				/* syssize: 16 bytes */
	.word 0				/* ram_size */
	.word 0xffff			/* vid_mode */
	.word 0				/* root_dev */
	.word 0xaa55			/* boot_flag */

	/* 0x200: the entry, a jump over the header. */
	.byte 0xeb, start_of_setup - 1f
1:	.ascii "HdrS"
	.word 0x020f			/* protocol 2.15 */
	.long 0				/* realmode_swtch */
	.word 0				/* start_sys_seg */
	.word 0				/* kernel_version */
	.byte 0				/* type_of_loader */
	.byte 0x01			/* loadflags: LOADED_HIGH */
	.word 0				/* setup_move_size */
	.long 0x100000			/* code32_start */
	.long 0				/* ramdisk_image */
	.long 0				/* ramdisk_size */
	.long 0				/* bootsect_kludge */
	.word 0				/* heap_end_ptr */
	.byte 0				/* ext_loader_ver */
	.byte 0				/* ext_loader_type */
hdr_cmd_line_ptr:
	.long 0				/* cmd_line_ptr */
	.long 0x7fffffff		/* initrd_addr_max */
	.long 0x200000			/* kernel_alignment */
	.byte 0				/* relocatable_kernel */
	.byte 0				/* min_alignment */
	.word 0				/* xloadflags: no 64-bit entry */
	.long 255			/* cmdline_size */
	.long 0				/* hardware_subarch */
	.quad 0				/* hardware_subarch_data */
	.long 0				/* payload_offset */
	.long 0				/* payload_length */
	.quad 0				/* setup_data */
	.quad 0x100000			/* pref_address */
	.long 0x1000			/* init_size */
	.long 0				/* handover_offset */
	.long 0				/* kernel_info_offset */

	/* 0x26c: CS = DS, so that offsets are file offsets. */
start_of_setup:
	pushw	%ds
	pushw	$setup_main
	lretw

	/* The rest of the setup sits where e820_table would be. */
	.org 0x2d0
setup_main:
	cli
	cld
	movw	%ds, %ax
	movw	%ax, %es
	movw	%ax, %ss
	movw	$0xfff0, %sp
	/* Count the BIOS's e820 entries: on until CF, a bad signature or
	 * ebx = 0. */
	xorl	%ebx, %ebx
	xorw	%bp, %bp
2:	movl	$0xe820, %eax
	movl	$20, %ecx
	movl	$SMAP, %edx
	movw	$E820_BUF, %di
	int	$0x15
	jc	3f
	cmpl	$SMAP, %eax
	jne	3f
	incw	%bp
	cmpw	$9, %bp
	jae	3f
	testl	%ebx, %ebx
	jnz	2b
3:	movw	$msg_e820, %si
	call	puts
	movw	%bp, %ax
	addb	$'0', %al
	call	putc
	movw	$msg_cmdline, %si
	call	puts
	/* The command line, through the header's cmd_line_ptr. */
	movl	hdr_cmd_line_ptr, %eax
	movl	%eax, %esi
	shrl	$4, %eax
	andw	$0xf, %si
	pushw	%ds
	movw	%ax, %ds
	call	puts
	popw	%ds
	movb	$'\n', %al
	call	putc
	xorb	%al, %al
	movw	$DEBUG_EXIT, %dx
	outb	%al, %dx
4:	hlt
	jmp	4b

/* Prints the NUL-terminated string at ds:si, at most 255 bytes. */
puts:
	movw	$255, %cx
5:	lodsb
	testb	%al, %al
	jz	6f
	call	putc
	loop	5b
6:	ret

/* Prints %al on COM1 once its transmitter is empty. */
putc:
	pushw	%ax
	movw	$COM1 + 5, %dx
7:	inb	%dx, %al
	testb	$LSR_THRE, %al
	jz	7b
	popw	%ax
	movw	$COM1, %dx
	outb	%al, %dx
	ret

msg_e820:
	.asciz "setup16: e820 entries="
msg_cmdline:
	.asciz " cmdline="

	/* The protected-mode part: never entered. */
	.org 0x400
	.fill 16, 1, 0xf4
