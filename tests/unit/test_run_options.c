/* `thpvm run` option parsing. */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/lkvm_options.h"
#include "cli/run_options.h"
#include "cli/share_options.h"
#include "core/arch.h"
#include "lib/host_mem.h"
#include "lib/log.h"
#include "lib/util.h"
#include "unit.h"

#define ARGV(...) ((char *[]){ "run", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "run", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(cfg, ...) run_options_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), cfg)

/* The command line a Linux kernel gets by default, with console (NULL:
 * the arch's UART), as it is spelled out for the user. */
static const char *linux_defaults(const char *console)
{
	static char line[256];

	snprintf(line, sizeof(line), "console=%s %s",
		 console ? console : arch_linux_uart, arch_linux_params);
	return line;
}

static void test_defaults(void)
{
	struct run_options cfg;
	char *argv[] = { "run", NULL };

	CHECK_EQ(run_options_parse(1, argv, &cfg), RUN_PARSE_OK);
	CHECK(cfg.machine.kernel_path == NULL);
	CHECK_EQ(cfg.machine.vm.ram_size, VM_DEFAULT_RAM);
	CHECK_EQ(cfg.machine.vm.nr_vcpus, 1);
	CHECK_EQ(cfg.machine.vm.ram_backing, RAM_BACKING_THP);
	CHECK_STR(arch_boot_entries[cfg.machine.boot_entry], "auto");
	CHECK(!cfg.json);
	CHECK_STR(cfg.machine.cmdline, "");
	CHECK(!strncmp(cfg.machine.vm.name, "guest-", 6));
	CHECK_EQ(cfg.machine.net.mode, NET_NONE);
	CHECK(!cfg.machine.balloon);
	CHECK(!cfg.machine.rng);
}

static void test_all_options(void)
{
	/* An entry other than auto, where the arch has one. */
	unsigned entry = arch_boot_entries[1] ? 1 : 0;
	/* More than one vCPU, where the arch can have more. */
	unsigned cpus = MIN(2u, arch_max_vcpus());
	char cpus_arg[8];
	struct run_options cfg;

	snprintf(cpus_arg, sizeof(cpus_arg), "%u", cpus);
	/* 64M: -m is checked against the host's RAM, and the emulated
	 * arm64 host that runs these tests too has 1 GiB. */
	CHECK_EQ(PARSE(&cfg, "-k", "bz", "-i", "rd", "-p", "a b", "-m", "64M",
		       "-c", cpus_arg, "--name", "vm.1", "--no-thp", "--boot",
		       (char *)arch_boot_entries[entry], "--json",
		       "--dump-dtb", "tree.dtb", "--no-acpi"),
		 RUN_PARSE_OK);
	CHECK_STR(cfg.machine.kernel_path, "bz");
	CHECK_STR(cfg.machine.initrd_path, "rd");
	CHECK(cfg.machine.cmdline &&
	      !strcmp(cfg.machine.cmdline + strlen(linux_defaults(NULL)),
		      " a b"));
	CHECK_EQ(cfg.machine.vm.ram_size, 64ULL << 20);
	CHECK_EQ(cfg.machine.vm.nr_vcpus, cpus);
	CHECK_STR(cfg.machine.vm.name, "vm.1");
	CHECK_EQ(cfg.machine.vm.ram_backing, RAM_BACKING_NO_THP);
	CHECK_EQ(cfg.machine.boot_entry, entry);
	CHECK(cfg.json);
	CHECK_STR(cfg.machine.dump_dtb, "tree.dtb");
	CHECK(cfg.machine.no_acpi);
	CHECK_EQ(PARSE(&cfg, "-k", "bz"), RUN_PARSE_OK);
	CHECK(!cfg.machine.no_acpi);
}

/* -p comes after the arch's defaults for a Linux kernel, as in kvmtool;
 * --nodefaults leaves them out; the test guest gets -p alone. */
static void test_linux_default_params(void)
{
	static char long_params[RUN_CMDLINE_MAX + 1];
	char want[512];
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "-k", "vmlinuz"), RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, linux_defaults(NULL));
	snprintf(want, sizeof(want), "console=%s ", arch_linux_uart);
	CHECK(!strncmp(cfg.machine.cmdline, want, strlen(want)));
	CHECK_EQ(PARSE(&cfg, "-k", "vmlinuz", "-p", ""), RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, linux_defaults(NULL));
	snprintf(want, sizeof(want), "%s root=/dev/vda",
		 linux_defaults(NULL));
	CHECK_EQ(PARSE(&cfg, "-p", "root=/dev/vda", "-k", "vmlinuz"),
		 RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, want);
	CHECK_EQ(PARSE(&cfg, "-k", "vmlinuz", "--nodefaults", "-p",
		       "root=/dev/vda"), RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, "root=/dev/vda");
	CHECK_EQ(PARSE(&cfg, "-k", "vmlinuz", "--nodefaults"), RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, "");
	CHECK_EQ(PARSE(&cfg, "-p", "serve"), RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, "serve");
	/* --console virtio: the console is hvc0, the early one the arch's
	 * (in arch_linux_params). */
	snprintf(want, sizeof(want), "%s quiet", linux_defaults("hvc0"));
	CHECK_EQ(PARSE(&cfg, "-k", "vmlinuz", "--console", "virtio", "-p",
		       "quiet"), RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, want);
	CHECK(!strncmp(cfg.machine.cmdline, "console=hvc0 ", 13) &&
	      strstr(cfg.machine.cmdline, arch_linux_params));
	CHECK_EQ(PARSE(&cfg, "--console", "virtio", "-p", "serve"),
		 RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, "serve");
	CHECK_EQ(PARSE(&cfg, "-k", "vmlinuz", "--console", "virtio",
		       "--nodefaults", "-p", "x"), RUN_PARSE_OK);
	CHECK_STR(cfg.machine.cmdline, "x");
	/* A line that does not fit is refused, not cut. */
	memset(long_params, 'x', RUN_CMDLINE_MAX);
	CHECK_EQ(PARSE(&cfg, "-p", long_params), RUN_PARSE_ERROR);
	long_params[RUN_CMDLINE_MAX - 1] = '\0';
	CHECK_EQ(PARSE(&cfg, "-p", long_params), RUN_PARSE_OK);
	CHECK_EQ(PARSE(&cfg, "-k", "vmlinuz", "-p", long_params),
		 RUN_PARSE_ERROR);
}

