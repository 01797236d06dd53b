/* Parsing and checking of `thpvm run` options into a struct run_options. */
#include "cli/run_options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli/lkvm_options.h"
#include "control/control_path.h"
#include "core/arch.h"
#include "lib/host_mem.h"
#include "lib/log.h"
#include "lib/util.h"

/* -m's range: from VM_MIN_RAM to MAX_RAM, and at most the host's
 * memory; -c's: 1 to arch_max_vcpus(). Both are checked here only, and
 * run_usage states them (test_run_options checks the figures). */
#define MAX_RAM (1ULL << 40)

const char run_usage[] =
"usage: thpvm run [options]\n"
"\n"
"Boots a guest. Without -k, boots the bundled test guest.\n"
"\n"
"  -k, --kernel IMAGE     a Linux kernel: on x86 a bzImage or an ELF vmlinux\n"
"                         with a PVH note; on arm64 an Image, plain or\n"
"                         compressed (as Debian's vmlinuz); on ppc64le an\n"
"                         ELF vmlinux (powerpc has no bundled test guest)\n"
"  -i, --initrd FILE      initial ramdisk\n"
"  -p, --params PARAMS    kernel command line parameters; a Linux kernel\n"
"                         gets them after the defaults, on x86\n"
"                         \"console=ttyS0 earlyprintk=serial reboot=k\n"
"                         panic=-1\", on arm64 \"console=ttyS0 earlycon\n"
"                         panic=-1\", on ppc64le \"console=hvc0 panic=-1\"\n"
"                         (--nodefaults: PARAMS alone); the\n"
"                         test guest gets PARAMS alone\n"
"  -m, --mem SIZE         guest RAM, e.g. 512M, 2G, or 1024 (a bare\n"
"                         number is MiB; default 256M): 16M to 1T, and no\n"
"                         more than the host's RAM plus swap; rounded up to\n"
"                         a multiple of the host's huge page (2 MiB on x86)\n"
"  -c, --cpus N           number of vCPUs (default 1): 1 to 254 on x86,\n"
"                         1 to 123 on arm64 (8 with a GICv2), 1 to 64 on ppc64le\n"
"  -d, --disk PATH[,ro][,direct][,aio=io_uring|threads][,queues=N]\n"
"              [,pci|,mmio]\n"
"                         a virtio-blk disk: raw image file or block device\n"
"                         (repeatable, up to 16); ro: read-only; direct:\n"
"                         O_DIRECT, bypassing the host page cache; aio: its\n"
"                         requests through io_uring or worker threads\n"
"                         (default: io_uring where the kernel allows it);\n"
"                         queues: request queues, each with a thread, 1 to 8\n"
"                         (default: one per vCPU, up to 8); pci or mmio:\n"
"                         its transport\n"
"  -n, --network mode=tap[,tapif=NAME][,mac=MAC][,transport=pci|mmio]\n"
"                         a virtio-net device on tap NAME (default thpvmN),\n"
"                         created if missing; its link and addresses are\n"
"                         left to the user; MAC default 52:54:00:xx:xx:xx\n"
"                         with random xx; mode=none: no network (default)\n"
"      --balloon[=OPTIONS]\n"
"                         a virtio-balloon device; OPTIONS, comma-separated:\n"
"                         stats=SECONDS (guest statistics interval, default\n"
"                         5, 0: none), deflate_on_oom=on|off (default on),\n"
"                         reporting=on|off (free page reporting, default\n"
"                         off), cont_pages=on|off (continuous pages, default\n"
"                         on), policy=eager|preserve (release ballooned\n"
"                         pages at once, or only whole host huge pages;\n"
"                         default eager), transport=pci|mmio; see\n"
"                         docs/balloon.md\n"
"      --mem-hotplug=SIZE[,block=SIZE][,requested=SIZE][,transport=pci|mmio]\n"
"                         a virtio-mem device over SIZE of hotpluggable\n"
"                         memory above guest RAM (x86), plugged and\n"
"                         unplugged by the guest in blocks (default and\n"
"                         least: the host's huge page, 2 MiB on x86; a\n"
"                         power of two); requested: what the guest is asked\n"
"                         to plug at boot (default 0; later: thpvm mem);\n"
"                         see docs/memory-hotplug.md\n"
"      --rng[=OPTIONS]    a virtio-rng device fed from the host's getrandom();\n"
"                         OPTIONS, comma-separated: bytes_per_sec=N (at\n"
"                         most N bytes a second, N a number of bytes or a\n"
"                         size such as 64K, from 1 to 64M; default 1M),\n"
"                         transport=pci|mmio\n"
"      --virtio-transport pci|mmio\n"
"                         the transport of virtio devices that do not\n"
"                         name one (default pci); an MMIO device is\n"
"                         described in the ACPI tables (x86; with\n"
"                         --no-acpi, as virtio_mmio.device= on the kernel\n"
"                         command line) or in the device tree (arm64)\n"
"      --name NAME        name for the control socket (default guest-PID)\n"
"      --control-socket PATH\n"
"                         listen for thpvm stop, stat, ... at PATH instead;\n"
"                         they then name the VM by PATH (with a '/', e.g.\n"
"                         ./vm.sock), and thpvm list does not show it\n"
"      --no-control       no control socket: stop the VM with Ctrl-A x or\n"
"                         a signal\n"
"      --detach           run in the background (QEMU's --daemonize too):\n"
"                         return once the VM's control socket is ready,\n"
"                         with its console on a socket (see below) that\n"
"                         thpvm console NAME attaches to; thpvm's later\n"
"                         messages go to stderr only if it is a file\n"
"      --console-socket PATH\n"
"                         the console on a Unix socket at PATH, not the\n"
"                         terminal (default with --detach: NAME.console\n"
"                         next to the control socket), with the last 64 KiB\n"
"                         of output kept for whoever attaches\n"
"      --console-filter   pass the guest's console output through a filter:\n"
"                         text, and the escapes that move the cursor,\n"
"                         colour and erase, but no terminal titles or\n"
"                         clipboard writes (OSC), no sequences that make\n"
"                         the terminal answer, no reset (default: raw)\n"
"      --hugetlbfs PATH   back guest RAM with files on this hugetlbfs mount\n"
"      --no-thp           back guest RAM with base pages (MADV_NOHUGEPAGE)\n"
"      --boot ENTRY       kernel entry: auto (default: chosen per image), or\n"
"                         one of the architecture's (a wrong ENTRY lists\n"
"                         them; see docs/booting.md)\n"
"      --dump-dtb FILE    also write the guest's device tree to FILE (arm64)\n"
"      --no-acpi          no ACPI tables (x86): the guest finds its CPUs in\n"
"                         the MP table and virtio-mmio devices on its\n"
"                         command line (arm64 guests never get ACPI)\n"
"      --user NAME        started as root, run the VM as user NAME (or\n"
"                         UID:GID; QEMU's --runas too) once /dev/kvm, taps,\n"
"                         disks and the sockets are open (docs/security.md)\n"
"      --seccomp on|off   seccomp filters per thread (default on): a\n"
"                         forbidden system call ends the VM, naming it;\n"
"                         off is for debugging (docs/security.md)\n"
"      --json             at the end, print {\"name\", \"exit_status\",\n"
"                         \"reason\"} as one JSON line on stderr; reason is\n"
"                         guest, reset, stop, signal or failure\n"
"  -v, --verbose          more messages on stderr, the kernel command line\n"
"                         as the guest gets it among them\n"
"  -h, --help             show this help\n"
"\n"
"lkvm's spellings:\n"
"      --nodefaults       the kernel command line is -p alone, without the\n"
"                         defaults (thpvm adds no devices of its own to\n"
"                         drop; the serial console stays)\n"
"      --console serial|virtio\n"
"                         the guest's console: the serial port (default),\n"
"                         or a virtio-console on the default transport\n"
"                         (Linux: hvc0, and console=hvc0 instead of\n"
"                         console=ttyS0 in the defaults; early messages\n"
"                         still on the serial port)\n"
"      --loglevel LEVEL   error, warning, info or debug (-v); --debug: debug\n"
"      --rng              a virtio-rng device (see above)\n"
"Other lkvm options (--9p, --vnc, --sandbox, -f/--firmware, ...) are\n"
"refused by name.\n"
"\n"
"The console is the terminal (unless --detach or --console-socket); type\n"
"Ctrl-A x to stop the VM.\n"
"The exit status is the guest's (debug-exit port 0x501), 0 after a guest\n"
"reset or a stop, 1 when the VM failed.\n";

