/* Tests for arch/x86/acpi.c and acpi_pm.c: the tables' checksums,
 * lengths, pointers and fields, read back byte by byte; the same tables
 * decompiled by iasl and loaded into ACPICA's acpiexec, which evaluates
 * the DSDT's objects (acpica-tools, in .ci/packages); and the power
 * registers' writes that end the VM. */
#include "arch/x86/acpi.h"
#include "arch/x86/acpi_pm.h"
#include "core/vm.h"
#include "lib/util.h"
#include "unit.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define GPA 0xe0000
#define BUF_LEN 0x10000

static uint8_t buf[BUF_LEN];
static size_t written;

/* Two PCI functions with INTA, one without, two virtio-mmio devices on
 * one line. */
static struct vm_device devices[] = {
	{ .kind = VM_DEVICE_PCI_FUNCTION, .pci_slot = 1, .irq = 16 },
	{ .kind = VM_DEVICE_PCI_FUNCTION, .pci_slot = 2, .irq = 17 },
	{ .kind = VM_DEVICE_PCI_FUNCTION, .pci_slot = 3,
	  .irq = VM_DEVICE_NO_IRQ },
	{ .kind = VM_DEVICE_VIRTIO_MMIO, .base = 0xfe000000, .size = 0x200,
	  .irq = 18 },
	{ .kind = VM_DEVICE_VIRTIO_MMIO, .base = 0xfe001000, .size = 0x200,
	  .irq = 18 },
	{ .kind = VM_DEVICE_VIRTIO_MMIO, .base = 0xfe002000, .size = 0x200,
	  .irq = 19 },
};

static const struct vm_device *registry(void)
{
	for (size_t i = 0; i + 1 < ARRAY_SIZE(devices); i++)
		devices[i].next = &devices[i + 1];
	return devices;
}

/* Whether the tables say the 8259s are there (the in-kernel irqchip). */
static bool pics = true;

static int write_tables(unsigned nr_cpus)
{
	int n;

	memset(buf, 0xa5, sizeof(buf));
	n = x86_acpi_write(buf, sizeof(buf), GPA, nr_cpus, pics, registry());
	written = n > 0 ? n : 0;
	return n;
}

