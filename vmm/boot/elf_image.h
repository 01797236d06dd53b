/* Parsing of ELF64 kernel images (vmlinux, or the one unpacked from a
 * bzImage). The data is untrusted: every offset and size is checked. Not
 * named elf.h, which would hide libc's <elf.h> behind -I vmm. */
#ifndef THPVM_ELF_IMAGE_H
#define THPVM_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_MAX_SEGMENTS 16
/* The buffer that says why an image is refused: one line. */
#define ELF_WHY_MAX 256

struct elf_segment {
	uint64_t paddr, vaddr, offset, filesz, memsz;
};

struct elf_image {
	uint64_t entry;
	uint16_t machine; /* EM_X86_64, ...: the caller checks it */
	struct elf_segment segments[ELF_MAX_SEGMENTS];
	unsigned nr_segments;
};

/* Whether data starts with the identification of a 64-bit ELF file; a
 * truncated or otherwise bad one is left to elf_parse to report. */
bool elf_is_elf64(const uint8_t *data, size_t len);

/* Parses the header and the PT_LOAD segments (by physical address).
 * Returns 0, or -EINVAL with why[ELF_WHY_MAX] saying what is wrong (an
 * offset or size beyond len, filesz > memsz, overflow, no PT_LOAD, more
 * than ELF_MAX_SEGMENTS of them, not little-endian ELF64). */
int elf_parse(const uint8_t *data, size_t len, struct elf_image *img,
	      char *why);

/* Finds the note of the given owner name and type in the PT_NOTE segments,
 * else in SHT_NOTE sections, and points *desc / *desc_len into data.
 * Returns 0, -ENOENT if there is none, or -EINVAL with why[ELF_WHY_MAX]
 * set if the headers or the notes, where none matched, are malformed. */
int elf_find_note(const uint8_t *data, size_t len, const char *owner,
		  uint32_t type, const uint8_t **desc, size_t *desc_len,
		  char *why);

#endif
