/* The arm64 Image header: 64 bytes at the start of the kernel, little
 * endian, with "ARM\x64" at offset 56. */
#include "arch/arm64/image.h"

#include <errno.h>

#include "lib/util.h"

#define OFF_TEXT_OFFSET	8
#define OFF_IMAGE_SIZE	16
#define OFF_FLAGS	24
#define OFF_MAGIC	56
#define IMAGE_MAGIC	0x644d5241u	/* "ARM\x64" */

#define FLAG_BE			(1u << 0)

/* text_offset lies inside the 2 MiB block the kernel is placed in. */
#define TEXT_OFFSET_MAX	(2 * MiB)

static int fail(const char **why, const char *reason)
{
	*why = reason;
	return -EINVAL;
}

int arm64_image_parse(const uint8_t *data, size_t len,
		      struct arm64_image *img, const char **why)
{
	uint64_t flags;

	if (len < ARM64_IMAGE_HEADER_SIZE)
		return fail(why, "too short for an arm64 Image header");
	if (get_le32(data + OFF_MAGIC) != IMAGE_MAGIC)
		return fail(why, "no arm64 Image magic (\"ARM\\x64\" at "
				 "offset 56)");
	img->text_offset = get_le64(data + OFF_TEXT_OFFSET);
	img->image_size = get_le64(data + OFF_IMAGE_SIZE);
	flags = get_le64(data + OFF_FLAGS);
	/* Linux before 3.17 left image_size 0 and gave no way to know how
	 * much memory past the file its bss takes. */
	if (!img->image_size)
		return fail(why, "image_size is 0 (Linux before 3.17), so its "
				 "memory footprint is unknown");
	if (flags & FLAG_BE)
		return fail(why, "a big-endian kernel");
	if (img->text_offset >= TEXT_OFFSET_MAX ||
	    !IS_ALIGNED(img->text_offset, 4096))
		return fail(why, "text_offset is not a page inside the first "
				 "2 MiB");
	if (img->image_size < len)
		return fail(why, "image_size is smaller than the file");
	if (img->image_size > UINT64_MAX - img->text_offset)
		return fail(why, "image_size overflows");
	return 0;
}
