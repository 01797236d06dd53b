/* x86 boot data: bzImage header parsing (synthetic, the bundled test guest,
 * and Debian's real vmlinuz), RAM layout and e820, MP table, CPUID. */
#include <asm/bootparam.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/bzimage.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/e820.h"
#include "arch/x86/layout.h"
#include "arch/x86/mptable.h"
#include "core/arch.h"
#include "core/guest_ram.h"
#include "lib/util.h"
#include "unit.h"

static const char *guest_image_path;

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }

/* A minimal protocol 2.15 image: 1 setup sector, then 4 KiB of kernel. */
static uint8_t *make_image(size_t *size)
{
	uint8_t *img = calloc(1, 2 * 512 + 4096);

	img[0x1f1] = 1;				/* setup_sects */
	put16(img + 0x1fe, 0xaa55);
	img[0x200] = 0xeb;
	img[0x201] = 0x6a;			/* header to 0x26c */
	put32(img + 0x202, 0x53726448);
	put16(img + 0x206, 0x020f);
	img[0x211] = LOADED_HIGH;
	put32(img + 0x22c, 0x7fffffff);		/* initrd_addr_max */
	put32(img + 0x238, 2047);		/* cmdline_size */
	put16(img + 0x236, XLF_KERNEL_64);
	put32(img + 0x248, 0x100);		/* payload_offset */
	put32(img + 0x24c, 0x200);		/* payload_length */
	put32(img + 0x258, 0x100000);		/* pref_address */
	put32(img + 0x260, 0x10000);		/* init_size */
	*size = 2 * 512 + 4096;
	return img;
}

static void test_bzimage_synthetic(void)
{
	struct bzimage bz;
	const char *why = NULL;
	size_t size;
	uint8_t *img = make_image(&size);

	CHECK_EQ(bzimage_parse(img, size, &bz, &why), 0);
	CHECK_EQ(bz.version, 0x020f);
	CHECK_EQ(bz.setup_size, 1024);
	CHECK_EQ(bz.kernel_size, 4096);
	CHECK_EQ(bz.cmdline_size, 2047);
	CHECK_EQ(bz.xloadflags, XLF_KERNEL_64);
	CHECK(bz.payload == img + 1024 + 0x100);
	CHECK_EQ(bz.payload_size, 0x200);
	CHECK_EQ(bz.init_size, 0x10000);
	CHECK_EQ(bzimage_load_address(&bz), 0x100000);
	free(img);
}

/* bzimage_parse refuses img (size bytes) and says why: a reason that
 * contains want. */
static void check_refused(const uint8_t *img, size_t size, const char *want)
{
	struct bzimage bz;
	const char *why = NULL;

	CHECK_EQ(bzimage_parse(img, size, &bz, &why), -EINVAL);
	CHECK(why && strstr(why, want));
	if (why && !strstr(why, want))
		printf("# refused with \"%s\", wanted \"%s\"\n", why, want);
}

static void test_bzimage_rejects(void)
{
	size_t size;
	uint8_t *img = make_image(&size);

	check_refused(img, 100, "too short for a boot sector");
	check_refused(img, 1024, "no protected-mode kernel");
	put32(img + 0x24c, 0x10000);		/* payload beyond the file */
	check_refused(img, size, "payload lies outside the file");
	put32(img + 0x24c, 0x200);
	put32(img + 0x248, 0xffffff00);		/* offset + length wraps */
	check_refused(img, size, "payload lies outside the file");
	put32(img + 0x248, 0x100);
	img[0x201] = 0x10;			/* header cut short */
	check_refused(img, size, "setup header truncated");
	img[0x201] = 0x6a;
	put16(img + 0x206, 0x0205);		/* too old */
	check_refused(img, size, "older than 2.06");
	put16(img + 0x206, 0x020f);
	img[0x211] = 0;				/* zImage */
	check_refused(img, size, "zImage");
	img[0x211] = LOADED_HIGH;
	img[0x1f1] = 200;			/* setup beyond the file */
	check_refused(img, size, "no protected-mode kernel");
	img[0x1f1] = 1;
	put32(img + 0x202, 0x12345678);
	check_refused(img, size, "no Linux boot header (HdrS)");
	free(img);
}

static void test_bzimage_test_guest(void)
{
	struct bzimage bz;
	const char *why;
	uint8_t *data;
	size_t size;

	if (!guest_image_path || file_read_all(guest_image_path, 64 << 20, &data, &size)) {
		CHECK(!"the test guest image was not found");
		return;
	}
	CHECK_EQ(bzimage_parse(data, size, &bz, &why), 0);
	CHECK(bz.xloadflags & XLF_KERNEL_64);
	CHECK(bz.payload == NULL);
	CHECK_EQ(bzimage_load_address(&bz), X86_KERNEL_DEFAULT_ADDR);
	CHECK(bz.init_size >= bz.kernel_size);
	free(data);
}