static uint8_t sum(const uint8_t *p, size_t len)
{
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

/* The table at guest address gpa, after checking that it lies in what
 * was written, has signature sig, a length that fits and a checksum
 * that adds up; NULL otherwise. */
static const uint8_t *table(uint64_t gpa, const char *sig)
{
	const uint8_t *t;
	uint32_t len;

	CHECK(gpa >= GPA && gpa + 36 <= GPA + written);
	CHECK_EQ(gpa % 8, 0);
	if (gpa < GPA || gpa + 36 > GPA + written)
		return NULL;
	t = buf + (gpa - GPA);
	len = get_le32(t + 4);
	CHECK(!memcmp(t, sig, 4));
	CHECK(len >= 36 && gpa + len <= GPA + written);
	if (memcmp(t, sig, 4) || len < 36 || gpa + len > GPA + written)
		return NULL;
	CHECK_EQ(sum(t, len), 0);
	CHECK(!memcmp(t + 10, "THPVM ", 6));
	return t;
}

/* A generic address of a byte-wide I/O port. */
static void check_io_gas(const uint8_t *g, uint16_t port)
{
	CHECK_EQ(g[0], 1);		/* system I/O */
	CHECK_EQ(g[1], 8);
	CHECK_EQ(g[2], 0);
	CHECK_EQ(g[3], 1);		/* byte access */
	CHECK_EQ(get_le64(g + 4), port);
}

static const uint8_t *fadt, *madt, *dsdt;

/* RSDP, XSDT and what it points at, for nr_cpus. */
static void read_root(unsigned nr_cpus)
{
	const uint8_t *xsdt;

	fadt = madt = dsdt = NULL;
	CHECK(write_tables(nr_cpus) > 0);
	CHECK(!memcmp(buf, "RSD PTR ", 8));
	CHECK_EQ(sum(buf, 20), 0);
	CHECK_EQ(sum(buf, 36), 0);
	CHECK_EQ(buf[15], 2);
	CHECK_EQ(get_le32(buf + 20), 36);
	xsdt = table(get_le64(buf + 24), "XSDT");
	if (!xsdt)
		return;
	CHECK_EQ(get_le32(xsdt + 4), 36 + 16);
	fadt = table(get_le64(xsdt + 36), "FACP");
	madt = table(get_le64(xsdt + 44), "APIC");
	if (fadt)
		dsdt = table(get_le64(fadt + 140), "DSDT");
}

static void test_root_and_fadt(void)
{
	read_root(4);
	CHECK(fadt && dsdt);
	if (!fadt || !dsdt)
		return;
	CHECK_EQ(get_le32(fadt + 4), 276);
	CHECK_EQ(fadt[8], 6);
	CHECK_EQ(get_le32(fadt + 40), get_le64(fadt + 140));	/* DSDT */
	CHECK_EQ(get_le32(fadt + 36), 0);			/* no FACS */
	CHECK_EQ(get_le64(fadt + 132), 0);
	/* Hardware-reduced, with a reset register. */
	CHECK_EQ(get_le32(fadt + 112), 1u << 20 | 1u << 10);
	/* Legacy devices, an 8042, no VGA; the RTC's century. */
	CHECK_EQ(get_le16(fadt + 109), 7);
	CHECK_EQ(fadt[108], 0x32);
	check_io_gas(fadt + 116, X86_ACPI_PM_PORT + X86_ACPI_RESET);
	CHECK_EQ(fadt[128], X86_ACPI_RESET_VALUE);
	check_io_gas(fadt + 244, X86_ACPI_PM_PORT + X86_ACPI_SLEEP_CONTROL);
	check_io_gas(fadt + 256, X86_ACPI_PM_PORT + X86_ACPI_SLEEP_STATUS);
	/* No PM1 blocks or SCI on a hardware-reduced platform. */
	for (unsigned off = 46; off < 96; off++)
		CHECK_EQ(fadt[off], 0);
	CHECK_EQ(dsdt[8], 2);
}

/* The MADT for nr_cpus: what the MP table says, entry by entry. */
static void check_madt(unsigned nr_cpus)
{
	const uint8_t *e, *end;
	unsigned lapics = 0, ioapics = 0, isos = 0, nmis = 0;

	read_root(nr_cpus);
	CHECK(madt != NULL);
	if (!madt)
		return;
	CHECK_EQ(get_le32(madt + 36), 0xfee00000);
	CHECK_EQ(get_le32(madt + 40), pics);	/* PC-AT 8259s */
	end = madt + get_le32(madt + 4);
	for (e = madt + 44; e + 2 <= end && e[1] >= 2; e += e[1]) {
		switch (e[0]) {
		case 0:
			CHECK_EQ(e[1], 8);
			CHECK_EQ(e[2], lapics);		/* processor UID */
			CHECK_EQ(e[3], lapics);		/* APIC ID */
			CHECK_EQ(get_le32(e + 4), 1);	/* enabled */
			lapics++;
			break;
		case 1:
			CHECK_EQ(e[1], 12);
			CHECK_EQ(e[2], nr_cpus);
			CHECK_EQ(get_le32(e + 4), 0xfec00000);
			CHECK_EQ(get_le32(e + 8), 0);
			ioapics++;
			break;
		case 2:
			CHECK_EQ(e[1], 10);
			CHECK_EQ(e[2], 0);		/* ISA */
			CHECK_EQ(e[3], 0);		/* IRQ 0 */
			CHECK_EQ(get_le32(e + 4), 2);	/* GSI 2 */
			CHECK_EQ(get_le16(e + 8), 0);
			isos++;
			break;
		case 4:
			CHECK_EQ(e[1], 6);
			CHECK_EQ(e[2], 0xff);
			CHECK_EQ(e[5], 1);		/* LINT1 */
			nmis++;
			break;
		default:
			CHECK(!"unknown MADT entry");
		}
	}
	CHECK(e == end);
	CHECK_EQ(lapics, nr_cpus);
	CHECK_EQ(ioapics, 1);
	CHECK_EQ(isos, 1);
	CHECK_EQ(nmis, 1);
}

static void test_madt(void)
{
	check_madt(1);
	check_madt(4);
	check_madt(254);
	/* The split irqchip: no PCAT_COMPAT, the rest as before. */
	pics = false;
	check_madt(2);
	pics = true;
}

static bool has(const uint8_t *t, const void *what, size_t len)
{
	uint32_t tlen = get_le32(t + 4);

	for (uint32_t i = 0; i + len <= tlen; i++)
		if (!memcmp(t + i, what, len))
			return true;
	return false;
}

static void test_dsdt_names(void)
{
	read_root(4);
	CHECK(dsdt != NULL);
	if (!dsdt)
		return;
	for (const char *const *n = (const char *const[]){
		     "_SB_", "C000", "C003", "COM1", "KBD_", "RTC_", "PCI0",
		     "_PRT", "V000", "V001", "V002", "LNRO0005", "ACPI0007",
		     "_S5_", NULL }; *n; n++)
		CHECK(has(dsdt, *n, strlen(*n)));
	CHECK(!has(dsdt, "C004", 4));
	CHECK(!has(dsdt, "V003", 4));
	/* EisaId ("PNP0501") */
	CHECK(has(dsdt, "\x0c\x41\xd0\x05\x01", 5));
}

static void test_limits(void)
{
	uint8_t small[512];
	struct vm_device high = { .kind = VM_DEVICE_VIRTIO_MMIO,
				  .base = 0x100000000ULL, .size = 0x200,
				  .irq = 16 };

	/* 254 CPUs fit well below the 64 KiB before the BIOS. */
	CHECK(write_tables(254) > 0);
	CHECK(written < 0x8000);
	CHECK_EQ(write_tables(0), -ENOSPC);
	CHECK_EQ(write_tables(255), -ENOSPC);
	CHECK_EQ(x86_acpi_write(small, sizeof(small), GPA, 4, true, registry()),
		 -ENOSPC);
	CHECK_EQ(x86_acpi_write(buf, sizeof(buf), 0xffffff00, 1, true, NULL),
		 -ENOSPC);
	/* A window Memory32Fixed cannot hold. */
	CHECK_EQ(x86_acpi_write(buf, sizeof(buf), GPA, 1, true, &high), -EINVAL);
	/* Nothing beyond what a write reports. */
	memset(buf, 0xa5, sizeof(buf));
	{
		int n = x86_acpi_write(buf, sizeof(buf), GPA, 2, true, NULL);

		CHECK(n > 0);
		for (size_t i = n > 0 ? n : 0; i < sizeof(buf); i++)
			if (buf[i] != 0xa5) {
				CHECK(!"written past the length returned");
				break;
			}
	}
}

/* Whether a program is on the PATH. */
static bool have(const char *tool)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	text = calloc(1, 1 << 20);
	if (text)
		len = fread(text, 1, (1 << 20) - 1, f);
	fclose(f);
	if (text)
		text[len] = 0;
	return text;
}

