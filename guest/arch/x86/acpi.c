/* ACPI: the MADT for the CPUs and the IOAPIC (madt_scan), the check of
 * every table the firmware hands over (check_acpi), virtio-mmio devices
 * from the DSDT, and power-off or reset through the FADT's registers
 * (acpi_exit). QEMU generates the MADT itself, while SeaBIOS's MP table
 * lists only the CPUs SeaBIOS managed to start, so the MADT wins.
 *
 * Parameters (read here, not by cmdline.c: arm64 has no ACPI):
 *   acpi=yes | acpi=no    tables expected, or none (default: checked if
 *                         found)
 *   acpi_exit=poweroff | acpi_exit=reset
 *                         end through the FADT's sleep control register
 *                         (with \_S5's type) or its reset register */
#include "guest.h"
#include "lib.h"

#define HDR_LEN 36
#define TABLE_MAX (1u << 20)	/* sanity bound on a table's length */
#define MAX_TABLES 32
#define AML_MAX_DEPTH 16

struct sdt_header {
	char sig[4];
	uint32_t length;
	uint8_t rev, checksum;
	char oem[6], oem_table[8];
	uint32_t oem_rev, creator, creator_rev;
} __attribute__((packed));

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint64_t scan_rsdp(uint64_t start, uint64_t len)
{
	for (uint64_t a = start; a + 20 <= start + len; a += 16)
		if (!memcmp((const void *)a, "RSD PTR ", 8) &&
		    !checksum8((const void *)a, 20))
			return a;
	return 0;
}

/* The RSDP by the legacy scan: the EBDA's first KiB, then the BIOS
 * area. */
static uint64_t scanned_rsdp(void)
{
	const uint8_t *bda = (const uint8_t *)0x400;
	uint64_t ebda, r = 0;

	asm("" : "+r"(bda));	/* hide the constant address from GCC */
	ebda = (uint64_t)*(const uint16_t *)(bda + 0x0e) << 4;
	if (ebda)
		r = scan_rsdp(ebda, 1024);
	return r ? r : scan_rsdp(0xe0000, 0x20000);
}

static uint64_t find_rsdp(void)
{
	return boot.rsdp ? boot.rsdp : scanned_rsdp();
}

/* The root table's entries, which are 8 bytes (XSDT) or 4 (RSDT). */
static uint64_t root_table(uint64_t rsdp, unsigned *esz)
{
	const uint8_t *r = (const uint8_t *)rsdp;
	uint64_t xsdt = r[15] >= 2 ? get64(r + 24) : 0;

	*esz = xsdt ? 8 : 4;
	return xsdt ? xsdt : get32(r + 16);
}

static const struct sdt_header *find_table(uint64_t rsdp, const char *sig)
{
	unsigned esz;
	uint64_t root = root_table(rsdp, &esz);
	const struct sdt_header *h = (const void *)root;

	if (!root)
		return 0;
	for (uint32_t off = sizeof(*h); off + esz <= h->length; off += esz) {
		uint64_t t = 0;

		memcpy(&t, (const uint8_t *)h + off, esz);
		if (t && !memcmp((const void *)t, sig, 4))
			return (const void *)t;
	}
	return 0;
}

bool madt_scan(void)
{
	uint64_t rsdp = find_rsdp();
	const struct sdt_header *madt;
	const uint8_t *e, *end;
	uint32_t irq0_gsi = 0, gsi_base = 0;
	bool have_ioapic = false;

	if (!rsdp || !(madt = find_table(rsdp, "APIC")))
		return false;
	e = (const uint8_t *)madt + sizeof(*madt) + 8;
	end = (const uint8_t *)madt + madt->length;
	mp.ncpus = 0;
	for (; e + 2 <= end && e[1] >= 2; e += e[1]) {
		uint32_t v;

		switch (e[0]) {
		case 0:		/* processor local APIC */
			memcpy(&v, e + 4, 4);
			if ((v & 1) && mp.ncpus < MAX_CPUS)
				mp.apic_ids[mp.ncpus++] = e[3];
			break;
		case 1:		/* IOAPIC: the first one */
			if (!have_ioapic) {
				memcpy(&v, e + 4, 4);
				mp.ioapic_addr = v;
				memcpy(&gsi_base, e + 8, 4);
				have_ioapic = true;
			}
			break;
		case 2:		/* interrupt source override, ISA IRQ0 */
			if (e[2] == 0 && e[3] == 0)
				memcpy(&irq0_gsi, e + 4, 4);
			break;
		}
	}
	mp.ioapic_gsi_base = gsi_base;
	mp.irq0_pin = irq0_gsi - gsi_base;
	mp.found = true;
	mp.source = "madt";
	return true;
}