static void test_ram_rounding_and_limits(void)
{
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "-m", "33M"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.vm.ram_size, 34ULL << 20);
	CHECK_EQ(PARSE(&cfg, "-m", "1M"), RUN_PARSE_ERROR);
	/* A bare number is MiB, as for lkvm and QEMU. */
	CHECK_EQ(PARSE(&cfg, "-m", "256"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.vm.ram_size, 256ULL << 20);
	CHECK_EQ(PARSE(&cfg, "-m", "268435456B"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.vm.ram_size, 256ULL << 20);
	CHECK_EQ(PARSE(&cfg, "-m", "256B"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-m", "abc"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-m", "5T"), RUN_PARSE_ERROR);
}

/* Whether the help says words, wherever its lines wrap them. */
static bool help_says(const char *words)
{
	static char flat[16384];
	const char *s = run_usage();
	size_t n = 0;

	/* Each run of spaces and newlines as one space. */
	for (; *s && n < sizeof(flat) - 1; s++)
		if (!isspace((unsigned char)*s) || (n && flat[n - 1] != ' '))
			flat[n++] = isspace((unsigned char)*s) ? ' ' : *s;
	flat[n] = '\0';
	return strstr(flat, words);
}

/* One range per option, checked when parsing and stated in --help. */
static void test_ranges_in_help(void)
{
	char n[16], figure[64], big[32];
	struct run_options cfg;
	uint64_t host = host_memory_size();

	snprintf(n, sizeof(n), "%u", arch_max_vcpus());
	CHECK_EQ(PARSE(&cfg, "-c", n), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.vm.nr_vcpus, arch_max_vcpus());
	snprintf(n, sizeof(n), "%u", arch_max_vcpus() + 1);
	CHECK_EQ(PARSE(&cfg, "-c", n), RUN_PARSE_ERROR);
	snprintf(figure, sizeof(figure), "(default 1): 1 to %u",
		 arch_max_vcpus());
	CHECK(help_says(figure));
	CHECK(help_says("16 MiB to 1 TiB,"));
	CHECK_EQ(VM_MIN_RAM, 16ULL << 20);
	CHECK_EQ(PARSE(&cfg, "-m", "16M"), RUN_PARSE_OK);
	CHECK_EQ(PARSE(&cfg, "-m", "15M"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-m", "1025G"), RUN_PARSE_ERROR);
	/* More than this host has: refused before any guest runs. */
	snprintf(big, sizeof(big), "%lluM",
		 (unsigned long long)(host >> 20) + 2);
	CHECK(host > 0);
	if (host < (1ULL << 40))
		CHECK_EQ(PARSE(&cfg, "-m", big), RUN_PARSE_ERROR);
}

/* The help is made from the option table: each line fits 79 columns,
 * and what the arch offers is there, what it does not is not. */
static void test_help_text(void)
{
	const char *usage = run_usage(), *line;
	char words[128];

	CHECK(!strncmp(usage, "usage: thpvm run [options]\n", 27));
	for (line = usage; *line; line += strcspn(line, "\n") + 1)
		CHECK(strcspn(line, "\n") <= 79);
	CHECK(strstr(usage, "\n  -k, --kernel IMAGE     a Linux kernel: "));
	CHECK(strstr(usage, "\n      --rng[=OPTIONS]    a virtio-rng"));
	CHECK(strstr(usage, "\n  -h, --help             show this help\n"));
	/* Other spellings are named in their option's help only. */
	CHECK(!strstr(usage, "\n      --daemonize"));
	CHECK(help_says("(QEMU's --daemonize too)"));
	snprintf(words, sizeof(words), "a Linux kernel: %s",
		 arch_facts.kernel_images);
	CHECK(help_says(words));
	snprintf(words, sizeof(words), "\"console=%s %s\"", arch_linux_uart,
		 arch_linux_params);
	CHECK(help_says(words));
	CHECK(!strstr(usage, "\n      --mem-hotplug ") ==
	      !arch_facts.mem_hotplug);
	CHECK(!strstr(usage, "\n      --dump-dtb FILE") ==
	      !arch_facts.device_tree);
	CHECK(!strstr(usage, "\n      --no-acpi ") == !arch_facts.no_acpi);
	CHECK(!help_says("an MMIO device is described") ==
	      !arch_facts.mmio_discovery);
	CHECK(strstr(usage, "\nlkvm's spellings") <
	      strstr(usage, "\n      --nodefaults "));
}

static void test_rejects(void)
{
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "-c", "0"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-c", "x"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-c", "100000"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--name", "../x"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--name", ""), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--boot", "32"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--bogus"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-m"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "extra"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--no-thp", "--hugetlbfs", "/mnt"),
		 RUN_PARSE_ERROR);
}