/* Debian's linux-image-amd64, installed by .ci/run. */
static char *find_vmlinuz(void)
{
	static char path[300];
	struct dirent *de;
	DIR *d = opendir("/boot");

	if (!d)
		return NULL;
	path[0] = '\0';
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "vmlinuz-", 8))
			snprintf(path, sizeof(path), "/boot/%s", de->d_name);
	closedir(d);
	return path[0] ? path : NULL;
}

static void test_bzimage_debian_kernel(void)
{
	char *path = find_vmlinuz();
	struct bzimage bz;
	const char *why;
	uint8_t *data;
	size_t size;

	if (!path || file_read_all(path, 256 << 20, &data, &size)) {
		SKIP("no readable /boot/vmlinuz-* (linux-image-amd64)");
		return;
	}
	CHECK_EQ(bzimage_parse(data, size, &bz, &why), 0);
	CHECK(bz.version >= 0x020f);
	CHECK(bz.xloadflags & XLF_KERNEL_64);
	CHECK(bz.relocatable);
	CHECK_EQ(bz.cmdline_size, 2047);
	CHECK_EQ(bz.kernel_alignment, 0x200000);
	CHECK_EQ(bzimage_load_address(&bz), 0x1000000);
	CHECK(bz.init_size > bz.kernel_size);
	/* Debian compresses with xz: FD '7zXZ' 00. */
	CHECK(bz.payload && bz.payload_size > 1 << 20);
	CHECK(bz.payload && !memcmp(bz.payload, "\xfd" "7zXZ", 5));
	free(data);
}

static void check_e820(uint64_t ram, const struct boot_e820_entry *expect,
		       unsigned nr_expect)
{
	struct ram_range ranges[GUEST_RAM_MAX_REGIONS];
	struct guest_ram gr;
	struct boot_e820_entry map[16];
	int nr = arch_ram_layout(ram, 2 * MiB, ranges), i, n;

	CHECK(nr > 0);
	for (i = 0; i < nr; i++) {
		CHECK(IS_ALIGNED(ranges[i].gpa, 2 * MiB));
		CHECK(IS_ALIGNED(ranges[i].size, 2 * MiB));
	}
	/* Mapped, never touched: gigabytes of address space only. */
	if (nr <= 0 || guest_ram_map(&gr, ranges, nr, RAM_BACKING_NO_THP,
				     NULL)) {
		CHECK(!"guest_ram_map");
		return;
	}
	n = x86_e820_build(&gr, map, 16);
	guest_ram_unmap(&gr);
	CHECK_EQ(n, nr_expect);
	for (i = 0; i < n && i < (int)nr_expect; i++) {
		CHECK_EQ(map[i].addr, expect[i].addr);
		CHECK_EQ(map[i].size, expect[i].size);
		CHECK_EQ(map[i].type, expect[i].type);
	}
}

#define LOW_ENTRIES \
	{ 0, 0x9fc00, 1 }, { 0x9fc00, 0x400, 2 }, { 0xe0000, 0x20000, 2 }

static void test_e820_small(void)
{
	const struct boot_e820_entry e[] = {
		LOW_ENTRIES, { 0x100000, (512ULL << 20) - 0x100000, 1 },
	};

	check_e820(512ULL << 20, e, ARRAY_SIZE(e));
}

static void test_e820_exactly_hole(void)
{
	const struct boot_e820_entry e[] = {
		LOW_ENTRIES, { 0x100000, 0xc0000000 - 0x100000, 1 },
	};

	check_e820(3ULL << 30, e, ARRAY_SIZE(e));
}

static void test_e820_above_4g(void)
{
	const struct boot_e820_entry e[] = {
		LOW_ENTRIES, { 0x100000, 0xc0000000 - 0x100000, 1 },
		{ 1ULL << 32, (5ULL << 30) - 0xc0000000, 1 },
	};

	check_e820(5ULL << 30, e, ARRAY_SIZE(e));
}