enum {
	OPT_NAME = 256,
	OPT_HUGETLBFS,
	OPT_NO_THP,
	OPT_BOOT,
	OPT_JSON,
	OPT_BALLOON,
	OPT_MEM_HOTPLUG,
	OPT_VIRTIO_TRANSPORT,
	OPT_DUMP_DTB,
	OPT_NODEFAULTS,
	OPT_CONSOLE,
	OPT_RNG,
	OPT_LOGLEVEL,
	OPT_DEBUG,
	OPT_CONTROL_SOCKET,
	OPT_NO_CONTROL,
	OPT_NO_ACPI,
	OPT_DETACH,
	OPT_CONSOLE_SOCKET,
	OPT_CONSOLE_FILTER,
	OPT_SECCOMP,
	OPT_USER,
};

static const struct option long_options[] = {
	{ "kernel", required_argument, NULL, 'k' },
	{ "initrd", required_argument, NULL, 'i' },
	{ "params", required_argument, NULL, 'p' },
	{ "mem", required_argument, NULL, 'm' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "disk", required_argument, NULL, 'd' },
	{ "network", required_argument, NULL, 'n' },
	{ "balloon", optional_argument, NULL, OPT_BALLOON },
	{ "mem-hotplug", required_argument, NULL, OPT_MEM_HOTPLUG },
	{ "virtio-transport", required_argument, NULL, OPT_VIRTIO_TRANSPORT },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "hugetlbfs", required_argument, NULL, OPT_HUGETLBFS },
	{ "no-thp", no_argument, NULL, OPT_NO_THP },
	{ "boot", required_argument, NULL, OPT_BOOT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "dump-dtb", required_argument, NULL, OPT_DUMP_DTB },
	{ "no-acpi", no_argument, NULL, OPT_NO_ACPI },
	{ "nodefaults", no_argument, NULL, OPT_NODEFAULTS },
	{ "console", required_argument, NULL, OPT_CONSOLE },
	{ "rng", optional_argument, NULL, OPT_RNG },
	{ "loglevel", required_argument, NULL, OPT_LOGLEVEL },
	{ "debug", no_argument, NULL, OPT_DEBUG },
	{ "control-socket", required_argument, NULL, OPT_CONTROL_SOCKET },
	{ "no-control", no_argument, NULL, OPT_NO_CONTROL },
	{ "detach", no_argument, NULL, OPT_DETACH },
	{ "daemonize", no_argument, NULL, OPT_DETACH },
	{ "console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET },
	{ "console-filter", no_argument, NULL, OPT_CONSOLE_FILTER },
	{ "seccomp", required_argument, NULL, OPT_SECCOMP },
	{ "user", required_argument, NULL, OPT_USER },
	{ "runas", required_argument, NULL, OPT_USER },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_ram(const char *arg, uint64_t *out)
{
	uint64_t size, host;
	char host_s[32];
	int err = size_parse(arg, &size);

	if (err) {
		pr_err("-m %s: not a size (examples: 512M, 2G, 1024; a bare "
		       "number is MiB)", arg);
		return err;
	}
	if (size < VM_MIN_RAM || size > MAX_RAM) {
		pr_err("-m %s: guest RAM must be from %llu MiB to %llu TiB",
		       arg, VM_MIN_RAM >> 20, MAX_RAM >> 40);
		return -ERANGE;
	}
	/* Past that the guest would be killed once it used its RAM. */
	host = host_memory_size();
	if (host && size > host) {
		pr_err("-m %s: more than this host's %s of RAM and swap", arg,
		       size_format(host, host_s, sizeof(host_s)));
		return -ERANGE;
	}
	*out = ALIGN_UP(size, guest_ram_align());
	return 0;
}

static int parse_boot_entry(const char *arg, unsigned *out)
{
	char names[128] = "";
	size_t len = 0;
	unsigned i;

	for (i = 0; arch_boot_entries[i]; i++) {
		if (!strcmp(arg, arch_boot_entries[i])) {
			*out = i;
			return 0;
		}
		if (len < sizeof(names))
			len += snprintf(names + len, sizeof(names) - len,
					"%s%s", i ? ", " : "",
					arch_boot_entries[i]);
	}
	pr_err("--boot %s: expected one of %s", arg, names);
	return -EINVAL;
}

/* "pci" or "mmio"; false for anything else. */
static bool transport_parse(const char *s, enum virtio_transport *out)
{
	if (!strcmp(s, "pci"))
		*out = VIRTIO_TRANSPORT_PCI;
	else if (!strcmp(s, "mmio"))
		*out = VIRTIO_TRANSPORT_MMIO;
	else
		return false;
	return true;
}

/* PATH[,ro][,direct][,aio=io_uring|threads][,queues=N][,pci|,mmio]:
 * options are taken off the end, so a path may hold commas as long as it
 * does not end in one of the option names. A word after a comma that is no option is part of the path only
 * if that path exists: otherwise it is a misspelt option (img,rw), named
 * as such rather than reported as a missing file. */
static int parse_disk(const char *arg, struct machine_config *cfg)
{
	struct disk_config *d;
	unsigned long n;
	char *comma;

	if (cfg->nr_disks == MACHINE_MAX_DISKS) {
		pr_err("-d %s: at most %d disks", arg, MACHINE_MAX_DISKS);
		return -E2BIG;
	}
	d = &cfg->disks[cfg->nr_disks];
	if (snprintf(d->path, sizeof(d->path), "%s", arg) >=
	    (int)sizeof(d->path)) {
		pr_err("-d: path too long");
		return -ENAMETOOLONG;
	}
	while ((comma = strrchr(d->path, ','))) {
		const char *opt = comma + 1;

		if (!strcmp(opt, "ro")) {
			d->opts.read_only = true;
		} else if (!strcmp(opt, "direct")) {
			d->opts.direct = true;
		} else if (!strcmp(opt, "aio=io_uring")) {
			d->opts.engine = BLK_ENGINE_IO_URING;
		} else if (!strcmp(opt, "aio=threads")) {
			d->opts.engine = BLK_ENGINE_THREADS;
		} else if (!strncmp(opt, "queues=", 7)) {
			if (uint_parse(opt + 7, BLK_MAX_QUEUES, &n) || !n) {
				pr_err("-d %s: queues=%s: expected 1 to %u",
				       arg, opt + 7, BLK_MAX_QUEUES);
				return -EINVAL;
			}
			d->opts.queues = n;
		} else if (!transport_parse(opt, &d->transport)) {
			if (access(d->path, F_OK) == 0)
				break;	/* a comma in the file's name */
			pr_err("-d %s: unknown disk option \"%s\" (expected ro, "
			       "direct, aio=io_uring, aio=threads, queues=N, "
			       "pci or mmio)", arg, opt);
			return -EINVAL;
		}
		*comma = '\0';
	}
	if (!d->path[0]) {
		pr_err("-d %s: expected PATH[,ro][,direct][,aio=io_uring|"
		       "threads][,queues=N][,pci|,mmio]", arg);
		return -EINVAL;
	}
	cfg->nr_disks++;
	return 0;
}

static bool parse_mac(const char *s, uint8_t mac[ETH_ALEN])
{
	char byte[3] = "";
	unsigned i;

	for (i = 0; i < ETH_ALEN; i++, s += 3) {
		if (!isxdigit((unsigned char)s[0]) ||
		    !isxdigit((unsigned char)s[1]) ||
		    s[2] != (i < ETH_ALEN - 1 ? ':' : '\0'))
			return false;
		memcpy(byte, s, 2);
		mac[i] = strtoul(byte, NULL, 16);
	}
	return true;
}

/* As the kernel's dev_valid_name(), for an error before the ioctl. */
static bool ifname_valid(const char *s)
{
	size_t len = strlen(s);

	if (!len || len >= IFNAMSIZ || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s))
			return false;
	return true;
}