/* Each refusal is said once: one error, naming the option. */
static void test_one_error_each(void)
{
	static const char *const bad[][3] = {
		{ "-c", "0" }, { "-m", "12Q" }, { "--mem", "1M" },
		{ "--boot", "32" }, { "--seccomp", "maybe" },
		{ "--virtio-transport", "usb" }, { "--balloon=stats=x" },
		{ "--balloon=reporting=yes" }, { "--balloon=policy=lazy" },
		{ "--balloon=nosuch=1" }, { "--balloon=stats" },
		{ "--rng=transport=ccw" }, { "--rng=bytes_per_sec=0" },
		{ "--mem-hotplug=x" }, { "--mem-hotplug=1G,block=x" },
		{ "--mem-hotplug=1G,transport=isa" }, { "-n", "mode=bridge" },
		{ "-n", "mode=user,hostfwd=tcp::22" },
		{ "-n", "mode=user,hostfwd=tcp::22-:22,hostfwd=tcp::22-:23" },
		{ "-n", "mode=tap,restrict=on" },
		{ "-n", "mode=tap,mac=01:00:5e:00:00:01" },
		{ "-d", "img,queues=9" }, { "-d", "img,rw" },
		{ "--name", "../x" }, { "--control-socket", "" },
		{ "--console", "tty" }, { "--loglevel", "loud" },
		{ "--rng", "--rng" }, { "--no-thp", "--hugetlbfs", "/mnt" },
		{ "--hugetlbfs", "/mnt", "--no-thp" }, { "--bogus" },
		{ "-m" }, { "extra" }, { "--9p", "/nonexistent-thpvm,tag" },
		{ "--9p", "/" }, { "--9p", "/,tag,rw" }, { "-d", "/,queues=2" },
	};
	struct run_options cfg;
	unsigned i, errors;
	char *argv[5];
	int argc;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		argv[0] = "run";
		for (argc = 1; argc < 4 && bad[i][argc - 1]; argc++)
			argv[argc] = (char *)bad[i][argc - 1];
		argv[argc] = NULL;
		errors = log_error_count();
		CHECK_EQ(run_options_parse(argc, argv, &cfg), RUN_PARSE_ERROR);
		CHECK_EQ(log_error_count() - errors, 1);
	}
}

static void test_network(void)
{
	static const uint8_t want[ETH_ALEN] = { 0x02, 0xab, 0, 0x10, 0xff, 1 };
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "-n",
		       "mode=tap,tapif=tgtap0,mac=02:AB:00:10:ff:01"),
		 RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.net.mode, NET_TAP);
	CHECK_STR(cfg.machine.net.tapif, "tgtap0");
	CHECK(!memcmp(cfg.machine.net.mac, want, ETH_ALEN));

	/* Default: no name (the kernel picks one), 52:54:00:xx:xx:xx. */
	CHECK_EQ(PARSE(&cfg, "--network", "mode=tap"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.net.mode, NET_TAP);
	CHECK_STR(cfg.machine.net.tapif, "");
	CHECK_EQ(cfg.machine.net.mac[0], 0x52);
	CHECK_EQ(cfg.machine.net.mac[1], 0x54);
	CHECK_EQ(cfg.machine.net.mac[2], 0x00);

	CHECK_EQ(PARSE(&cfg, "-n", "mode=user"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.net.mode, NET_USER);
	CHECK_EQ(cfg.machine.net.mac[0], 0x52);
	CHECK_EQ(ntohl(cfg.machine.net.user.net.s_addr), 0x0a000200);
	CHECK_EQ(cfg.machine.net.user.prefix, 24);
	CHECK_EQ(cfg.machine.net.user.nr_fwds, 0);
	CHECK(!cfg.machine.net.user.restricted);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=user,net=192.168.5.0/24,restrict=on,"
		       "hostfwd=tcp::2222-:22,hostfwd=udp:127.0.0.1:53-:53,"
		       "mac=02:00:00:00:00:01,transport=pci"), RUN_PARSE_OK);
	CHECK_EQ(ntohl(cfg.machine.net.user.net.s_addr), 0xc0a80500);
	CHECK(cfg.machine.net.user.restricted);
	CHECK_EQ(cfg.machine.net.user.nr_fwds, 2);
	CHECK(cfg.machine.net.user.fwds[1].udp);
	CHECK_EQ(cfg.machine.net.user.fwds[1].host_port, 53);
	CHECK_EQ(cfg.machine.net.mac[5], 1);
	CHECK_EQ(cfg.machine.net.transport, VIRTIO_TRANSPORT_PCI);

	CHECK_EQ(PARSE(&cfg, "-n", "mode=none"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.net.mode, NET_NONE);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap", "-n", "mode=none"),
		 RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.net.mode, NET_NONE);
}

/* head, then tail again and again: a KEY=VALUE list of 1100 bytes. */
static char *long_list(const char *head, const char *tail)
{
	static char buf[1200];
	size_t len = strlen(head), n = strlen(tail);

	memcpy(buf, head, len);
	while (len + n < 1100) {
		memcpy(buf + len, tail, n);
		len += n;
	}
	buf[len] = '\0';
	return buf;
}

