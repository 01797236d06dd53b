/* Tests for boot/elf_image.c on synthetic ELF64 images: a valid one with
 * two PT_LOAD segments and a PT_NOTE, and damaged variants of it. */
#include "boot/elf_image.h"
#include "lib/util.h"
#include "unit.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XEN_ELFNOTE_PHYS32_ENTRY 18

/* Layout of the valid image. */
#define IMG_PHOFF 0x40
#define IMG_NOTES 0x100
#define IMG_SEG1 0x200
#define IMG_SEG2 0x300
#define IMG_SHOFF 0x380
#define IMG_SIZE 0x400

static uint8_t img[IMG_SIZE];
static size_t img_notes_len;

static Elf64_Ehdr ehdr_get(void)
{
	Elf64_Ehdr eh;

	memcpy(&eh, img, sizeof(eh));
	return eh;
}

static void ehdr_put(const Elf64_Ehdr *eh)
{
	memcpy(img, eh, sizeof(*eh));
}

static Elf64_Phdr phdr_get(unsigned i)
{
	Elf64_Phdr ph;

	memcpy(&ph, img + IMG_PHOFF + i * sizeof(ph), sizeof(ph));
	return ph;
}

static void phdr_put(unsigned i, const Elf64_Phdr *ph)
{
	memcpy(img + IMG_PHOFF + i * sizeof(*ph), ph, sizeof(*ph));
}

/* Writes one note, its name and desc padded to align; returns its size. */
static size_t note_put(uint8_t *p, const char *name, uint32_t type,
		       const void *desc, uint32_t desc_len, unsigned align)
{
	Elf64_Nhdr nh = { strlen(name) + 1, desc_len, type };
	size_t desc_off = ALIGN_UP(sizeof(nh) + nh.n_namesz, align);

	memcpy(p, &nh, sizeof(nh));
	memcpy(p + sizeof(nh), name, nh.n_namesz);
	memcpy(p + desc_off, desc, desc_len);
	return ALIGN_UP(desc_off + desc_len, align);
}

/* The valid image: two PT_LOAD (the second with bss) and a PT_NOTE with
 * a GNU build id, the Xen PVH entry and a Linux note, 4-byte aligned as
 * Linux emits them. */
static void img_build(void)
{
	static const uint8_t build_id[20] = { 0xb1, 0x1d };
	static const uint8_t entry[4] = { 0x78, 0x56, 0x34, 0x01 };
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
			     ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_entry = 0x1000000,
		.e_phoff = IMG_PHOFF,
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = 3,
		.e_shentsize = sizeof(Elf64_Shdr),
	};
	Elf64_Phdr load1 = { .p_type = PT_LOAD, .p_offset = IMG_SEG1,
			     .p_paddr = 0x1000000, .p_filesz = 0x100,
			     .p_memsz = 0x100, .p_align = 0x10 };
	Elf64_Phdr load2 = { .p_type = PT_LOAD, .p_offset = IMG_SEG2,
			     .p_paddr = 0x2000000, .p_filesz = 0x80,
			     .p_memsz = 0x1000, .p_align = 0x10 };
	Elf64_Phdr note = { .p_type = PT_NOTE, .p_offset = IMG_NOTES,
			    .p_align = 4 };
	uint8_t *p = img + IMG_NOTES;

	memset(img, 0, sizeof(img));
	p += note_put(p, "GNU", NT_GNU_BUILD_ID, build_id, sizeof(build_id),
		      4);
	p += note_put(p, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, entry,
		      sizeof(entry), 4);
	p += note_put(p, "Linux", 0x100, "6.1", 4, 4);
	img_notes_len = p - (img + IMG_NOTES);
	note.p_filesz = img_notes_len;
	ehdr_put(&eh);
	phdr_put(0, &load1);
	phdr_put(1, &note);
	phdr_put(2, &load2);
	memset(img + IMG_SEG1, 0xaa, 0x100);
	memset(img + IMG_SEG2, 0xbb, 0x80);
}

/* Why the last refusal refused. */
static char why[ELF_WHY_MAX];

/* A refusal (-EINVAL) that gives the wanted reason. */
static void check_why(int ret, const char *want)
{
	CHECK_EQ(ret, -EINVAL);
	CHECK(strstr(why, want));
	if (!strstr(why, want))
		printf("# refused with \"%s\", wanted \"%s\"\n", why, want);
	why[0] = '\0';
}

/* elf_parse on an exact-size copy of the first len bytes, so that ASan
 * catches any read beyond them. */
static int img_parse(size_t len, struct elf_image *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	int err;

	memcpy(copy, img, len);
	err = elf_parse(copy, len, out, why);
	free(copy);
	return err;
}

