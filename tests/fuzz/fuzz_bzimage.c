/* bzImage setup headers (arch/x86/bzimage.c) as the x86 loader takes
 * them: the header, then the payload's format, unpacking (bounded, as
 * the loader bounds it by init_size) and the ELF inside it. */
#include <stdlib.h>

#include "arch/x86/bzimage.h"
#include "boot/decompress.h"
#include "boot/elf_image.h"
#include "fuzz.h"

/* What one input may unpack to: enough for the format to matter, little
 * enough for many executions a second. */
#define UNPACK_MAX (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char elf_why[ELF_WHY_MAX];
	struct elf_image elf;
	struct bzimage img;
	enum compression c;
	const char *why;
	size_t out_len;
	uint8_t *out;

	if (bzimage_parse(data, size, &img, &why))
		return 0;
	if (img.kernel < data || img.kernel_size > size ||
	    img.setup_size + img.kernel_size != size ||
	    (img.payload && (img.payload < img.kernel ||
			     img.payload_size > img.kernel_size ||
			     (size_t)(img.payload - img.kernel) >
				     img.kernel_size - img.payload_size)))
		abort();
	bzimage_load_address(&img);
	if (!img.payload)
		return 0;
	c = compression_detect(img.payload, img.payload_size);
	if (!compression_can_unpack(c) ||
	    decompress(c, img.payload, img.payload_size,
		       img.init_size < UNPACK_MAX ? img.init_size : UNPACK_MAX,
		       &out, &out_len))
		return 0;
	if (elf_is_elf64(out, out_len))
		elf_parse(out, out_len, &elf, elf_why);
	free(out);
	return 0;
}