static void test_network_rejects(void)
{
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "-n", "tapif=x"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", ""), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=bridge"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=user,tapif=x"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,net=10.0.2.0/24"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=user,net=10.0.2.0/31"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=user,restrict=1"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=user,hostfwd=tcp::22-10.9.9.9:22"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=user", "-n", "mode=tap"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,bogus=1"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,tapif"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,tapif="), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,tapif=a/b"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,tapif=0123456789abcdef"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,mac=52:54:00:12:34"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,mac=52:54:00:12:34:56:78"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,mac=52:54:00:12:34:5g"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,mac=525400123456"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,mac=00:00:00:00:00:00"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,mac=01:00:5e:00:00:01"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=none,tapif=x"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap", "-n", "mode=tap"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n"), RUN_PARSE_ERROR);
	/* Longer than the list parser's copy holds. */
	CHECK_EQ(PARSE(&cfg, "-n", long_list("mode=tap", ",tapif=x")),
		 RUN_PARSE_ERROR);
}

static void test_balloon(void)
{
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "--balloon"), RUN_PARSE_OK);
	CHECK(cfg.machine.balloon);
	CHECK_EQ(cfg.machine.balloon_opts.stats_interval, BALLOON_DEFAULT_STATS_INTERVAL);
	CHECK(cfg.machine.balloon_opts.deflate_on_oom);
	CHECK(!cfg.machine.balloon_opts.reporting);
	CHECK(cfg.machine.balloon_opts.cont_pages);
	CHECK_EQ(cfg.machine.balloon_opts.policy, BALLOON_EAGER);

	CHECK_EQ(PARSE(&cfg, "--balloon=stats=0,deflate_on_oom=off,"
		       "reporting=on,cont_pages=off,policy=preserve"),
		 RUN_PARSE_OK);
	CHECK(cfg.machine.balloon);
	CHECK_EQ(cfg.machine.balloon_opts.stats_interval, 0);
	CHECK(!cfg.machine.balloon_opts.deflate_on_oom);
	CHECK(cfg.machine.balloon_opts.reporting);
	CHECK(!cfg.machine.balloon_opts.cont_pages);
	CHECK_EQ(cfg.machine.balloon_opts.policy, BALLOON_PRESERVE);

	CHECK_EQ(PARSE(&cfg, "--balloon=stats=3600"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.balloon_opts.stats_interval, 3600);
	CHECK_EQ(cfg.machine.balloon_opts.policy, BALLOON_EAGER);
}

static void test_balloon_rejects(void)
{
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "--balloon=stats=3601"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=stats=-1"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=stats=5s"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=reporting=yes"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=policy=lazy"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=size=1G"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=reporting"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon="), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=stats=1,"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon", "--balloon"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, long_list("--balloon=stats=1", ",stats=1")),
		 RUN_PARSE_ERROR);
	/* An optional argument only attaches with '='. */
	CHECK_EQ(PARSE(&cfg, "--balloon", "stats=1"), RUN_PARSE_ERROR);
}

/* --rng as lkvm writes it, or with a rate (bytes, or a size) and a
 * transport. */
static void test_rng(void)
{
	struct run_options cfg;
	const struct machine_config *m = &cfg.machine;

	CHECK_EQ(PARSE(&cfg, "--rng"), RUN_PARSE_OK);
	CHECK(m->rng);
	CHECK_EQ(m->rng_bytes_per_sec, RNG_DEFAULT_BYTES_PER_SEC);
	CHECK_EQ(m->rng_transport, VIRTIO_TRANSPORT_DEFAULT);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=4096,transport=pci"),
		 RUN_PARSE_OK);
	CHECK_EQ(m->rng_bytes_per_sec, 4096);
	CHECK_EQ(m->rng_transport, VIRTIO_TRANSPORT_PCI);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=64K"), RUN_PARSE_OK);
	CHECK_EQ(m->rng_bytes_per_sec, 64 << 10);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=1"), RUN_PARSE_OK);
	CHECK_EQ(m->rng_bytes_per_sec, 1);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=64M,transport=pci"),
		 RUN_PARSE_OK);
	CHECK_EQ(m->rng_bytes_per_sec, RNG_MAX_BYTES_PER_SEC);
	CHECK_EQ(m->rng_transport, VIRTIO_TRANSPORT_PCI);
}

static void test_rng_rejects(void)
{
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=0"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=67108865"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=65M"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=fast"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng=bytes_per_sec=-1"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng=transport=usb"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng=rate=1K"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng="), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--rng", "--rng"), RUN_PARSE_ERROR);
	/* An optional argument only attaches with '='. */
	CHECK_EQ(PARSE(&cfg, "--rng", "bytes_per_sec=1K"), RUN_PARSE_ERROR);
}

