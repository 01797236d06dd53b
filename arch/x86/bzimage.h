/* Linux x86 bzImage: the setup header (Documentation/arch/x86/boot.rst)
 * parsed and checked. */
#ifndef THPVM_X86_BZIMAGE_H
#define THPVM_X86_BZIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Oldest boot protocol we load: 2.06 gives cmdline_size. */
#define BZIMAGE_MIN_VERSION 0x0206

struct bzimage {
	const uint8_t *data;
	size_t size;
	size_t setup_size;		/* boot sector + setup sectors */
	uint16_t version;
	uint8_t loadflags;
	uint16_t xloadflags;
	uint32_t cmdline_size;		/* longest command line, without NUL */
	uint32_t initrd_addr_max;	/* highest address of the initrd */
	uint32_t kernel_alignment;
	bool relocatable;
	uint64_t pref_address;
	uint32_t init_size;		/* memory from the load address */
	const uint8_t *kernel;		/* protected-mode part */
	size_t kernel_size;
	const uint8_t *payload;		/* compressed vmlinux; NULL if none */
	size_t payload_size;
};

/* Returns 0, or -EINVAL with *why set to a short reason. */
int bzimage_parse(const uint8_t *data, size_t size, struct bzimage *img,
		  const char **why);

/* Where the protected-mode kernel goes: the preferred address of a
 * protocol >= 2.10 image, else 1 MiB. */
uint64_t bzimage_load_address(const struct bzimage *img);

#endif