static int img_find_note(size_t len, const char *owner, uint32_t type,
			 uint8_t *desc_copy, size_t *desc_len)
{
	uint8_t *copy = malloc(len ? len : 1);
	const uint8_t *desc = NULL;
	int err;

	memcpy(copy, img, len);
	*desc_len = 0;
	err = elf_find_note(copy, len, owner, type, &desc, desc_len, why);
	if (!err) {
		CHECK(desc >= copy && desc + *desc_len <= copy + len);
		memcpy(desc_copy, desc, MIN(*desc_len, 64));
	}
	free(copy);
	return err;
}

static void test_valid(void)
{
	struct elf_image elf;
	uint8_t desc[64];
	size_t desc_len;

	img_build();
	CHECK(elf_is_elf64(img, sizeof(img)));
	CHECK_EQ(img_parse(sizeof(img), &elf), 0);
	CHECK_EQ(elf.entry, 0x1000000);
	CHECK_EQ(elf.machine, EM_X86_64);
	CHECK_EQ(elf.nr_segments, 2);
	CHECK_EQ(elf.segments[0].paddr, 0x1000000);
	CHECK_EQ(elf.segments[0].offset, IMG_SEG1);
	CHECK_EQ(elf.segments[0].filesz, 0x100);
	CHECK_EQ(elf.segments[0].memsz, 0x100);
	CHECK_EQ(elf.segments[1].paddr, 0x2000000);
	CHECK_EQ(elf.segments[1].offset, IMG_SEG2);
	CHECK_EQ(elf.segments[1].filesz, 0x80);
	CHECK_EQ(elf.segments[1].memsz, 0x1000);

	CHECK_EQ(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 0);
	CHECK_EQ(desc_len, 4);
	CHECK_EQ(get_le32(desc), 0x1345678);
	CHECK_EQ(img_find_note(sizeof(img), "GNU", NT_GNU_BUILD_ID, desc,
			       &desc_len),
		 0);
	CHECK_EQ(desc_len, 20);
	CHECK_EQ(desc[0], 0xb1);
	/* The last note, ending exactly at the segment's end. */
	CHECK_EQ(img_find_note(sizeof(img), "Linux", 0x100, desc, &desc_len),
		 0);
	CHECK_STR((const char *)desc, "6.1");
	/* Owner and type must both match, the whole owner name. */
	CHECK_EQ(img_find_note(sizeof(img), "Xen", 99, desc, &desc_len),
		 -ENOENT);
	CHECK_EQ(img_find_note(sizeof(img), "Xe", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 -ENOENT);
	CHECK_EQ(img_find_note(sizeof(img), "Xenx", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 -ENOENT);
	CHECK_EQ(img_find_note(sizeof(img), "GNU", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 -ENOENT);
}

static void test_not_elf64(void)
{
	static const uint8_t text[64] = "#!/bin/sh\n";
	struct elf_image elf;
	Elf64_Ehdr eh;

	CHECK(!elf_is_elf64(text, sizeof(text)));
	CHECK(!elf_is_elf64(text, 0));
	check_why(elf_parse(text, sizeof(text), &elf, why), "not an ELF64");

	img_build();
	eh = ehdr_get();
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	ehdr_put(&eh);
	CHECK(!elf_is_elf64(img, sizeof(img)));
	check_why(img_parse(sizeof(img), &elf), "not an ELF64");

	img_build();
	eh = ehdr_get();
	eh.e_ident[EI_DATA] = ELFDATA2MSB;
	ehdr_put(&eh);
	check_why(img_parse(sizeof(img), &elf), "not a little-endian");

	img_build();
	eh = ehdr_get();
	eh.e_type = ET_REL;
	ehdr_put(&eh);
	check_why(img_parse(sizeof(img), &elf), "file type 1 is not an executable");
}

static void test_truncated_header(void)
{
	struct elf_image elf;
	uint8_t desc[64];
	size_t desc_len;

	img_build();
	/* The identification alone says ELF64; the header is cut short. */
	CHECK(elf_is_elf64(img, EI_NIDENT));
	CHECK(!elf_is_elf64(img, EI_NIDENT - 1));
	check_why(img_parse(EI_NIDENT, &elf), "header truncated (16 of 64");
	check_why(img_parse(sizeof(Elf64_Ehdr) - 1, &elf),
		  "header truncated (63 of 64");
	check_why(img_parse(0, &elf), "not an ELF64");
	check_why(img_find_note(sizeof(Elf64_Ehdr) - 1, "Xen",
				XEN_ELFNOTE_PHYS32_ENTRY, desc, &desc_len),
		  "header truncated");
	/* Header complete, program headers cut short. */
	check_why(img_parse(IMG_PHOFF + sizeof(Elf64_Phdr), &elf),
		  "program header table");
}

static void test_phoff_out_of_range(void)
{
	static const uint64_t phoffs[] = { IMG_SIZE, IMG_SIZE - 8,
					   UINT64_MAX - 8, UINT64_MAX };
	struct elf_image elf;
	uint8_t desc[64];
	size_t desc_len;
	Elf64_Ehdr eh;

	for (size_t i = 0; i < ARRAY_SIZE(phoffs); i++) {
		img_build();
		eh = ehdr_get();
		eh.e_phoff = phoffs[i];
		ehdr_put(&eh);
		check_why(img_parse(sizeof(img), &elf),
			  "program header table");
		check_why(img_find_note(sizeof(img), "Xen",
					XEN_ELFNOTE_PHYS32_ENTRY, desc,
					&desc_len),
			  "program header table");
	}
	/* Too many entries for the file, and entries too small. */
	img_build();
	eh = ehdr_get();
	eh.e_phnum = 0xffff;
	ehdr_put(&eh);
	check_why(img_parse(sizeof(img), &elf), "65535 entries");
	img_build();
	eh = ehdr_get();
	eh.e_phentsize = sizeof(Elf64_Phdr) - 8;
	ehdr_put(&eh);
	check_why(img_parse(sizeof(img), &elf), "entries of 48 bytes");
	/* No program headers at all: nothing to load. */
	img_build();
	eh = ehdr_get();
	eh.e_phnum = 0;
	ehdr_put(&eh);
	check_why(img_parse(sizeof(img), &elf), "no PT_LOAD segments");
}

static void test_segment_beyond_file(void)
{
	static const struct {
		uint64_t offset, filesz;
	} bad[] = {
		{ IMG_SIZE - 0x7f, 0x80 },
		{ IMG_SIZE + 1, 0 },
		{ UINT64_MAX - 0x10, 0x80 },
		{ 0x10, UINT64_MAX },
	};
	struct elf_image elf;
	Elf64_Phdr ph;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		img_build();
		ph = phdr_get(2);
		ph.p_offset = bad[i].offset;
		ph.p_filesz = bad[i].filesz;
		ph.p_memsz = UINT64_MAX / 2;
		phdr_put(2, &ph);
		check_why(img_parse(sizeof(img), &elf),
			  "segment 2 (offset");
	}
	/* The file cut inside the second segment's data. */
	img_build();
	check_why(img_parse(IMG_SEG2 + 0x7f, &elf), "runs past the end");
	CHECK_EQ(img_parse(IMG_SEG2 + 0x80, &elf), 0);
}

static void test_filesz_gt_memsz(void)
{
	struct elf_image elf;
	Elf64_Phdr ph;

	img_build();
	ph = phdr_get(0);
	ph.p_memsz = ph.p_filesz - 1;
	phdr_put(0, &ph);
	check_why(img_parse(sizeof(img), &elf),
		  "segment 0 has filesz 0x100 larger than memsz 0xff");
	/* A segment that wraps around the physical address space. */
	img_build();
	ph = phdr_get(2);
	ph.p_paddr = UINT64_MAX - 0x100;
	phdr_put(2, &ph);
	check_why(img_parse(sizeof(img), &elf), "wraps around");
}

static void test_too_many_segments(void)
{
	struct elf_image elf;
	Elf64_Ehdr eh;

	for (unsigned n = ELF_MAX_SEGMENTS; n <= ELF_MAX_SEGMENTS + 1; n++) {
		img_build();
		eh = ehdr_get();
		eh.e_phnum = n;
		ehdr_put(&eh);
		for (unsigned i = 0; i < n; i++) {
			Elf64_Phdr ph = { .p_type = PT_LOAD,
					  .p_paddr = i * 0x1000,
					  .p_filesz = 0x40,
					  .p_memsz = 0x1000 };

			phdr_put(i, &ph);
		}
		if (n <= ELF_MAX_SEGMENTS)
			CHECK_EQ(img_parse(sizeof(img), &elf), 0);
		else
			check_why(img_parse(sizeof(img), &elf),
				  "more than 16 PT_LOAD segments");
	}
}

static void test_note_bad_sizes(void)
{
	uint8_t desc[64];
	size_t desc_len;
	Elf64_Phdr ph;
	Elf64_Nhdr nh;

	/* The first note's name or desc size runs past the segment: the
	 * notes after it cannot be reached. */
	static const uint32_t bad_namesz[] = { 0xffffffff, 0xfffffffd, 0x100,
					       0 };
	for (size_t i = 0; i < ARRAY_SIZE(bad_namesz); i++) {
		img_build();
		memcpy(&nh, img + IMG_NOTES, sizeof(nh));
		if (bad_namesz[i])
			nh.n_namesz = bad_namesz[i];
		else
			nh.n_descsz = 0xfffffff0;
		memcpy(img + IMG_NOTES, &nh, sizeof(nh));
		check_why(img_find_note(sizeof(img), "Xen",
					XEN_ELFNOTE_PHYS32_ENTRY, desc,
					&desc_len),
			  "looking for note Xen/18: note at offset 0x0 of "
			  "PT_NOTE segment 1");
	}
	/* A note area cut inside the Xen note (a desc of 4 would run past
	 * it), and one beyond the file. */
	img_build();
	ph = phdr_get(1);
	ph.p_filesz = 12 + 20 + 4 + 12 + 4 + 2;
	phdr_put(1, &ph);
	check_why(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
				desc, &desc_len),
		  "overruns it");
	img_build();
	ph = phdr_get(1);
	ph.p_offset = IMG_SIZE - 8;
	phdr_put(1, &ph);
	check_why(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
				desc, &desc_len),
		  "PT_NOTE segment 1 (offset");
	/* Damage after the note sought does not hide it: the last note,
	 * "Linux", is 24 bytes (12 + 6 padded to 8 + 4). */
	img_build();
	memcpy(&nh, img + IMG_NOTES + img_notes_len - 24, sizeof(nh));
	CHECK_EQ(nh.n_namesz, 6);
	nh.n_descsz = 0x1000;
	memcpy(img + IMG_NOTES + img_notes_len - 24, &nh, sizeof(nh));
	CHECK_EQ(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 0);
	check_why(img_find_note(sizeof(img), "Linux", 0x100, desc, &desc_len),
		  "looking for note Linux/256");
	/* Trailing bytes too few for a note header are padding. */
	img_build();
	ph = phdr_get(1);
	ph.p_filesz += 8;
	phdr_put(1, &ph);
	CHECK_EQ(img_find_note(sizeof(img), "Xen", 99, desc, &desc_len),
		 -ENOENT);
}

