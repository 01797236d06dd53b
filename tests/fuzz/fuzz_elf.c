/* ELF kernel images (boot/elf_image.c): the file header, the program
 * headers, and the note search through PT_NOTE segments and SHT_NOTE
 * sections, as the PVH loader uses them; every segment it accepts is
 * checked to lie within the input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "boot/elf_image.h"
#include "fuzz.h"

/* XEN_ELFNOTE_PHYS32_ENTRY, the note the x86 loader looks for. */
#define NOTE_TYPE 18

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[ELF_WHY_MAX] = "";
	struct elf_image img;
	const uint8_t *desc;
	size_t desc_len;
	unsigned i;

	/* A note found lies within the file. */
	/* A note found lies within the file; a refusal says why. */
	switch (elf_find_note(data, size, "Xen", NOTE_TYPE, &desc, &desc_len,
			      why)) {
	case 0:
		if (desc < data || desc_len > size ||
		    (size_t)(desc - data) > size - desc_len)
			abort();
		break;
	case -EINVAL:
		if (!why[0] || strnlen(why, sizeof(why)) == sizeof(why))
			abort();
		break;
	}
	if (elf_parse(data, size, &img, why))
		return 0;
	for (i = 0; i < img.nr_segments; i++) {
		const struct elf_segment *s = &img.segments[i];

		if (s->offset > size || s->filesz > size - s->offset ||
		    s->filesz > s->memsz)
			abort();
	}
	return 0;
}