static void test_ram_layout_rejects(void)
{
	struct ram_range r[GUEST_RAM_MAX_REGIONS];

	CHECK_EQ(arch_ram_layout(0, 2 * MiB, r), -EINVAL);
	CHECK_EQ(arch_ram_layout((64ULL << 20) + 4096, 2 * MiB, r), -EINVAL);
	/* An alignment the MMIO hole's start does not meet. */
	CHECK_EQ(arch_ram_layout(4 * GiB, 2 * GiB, r), -EINVAL);
	/* 512 MiB huge pages (arm64 with 64 KiB pages) fit it. */
	CHECK_EQ(arch_ram_layout(4 * GiB, 512 * MiB, r), 2);
}

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static void test_mptable(void)
{
	static const struct mptable_irq irqs[] = {
		{ true, 1, 16 }, { true, 9, 17 }, { false, 0, 18 },
	};
	unsigned cpus = 3;
	size_t len = mptable_size(cpus, ARRAY_SIZE(irqs));
	uint8_t *buf = calloc(1, len), *hdr = buf + 16, *p;
	unsigned i, procs = 0, isa_ints = 0, dev_ints = 0, lints = 0;
	unsigned timer_pin = 99;
	int isa_bus = -1, pci_bus = -1;
	uint16_t count;

	CHECK_EQ(mptable_write(buf, len, 0xf2000, cpus, irqs,
			       ARRAY_SIZE(irqs)), len);
	CHECK(!memcmp(buf, "_MP_", 4));
	CHECK_EQ(get_le32(buf + 4), 0xf2010);
	CHECK_EQ(sum(buf, 16), 0);
	CHECK(!memcmp(hdr, "PCMP", 4));
	CHECK_EQ(get_le16(hdr + 4), len - 16);
	CHECK_EQ(sum(hdr, get_le16(hdr + 4)), 0);
	CHECK_EQ(get_le32(hdr + 36), X86_LAPIC_ADDR);
	count = get_le16(hdr + 34);
	p = hdr + 44;
	for (i = 0; i < count; i++) {
		if (p[0] == 0) {
			CHECK_EQ(p[1], procs);
			CHECK_EQ(!!(p[3] & 2), procs == 0);
			procs++;
			p += 20;
			continue;
		}
		if (p[0] == 1 && !memcmp(p + 2, "ISA   ", 6))
			isa_bus = p[1];
		if (p[0] == 1 && !memcmp(p + 2, "PCI   ", 6))
			pci_bus = p[1];
		/* Linux takes MP bus IDs for PCI bus numbers. */
		if (p[0] == 1)
			CHECK(pci_bus == -1 || pci_bus == 0);
		if (p[0] == 3 && get_le16(p + 2) == 0) {
			/* ISA IRQs, with the bus's defaults. */
			CHECK_EQ(p[4], isa_bus);
			isa_ints++;
			if (p[5] == 0)
				timer_pin = p[7];
		} else if (p[0] == 3) {
			/* Device lines: level-triggered, active high; PCI's
			 * source is slot << 2 | INTA, a platform line's its
			 * own number on the ISA bus. */
			const struct mptable_irq *want = &irqs[dev_ints++];

			CHECK_EQ(get_le16(p + 2), 0x0d);
			CHECK_EQ(p[4], want->pci ? pci_bus : isa_bus);
			CHECK_EQ(p[5], want->pci ? want->slot << 2 :
						   want->ioapic_pin);
			CHECK_EQ(p[7], want->ioapic_pin);
		} else if (p[0] == 4) {
			CHECK_EQ(p[4], isa_bus);
			lints++;
		}
		p += 8;
	}
	CHECK_EQ(p - buf, len);
	CHECK_EQ(procs, cpus);
	CHECK_EQ(isa_ints, 15);
	CHECK_EQ(dev_ints, ARRAY_SIZE(irqs));
	CHECK_EQ(lints, 2);
	CHECK_EQ(timer_pin, MPTABLE_TIMER_IOAPIC_PIN);
	CHECK_EQ(mptable_write(buf, len - 1, 0xf2000, cpus, irqs,
			       ARRAY_SIZE(irqs)), -ENOSPC);
	free(buf);
}

static void test_cpuid_filter(void)
{
	struct {
		struct kvm_cpuid2 hdr;
		struct kvm_cpuid_entry2 e[5];
	} c = { .hdr.nent = 5 };

	c.e[0] = (struct kvm_cpuid_entry2){ .function = 1, .ebx = 0xaabb0800,
					    .edx = 1U << 28 };
	c.e[1] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 0 };
	c.e[2] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 1 };
	c.e[3] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 2,
					    .eax = 7, .ebx = 7 };
	c.e[4] = (struct kvm_cpuid_entry2){ .function = 4, .eax = 0xfc004121 };
	cpuid_filter(&c.hdr, 2, 3);
	CHECK_EQ(c.e[0].ebx >> 24, 2);
	CHECK_EQ((c.e[0].ebx >> 16) & 0xff, 3);
	CHECK_EQ(c.e[0].ebx & 0xffff, 0x0800);
	CHECK(c.e[0].ecx & (1U << 31));
	CHECK_EQ(c.e[1].edx, 2);
	CHECK_EQ(c.e[1].ebx, 1);
	CHECK_EQ(c.e[2].eax, 2);		/* 3 vCPUs need 2 ID bits */
	CHECK_EQ(c.e[2].ebx, 3);
	CHECK_EQ(c.e[2].ecx, 0x201);
	CHECK_EQ(c.e[3].eax, 0);
	CHECK_EQ(c.e[3].ebx, 0);
	CHECK_EQ(c.e[4].eax >> 26, 2);
	cpuid_filter(&c.hdr, 0, 1);
	CHECK_EQ(c.e[0].edx & (1U << 28), 0);
}

int main(int argc, char **argv)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_bzimage_synthetic),
		UNIT_TEST(test_bzimage_rejects),
		UNIT_TEST(test_bzimage_test_guest),
		UNIT_TEST(test_bzimage_debian_kernel),
		UNIT_TEST(test_e820_small),
		UNIT_TEST(test_e820_exactly_hole),
		UNIT_TEST(test_e820_above_4g),
		UNIT_TEST(test_ram_layout_rejects),
		UNIT_TEST(test_mptable),
		UNIT_TEST(test_cpuid_filter),
	};

	guest_image_path = argc > 1 ? argv[1] : NULL;
	return UNIT_RUN(tests);
}
