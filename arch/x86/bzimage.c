/* bzImage setup header parsing. The header sits at file offset 0x1f1; its
 * length is given by the byte at 0x201 (the jump at 0x200). Everything is
 * checked against the file size: the image comes from the user. */
#include "arch/x86/bzimage.h"

#include <asm/bootparam.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "lib/util.h"

#define HDR_OFFSET 0x1f1
#define HDRS_MAGIC 0x53726448		/* "HdrS" */
#define BOOT_FLAG 0xaa55
#define DEFAULT_SETUP_SECTS 4

/* Offset of a setup_header field in the file. */
#define HDR_FIELD(f) (HDR_OFFSET + offsetof(struct setup_header, f))

int bzimage_parse(const uint8_t *data, size_t size, struct bzimage *img,
		  const char **why)
{
	const uint8_t *h;
	unsigned setup_sects;
	size_t hdr_end;

	memset(img, 0, sizeof(*img));
	if (size < HDR_FIELD(version) + 2) {
		*why = "too short for a boot sector";
		return -EINVAL;
	}
	h = data;
	if (get_le16(h + HDR_FIELD(boot_flag)) != BOOT_FLAG ||
	    get_le32(h + HDR_FIELD(header)) != HDRS_MAGIC) {
		*why = "no Linux boot header (HdrS)";
		return -EINVAL;
	}
	img->version = get_le16(h + HDR_FIELD(version));
	if (img->version < BZIMAGE_MIN_VERSION) {
		*why = "boot protocol older than 2.06";
		return -EINVAL;
	}
	/* The jump at 0x200 spans the header: 0x202 + its 8-bit offset. */
	hdr_end = 0x202 + h[0x201];
	if (hdr_end < HDR_FIELD(cmdline_size) + 4 || hdr_end > size) {
		*why = "setup header truncated";
		return -EINVAL;
	}
	setup_sects = h[HDR_FIELD(setup_sects)];
	if (!setup_sects)
		setup_sects = DEFAULT_SETUP_SECTS;
	img->setup_size = (size_t)(setup_sects + 1) * 512;
	if (img->setup_size >= size) {
		*why = "no protected-mode kernel after the setup code";
		return -EINVAL;
	}
	img->data = data;
	img->size = size;
	img->loadflags = h[HDR_FIELD(loadflags)];
	if (!(img->loadflags & LOADED_HIGH)) {
		*why = "zImage (kernel not loaded high) is not supported";
		return -EINVAL;
	}
	img->cmdline_size = get_le32(h + HDR_FIELD(cmdline_size));
	img->initrd_addr_max = get_le32(h + HDR_FIELD(initrd_addr_max));
	img->kernel_alignment = get_le32(h + HDR_FIELD(kernel_alignment));
	img->relocatable = h[HDR_FIELD(relocatable_kernel)];
	img->kernel = data + img->setup_size;
	img->kernel_size = size - img->setup_size;
	if (img->version >= 0x020a && hdr_end >= HDR_FIELD(init_size) + 4) {
		img->pref_address = get_le64(h + HDR_FIELD(pref_address));
		img->init_size = get_le32(h + HDR_FIELD(init_size));
	}
	if (img->version >= 0x020c)
		img->xloadflags = get_le16(h + HDR_FIELD(xloadflags));
	if (img->version >= 0x0208 && hdr_end >= HDR_FIELD(payload_length) + 4) {
		uint32_t off = get_le32(h + HDR_FIELD(payload_offset));
		uint32_t len = get_le32(h + HDR_FIELD(payload_length));

		if (len) {
			if (off > img->kernel_size ||
			    len > img->kernel_size - off) {
				*why = "payload lies outside the file";
				return -EINVAL;
			}
			img->payload = img->kernel + off;
			img->payload_size = len;
		}
	}
	if (img->init_size < img->kernel_size)
		img->init_size = img->kernel_size;
	return 0;
}

uint64_t bzimage_load_address(const struct bzimage *img)
{
	if (img->version >= 0x020a && img->pref_address >= X86_KERNEL_DEFAULT_ADDR)
		return img->pref_address;
	return X86_KERNEL_DEFAULT_ADDR;
}