/* ---- The check ---- */

/* Where the check failed; NULL while it holds. */
static const char *why;

/* The table at addr, if it is one with signature sig (NULL: any): below
 * 4 GiB (the guest maps no more for it), of a sane length, with a
 * checksum that adds up. Sets why otherwise. */
static const uint8_t *valid_table(uint64_t addr, const char *sig)
{
	const uint8_t *t = (const uint8_t *)addr;
	uint32_t len;

	if (!addr || addr + TABLE_MAX > (4ULL << 30)) {
		why = "table-address";
		return 0;
	}
	len = get32(t + 4);
	if (sig && memcmp(t, sig, 4))
		why = "bad-signature";
	else if (len < HDR_LEN || len > TABLE_MAX)
		why = "bad-length";
	else if (checksum8(t, len))
		why = "bad-checksum";
	return why ? 0 : t;
}

/* Whether bytes [p, p + n) occur in the table. */
static bool table_has(const uint8_t *t, const void *bytes, unsigned n)
{
	uint32_t len = get32(t + 4);

	for (uint32_t i = HDR_LEN; i + n <= len; i++)
		if (!memcmp(t + i, bytes, n))
			return true;
	return false;
}

/* Enabled local APICs and x2APICs of a MADT. */
static unsigned madt_cpus(const uint8_t *madt)
{
	const uint8_t *e = madt + HDR_LEN + 8, *end = madt + get32(madt + 4);
	unsigned n = 0;

	for (; e + 2 <= end && e[1] >= 2 && e + e[1] <= end; e += e[1]) {
		if (e[0] == 0 && e[1] >= 8 && (get32(e + 4) & 1))
			n++;
		else if (e[0] == 9 && e[1] >= 16 && (get32(e + 8) & 1))
			n++;
	}
	if (e != end)
		why = "madt-entries";
	return n;
}

/* ---- A reader of the DSDT's plain device descriptions ----
 * Scopes and devices are entered; Name objects read; methods, fields,
 * processors, If/Else/While skipped by their length. At anything else a
 * scope is left (QEMU's DSDTs hold operation regions, which need an
 * interpreter to skip); thpvm's DSDT is read whole. Every length is
 * checked against its container. */

/* A PkgLength at *p: the end of its package, which must lie within
 * end; *p moves past it. */
static const uint8_t *pkg_end(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *s = *p;
	unsigned n;
	uint32_t v;

	if (s >= end)
		return 0;
	n = *s >> 6;
	if (s + 1 + n > end)
		return 0;
	v = n ? *s & 0x0f : *s & 0x3f;
	for (unsigned i = 0; i < n; i++)
		v |= (uint32_t)s[1 + i] << (4 + 8 * i);
	if (v < n + 1 || v > (uint64_t)(end - s))
		return 0;
	*p = s + 1 + n;
	return s + v;
}

/* A NameString at *p: its last segment into seg (5 bytes). */
static bool name_string(const uint8_t **p, const uint8_t *end, char *seg)
{
	const uint8_t *s = *p;
	unsigned n;

	while (s < end && (*s == '\\' || *s == '^'))
		s++;
	if (s >= end)
		return false;
	if (*s == 0x2e) {		/* DualNamePrefix */
		n = 2;
		s++;
	} else if (*s == 0x2f) {	/* MultiNamePrefix */
		if (s + 1 >= end)
			return false;
		n = s[1];
		s += 2;
	} else if (*s == 0) {		/* NullName */
		n = 0;
		s++;
	} else {
		n = 1;
	}
	if (s + 4 * n > end)
		return false;
	memset(seg, 0, 5);
	if (n)
		memcpy(seg, s + 4 * (n - 1), 4);
	*p = s + 4 * n;
	return true;
}