/* 52:54:00 and three random bytes: unicast, locally administered. */
static int random_mac(uint8_t mac[ETH_ALEN])
{
	static const uint8_t prefix[] = { 0x52, 0x54, 0x00 };

	memcpy(mac, prefix, sizeof(prefix));
	if (getrandom(mac + sizeof(prefix), ETH_ALEN - sizeof(prefix), 0) !=
	    ETH_ALEN - sizeof(prefix)) {
		pr_err("-n: cannot pick a random MAC: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Hands each KEY=VALUE of arg, a comma-separated list, to parse_key; the
 * first error ends it. opt is the option as written, for messages: "-n",
 * or "--balloon", whose optional value can only follow '='. */
static int parse_key_list(const char *opt, const char *arg,
			  int (*parse_key)(void *ctx, const char *arg,
					   const char *key, const char *val),
			  void *ctx)
{
	const char *sep = opt[1] == '-' ? "=" : " ";
	char buf[128], *p = buf, *key, *val;
	int err;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf)) {
		pr_err("%s: argument too long", opt);
		return -EINVAL;
	}
	while ((key = strsep(&p, ","))) {
		val = strchr(key, '=');
		if (!val) {
			pr_err("%s%s%s: expected KEY=VALUE, not \"%s\"", opt,
			       sep, arg, key);
			return -EINVAL;
		}
		*val++ = '\0';
		err = parse_key(ctx, arg, key, val);
		if (err)
			return err;
	}
	return 0;
}

/* -n's keys, and which of them were given. */
struct net_keys {
	struct net_config nc;
	bool have_mode, have_mac;
};

static int parse_net_key(void *ctx, const char *arg, const char *key,
			 const char *val)
{
	static const uint8_t zero[ETH_ALEN];
	struct net_keys *k = ctx;
	struct net_config *nc = &k->nc;

	if (!strcmp(key, "mode")) {
		k->have_mode = true;
		if (!strcmp(val, "tap")) {
			nc->mode = NET_TAP;
		} else if (!strcmp(val, "none")) {
			nc->mode = NET_NONE;
		} else {
			pr_err("-n %s: mode must be tap or none", arg);
			return -EINVAL;
		}
	} else if (!strcmp(key, "tapif")) {
		if (!ifname_valid(val)) {
			pr_err("-n %s: tapif: 1 to %d characters, without "
			       "'/', ':' or spaces", arg, IFNAMSIZ - 1);
			return -EINVAL;
		}
		snprintf(nc->tapif, sizeof(nc->tapif), "%s", val);
	} else if (!strcmp(key, "mac")) {
		k->have_mac = true;
		if (!parse_mac(val, nc->mac) ||
		    !memcmp(nc->mac, zero, sizeof(zero))) {
			pr_err("-n %s: mac: expected six hex bytes such as "
			       "52:54:00:12:34:56, not all zero", arg);
			return -EINVAL;
		}
		if (nc->mac[0] & 1) {
			pr_err("-n %s: mac: %s is a multicast address", arg,
			       val);
			return -EINVAL;
		}
	} else if (!strcmp(key, "transport")) {
		if (!transport_parse(val, &nc->transport)) {
			pr_err("-n %s: transport must be pci or mmio", arg);
			return -EINVAL;
		}
	} else {
		pr_err("-n %s: unknown key \"%s\" (expected mode, tapif, "
		       "mac or transport)", arg, key);
		return -EINVAL;
	}
	return 0;
}

/* mode=tap[,tapif=NAME][,mac=MAC] or mode=none. */
static int parse_net(const char *arg, struct machine_config *cfg)
{
	struct net_keys k = { .nc = { .mode = NET_NONE } };
	struct net_config *nc = &k.nc;
	int err;

	err = parse_key_list("-n", arg, parse_net_key, &k);
	if (err)
		return err;
	if (!k.have_mode) {
		pr_err("-n %s: missing mode=tap or mode=none", arg);
		return -EINVAL;
	}
	if (nc->mode == NET_NONE && (nc->tapif[0] || k.have_mac ||
				     nc->transport)) {
		pr_err("-n %s: tapif, mac and transport need mode=tap", arg);
		return -EINVAL;
	}
	if (nc->mode == NET_TAP && cfg->net.mode == NET_TAP) {
		pr_err("-n %s: only one network device is supported", arg);
		return -EINVAL;
	}
	if (nc->mode == NET_TAP && !k.have_mac) {
		err = random_mac(nc->mac);
		if (err)
			return err;
	}
	cfg->net = *nc;
	return 0;
}

static int parse_on_off(const char *arg, const char *key, const char *val,
			bool *out)
{
	if (!strcmp(val, "on")) {
		*out = true;
	} else if (!strcmp(val, "off")) {
		*out = false;
	} else {
		pr_err("--balloon=%s: %s must be on or off", arg, key);
		return -EINVAL;
	}
	return 0;
}

/* --balloon's keys: the device's options and its transport. */
struct balloon_keys {
	struct balloon_config bc;
	enum virtio_transport transport;
};

static int parse_balloon_key(void *ctx, const char *arg, const char *key,
			     const char *val)
{
	struct balloon_keys *k = ctx;
	struct balloon_config *bc = &k->bc;
	unsigned long n;

	if (!strcmp(key, "stats")) {
		if (uint_parse(val, BALLOON_MAX_STATS_INTERVAL, &n)) {
			pr_err("--balloon=%s: stats: expected seconds from 0 "
			       "to %d", arg, BALLOON_MAX_STATS_INTERVAL);
			return -EINVAL;
		}
		bc->stats_interval = n;
		return 0;
	}
	if (!strcmp(key, "deflate_on_oom"))
		return parse_on_off(arg, key, val, &bc->deflate_on_oom);
	if (!strcmp(key, "reporting"))
		return parse_on_off(arg, key, val, &bc->reporting);
	if (!strcmp(key, "cont_pages"))
		return parse_on_off(arg, key, val, &bc->cont_pages);
	if (!strcmp(key, "policy")) {
		if (!strcmp(val, "eager")) {
			bc->policy = BALLOON_EAGER;
		} else if (!strcmp(val, "preserve")) {
			bc->policy = BALLOON_PRESERVE;
		} else {
			pr_err("--balloon=%s: policy must be eager or preserve",
			       arg);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "transport")) {
		if (transport_parse(val, &k->transport))
			return 0;
		pr_err("--balloon=%s: transport must be pci or mmio", arg);
		return -EINVAL;
	}
	pr_err("--balloon=%s: unknown key \"%s\" (expected stats, "
	       "deflate_on_oom, reporting, cont_pages, policy or transport)",
	       arg, key);
	return -EINVAL;
}

/* [stats=N][,deflate_on_oom=on|off][,reporting=on|off]
 * [,cont_pages=on|off][,policy=eager|preserve][,transport=pci|mmio];
 * arg NULL: defaults. */
static int parse_balloon(const char *arg, struct machine_config *cfg)
{
	struct balloon_keys k = { .bc = {
		.stats_interval = BALLOON_DEFAULT_STATS_INTERVAL,
		.deflate_on_oom = true,
		.cont_pages = true,
		.policy = BALLOON_EAGER,
	} };
	int err;

	if (cfg->balloon) {
		pr_err("--balloon: given twice (one balloon per VM)");
		return -EINVAL;
	}
	if (arg) {
		err = parse_key_list("--balloon", arg, parse_balloon_key, &k);
		if (err)
			return err;
	}
	cfg->balloon = true;
	cfg->balloon_opts = k.bc;
	cfg->balloon_transport = k.transport;
	return 0;
}

/* --rng's keys: the rate and the transport. */
static int parse_rng_key(void *ctx, const char *arg, const char *key,
			 const char *val)
{
	struct machine_config *cfg = ctx;
	unsigned long n;
	uint64_t size;

	if (!strcmp(key, "bytes_per_sec")) {
		/* A bare number is bytes here (a size's default is MiB). */
		if (!uint_parse(val, RNG_MAX_BYTES_PER_SEC, &n))
			size = n;
		else if (size_parse(val, &size))
			size = 0;
		if (!size || size > RNG_MAX_BYTES_PER_SEC) {
			pr_err("--rng=%s: bytes_per_sec: expected bytes from 1 "
			       "to %llu (or a size such as 64K, up to 64M)", arg,
			       RNG_MAX_BYTES_PER_SEC);
			return -EINVAL;
		}
		cfg->rng_bytes_per_sec = size;
		return 0;
	}
	if (!strcmp(key, "transport")) {
		if (transport_parse(val, &cfg->rng_transport))
			return 0;
		pr_err("--rng=%s: transport must be pci or mmio", arg);
		return -EINVAL;
	}
	pr_err("--rng=%s: unknown key \"%s\" (expected bytes_per_sec or "
	       "transport)", arg, key);
	return -EINVAL;
}

/* [bytes_per_sec=N][,transport=pci|mmio]; arg NULL: defaults. */
static int parse_rng(const char *arg, struct machine_config *cfg)
{
	if (cfg->rng) {
		pr_err("--rng: given twice (one rng per VM)");
		return -EINVAL;
	}
	cfg->rng = true;
	cfg->rng_bytes_per_sec = RNG_DEFAULT_BYTES_PER_SEC;
	return arg ? parse_key_list("--rng", arg, parse_rng_key, cfg) : 0;
}

/* --mem-hotplug's keys after SIZE (the block, the first request, the
 * transport), and the whole argument for messages. */
struct mem_keys {
	struct machine_config *cfg;
	const char *arg;
};

static int parse_mem_key(void *ctx, const char *keys, const char *key,
			 const char *val)
{
	struct machine_config *cfg = ((struct mem_keys *)ctx)->cfg;
	const char *arg = ((struct mem_keys *)ctx)->arg;
	uint64_t size;

	if (!strcmp(key, "block") || !strcmp(key, "requested")) {
		if (size_parse(val, &size)) {
			pr_err("--mem-hotplug=%s: %s: not a size above 0 "
			       "(examples: 2M, 128M, 1G)", arg, key);
			return -EINVAL;
		}
		*(key[0] == 'b' ? &cfg->mem_block : &cfg->mem_requested) = size;
		return 0;
	}
	if (!strcmp(key, "transport")) {
		if (transport_parse(val, &cfg->mem_transport))
			return 0;
		pr_err("--mem-hotplug=%s: transport must be pci or mmio", arg);
		return -EINVAL;
	}
	pr_err("--mem-hotplug=%s: unknown key \"%s\" (expected block, "
	       "requested or transport)", arg, key);
	return -EINVAL;
}

/* SIZE[,block=SIZE][,requested=SIZE][,transport=pci|mmio]: the region,
 * in whole blocks of a power of two of at least the host's huge page. */
static int parse_mem_hotplug(const char *arg, struct machine_config *cfg)
{
	uint64_t block, huge = guest_ram_align();
	const char *keys = strchr(arg, ',');
	char size_s[32], huge_s[32];
	uint64_t size;
	int err;

	if (cfg->vm.hotplug_size) {
		pr_err("--mem-hotplug: given twice (one region per VM)");
		return -EINVAL;
	}
	snprintf(size_s, sizeof(size_s), "%.*s",
		 (int)(keys ? keys - arg : (long)strlen(arg)), arg);
	if (size_parse(size_s, &size) || size > MAX_RAM) {
		pr_err("--mem-hotplug=%s: SIZE: expected a size from 1 MiB to "
		       "%llu TiB (examples: 1G, 4096; a bare number is MiB)",
		       arg, MAX_RAM >> 40);
		return -EINVAL;
	}
	err = keys ? parse_key_list("--mem-hotplug", keys + 1, parse_mem_key,
				    &(struct mem_keys){ cfg, arg }) : 0;
	if (err)
		return err;
	block = cfg->mem_block ?: huge;
	size_format(huge, huge_s, sizeof(huge_s));
	if (block < huge || block & (block - 1)) {
		pr_err("--mem-hotplug=%s: block must be a power of two of at "
		       "least %s, the host's huge page", arg, huge_s);
		return -EINVAL;
	}
	if (size % block || cfg->mem_requested % block ||
	    cfg->mem_requested > size) {
		pr_err("--mem-hotplug=%s: SIZE and requested must be whole "
		       "blocks of %s, requested at most SIZE", arg,
		       size_format(block, size_s, sizeof(size_s)));
		return -EINVAL;
	}
	cfg->vm.hotplug_size = size;
	return 0;
}

/* lkvm's --console: the serial port (the default) or a virtio-console;
 * the last one given counts, as in lkvm. */
static int parse_console(const char *arg, struct machine_config *cfg)
{
	if (!strcmp(arg, "serial") || !strcmp(arg, "virtio")) {
		cfg->virtio_console = !strcmp(arg, "virtio");
		return 0;
	}
	if (!strcmp(arg, "hv"))
		pr_err("lkvm's --console hv is not supported by thpvm (it is "
		       "for powerpc; use serial or virtio)");
	else
		pr_err("--console %s: expected serial or virtio", arg);
	return -EINVAL;
}

/* lkvm's --loglevel names thpvm's levels. */
static int parse_loglevel(const char *arg)
{
	static const char *const names[] = {
		[LOG_ERR] = "error", [LOG_WARN] = "warning",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(arg, names[i])) {
			log_max_level = (enum log_level)i;
			return 0;
		}
	}
	pr_err("--loglevel %s: expected error, warning, info or debug", arg);
	return -EINVAL;
}