/* No PT_NOTE: the notes are found through an SHT_NOTE section. */
static void test_note_in_section(void)
{
	Elf64_Shdr sh[2] = {
		{ .sh_type = SHT_NULL },
		{ .sh_type = SHT_NOTE, .sh_offset = IMG_NOTES,
		  .sh_addralign = 4 },
	};
	uint8_t desc[64];
	size_t desc_len;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	img_build();
	ph = phdr_get(1);
	ph.p_type = PT_NULL;
	phdr_put(1, &ph);
	CHECK_EQ(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 -ENOENT);
	sh[1].sh_size = img_notes_len;
	memcpy(img + IMG_SHOFF, sh, sizeof(sh));
	eh = ehdr_get();
	eh.e_shoff = IMG_SHOFF;
	eh.e_shnum = 2;
	ehdr_put(&eh);
	CHECK_EQ(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 0);
	CHECK_EQ(desc_len, 4);
	CHECK_EQ(get_le32(desc), 0x1345678);
	/* A section table beyond the file. */
	eh.e_shoff = IMG_SIZE - sizeof(Elf64_Shdr);
	ehdr_put(&eh);
	check_why(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
				desc, &desc_len),
		  "section header table");
}

/* A note area that says it is 8-aligned uses 8-byte padding (GNU
 * property notes do). */