/* A data object: where it ends (NULL: not one this reader knows). */
static const uint8_t *data_end(const uint8_t *p, const uint8_t *end)
{
	static const uint8_t int_len[] = { [0x0a] = 1, [0x0b] = 2,
					   [0x0c] = 4, [0x0e] = 8 };

	if (p >= end)
		return 0;
	switch (*p) {
	case 0x00: case 0x01: case 0xff:	/* Zero, One, Ones */
		return p + 1;
	case 0x0a: case 0x0b: case 0x0c: case 0x0e:
		return p + 1 + int_len[*p] <= end ? p + 1 + int_len[*p] : 0;
	case 0x0d:				/* string */
		for (const uint8_t *s = p + 1; s < end; s++)
			if (!*s)
				return s + 1;
		return 0;
	case 0x11: case 0x12: case 0x13:	/* buffer, packages */
		p++;
		return pkg_end(&p, end);
	}
	return 0;
}

/* An integer data object's value. */
static bool data_integer(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *e = data_end(p, end);

	if (!e || (*p > 0x01 && *p != 0x0a && *p != 0x0b && *p != 0x0c &&
		   *p != 0x0e))
		return false;
	*v = 0;
	if (*p <= 0x01)
		*v = *p;
	else
		memcpy(v, p + 1, e - p - 1);
	return true;
}

struct acpi_device {
	char name[5];
	char hid[9];
	const uint8_t *crs, *crs_end;	/* the buffer's bytes */
};

static unsigned dsdt_devices, mmio_from_dsdt;

/* _HID as a string, or an EISA ID (a DWord) decoded. */
static void read_hid(struct acpi_device *d, const uint8_t *p,
		     const uint8_t *end)
{
	const uint8_t *e = data_end(p, end);

	if (!e)
		return;
	if (*p == 0x0d) {
		unsigned n = e - p - 2;

		memcpy(d->hid, p + 1, MIN(n, 8u));
	} else if (*p == 0x0c) {
		static const char hex[] = "0123456789ABCDEF";
		const uint8_t *b = p + 1;

		d->hid[0] = 0x40 + (b[0] >> 2 & 0x1f);
		d->hid[1] = 0x40 + ((b[0] & 3) << 3 | b[1] >> 5);
		d->hid[2] = 0x40 + (b[1] & 0x1f);
		d->hid[3] = hex[b[2] >> 4];
		d->hid[4] = hex[b[2] & 15];
		d->hid[5] = hex[b[3] >> 4];
		d->hid[6] = hex[b[3] & 15];
	}
}

/* _CRS as a buffer: after its PkgLength, the BufferSize term, then the
 * bytes. */
static void read_crs(struct acpi_device *d, const uint8_t *p,
		     const uint8_t *end)
{
	const uint8_t *e, *bytes;

	if (p >= end || *p != 0x11)
		return;
	p++;
	e = pkg_end(&p, end);
	bytes = e ? data_end(p, e) : 0;
	if (bytes) {
		d->crs = bytes;
		d->crs_end = e;
	}
}

/* sprint at the end of what buf (an array) holds. */
#define APPEND(buf, ...)						\
	do {								\
		unsigned len_ = strlen(buf);				\
		sprint((buf) + len_, sizeof(buf) - len_, __VA_ARGS__);	\
	} while (0)

/* One line for a device with an ID and its resources; a virtio-mmio one (its
 * window and its GSI) is handed to the virtio driver when the command
 * line announced none. */