static int parse_option(int opt, const char *arg, struct run_options *opts)
{
	struct machine_config *cfg = &opts->machine;
	unsigned long n;

	switch (opt) {
	case 'k':
		cfg->kernel_path = arg;
		return 0;
	case 'i':
		cfg->initrd_path = arg;
		return 0;
	case 'p':
		opts->params = arg;
		return 0;
	case 'm':
		return parse_ram(arg, &cfg->vm.ram_size);
	case 'c':
		if (uint_parse(arg, arch_max_vcpus(), &n) || n == 0) {
			pr_err("-c %s: expected a number of vCPUs from 1 to %u",
			       arg, arch_max_vcpus());
			return -EINVAL;
		}
		cfg->vm.nr_vcpus = n;
		return 0;
	case 'd':
		return parse_disk(arg, cfg);
	case 'n':
		return parse_net(arg, cfg);
	case OPT_BALLOON:
		return parse_balloon(arg, cfg);
	case OPT_MEM_HOTPLUG:
		return parse_mem_hotplug(arg, cfg);
	case OPT_NAME:
		if (!control_path_name_valid(arg)) {
			pr_err("--name %s: use 1 to %d letters, digits, '.', "
			       "'_' or '-', not starting with '.' or '-'",
			       arg, VM_NAME_MAX);
			return -EINVAL;
		}
		snprintf(cfg->vm.name, sizeof(cfg->vm.name), "%s", arg);
		return 0;
	case OPT_HUGETLBFS:
		cfg->vm.hugetlbfs_dir = arg;
		cfg->vm.ram_backing = RAM_BACKING_HUGETLBFS;
		return 0;
	case OPT_NO_THP:
		cfg->vm.ram_backing = RAM_BACKING_NO_THP;
		return 0;
	case OPT_BOOT:
		return parse_boot_entry(arg, &cfg->boot_entry);
	case OPT_JSON:
		opts->json = true;
		return 0;
	case OPT_DUMP_DTB:
		cfg->dump_dtb = arg;
		return 0;
	case OPT_NO_ACPI:
		cfg->no_acpi = true;
		return 0;
	case OPT_CONSOLE_FILTER:
		cfg->vm.console_filter = true;
		return 0;
	case OPT_VIRTIO_TRANSPORT:
		if (transport_parse(arg, &cfg->virtio_transport))
			return 0;
		pr_err("--virtio-transport %s: expected pci or mmio", arg);
		return -EINVAL;
	case OPT_CONTROL_SOCKET:
		if (!arg[0] || strlen(arg) >= CONTROL_PATH_MAX) {
			pr_err("--control-socket: expected a path of 1 to %zu "
			       "bytes", CONTROL_PATH_MAX - 1);
			return -EINVAL;
		}
		opts->control_socket = arg;
		return 0;
	case OPT_NO_CONTROL:
		opts->no_control = true;
		return 0;
	case OPT_DETACH:
		opts->detach = true;
		return 0;
	case OPT_SECCOMP:
		if (strcmp(arg, "on") && strcmp(arg, "off")) {
			pr_err("--seccomp %s: expected on or off", arg);
			return -EINVAL;
		}
		opts->no_seccomp = !strcmp(arg, "off");
		return 0;
	case OPT_USER:
		opts->user = arg;
		return 0;
	case OPT_CONSOLE_SOCKET:
		if (!arg[0] || strlen(arg) >= CONTROL_PATH_MAX) {
			pr_err("--console-socket: expected a path of 1 to %zu "
			       "bytes", CONTROL_PATH_MAX - 1);
			return -EINVAL;
		}
		opts->console_socket = arg;
		return 0;
	case OPT_NODEFAULTS:
		opts->nodefaults = true;
		return 0;
	case OPT_CONSOLE:
		return parse_console(arg, cfg);
	case OPT_RNG:
		return parse_rng(arg, cfg);
	case OPT_LOGLEVEL:
		return parse_loglevel(arg);
	case 'v':
	case OPT_DEBUG:		/* lkvm's older spelling of it */
		log_max_level = LOG_DEBUG;
		return 0;
	default:
		return -EINVAL;
	}
}

