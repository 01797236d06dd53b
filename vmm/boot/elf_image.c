/* ELF64 parsing for kernel images. Headers are copied out with memcpy,
 * since an image unpacked from a bzImage need not be aligned in memory. */
#include "boot/elf_image.h"
#include "lib/util.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Whether [off, off + size) lies within len bytes, without overflow. */
static bool elf_range_ok(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= len - off;
}

/* Whether a table of count entries of entsize bytes (each at least
 * minsize) lies within len bytes. */
static bool elf_table_ok(uint64_t off, uint16_t count, uint16_t entsize,
			 size_t minsize, size_t len)
{
	return !count ||
	       (entsize >= minsize &&
		elf_range_ok(off, (uint64_t)count * entsize, len));
}

/* Says why the image is refused, in why[ELF_WHY_MAX]. */
__attribute__((format(printf, 2, 3)))
static int elf_fail(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, ELF_WHY_MAX, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

bool elf_is_elf64(const uint8_t *data, size_t len)
{
	return len >= EI_NIDENT && !memcmp(data, ELFMAG, SELFMAG) &&
	       data[EI_CLASS] == ELFCLASS64;
}

/* Reads and checks the file header, including that the program header
 * table is within the file. */
static int elf_read_ehdr(const uint8_t *data, size_t len, Elf64_Ehdr *eh,
			 char *why)
{
	if (!elf_is_elf64(data, len))
		return elf_fail(why, "not an ELF64 file");
	if (len < sizeof(*eh))
		return elf_fail(why, "header truncated (%zu of %zu bytes)",
				len, sizeof(*eh));
	memcpy(eh, data, sizeof(*eh));
	/* We read fields natively, and only build for little-endian hosts. */
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return elf_fail(why, "not a little-endian file");
	if (!elf_table_ok(eh->e_phoff, eh->e_phnum, eh->e_phentsize,
			  sizeof(Elf64_Phdr), len))
		return elf_fail(why, "program header table (offset 0x%" PRIx64
				", %u entries of %u bytes) is malformed or beyond the end of the %zu-byte file",
				eh->e_phoff, eh->e_phnum, eh->e_phentsize,
				len);
	return 0;
}

static void elf_read_phdr(const uint8_t *data, const Elf64_Ehdr *eh,
			  unsigned i, Elf64_Phdr *ph)
{
	memcpy(ph, data + eh->e_phoff + (uint64_t)i * eh->e_phentsize,
	       sizeof(*ph));
}

int elf_parse(const uint8_t *data, size_t len, struct elf_image *img,
	      char *why)
{
	Elf64_Ehdr eh;
	int err;

	err = elf_read_ehdr(data, len, &eh, why);
	if (err)
		return err;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return elf_fail(why, "file type %u is not an executable",
				eh.e_type);
	memset(img, 0, sizeof(*img));
	img->entry = eh.e_entry;
	img->machine = eh.e_machine;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		elf_read_phdr(data, &eh, i, &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		if (!elf_range_ok(ph.p_offset, ph.p_filesz, len))
			return elf_fail(why, "segment %u (offset 0x%" PRIx64
					", 0x%" PRIx64
					" bytes) runs past the end of the %zu-byte file",
					i, ph.p_offset, ph.p_filesz, len);
		if (ph.p_filesz > ph.p_memsz)
			return elf_fail(why, "segment %u has filesz 0x%" PRIx64
					" larger than memsz 0x%" PRIx64,
					i, ph.p_filesz, ph.p_memsz);
		if (ph.p_memsz > UINT64_MAX - ph.p_paddr)
			return elf_fail(why, "segment %u (paddr 0x%" PRIx64
					", 0x%" PRIx64 " bytes) wraps around",
					i, ph.p_paddr, ph.p_memsz);
		if (img->nr_segments == ELF_MAX_SEGMENTS)
			return elf_fail(why, "more than %d PT_LOAD segments",
					ELF_MAX_SEGMENTS);
		img->segments[img->nr_segments++] = (struct elf_segment){
			.paddr = ph.p_paddr,
			.vaddr = ph.p_vaddr,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
		};
	}
	if (!img->nr_segments)
		return elf_fail(why, "no PT_LOAD segments");
	return 0;
}

struct elf_note_query {
	const char *owner;
	size_t owner_size; /* with its NUL, as n_namesz counts it */
	uint32_t type;
	const uint8_t *desc;
	size_t desc_len;
	char why[160]; /* the first malformation seen */
};

/* Records why the notes are malformed, keeping the first reason. */
__attribute__((format(printf, 2, 3)))
static int elf_note_fail(struct elf_note_query *q, const char *fmt, ...)
{
	va_list ap;

	if (!q->why[0]) {
		va_start(ap, fmt);
		vsnprintf(q->why, sizeof(q->why), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Searches one note area (a PT_NOTE segment or SHT_NOTE section) of the
 * file. Returns 0 if found, -ENOENT, or -EINVAL with q->why set. */
static int elf_note_search(const uint8_t *data, size_t len, uint64_t off,
			   uint64_t size, uint64_t align, const char *what,
			   unsigned index, struct elf_note_query *q)
{
	const uint8_t *area;
	uint64_t pos = 0;

	/* Checked before the pointer is formed: data + off past the end of
	 * the buffer is undefined behaviour even unused. */
	if (!elf_range_ok(off, size, len))
		return elf_note_fail(q, "%s %u (offset 0x%" PRIx64
				     ", 0x%" PRIx64
				     " bytes) runs past the end of the %zu-byte file",
				     what, index, off, size, len);
	area = data + off;
	/* Linux and most producers pad notes to 4 bytes even in ELF64; the
	 * gABI's 8 is used where the area says so. */
	align = align == 8 ? 8 : 4;
	/* Fewer bytes than a note header left over is padding. */
	while (size - pos >= sizeof(Elf64_Nhdr)) {
		uint64_t name, desc;
		Elf64_Nhdr nh;

		memcpy(&nh, area + pos, sizeof(nh));
		name = pos + sizeof(nh);
		/* Offsets from the area's start are aligned, as readelf
		 * does: with 8, the 12-byte header and a 4-byte name give
		 * a 16-byte desc offset. */
		desc = ALIGN_UP(name + nh.n_namesz, align);
		if (desc > size || nh.n_descsz > size - desc)
			return elf_note_fail(q, "note at offset 0x%" PRIx64
					     " of %s %u (name %u bytes, desc %u bytes) overruns it",
					     pos, what, index, nh.n_namesz,
					     nh.n_descsz);
		if (nh.n_type == q->type && nh.n_namesz == q->owner_size &&
		    !memcmp(area + name, q->owner, q->owner_size)) {
			q->desc = area + desc;
			q->desc_len = nh.n_descsz;
			return 0;
		}
		/* The last note's padding may be missing. */
		pos = MIN(ALIGN_UP(desc + nh.n_descsz, align), size);
	}
	return -ENOENT;
}

int elf_find_note(const uint8_t *data, size_t len, const char *owner,
		  uint32_t type, const uint8_t **desc, size_t *desc_len,
		  char *why)
{
	struct elf_note_query q = {
		.owner = owner,
		.owner_size = strlen(owner) + 1,
		.type = type,
	};
	bool malformed = false;
	Elf64_Ehdr eh;
	int err;

	err = elf_read_ehdr(data, len, &eh, why);
	if (err)
		return err;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		elf_read_phdr(data, &eh, i, &ph);
		if (ph.p_type != PT_NOTE)
			continue;
		err = elf_note_search(data, len, ph.p_offset, ph.p_filesz,
				      ph.p_align, "PT_NOTE segment", i, &q);
		if (!err)
			goto found;
		/* Keep looking: a broken note elsewhere need not matter. */
		malformed |= err == -EINVAL;
	}
	/* Sections are the fallback: a loader goes by segments. */
	if (!elf_table_ok(eh.e_shoff, eh.e_shnum, eh.e_shentsize,
			  sizeof(Elf64_Shdr), len)) {
		elf_note_fail(&q, "section header table (offset 0x%" PRIx64
			      ", %u entries of %u bytes) is malformed or beyond the end of the file",
			      eh.e_shoff, eh.e_shnum, eh.e_shentsize);
		malformed = true;
	} else {
		for (unsigned i = 0; i < eh.e_shnum; i++) {
			Elf64_Shdr sh;

			memcpy(&sh,
			       data + eh.e_shoff +
				       (uint64_t)i * eh.e_shentsize,
			       sizeof(sh));
			if (sh.sh_type != SHT_NOTE)
				continue;
			err = elf_note_search(data, len, sh.sh_offset,
					      sh.sh_size, sh.sh_addralign,
					      "SHT_NOTE section", i, &q);
			if (!err)
				goto found;
			malformed |= err == -EINVAL;
		}
	}
	if (malformed)
		return elf_fail(why, "looking for note %s/%u: %s", owner, type,
				q.why);
	return -ENOENT;

found:
	*desc = q.desc;
	*desc_len = q.desc_len;
	return 0;
}