static void device_found(const struct acpi_device *d)
{
	char res[160] = "";
	uint64_t mem = 0, mem_len = 0, gsi = ~0ULL;
	const uint8_t *r = d->crs;

	/* Devices without an ID (QEMU's PCI slots, by _ADR) say nothing
	 * here. */
	if (!d->hid[0])
		return;
	dsdt_devices++;
	while (r && r < d->crs_end) {
		const uint8_t *data;
		unsigned type, len;

		if (*r & 0x80) {	/* large descriptor */
			if (r + 3 > d->crs_end)
				break;
			type = *r;
			len = r[1] | r[2] << 8;
			data = r + 3;
		} else {
			type = *r >> 3 & 0x0f;
			len = *r & 7;
			data = r + 1;
		}
		if (data + len > d->crs_end || type == 0x0f)
			break;
		if (type == 0x08 && len >= 7)		/* IO */
			APPEND(res, " io=0x%x/%u", data[1] | data[2] << 8,
			       data[6]);
		else if (type == 0x04 && len >= 2)	/* IRQ */
			APPEND(res, " irq=%u", __builtin_ctz(data[0] |
					data[1] << 8 | 0x10000));
		else if (type == 0x86 && len >= 9) {	/* Memory32Fixed */
			mem = get32(data + 1);
			mem_len = get32(data + 5);
			APPEND(res, " mem=0x%lx/0x%lx", mem, mem_len);
		} else if (type == 0x89 && len >= 6 && data[1]) {
			/* Its first GSI, and flags: bit 1 edge, bit 2 active
			 * low, bit 3 shared. */
			gsi = get32(data + 2);
			APPEND(res, " gsi=%lu flags=0x%x", gsi, data[0]);
		}
		r = data + len;
	}
	print("tg: acpi device name=%s hid=%s%s\n", d->name, d->hid, res);
	if (!memcmp(d->hid, "LNRO0005", 9) && mem_len && gsi != ~0ULL &&
	    mmio_from_dsdt < MMIO_MAX_DEVS &&
	    params.nmmio == mmio_from_dsdt) {
		params.mmio[params.nmmio++] = (struct mmio_param){
			.base = mem, .size = mem_len, .gsi = gsi };
		mmio_from_dsdt++;
	}
}

static void read_terms(const uint8_t *p, const uint8_t *end,
		       struct acpi_device *dev, unsigned depth);

static void read_device(const uint8_t *p, const uint8_t *end,
			unsigned depth)
{
	struct acpi_device d;

	memset(&d, 0, sizeof(d));
	if (!name_string(&p, end, d.name))
		return;
	read_terms(p, end, &d, depth + 1);
	device_found(&d);
}

/* A term list: in dev when inside a device. */
static void read_terms(const uint8_t *p, const uint8_t *end,
		       struct acpi_device *dev, unsigned depth)
{
	char seg[5];

	if (depth > AML_MAX_DEPTH)
		return;
	while (p < end) {
		const uint8_t *body, *e;
		uint8_t op = *p++;

		if (op == 0x10) {			/* Scope */
			e = pkg_end(&p, end);
			if (!e || !name_string(&p, e, seg))
				return;
			read_terms(p, e, 0, depth + 1);
			p = e;
		} else if (op == 0x5b && p < end && *p == 0x82) {
			p++;				/* Device */
			e = pkg_end(&p, end);
			if (!e)
				return;
			read_device(p, e, depth);
			p = e;
		} else if (op == 0x08) {		/* Name */
			if (!name_string(&p, end, seg))
				return;
			body = p;
			p = data_end(p, end);
			if (!p)
				return;
			if (dev && !memcmp(seg, "_HID", 5))
				read_hid(dev, body, p);
			else if (dev && !memcmp(seg, "_CRS", 5))
				read_crs(dev, body, p);
		} else if (op == 0x14 || op == 0xa0 || op == 0xa1 ||
			   op == 0xa2) {	/* Method, If, Else, While */
			p = pkg_end(&p, end);
			if (!p)
				return;
		} else if (op == 0x5b && p < end && *p >= 0x81 &&
			   *p <= 0x87) {	/* Field, Processor, ... */
			p++;
			p = pkg_end(&p, end);
			if (!p)
				return;
		} else {
			return;
		}
	}
}