/* As kvmtool does: a Linux kernel gets -p after the arch's defaults
 * (its console on the arch's UART, or hvc0 with --console virtio),
 * unless --nodefaults; the test guest reads its own keys and gets -p
 * alone. */
static int cmdline_build(struct run_options *opts)
{
	const struct machine_config *cfg = &opts->machine;
	const char *params = opts->params ? opts->params : "";
	int n;

	if (!cfg->kernel_path || opts->nodefaults)
		n = snprintf(opts->cmdline, sizeof(opts->cmdline), "%s",
			     params);
	else
		n = snprintf(opts->cmdline, sizeof(opts->cmdline),
			     "console=%s %s%s%s", cfg->virtio_console ?
			     "hvc0" : arch_linux_uart, arch_linux_params,
			     params[0] ? " " : "", params);
	if (n >= (int)sizeof(opts->cmdline)) {
		pr_err("-p: the kernel command line would be %d bytes long; "
		       "thpvm takes at most %d", n, RUN_CMDLINE_MAX - 1);
		return -E2BIG;
	}
	opts->machine.cmdline = opts->cmdline;
	return 0;
}

/* An option getopt does not know (getopt's optopt has its letter, or 0
 * for a long one): lkvm's are named as such. */
static void unknown_option(const char *arg)
{
	char letter[3] = { '-', (char)optopt, 0 };
	const char *lkvm = lkvm_run_option_find(optopt ? NULL : arg, optopt);

	if (lkvm)
		pr_err("lkvm's %s is not supported by thpvm", lkvm);
	else
		pr_err("run: unknown option %s (see thpvm run --help)",
		       optopt ? letter : arg);
}