/* PCI unless said otherwise: for all devices, or one by one. */
static void test_transports(void)
{
	struct run_options cfg;
	const struct machine_config *m = &cfg.machine;

	CHECK_EQ(PARSE(&cfg, "-d", "a.img"), RUN_PARSE_OK);
	CHECK_EQ(m->virtio_transport, VIRTIO_TRANSPORT_DEFAULT);
	CHECK_EQ(m->disks[0].transport, VIRTIO_TRANSPORT_DEFAULT);
	CHECK_EQ(PARSE(&cfg, "-d", "mmio"), RUN_PARSE_OK);	/* a path */
	CHECK_STR(m->disks[0].path, "mmio");
	if (!arch_facts.mmio_discovery)
		return;		/* test_transport_the_arch_lacks */
	CHECK_EQ(PARSE(&cfg, "--virtio-transport", "mmio", "-d", "a.img,ro,pci",
		       "-d", "c.img,mmio,direct", "-n",
		       "mode=tap,transport=mmio", "--balloon=transport=pci"),
		 RUN_PARSE_OK);
	CHECK_EQ(m->virtio_transport, VIRTIO_TRANSPORT_MMIO);
	CHECK_STR(m->disks[0].path, "a.img");
	CHECK(m->disks[0].opts.disk.read_only);
	CHECK_EQ(m->disks[0].transport, VIRTIO_TRANSPORT_PCI);
	CHECK_STR(m->disks[1].path, "c.img");
	CHECK(m->disks[1].opts.disk.direct);
	CHECK_EQ(m->disks[1].transport, VIRTIO_TRANSPORT_MMIO);
	CHECK_EQ(m->net.transport, VIRTIO_TRANSPORT_MMIO);
	CHECK_EQ(m->balloon_transport, VIRTIO_TRANSPORT_PCI);
	CHECK_EQ(PARSE(&cfg, "--virtio-transport", "virtio"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=tap,transport=ccw"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-n", "mode=none,transport=mmio"),
		 RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--balloon=transport=isa"), RUN_PARSE_ERROR);
}

/* What parsing argv wrote to stderr (its result in *res), or NULL. */
static char *parse_messages(char **argv, enum run_parse_result *res)
{
	static char text[1024];
	int argc = 0, saved = dup(STDERR_FILENO);
	FILE *f = tmpfile();
	size_t n;

	while (argv[argc])
		argc++;
	if (saved < 0 || !f)
		return NULL;
	dup2(fileno(f), STDERR_FILENO);
	*res = run_options_parse(argc, argv, &(struct run_options){ 0 });
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* Zero is a size out of -m's range, said as any other is. */
static void test_ram_zero_out_of_range(void)
{
	static char *zero[] = { "run", "-m", "0", NULL };
	static char *eight[] = { "run", "-m", "8", NULL };
	static const char range[] = ": expected a size from 16 MiB to 1 TiB";
	enum run_parse_result res;
	char *text;

	text = parse_messages(zero, &res);
	CHECK_EQ(res, RUN_PARSE_ERROR);
	CHECK(text && strstr(text, range));
	text = parse_messages(eight, &res);
	CHECK_EQ(res, RUN_PARSE_ERROR);
	CHECK(text && strstr(text, range));
}

/* An arch without virtio-mmio (powerpc) refuses it when the options are
 * parsed, naming the arch, whichever device asks; the others take it. */
static void test_transport_the_arch_lacks(void)
{
	static char *asks[][3] = {
		{ "run", "--virtio-transport", "mmio" },
		{ "run", "-d", "a.img,mmio" },
		{ "run", "-n", "mode=tap,transport=mmio" },
		{ "run", "--balloon=transport=mmio" },
		{ "run", "--rng=transport=mmio" },
		{ "run", "--mem-hotplug=1G,transport=mmio" },
	};
	enum run_parse_result res;
	char want[64], *argv[4], *text;
	unsigned i, errors;

	snprintf(want, sizeof(want), "%s has no virtio-mmio; use pci",
		 arch_facts.name);
	for (i = 0; i < ARRAY_SIZE(asks); i++) {
		memcpy(argv, asks[i], sizeof(asks[i]));
		argv[3] = NULL;
		errors = log_error_count();
		text = parse_messages(argv, &res);
		CHECK(text);
		if (!text)
			continue;
		if (arch_facts.mmio_discovery) {
			CHECK_EQ(res, RUN_PARSE_OK);
			CHECK(!strstr(text, "virtio-mmio"));
			continue;
		}
		CHECK_EQ(res, RUN_PARSE_ERROR);
		CHECK_EQ(log_error_count() - errors, 1);
		CHECK(strstr(text, want));
	}
}

/* lkvm's run options: taken where thpvm has them, else refused. */
static void test_lkvm_spellings(void)
{
	enum log_level was = log_max_level;
	struct run_options cfg;

	CHECK_EQ(PARSE(&cfg, "--nodefaults", "--console", "serial"),
		 RUN_PARSE_OK);
	CHECK(cfg.nodefaults);
	CHECK_EQ(PARSE(&cfg, "--console=serial"), RUN_PARSE_OK);
	CHECK(!cfg.nodefaults);
	CHECK(!cfg.machine.virtio_console);
	CHECK_EQ(PARSE(&cfg, "--console", "virtio"), RUN_PARSE_OK);
	CHECK(cfg.machine.virtio_console);
	/* The last one counts. */
	CHECK_EQ(PARSE(&cfg, "--console", "virtio", "--console=serial"),
		 RUN_PARSE_OK);
	CHECK(!cfg.machine.virtio_console);
	CHECK_EQ(PARSE(&cfg, "--loglevel", "error"), RUN_PARSE_OK);
	CHECK_EQ(log_max_level, LOG_ERR);
	CHECK_EQ(PARSE(&cfg, "--loglevel=warning"), RUN_PARSE_OK);
	CHECK_EQ(log_max_level, LOG_WARN);
	CHECK_EQ(PARSE(&cfg, "--loglevel", "debug"), RUN_PARSE_OK);
	CHECK_EQ(log_max_level, LOG_DEBUG);
	CHECK_EQ(PARSE(&cfg, "--loglevel", "info"), RUN_PARSE_OK);
	CHECK_EQ(log_max_level, LOG_INFO);
	CHECK_EQ(PARSE(&cfg, "--debug"), RUN_PARSE_OK);
	CHECK_EQ(log_max_level, LOG_DEBUG);
	log_max_level = LOG_ERR;	/* quiet for the refusals below */
	CHECK_EQ(PARSE(&cfg, "--loglevel", "verbose"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--console", "hv"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--console", "tty"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--vnc"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-f", "fw.bin"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--sandbox=x.sh"), RUN_PARSE_ERROR);
	log_max_level = was;
}

/* Which unknown arguments are lkvm's, and how lkvm spells them. */
static void test_lkvm_option_find(void)
{
	/* A thpvm option now: getopt knows it. */
	CHECK(!lkvm_run_option_find("--9p=/srv,share", 0));
	CHECK_STR(lkvm_run_option_find("--vnc", 0), "--vnc");
	CHECK_STR(lkvm_run_option_find("--firmware=fw.bin", 0),
		  "-f/--firmware");
	CHECK_STR(lkvm_run_option_find(NULL, 'F'), "-F/--flash");
	CHECK_STR(lkvm_run_option_find("--vfio-pci", 0), "--vfio-pci");
	CHECK_STR(lkvm_run_option_find("--force-pci", 0), "--force-pci");
	CHECK(!lkvm_run_option_find("--vncx", 0));
	CHECK(!lkvm_run_option_find("--vn", 0));
	CHECK(!lkvm_run_option_find("--", 0));
	CHECK(!lkvm_run_option_find("vnc", 0));
	CHECK(!lkvm_run_option_find(NULL, 'q'));
	CHECK(!lkvm_run_option_find(NULL, 0));
}

/* parse_messages with argv's options after "run". */
static char *messages_of(const char *a, const char *b, const char *c,
			 enum run_parse_result *res)
{
	char *argv[] = { "run", (char *)a, (char *)b, (char *)c, NULL };

	return parse_messages(argv, res);
}

/* An error said once, holding want. */
static void check_refused(const char *a, const char *b, const char *want)
{
	unsigned errors = log_error_count();
	enum run_parse_result res;
	char *text = messages_of(a, b, NULL, &res);

	CHECK_EQ(res, RUN_PARSE_ERROR);
	CHECK_EQ(log_error_count() - errors, 1);
	CHECK(text && strstr(text, want));
	if (text && !strstr(text, want))
		printf("# %s %s said: %s", a, b, text);
}

/* --irqchip and --pit: x86's choice (split by default, KVM's PIT only
 * beside KVM's 8259s); one clear refusal where there is no choice. */
static void test_irqchip(void)
{
	struct run_options cfg;

	if (!arch_facts.irqchip) {
		check_refused("--irqchip=gicv3", NULL, "one interrupt controller");
		check_refused("--pit", NULL, "one interrupt controller");
		return;
	}
	CHECK_EQ(PARSE(&cfg, "-p", "x"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.vm.irqchip, IRQCHIP_SPLIT);
	CHECK(!cfg.machine.vm.pit);
	CHECK_EQ(PARSE(&cfg, "--irqchip=kernel", "--pit"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.vm.irqchip, IRQCHIP_KERNEL);
	CHECK(cfg.machine.vm.pit);
	CHECK_EQ(PARSE(&cfg, "--irqchip", "split"), RUN_PARSE_OK);
	CHECK_EQ(cfg.machine.vm.irqchip, IRQCHIP_SPLIT);
	check_refused("--pit", NULL, "--pit needs --irqchip=kernel");
	check_refused("--pit", "--irqchip=split", "--pit needs --irqchip=kernel");
	check_refused("--irqchip=gicv3", NULL, "kernel");
}

/* --9p DIR,TAG[,ro][,pci|,mmio]: repeatable, each checked as given. */
static void test_9p(void)
{
	char dir[] = "/tmp/thpvm-9p-XXXXXX", file[64], arg[160], tag[40];
	const struct machine_config *m;
	struct run_options cfg;
	char *argv[2 * MACHINE_MAX_SHARES + 4];
	char args[MACHINE_MAX_SHARES + 1][80];
	unsigned i;
	int fd;

	m = &cfg.machine;
	CHECK(mkdtemp(dir));
	snprintf(arg, sizeof(arg), "%s,hostshare", dir);
	CHECK_EQ(PARSE(&cfg, "--9p", arg), RUN_PARSE_OK);
	CHECK_EQ(m->nr_shares, 1);
	CHECK_STR(m->shares[0].dir, dir);
	CHECK_STR(m->shares[0].tag, "hostshare");
	CHECK(!m->shares[0].read_only);
	CHECK_EQ(m->shares[0].transport, VIRTIO_TRANSPORT_DEFAULT);
	CHECK(!cfg.root_share);

	/* Options off the end, in any order; a tag of 31 bytes. */
	memset(tag, 't', P9_TAG_MAX);
	tag[P9_TAG_MAX] = '\0';
	snprintf(arg, sizeof(arg), "%s,%s,pci,ro", dir, tag);
	CHECK_EQ(PARSE(&cfg, "--9p", arg, "--9p=/,root"), RUN_PARSE_OK);
	CHECK_EQ(m->nr_shares, 2);
	CHECK_STR(m->shares[0].tag, tag);
	CHECK(m->shares[0].read_only);
	CHECK_EQ(m->shares[0].transport, VIRTIO_TRANSPORT_PCI);
	CHECK_STR(m->shares[1].dir, "/");
	CHECK_STR(m->shares[1].tag, "root");

	/* A tag may be an option's word: one is always left for it. */
	snprintf(arg, sizeof(arg), "%s,ro,ro", dir);
	CHECK_EQ(PARSE(&cfg, "--9p", arg), RUN_PARSE_OK);
	CHECK_STR(m->shares[0].tag, "ro");
	CHECK(m->shares[0].read_only);
	snprintf(arg, sizeof(arg), "%s,mmio", dir);
	CHECK_EQ(PARSE(&cfg, "--9p", arg), RUN_PARSE_OK);
	CHECK_STR(m->shares[0].tag, "mmio");
	CHECK_EQ(m->shares[0].transport, VIRTIO_TRANSPORT_DEFAULT);

	/* Up to MACHINE_MAX_SHARES, one more refused. */
	argv[0] = "run";
	for (i = 0; i <= MACHINE_MAX_SHARES; i++) {
		snprintf(args[i], sizeof(args[i]), "%s,t%u", dir, i);
		argv[1 + 2 * i] = "--9p";
		argv[2 + 2 * i] = args[i];
	}
	argv[1 + 2 * MACHINE_MAX_SHARES] = NULL;
	CHECK_EQ(run_options_parse(2 * MACHINE_MAX_SHARES + 1, argv, &cfg),
		 RUN_PARSE_OK);
	CHECK_EQ(m->nr_shares, MACHINE_MAX_SHARES);
	argv[1 + 2 * MACHINE_MAX_SHARES] = "--9p";
	argv[3 + 2 * MACHINE_MAX_SHARES] = NULL;
	CHECK_EQ(run_options_parse(2 * MACHINE_MAX_SHARES + 3, argv, &cfg),
		 RUN_PARSE_ERROR);

	snprintf(arg, sizeof(arg), "%s,%st", dir, tag);
	check_refused("--9p", arg, "the mount tag must be 1 to 31 bytes "
		      "long, not 32");
	snprintf(arg, sizeof(arg), "%s,", dir);
	check_refused("--9p", arg, "expected DIR,TAG[,ro][,pci|,mmio]");
	check_refused("--9p", dir, "expected DIR,TAG[,ro][,pci|,mmio]");
	check_refused("--9p", ",tag", "expected DIR,TAG[,ro][,pci|,mmio]");
	check_refused("--9p", "/nonexistent-thpvm,tag",
		      "/nonexistent-thpvm: No such file or directory");
	snprintf(arg, sizeof(arg), "%s,tag,rw", dir);
	check_refused("--9p", arg, "unknown option \"rw\" after the mount "
		      "tag");
	snprintf(file, sizeof(file), "%s/f", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	snprintf(arg, sizeof(arg), "%s,tag", file);
	check_refused("--9p", arg, "/f is not a directory");
	unlink(file);

	/* A tag given twice, whatever the directories. */
	snprintf(arg, sizeof(arg), "%s,same", dir);
	CHECK_EQ(PARSE(&cfg, "--9p", "/,same", "--9p", arg), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "--9p", "/,same", "--9p", "/,other"),
		 RUN_PARSE_OK);
	rmdir(dir);
}

/* lkvm's -d DIR: the root file system over 9p, tag /dev/root, and a
 * kernel told to mount it unless -p names a root. */
static void test_disk_dir(void)
{
	char dir[] = "/tmp/thpvm-root-XXXXXX", arg[80], want[512];
	const struct machine_config *m;
	struct run_options cfg;

	m = &cfg.machine;
	CHECK(mkdtemp(dir));
	CHECK_EQ(PARSE(&cfg, "-k", "bz", "-d", dir), RUN_PARSE_OK);
	CHECK_EQ(m->nr_disks, 0);
	CHECK_EQ(m->nr_shares, 1);
	CHECK_STR(m->shares[0].dir, dir);
	CHECK_STR(m->shares[0].tag, SHARE_ROOT_TAG);
	CHECK(!m->shares[0].read_only);
	CHECK(cfg.root_share);
	snprintf(want, sizeof(want), "%s %s", linux_defaults(NULL),
		 "root=/dev/root rw rootflags=rw,trans=virtio,"
		 "version=9p2000.L rootfstype=9p");
	CHECK_STR(m->cmdline, want);

	/* After the defaults, before -p; none when -p has a root. */
	snprintf(arg, sizeof(arg), "%s,ro", dir);
	CHECK_EQ(PARSE(&cfg, "-k", "bz", "--disk", arg, "-p", "quiet"),
		 RUN_PARSE_OK);
	CHECK(m->shares[0].read_only);
	snprintf(want, sizeof(want), "%s %s", linux_defaults(NULL),
		 "root=/dev/root ro rootflags=ro,trans=virtio,"
		 "version=9p2000.L rootfstype=9p quiet");
	CHECK_STR(m->cmdline, want);
	CHECK_EQ(PARSE(&cfg, "-k", "bz", "-d", dir, "-p", "root=/dev/vda"),
		 RUN_PARSE_OK);
	CHECK(!strstr(m->cmdline, "9p"));
	CHECK_EQ(PARSE(&cfg, "-k", "bz", "-d", dir, "-p", "nfsroot=x"),
		 RUN_PARSE_OK);
	CHECK(strstr(m->cmdline, "rootfstype=9p nfsroot=x"));
	/* The test guest and --nodefaults get -p alone. */
	CHECK_EQ(PARSE(&cfg, "-d", dir), RUN_PARSE_OK);
	CHECK_STR(m->cmdline, "");
	CHECK_EQ(PARSE(&cfg, "-k", "bz", "-d", dir, "--nodefaults"),
		 RUN_PARSE_OK);
	CHECK_STR(m->cmdline, "");

	/* A disk image's options, a second root, a tag taken. */
	snprintf(arg, sizeof(arg), "%s,direct", dir);
	check_refused("-d", arg, "direct, format, aio and queues are for disk images");
	CHECK_EQ(PARSE(&cfg, "-d", dir, "-d", "/"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-d", dir, "--9p", "/,/dev/root"),
		 RUN_PARSE_ERROR);
	rmdir(dir);
}

/* A word after a comma is an option, or part of a path that exists. */
static void test_disk_options(void)
{
	char dir[] = "/tmp/thpvm-disk-XXXXXX", path[64], arg[80];
	struct run_options cfg;
	const struct disk_config *d = &cfg.machine.disks[0];
	int fd;

	CHECK_EQ(PARSE(&cfg, "-d", "img,ro,direct"), RUN_PARSE_OK);
	CHECK_STR(d->path, "img");
	CHECK(d->opts.disk.read_only && d->opts.disk.direct);
	CHECK_EQ(d->opts.queues, 0);	/* one per vCPU: the machine's */
	CHECK_EQ(d->opts.disk.format, DISK_FORMAT_AUTO);
	CHECK_EQ(PARSE(&cfg, "-d", "img,format=qcow2,ro"), RUN_PARSE_OK);
	CHECK_EQ(d->opts.disk.format, DISK_FORMAT_QCOW2);
	CHECK_EQ(PARSE(&cfg, "-d", "img,format=raw"), RUN_PARSE_OK);
	CHECK_EQ(d->opts.disk.format, DISK_FORMAT_RAW);
	CHECK_EQ(PARSE(&cfg, "-d", "img,format=vmdk"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-d", "img,queues=4,aio=io_uring"), RUN_PARSE_OK);
	CHECK_EQ(d->opts.queues, 4);
	CHECK_EQ(d->opts.engine, BLK_ENGINE_IO_URING);
	CHECK_EQ(PARSE(&cfg, "-d", "img,queues=0"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-d", "img,queues=9"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-d", "img,queues=two"), RUN_PARSE_ERROR);
	/* Not a file called "img,rw": a misspelt option. */
	CHECK_EQ(PARSE(&cfg, "-d", "img,rw"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-d", "img,ro,rw"), RUN_PARSE_ERROR);
	CHECK_EQ(PARSE(&cfg, "-d", "img,"), RUN_PARSE_ERROR);
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a,b", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	snprintf(arg, sizeof(arg), "%s,ro,pci", path);
	CHECK_EQ(PARSE(&cfg, "-d", arg), RUN_PARSE_OK);
	CHECK_STR(d->path, path);
	CHECK(d->opts.disk.read_only);
	CHECK_EQ(d->transport, VIRTIO_TRANSPORT_PCI);
	snprintf(arg, sizeof(arg), "%s,rw", path);
	CHECK_EQ(PARSE(&cfg, "-d", arg), RUN_PARSE_ERROR);
	unlink(path);
	rmdir(dir);
}

static void test_help(void)
{
	struct run_options cfg;
	int out = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
	enum run_parse_result long_opt, short_opt;

	/* The usage text would land among the TAP lines; the checks come
	 * after stdout is back, so their messages do too. */
	CHECK(out >= 0 && null >= 0);
	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	long_opt = PARSE(&cfg, "--help");
	short_opt = PARSE(&cfg, "-m", "64M", "-h");
	fflush(stdout);
	dup2(out, STDOUT_FILENO);
	close(out);
	close(null);
	CHECK_EQ(long_opt, RUN_PARSE_HELP);
	CHECK_EQ(short_opt, RUN_PARSE_HELP);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_defaults),
		UNIT_TEST(test_all_options),
		UNIT_TEST(test_linux_default_params),
		UNIT_TEST(test_ram_rounding_and_limits),
		UNIT_TEST(test_ranges_in_help),
		UNIT_TEST(test_help_text),
		UNIT_TEST(test_rejects),
		UNIT_TEST(test_one_error_each),
		UNIT_TEST(test_network),
		UNIT_TEST(test_network_rejects),
		UNIT_TEST(test_balloon),
		UNIT_TEST(test_balloon_rejects),
		UNIT_TEST(test_rng),
		UNIT_TEST(test_rng_rejects),
		UNIT_TEST(test_transports),
		UNIT_TEST(test_transport_the_arch_lacks),
		UNIT_TEST(test_ram_zero_out_of_range),
		UNIT_TEST(test_lkvm_spellings),
		UNIT_TEST(test_lkvm_option_find),
		UNIT_TEST(test_irqchip),
		UNIT_TEST(test_disk_options),
		UNIT_TEST(test_9p),
		UNIT_TEST(test_disk_dir),
		UNIT_TEST(test_help),
	};

	return UNIT_RUN(tests);
}