/* \_S5's first element: the SLP_TYP that powers off. */
static bool s5_type(const uint8_t *dsdt, unsigned *type)
{
	uint32_t len = get32(dsdt + 4);
	const uint8_t *end = dsdt + len;

	for (const uint8_t *p = dsdt + HDR_LEN; p + 4 < end; p++) {
		const uint8_t *q = p + 4, *e;
		uint64_t v;

		if (memcmp(p, "_S5_", 4) || *q != 0x12)
			continue;
		q++;
		e = pkg_end(&q, end);
		/* NumElements, then the first element. */
		if (e && q + 1 < e && q[0] >= 1 && data_integer(q + 1, e, &v) &&
		    v <= 7) {
			*type = v;
			return true;
		}
	}
	return false;
}

/* A generic address of one byte-wide I/O port. */
static bool io_gas(const uint8_t *g, uint16_t *port)
{
	uint64_t a = get64(g + 4);

	if (g[0] != 1 || g[1] != 8 || g[2] != 0 || a > 0xffff)
		return false;
	*port = a;
	return true;
}

static void print_fadt(const uint8_t *fadt, const uint8_t *dsdt)
{
	uint32_t len = get32(fadt + 4);
	uint16_t ctl = 0, sts = 0, rst = 0;
	unsigned s5 = 0;
	bool has_s5 = s5_type(dsdt, &s5);

	print("tg: acpi fadt rev=%u len=%u flags=0x%x boot_arch=0x%x "
	      "sci=%u", fadt[8], len, len >= 116 ? get32(fadt + 112) : 0,
	      len >= 111 ? fadt[109] | fadt[110] << 8 : 0,
	      fadt[46] | fadt[47] << 8);
	if (len >= 129 && io_gas(fadt + 116, &rst))
		print(" reset=io:0x%x/%u", rst, fadt[128]);
	if (len >= 268 && io_gas(fadt + 244, &ctl) &&
	    io_gas(fadt + 256, &sts))
		print(" sleep_control=io:0x%x sleep_status=io:0x%x", ctl, sts);
	if (has_s5)
		print(" s5=%u", s5);
	print("\n");
}

static const uint8_t *fadt_dsdt(const uint8_t *fadt)
{
	uint32_t len = get32(fadt + 4);
	uint64_t x = len >= 148 ? get64(fadt + 140) : 0;

	return valid_table(x ? x : get32(fadt + 40), "DSDT");
}