/* text without comments and white space, so that what iasl lays out on
 * several lines reads as one. */
static char *squeeze(const char *text)
{
	char *out = calloc(1, strlen(text) + 1), *o = out;
	const char *p = text;

	while (out && *p) {
		if (p[0] == '/' && p[1] == '/') {
			p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			p = e ? e + 2 : p + strlen(p);
		} else {
			if (*p != ' ' && *p != '\n' && *p != '\t' &&
			    *p != '\r')
				*o++ = *p;
			p++;
		}
	}
	return out;
}

static void save(const char *dir, const char *name, const uint8_t *t)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_EQ(fwrite(t, 1, get_le32(t + 4), f), get_le32(t + 4));
	fclose(f);
}

/* The tables for nr_cpus, as ACPICA's tools read them: facp.dat,
 * apic.dat and dsdt.dat in a new directory dir (a mkdtemp template). */
static bool save_tables(unsigned nr_cpus, char *dir)
{
	read_root(nr_cpus);
	CHECK(fadt && madt && dsdt && mkdtemp(dir));
	if (!fadt || !madt || !dsdt)
		return false;
	save(dir, "facp.dat", fadt);
	save(dir, "apic.dat", madt);
	save(dir, "dsdt.dat", dsdt);
	return true;
}

/* Runs a shell command in dir; its output in dir/out.txt. */
static char *run_in(const char *dir, const char *cmd)
{
	char line[512], path[256];

	snprintf(line, sizeof(line), "cd %s && %s >out.txt 2>&1", dir, cmd);
	CHECK_EQ(system(line), 0);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	return read_file(path);
}