static void test_note_align8(void)
{
	static const uint8_t prop[12] = { 1, 2, 3 };
	static const uint8_t entry[4] = { 0x00, 0x10, 0x00, 0x01 };
	uint8_t desc[64];
	size_t desc_len;
	uint8_t *p;
	Elf64_Phdr ph;

	img_build();
	p = img + IMG_NOTES;
	p += note_put(p, "GNU", NT_GNU_PROPERTY_TYPE_0, prop, sizeof(prop),
		      8);
	p += note_put(p, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, entry,
		      sizeof(entry), 8);
	ph = phdr_get(1);
	ph.p_filesz = p - (img + IMG_NOTES);
	ph.p_align = 8;
	phdr_put(1, &ph);
	CHECK_EQ(img_find_note(sizeof(img), "Xen", XEN_ELFNOTE_PHYS32_ENTRY,
			       desc, &desc_len),
		 0);
	CHECK_EQ(desc_len, 4);
	CHECK_EQ(get_le32(desc), 0x1001000);
	CHECK_EQ(img_find_note(sizeof(img), "GNU", NT_GNU_PROPERTY_TYPE_0,
			       desc, &desc_len),
		 0);
	CHECK_EQ(desc_len, sizeof(prop));
	CHECK_EQ(desc[2], 3);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_valid),
		UNIT_TEST(test_not_elf64),
		UNIT_TEST(test_truncated_header),
		UNIT_TEST(test_phoff_out_of_range),
		UNIT_TEST(test_segment_beyond_file),
		UNIT_TEST(test_filesz_gt_memsz),
		UNIT_TEST(test_too_many_segments),
		UNIT_TEST(test_note_bad_sizes),
		UNIT_TEST(test_note_in_section),
		UNIT_TEST(test_note_align8),
	};

	return UNIT_RUN(tests);
}
