/*
 * mkbzimage SETUP.BIN KERNEL.ELF OUT: builds the test guest's bzImage.
 * The real-mode part is padded to whole sectors; the protected-mode part is
 * the ELF's PT_LOAD segments flattened from 0x100000 (no compressed
 * payload). Patches setup_sects, syssize and init_size (the image up to
 * _end, including .bss, .noinit and the heap).
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootparam.h"

#define LOAD_ADDR 0x100000ULL

static unsigned char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		perror(path);
		exit(1);
	}
	buf = malloc(n ? n : 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n) {
		fprintf(stderr, "%s: read failed\n", path);
		exit(1);
	}
	fclose(f);
	*len = n;
	return buf;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

int main(int argc, char **argv)
{
	size_t setup_len, elf_len, setup_size, kern_size = 0, mem_end = 0;
	unsigned char *setup, *elf, *out;
	const Elf64_Ehdr *eh;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SETUP.BIN KERNEL.ELF OUT\n", argv[0]);
		return 2;
	}
	setup = read_file(argv[1], &setup_len);
	elf = read_file(argv[2], &elf_len);
	eh = (const Elf64_Ehdr *)elf;
	if (elf_len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf64_Phdr) > elf_len) {
		fprintf(stderr, "%s: not an ELF64 file\n", argv[2]);
		return 1;
	}
	if (setup_len < BP_INIT_SIZE + 4 || setup_len > 64 * 512 ||
	    memcmp(setup + BP_HEADER, "HdrS", 4)) {
		fprintf(stderr, "%s: no setup header\n", argv[1]);
		return 1;
	}

	const Elf64_Phdr *ph = (const Elf64_Phdr *)(elf + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_paddr < LOAD_ADDR ||
		    ph[i].p_offset + ph[i].p_filesz > elf_len) {
			fprintf(stderr, "%s: bad PT_LOAD %d\n", argv[2], i);
			return 1;
		}
		if (ph[i].p_paddr - LOAD_ADDR + ph[i].p_filesz > kern_size)
			kern_size = ph[i].p_paddr - LOAD_ADDR + ph[i].p_filesz;
		if (ph[i].p_paddr - LOAD_ADDR + ph[i].p_memsz > mem_end)
			mem_end = ph[i].p_paddr - LOAD_ADDR + ph[i].p_memsz;
	}

	/* At least 4 setup sectors plus the boot sector, as loaders assume. */
	setup_size = (setup_len + 511) / 512 * 512;
	if (setup_size < 5 * 512)
		setup_size = 5 * 512;
	out = calloc(1, setup_size + kern_size);
	if (!out)
		return 1;
	memcpy(out, setup, setup_len);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			memcpy(out + setup_size + ph[i].p_paddr - LOAD_ADDR,
			       elf + ph[i].p_offset, ph[i].p_filesz);

	out[BP_SETUP_SECTS] = setup_size / 512 - 1;
	put32(out + BP_SYSSIZE, (kern_size + 15) / 16);
	put32(out + BP_INIT_SIZE, (mem_end + 4095) & ~4095UL);

	f = fopen(argv[3], "wb");
	if (!f || fwrite(out, 1, setup_size + kern_size, f) !=
		  setup_size + kern_size || fclose(f)) {
		perror(argv[3]);
		return 1;
	}
	free(out);
	free(elf);
	free(setup);
	return 0;
}