static void check_squeezed(const char *dir, const char *file,
			   const char *const *want)
{
	char path[256], *text, *flat;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	text = read_file(path);
	CHECK(text != NULL);
	flat = text ? squeeze(text) : NULL;
	for (; flat && *want; want++)
		if (!strstr(flat, *want)) {
			printf("# %s lacks %s\n", file, *want);
			CHECK(!"decompiled table lacks an expected part");
		}
	free(text);
	free(flat);
}

static void test_iasl_decompiles(void)
{
	static const char *const want_dsdt[] = {
		"DefinitionBlock(\"\",\"DSDT\",2,\"THPVM\",\"THPVM\",0x00000001)",
		"Device(C003){Name(_HID,\"ACPI0007\")Name(_UID,0x03)}",
		"Device(COM1){Name(_HID,EisaId(\"PNP0501\"))Name(_UID,One)"
		"Name(_CRS,ResourceTemplate(){IO(Decode16,0x03F8,0x03F8,0x01,"
		"0x08,)IRQNoFlags(){4}})}",
		"Device(KBD){Name(_HID,EisaId(\"PNP0303\"))Name(_CRS,"
		"ResourceTemplate(){IO(Decode16,0x0060,0x0060,0x01,0x01,)"
		"IO(Decode16,0x0064,0x0064,0x01,0x01,)IRQNoFlags(){1}})}",
		"Device(RTC){Name(_HID,EisaId(\"PNP0B00\"))Name(_CRS,"
		"ResourceTemplate(){IO(Decode16,0x0070,0x0070,0x01,0x02,)})}",
		"Device(PCI0){Name(_HID,EisaId(\"PNP0A08\"))Name(_CID,"
		"EisaId(\"PNP0A03\"))Name(_SEG,Zero)Name(_UID,Zero)",
		"WordBusNumber(ResourceProducer,MinFixed,MaxFixed,PosDecode,"
		"0x0000,0x0000,0x0000,0x0000,0x0001,,,)IO(Decode16,0x0CF8,"
		"0x0CF8,0x01,0x08,)DWordMemory(ResourceProducer,PosDecode,"
		"MinFixed,MaxFixed,NonCacheable,ReadWrite,0x00000000,"
		"0xC0000000,0xDFFFFFFF,0x00000000,0x20000000,,,,"
		"AddressRangeMemory,TypeStatic)",
		"Name(_PRT,Package(0x02){Package(0x04){0x0001FFFF,Zero,Zero,"
		"0x10},Package(0x04){0x0002FFFF,Zero,Zero,0x11}})",
		"Device(V000){Name(_HID,\"LNRO0005\")Name(_UID,Zero)Name(_CRS,"
		"ResourceTemplate(){Memory32Fixed(ReadWrite,0xFE000000,"
		"0x00000200,)Interrupt(ResourceConsumer,Level,ActiveHigh,"
		"Shared,,,){0x00000012,}})}",
		"Device(V002){Name(_HID,\"LNRO0005\")Name(_UID,0x02)Name(_CRS,"
		"ResourceTemplate(){Memory32Fixed(ReadWrite,0xFE002000,"
		"0x00000200,)Interrupt(ResourceConsumer,Level,ActiveHigh,"
		"Exclusive,,,){0x00000013,}})}",
		"Name(_S5,Package(0x04){0x05,0x05,Zero,Zero})",
		NULL,
	};
	static const char *const want_fadt[] = {
		"TableLength:00000114", "Revision:06",
		"ResetRegisterSupported(V2):1", "HardwareReduced(V5):1",
		"8042Presentonports60/64(V2):1",
		"[074h011612]ResetRegister:[GenericAddressStructure]"
		"[074h01161]SpaceID:01[SystemIO][075h01171]BitWidth:08"
		"[076h01181]BitOffset:00[077h01191]EncodedAccessWidth:01"
		"[ByteAccess:8][078h01208]Address:0000000000000602"
		"[080h01281]Valuetocausereset:01",
		"SleepControlRegister:[GenericAddressStructure]"
		"[0F4h02441]SpaceID:01[SystemIO][0F5h02451]BitWidth:08"
		"[0F6h02461]BitOffset:00[0F7h02471]EncodedAccessWidth:01"
		"[ByteAccess:8][0F8h02488]Address:0000000000000600",
		"SleepStatusRegister:[GenericAddressStructure]"
		"[100h02561]SpaceID:01[SystemIO][101h02571]BitWidth:08"
		"[102h02581]BitOffset:00[103h02591]EncodedAccessWidth:01"
		"[ByteAccess:8][104h02608]Address:0000000000000601",
		NULL,
	};
	static const char *const want_madt[] = {
		"LocalApicAddress:FEE00000", "PC-ATCompatibility:1",
		"SubtableType:00[ProcessorLocalAPIC][02Dh00451]Length:08"
		"[02Eh00461]ProcessorID:00[02Fh00471]LocalApicID:00",
		"ProcessorID:03[047h00711]LocalApicID:03",
		"SubtableType:01[I/OAPIC][04Dh00771]Length:0C"
		"[04Eh00781]I/OApicID:04",
		"Address:FEC00000[054h00844]Interrupt:00000000",
		"SubtableType:02[InterruptSourceOverride][059h00891]Length:0A"
		"[05Ah00901]Bus:00[05Bh00911]Source:00[05Ch00924]Interrupt:"
		"00000002",
		"SubtableType:04[LocalAPICNMI][063h00991]Length:06"
		"[064h01001]ProcessorID:FF",
		"InterruptInputLINT:01",
		NULL,
	};
	char dir[] = "/tmp/thpvm-acpi-XXXXXX";
	char *out;

	if (!have("iasl")) {
		SKIP("no iasl (apt-get install acpica-tools)");
		return;
	}
	if (!save_tables(4, dir))
		return;
	out = run_in(dir, "iasl -d facp.dat apic.dat dsdt.dat");
	/* iasl says so on a table it cannot read or a field it finds
	 * wrong. */
	CHECK(out && !strstr(out, "Error") && !strstr(out, "Warning") &&
	      !strstr(out, "****"));
	if (out && (strstr(out, "Error") || strstr(out, "Warning")))
		printf("# %s", out);
	free(out);
	check_squeezed(dir, "dsdt.dsl", want_dsdt);
	check_squeezed(dir, "facp.dsl", want_fadt);
	check_squeezed(dir, "apic.dsl", want_madt);
	out = run_in(dir, "rm -f *.dat *.dsl out.txt");
	free(out);
	rmdir(dir);
}