enum run_parse_result run_options_parse(int argc, char **argv,
					struct run_options *opts)
{
	struct machine_config *cfg = &opts->machine;
	bool no_thp = false;
	int opt;

	memset(opts, 0, sizeof(*opts));
	cfg->vm.ram_size = VM_DEFAULT_RAM;
	cfg->vm.nr_vcpus = 1;
	cfg->vm.ram_backing = RAM_BACKING_THP;
	cfg->vm.console_fd = STDOUT_FILENO;
	snprintf(cfg->vm.name, sizeof(cfg->vm.name), "guest-%d", (int)getpid());

	optind = 0;	/* full re-initialisation of getopt */
	opterr = 0;
	/* '+': options end at the first argument; ':': a missing value
	 * ends in ':', an unknown option in '?'. */
	while ((opt = getopt_long(argc, argv, "+:k:i:p:m:c:d:n:vh",
				  long_options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(run_usage, stdout);
			return RUN_PARSE_HELP;
		}
		if (opt == ':') {
			pr_err("run: missing value for %s (see thpvm run "
			       "--help)", argv[optind - 1]);
			return RUN_PARSE_ERROR;
		}
		if (opt == '?') {
			unknown_option(argv[optind - 1]);
			return RUN_PARSE_ERROR;
		}
		if (opt == OPT_NO_THP)
			no_thp = true;
		if (parse_option(opt, optarg, opts))
			return RUN_PARSE_ERROR;
	}
	if (optind < argc) {
		pr_err("run: unexpected argument \"%s\"", argv[optind]);
		return RUN_PARSE_ERROR;
	}
	if (no_thp && cfg->vm.hugetlbfs_dir) {
		pr_err("--no-thp and --hugetlbfs exclude each other");
		return RUN_PARSE_ERROR;
	}
	if (opts->no_control && opts->control_socket) {
		pr_err("--control-socket and --no-control exclude each other");
		return RUN_PARSE_ERROR;
	}
	if (opts->detach && opts->no_control) {
		pr_err("--detach needs the control socket (thpvm stop and "
		       "thpvm console find the VM through it): drop "
		       "--no-control");
		return RUN_PARSE_ERROR;
	}
	return cmdline_build(opts) ? RUN_PARSE_ERROR : RUN_PARSE_OK;
}