void check_acpi(void)
{
	bool want_yes = cmdline_has_token(boot.cmdline, "acpi=yes");
	bool want_no = cmdline_has_token(boot.cmdline, "acpi=no");
	uint64_t scanned = scanned_rsdp(), rsdp = boot.rsdp ?: scanned;
	const uint8_t *r = (const uint8_t *)rsdp, *root, *fadt = 0, *madt = 0;
	const uint8_t *dsdt = 0;
	char names[5 * MAX_TABLES + 1] = "";
	unsigned esz = 0, ntables = 0, lapics = 0;
	uint64_t root_addr = 0;
	uint32_t rlen;

	why = 0;
	if (!rsdp) {
		if (want_yes)
			report(false, "acpi", "reason=no-rsdp");
		else if (want_no)
			report(true, "acpi", "rsdp=none");
		else
			print("tg: acpi none\n");
		return;
	}
	if (rsdp + 36 > (4ULL << 30)) {
		report(false, "acpi", "rsdp=0x%lx reason=rsdp-address", rsdp);
		return;
	}
	print("tg: acpi rsdp=0x%lx given=0x%lx scanned=0x%lx rev=%u\n", rsdp,
	      boot.rsdp, scanned, r[15]);
	if (want_no)
		why = "unexpected-tables";
	else if (memcmp(r, "RSD PTR ", 8) || checksum8(r, 20))
		why = "bad-rsdp";
	else if (r[15] >= 2 && (get32(r + 20) < 36 || get32(r + 20) > 4096 ||
				checksum8(r, get32(r + 20))))
		why = "bad-rsdp-v2";
	if (!why)
		root_addr = root_table(rsdp, &esz);
	root = why ? 0 : valid_table(root_addr, esz == 8 ? "XSDT" : "RSDT");
	rlen = root ? get32(root + 4) : 0;
	if (root && (rlen - HDR_LEN) % esz)
		why = "root-length";
	for (uint32_t off = HDR_LEN; !why && off + esz <= rlen; off += esz) {
		uint64_t a = 0;
		const uint8_t *t;

		memcpy(&a, root + off, esz);
		t = valid_table(a, 0);
		if (!t || ntables == MAX_TABLES)
			break;
		memcpy(names + 5 * ntables, t, 4);
		names[5 * ntables + 4] = ',';
		ntables++;
		if (!memcmp(t, "FACP", 4))
			fadt = t;
		else if (!memcmp(t, "APIC", 4))
			madt = t;
	}
	if (ntables)
		names[5 * ntables - 1] = 0;
	if (!why && (!fadt || !madt))
		why = "no-fadt-or-madt";
	if (!why) {
		dsdt = fadt_dsdt(fadt);
		lapics = madt_cpus(madt);
	}
	if (!why && params.has_cpus && lapics != params.cpus)
		why = "lapics-not-cpus";
	/* COM1 (the 8250 every x86 VMM here has): its name and EisaId
	 * ("PNP0501"), as QEMU's DSDT has them too. */
	if (!why && (!table_has(dsdt, "COM1", 4) ||
		     !table_has(dsdt, "\x0c\x41\xd0\x05\x01", 5)))
		why = "no-com1";
	if (why) {
		report(false, "acpi", "rsdp=0x%lx tables=%s reason=%s", rsdp,
		       names, why);
		return;
	}
	print_fadt(fadt, dsdt);
	read_terms(dsdt + HDR_LEN, dsdt + get32(dsdt + 4), 0, 0);
	report(true, "acpi", "rsdp=0x%lx root=%s tables=%s lapics=%u "
	       "dsdt_len=%u devices=%u mmio=%u", rsdp, esz == 8 ? "XSDT" :
	       "RSDT", names, lapics, get32(dsdt + 4), dsdt_devices,
	       mmio_from_dsdt);
}

/* Ends the VM as acpi_exit= says; returns only when the VM went on. */
void acpi_exit(void)
{
	bool off = cmdline_has_token(boot.cmdline, "acpi_exit=poweroff");
	bool reset = cmdline_has_token(boot.cmdline, "acpi_exit=reset");
	uint64_t rsdp = find_rsdp();
	const uint8_t *fadt = rsdp ? (const void *)find_table(rsdp, "FACP") : 0;
	const uint8_t *dsdt = fadt ? fadt_dsdt(fadt) : 0;
	uint16_t port;
	unsigned type;

	if (!off && !reset)
		return;
	if (!dsdt) {
		report(false, "acpi-exit", "reason=no-tables");
		return;
	}
	if (off) {
		if (get32(fadt + 4) < 268 || !io_gas(fadt + 244, &port) ||
		    !s5_type(dsdt, &type)) {
			report(false, "acpi-exit", "how=poweroff "
			       "reason=no-sleep-control-or-s5");
			return;
		}
		print("tg: acpi exit how=poweroff port=0x%x value=0x%x\n",
		      port, type << 2 | 1 << 5);
		outb(port, type << 2 | 1 << 5);		/* SLP_TYP, SLP_EN */
	} else {
		if (get32(fadt + 4) < 129 || !(get32(fadt + 112) & 1 << 10) ||
		    !io_gas(fadt + 116, &port)) {
			report(false, "acpi-exit", "how=reset "
			       "reason=no-reset-register");
			return;
		}
		print("tg: acpi exit how=reset port=0x%x value=0x%x\n", port,
		      fadt[128]);
		outb(port, fadt[128]);
	}
	clock_delay_us(100000);
	report(false, "acpi-exit", "how=%s reason=vm-went-on",
	       off ? "poweroff" : "reset");
}