/* ACPICA's interpreter, as Linux's: loads the tables, checks each
 * predefined name's value (_HID, _CRS, _PRT, _S5...) and evaluates
 * some. */
static void test_acpiexec_loads(void)
{
	char dir[] = "/tmp/thpvm-acpi-XXXXXX";
	char *out, *flat;

	if (!have("acpiexec")) {
		SKIP("no acpiexec (apt-get install acpica-tools)");
		return;
	}
	if (!save_tables(2, dir))
		return;
	out = run_in(dir, "acpiexec -b 'evaluate _S5_; "
		     "evaluate _SB.V001._CRS; evaluate _SB.PCI0._PRT; "
		     "evaluate _SB.C001._UID' facp.dat apic.dat dsdt.dat");
	flat = out ? squeeze(out) : NULL;
	CHECK(flat != NULL);
	if (flat) {
		CHECK(!strstr(out, "ACPI Error") && !strstr(out, "ACPI Warning") &&
		      !strstr(out, "ACPI Exception"));
		/* Two CPUs, COM1, KBD, RTC, PCI0, three virtio-mmio. */
		CHECK(strstr(flat, "9Devices,0Regions,0Methods"));
		CHECK(strstr(flat, "Evaluationof\\_S5_returnedobject"));
		CHECK(strstr(flat, "[Package]Contains4Elements:[Integer]="
			      "0000000000000005[Integer]=0000000000000005"));
		/* V001's window and its shared, level, active-high GSI 18. */
		CHECK(strstr(flat, "[Buffer]Length17=0000:860900010010"
			      "00FE00020000890600090010:01120000007900"));
		CHECK(strstr(flat, "[Integer]=000000000002FFFF[Integer]="
			      "0000000000000000[Integer]=0000000000000000"
			      "[Integer]=0000000000000011"));
		CHECK(strstr(flat, "Evaluationof\\_SB.C001._UIDreturned"));
	}
	if (out && flat && !strstr(flat, "9Devices"))
		printf("# %s", out);
	free(out);
	free(flat);
	out = run_in(dir, "rm -f *.dat out.txt");
	free(out);
	rmdir(dir);
}

/* A VM to end: what vm_request_exit needs, no vCPUs. */
static void vm_for_exit(struct vm *vm)
{
	memset(vm, 0, sizeof(*vm));
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->state_changed, NULL);
	vm->state = VM_RUNNING;
	vm->exit_eventfd = eventfd(0, EFD_CLOEXEC);
}

/* Writes byte v at offset; whether that ended the VM (as a reset, with
 * status 0). */
static bool pm_write_ends(uint64_t offset, uint8_t v, uint32_t len)
{
	uint8_t data[4] = { v, 0xff, 0xff, 0xff };
	struct vm vm;
	bool ended;

	vm_for_exit(&vm);
	x86_acpi_pm_access(&vm, offset, data, len, true);
	ended = vm.state == VM_STOPPING;
	if (ended) {
		CHECK_EQ(vm.exit_status, 0);
		CHECK_EQ(vm.exit_reason, VM_EXIT_RESET);
	}
	close(vm.exit_eventfd);
	return ended;
}

static void test_pm_registers(void)
{
	struct vm vm;
	uint8_t data[4];

	/* SLP_EN with S5's type powers off; other types, or no SLP_EN, do
	 * nothing. */
	CHECK(pm_write_ends(X86_ACPI_SLEEP_CONTROL, 5 << 2 | 1 << 5, 1));
	CHECK(pm_write_ends(X86_ACPI_SLEEP_CONTROL, 5 << 2 | 1 << 5, 4));
	CHECK(pm_write_ends(X86_ACPI_SLEEP_CONTROL,
			    0x80 | 5 << 2 | 1 << 5 | 3, 1));
	CHECK(!pm_write_ends(X86_ACPI_SLEEP_CONTROL, 5 << 2, 1));
	CHECK(!pm_write_ends(X86_ACPI_SLEEP_CONTROL, 3 << 2 | 1 << 5, 1));
	CHECK(!pm_write_ends(X86_ACPI_SLEEP_CONTROL, 0, 1));
	/* The reset value at the reset register, nothing else. */
	CHECK(pm_write_ends(X86_ACPI_RESET, X86_ACPI_RESET_VALUE, 1));
	CHECK(!pm_write_ends(X86_ACPI_RESET, 6, 1));
	CHECK(!pm_write_ends(X86_ACPI_RESET, 0, 1));
	/* Sleep status takes WAK_STS clears and nothing happens. */
	CHECK(!pm_write_ends(X86_ACPI_SLEEP_STATUS, 0x80, 1));
	CHECK(!pm_write_ends(X86_ACPI_SLEEP_STATUS, 5 << 2 | 1 << 5, 1));
	CHECK(!pm_write_ends(X86_ACPI_SLEEP_STATUS, X86_ACPI_RESET_VALUE, 1));
	/* Reads are zeros, whatever the width. */
	vm_for_exit(&vm);
	for (uint64_t off = 0; off < X86_ACPI_PM_PORTS; off++) {
		memset(data, 0xee, sizeof(data));
		x86_acpi_pm_access(&vm, off, data, 4, false);
		CHECK_EQ(get_le32(data), 0);
	}
	CHECK_EQ(vm.state, VM_RUNNING);
	close(vm.exit_eventfd);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_root_and_fadt),
		UNIT_TEST(test_madt),
		UNIT_TEST(test_dsdt_names),
		UNIT_TEST(test_limits),
		UNIT_TEST(test_iasl_decompiles),
		UNIT_TEST(test_acpiexec_loads),
		UNIT_TEST(test_pm_registers),
	};

	return UNIT_RUN(tests);
}
