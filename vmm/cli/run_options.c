/* Parsing and checking of `thpvm run` options into a struct run_options.
 * run_option_table is the one list of them: getopt's tables and the help
 * text are made from it, and each row names the parser of its value. */
#include "cli/run_options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli/lkvm_options.h"
#include "cli/option_args.h"
#include "cli/share_options.h"
#include "control/control_path.h"
#include "core/arch.h"
#include "lib/host_mem.h"
#include "lib/log.h"
#include "lib/util.h"

/* -m's range: from VM_MIN_RAM to MAX_RAM, and at most the host's
 * memory; -c's: 1 to arch_max_vcpus(). Both are checked here only, and
 * run_usage() states them (test_run_options checks the figures). */
#define MAX_RAM (1ULL << 40)

/* The options' parsers: each gets the option as messages spell it, its
 * value (NULL: an optional one not given) and its row's field of opts,
 * and returns 0, -errno after saying why, or 1 when parsing is over
 * (--help). */

/* The value as given, in a const char * field. */
static int parse_string(struct run_options *opts, const char *opt,
			const char *arg, void *field)
{
	*(const char **)field = arg;
	return 0;
}

/* true, in a bool field. */
static int parse_set(struct run_options *opts, const char *opt,
		     const char *arg, void *field)
{
	*(bool *)field = true;
	return 0;
}

static int parse_ram(struct run_options *opts, const char *opt,
		     const char *arg, void *field)
{
	uint64_t size, host;
	char host_s[32];
	int err = arg_size(opt, NULL, arg, VM_MIN_RAM, MAX_RAM, &size);

	if (err)
		return err;
	/* Past that the guest would be killed once it used its RAM. */
	host = host_memory_size();
	if (host && size > host) {
		pr_err("%s %s: more than this host's %s of RAM and swap", opt,
		       arg, size_format(host, host_s, sizeof(host_s)));
		return -ERANGE;
	}
	opts->machine.vm.ram_size = ALIGN_UP(size, guest_ram_align());
	return 0;
}

static int parse_cpus(struct run_options *opts, const char *opt,
		      const char *arg, void *field)
{
	unsigned long n;
	int err = arg_uint(opt, NULL, arg, 1, arch_max_vcpus(),
			   "a number of vCPUs", &n);

	if (!err)
		opts->machine.vm.nr_vcpus = n;
	return err;
}

/* lkvm's -d DIR: DIR is the guest's root file system, shared over 9p
 * (d holds what parse_disk read, and stays unused). */
static int disk_dir(struct run_options *opts, const char *opt,
		    const char *arg, const struct disk_config *d)
{
	if (d->opts.disk.direct || d->opts.disk.format ||
	    d->opts.engine != BLK_ENGINE_AUTO || d->opts.queues) {
		pr_err("%s %s: a directory is shared over 9p: direct, format, "
		       "aio and queues are for disk images", opt, arg);
		return -EINVAL;
	}
	opts->root_share = true;
	return share_option_root(&opts->machine, opt, arg, d->path,
				 d->opts.disk.read_only, d->transport);
}

/* PATH[,ro][,direct][,format=raw|qcow2][,aio=io_uring|threads][,queues=N]
 * [,pci|,mmio]:
 * options are taken off the end, so a path may hold commas as long as it
 * does not end in one of the option names. A word after a comma that is
 * no option is part of the path only if that path exists: otherwise it
 * is a misspelt option (img,rw), named as such rather than reported as a
 * missing file. */
static int parse_disk(struct run_options *opts, const char *opt,
		      const char *arg, void *field)
{
	struct machine_config *cfg = &opts->machine;
	struct disk_config *d;
	unsigned long n;
	char *comma;

	if (cfg->nr_disks == MACHINE_MAX_DISKS) {
		pr_err("%s %s: at most %d disks", opt, arg, MACHINE_MAX_DISKS);
		return -E2BIG;
	}
	d = &cfg->disks[cfg->nr_disks];
	if (arg_path(opt, arg, sizeof(d->path)))
		return -ENAMETOOLONG;
	strcpy(d->path, arg);
	while ((comma = strrchr(d->path, ','))) {
		const char *word = comma + 1;

		if (!strcmp(word, "ro")) {
			d->opts.disk.read_only = true;
		} else if (!strcmp(word, "direct")) {
			d->opts.disk.direct = true;
		} else if (!strcmp(word, "format=raw")) {
			d->opts.disk.format = DISK_FORMAT_RAW;
		} else if (!strcmp(word, "format=qcow2")) {
			d->opts.disk.format = DISK_FORMAT_QCOW2;
		} else if (!strcmp(word, "aio=io_uring")) {
			d->opts.engine = BLK_ENGINE_IO_URING;
		} else if (!strcmp(word, "aio=threads")) {
			d->opts.engine = BLK_ENGINE_THREADS;
		} else if (!strncmp(word, "queues=", 7)) {
			if (arg_uint(opt, "queues", word + 7, 1,
				     BLK_MAX_QUEUES, "a number", &n))
				return -EINVAL;
			d->opts.queues = n;
		} else if (!arg_is_transport(word, &d->transport)) {
			if (access(d->path, F_OK) == 0)
				break;	/* a comma in the file's name */
			pr_err("%s %s: unknown disk option \"%s\" (expected ro, "
			       "direct, format=raw, format=qcow2, aio=io_uring, "
			       "aio=threads, queues=N, pci or mmio)", opt, arg,
			       word);
			return -EINVAL;
		}
		*comma = '\0';
	}
	if (!d->path[0]) {
		pr_err("%s %s: expected PATH[,ro][,direct][,format=raw|qcow2]"
		       "[,aio=io_uring|threads][,queues=N][,pci|,mmio]", opt,
		       arg);
		return -EINVAL;
	}
	if (share_is_dir(d->path))
		return disk_dir(opts, opt, arg, d);
	if (arg_transport_offered(opt, arg, d->transport))
		return -EINVAL;
	cfg->nr_disks++;
	return 0;
}

static int parse_9p(struct run_options *opts, const char *opt,
		    const char *arg, void *field)
{
	return share_option_parse(&opts->machine, opt, arg);
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
static int random_mac(const char *opt, uint8_t mac[ETH_ALEN])
{
	static const uint8_t prefix[] = { 0x52, 0x54, 0x00 };

	memcpy(mac, prefix, sizeof(prefix));
	if (getrandom(mac + sizeof(prefix), ETH_ALEN - sizeof(prefix), 0) !=
	    ETH_ALEN - sizeof(prefix)) {
		pr_err("%s: cannot pick a random MAC: %s", opt, strerror(errno));
		return -errno;
	}
	return 0;
}

/* -n's keys, and which of them were given. */
enum {
	NET_MODE, NET_TAPIF, NET_MAC, NET_TRANSPORT, NET_NET, NET_HOSTFWD,
	NET_RESTRICT,
};
static const char *const net_keys[] = {
	[NET_MODE] = "mode", [NET_TAPIF] = "tapif", [NET_MAC] = "mac",
	[NET_TRANSPORT] = "transport", [NET_NET] = "net",
	[NET_HOSTFWD] = "hostfwd", [NET_RESTRICT] = "restrict", NULL,
};

struct net_keys {
	struct net_config nc;
	bool have_mode, have_mac, have_user_key;
};

static int parse_net_key(void *ctx, const char *opt, int key,
			 const char *val)
{
	/* In enum net_mode's order. */
	static const char *const modes[] = { "none", "tap", "user", NULL };
	static const uint8_t zero[ETH_ALEN];
	struct net_keys *k = ctx;
	struct net_config *nc = &k->nc;
	const char *name = net_keys[key], *why;
	int mode;

	switch (key) {
	case NET_MODE:
		k->have_mode = true;
		mode = arg_choice(opt, name, val, modes);
		if (mode < 0)
			return mode;
		nc->mode = mode;
		return 0;
	case NET_TAPIF:
		if (!ifname_valid(val))
			return arg_bad(opt, name, val, "1 to %d characters, "
				       "without '/', ':' or spaces",
				       IFNAMSIZ - 1);
		snprintf(nc->tapif, sizeof(nc->tapif), "%s", val);
		return 0;
	case NET_MAC:
		k->have_mac = true;
		if (!parse_mac(val, nc->mac) ||
		    !memcmp(nc->mac, zero, sizeof(zero)))
			return arg_bad(opt, name, val, "six hex bytes such as "
				       "52:54:00:12:34:56, not all zero");
		if (nc->mac[0] & 1) {
			pr_err("%s: %s %s is a multicast address", opt, name,
			       val);
			return -EINVAL;
		}
		return 0;
	case NET_NET:
		k->have_user_key = true;
		why = net_user_parse_net(val, &nc->user);
		return why ? arg_bad(opt, name, val, "%s", why) : 0;
	case NET_HOSTFWD:
		k->have_user_key = true;
		why = net_user_parse_fwd(val, &nc->user);
		return why ? arg_bad(opt, name, val, "%s", why) : 0;
	case NET_RESTRICT:
		k->have_user_key = true;
		return arg_on_off(opt, name, val, &nc->user.restricted);
	default:
		return arg_transport(opt, name, val, &nc->transport);
	}
}

/* What only the whole list shows: keys of another mode, forwards that
 * clash or leave the network. */
static int net_check(const char *opt, const char *arg,
		     const struct net_keys *k)
{
	const struct net_config *nc = &k->nc;
	char fwd[64];
	const char *why;
	unsigned bad;

	if (!k->have_mode) {
		pr_err("%s %s: missing mode=user, mode=tap or mode=none", opt,
		       arg);
		return -EINVAL;
	}
	if (nc->mode == NET_NONE && (nc->tapif[0] || k->have_mac ||
				     nc->transport || k->have_user_key)) {
		pr_err("%s %s: mode=none takes no other keys", opt, arg);
		return -EINVAL;
	}
	if (nc->mode != NET_TAP && nc->tapif[0]) {
		pr_err("%s %s: tapif needs mode=tap", opt, arg);
		return -EINVAL;
	}
	if (nc->mode != NET_USER && k->have_user_key) {
		pr_err("%s %s: net, hostfwd and restrict need mode=user", opt,
		       arg);
		return -EINVAL;
	}
	why = net_user_config_check(&nc->user, &bad);
	if (why) {
		net_user_fwd_format(&nc->user, &nc->user.fwds[bad], fwd,
				    sizeof(fwd));
		pr_err("%s: hostfwd %s: %s", opt, fwd, why);
		return -EINVAL;
	}
	return 0;
}

/* mode=user[,net=A.B.C.D/N][,hostfwd=...]...[,restrict=on|off],
 * mode=tap[,tapif=NAME] (either with [,mac=MAC][,transport=pci|mmio]),
 * or mode=none. */
static int parse_net(struct run_options *opts, const char *opt,
		     const char *arg, void *field)
{
	struct net_keys k = { .nc = { .mode = NET_NONE } };
	struct machine_config *cfg = &opts->machine;
	struct net_config *nc = &k.nc;
	int err;

	net_user_config_init(&nc->user);
	err = arg_key_list(opt, arg, net_keys, parse_net_key, &k);
	if (!err)
		err = net_check(opt, arg, &k);
	if (err)
		return err;
	if (nc->mode != NET_NONE && cfg->net.mode != NET_NONE) {
		pr_err("%s %s: only one network device is supported", opt, arg);
		return -EINVAL;
	}
	if (nc->mode != NET_NONE && !k.have_mac) {
		err = random_mac(opt, nc->mac);
		if (err)
			return err;
	}
	cfg->net = *nc;
	return 0;
}

/* --balloon's keys: the device's options and its transport. */
enum {
	BALLOON_STATS, BALLOON_DEFLATE_ON_OOM, BALLOON_REPORTING,
	BALLOON_CONT_PAGES, BALLOON_POLICY, BALLOON_TRANSPORT,
};
static const char *const balloon_keys[] = {
	[BALLOON_STATS] = "stats", [BALLOON_DEFLATE_ON_OOM] = "deflate_on_oom",
	[BALLOON_REPORTING] = "reporting", [BALLOON_CONT_PAGES] = "cont_pages",
	[BALLOON_POLICY] = "policy", [BALLOON_TRANSPORT] = "transport", NULL,
};

static int parse_balloon_key(void *ctx, const char *opt, int key,
			     const char *val)
{
	static const char *const policies[] = {
		[BALLOON_EAGER] = "eager", [BALLOON_PRESERVE] = "preserve",
		NULL,
	};
	struct machine_config *cfg = ctx;
	struct balloon_config *bc = &cfg->balloon_opts;
	const char *name = balloon_keys[key];
	unsigned long n;
	int policy;

	switch (key) {
	case BALLOON_STATS:
		if (arg_uint(opt, name, val, 0, BALLOON_MAX_STATS_INTERVAL,
			     "seconds", &n))
			return -EINVAL;
		bc->stats_interval = n;
		return 0;
	case BALLOON_DEFLATE_ON_OOM:
		return arg_on_off(opt, name, val, &bc->deflate_on_oom);
	case BALLOON_REPORTING:
		return arg_on_off(opt, name, val, &bc->reporting);
	case BALLOON_CONT_PAGES:
		return arg_on_off(opt, name, val, &bc->cont_pages);
	case BALLOON_POLICY:
		policy = arg_choice(opt, name, val, policies);
		if (policy < 0)
			return policy;
		bc->policy = policy;
		return 0;
	default:
		return arg_transport(opt, name, val, &cfg->balloon_transport);
	}
}

/* [stats=N][,deflate_on_oom=on|off][,reporting=on|off]
 * [,cont_pages=on|off][,policy=eager|preserve][,transport=pci|mmio];
 * arg NULL: defaults. */
static int parse_balloon(struct run_options *opts, const char *opt,
			 const char *arg, void *field)
{
	struct machine_config *cfg = &opts->machine;

	cfg->balloon = true;
	cfg->balloon_opts = (struct balloon_config){
		.stats_interval = BALLOON_DEFAULT_STATS_INTERVAL,
		.deflate_on_oom = true,
		.cont_pages = true,
		.policy = BALLOON_EAGER,
	};
	return arg ? arg_key_list(opt, arg, balloon_keys, parse_balloon_key,
				  cfg) : 0;
}

/* --rng's keys: the rate and the transport. */
enum { RNG_BYTES_PER_SEC, RNG_TRANSPORT };
static const char *const rng_keys[] = {
	[RNG_BYTES_PER_SEC] = "bytes_per_sec", [RNG_TRANSPORT] = "transport",
	NULL,
};

static int parse_rng_key(void *ctx, const char *opt, int key,
			 const char *val)
{
	struct machine_config *cfg = ctx;
	const char *name = rng_keys[key];
	unsigned long n;
	uint64_t size;

	if (key == RNG_TRANSPORT)
		return arg_transport(opt, name, val, &cfg->rng_transport);
	/* A bare number is bytes here (a size's default is MiB). */
	if (!uint_parse(val, RNG_MAX_BYTES_PER_SEC, &n))
		size = n;
	else if (size_parse(val, &size))
		size = 0;
	if (!size || size > RNG_MAX_BYTES_PER_SEC)
		return arg_bad(opt, name, val, "bytes from 1 to %llu (or a size "
			       "such as 64K, up to 64M)", RNG_MAX_BYTES_PER_SEC);
	cfg->rng_bytes_per_sec = size;
	return 0;
}

/* [bytes_per_sec=N][,transport=pci|mmio]; arg NULL: defaults. */
static int parse_rng(struct run_options *opts, const char *opt,
		     const char *arg, void *field)
{
	struct machine_config *cfg = &opts->machine;

	cfg->rng = true;
	cfg->rng_bytes_per_sec = RNG_DEFAULT_BYTES_PER_SEC;
	return arg ? arg_key_list(opt, arg, rng_keys, parse_rng_key, cfg)
		   : 0;
}

/* --mem-hotplug's keys after SIZE: the block, the first request, the
 * transport. */
enum { MEM_BLOCK, MEM_REQUESTED, MEM_TRANSPORT };
static const char *const mem_keys[] = {
	[MEM_BLOCK] = "block", [MEM_REQUESTED] = "requested",
	[MEM_TRANSPORT] = "transport", NULL,
};

static int parse_mem_key(void *ctx, const char *opt, int key,
			 const char *val)
{
	struct machine_config *cfg = ctx;
	const char *name = mem_keys[key];

	if (key == MEM_TRANSPORT)
		return arg_transport(opt, name, val, &cfg->mem_transport);
	return arg_size(opt, name, val, 1, MAX_RAM, key == MEM_BLOCK ?
			&cfg->mem_block : &cfg->mem_requested);
}

/* SIZE[,block=SIZE][,requested=SIZE][,transport=pci|mmio]: the region,
 * in whole blocks of a power of two of at least the host's huge page. */
static int parse_mem_hotplug(struct run_options *opts, const char *opt,
			     const char *arg, void *field)
{
	struct machine_config *cfg = &opts->machine;
	uint64_t block, huge = guest_ram_align();
	const char *keys = strchr(arg, ',');
	char size_s[32], huge_s[32];
	uint64_t size;
	int err;

	snprintf(size_s, sizeof(size_s), "%.*s",
		 (int)(keys ? keys - arg : (long)strlen(arg)), arg);
	err = arg_size(opt, "SIZE", size_s, 1, MAX_RAM, &size);
	if (!err && keys)
		err = arg_key_list(opt, keys + 1, mem_keys, parse_mem_key,
				     cfg);
	if (err)
		return err;
	block = cfg->mem_block ?: huge;
	size_format(huge, huge_s, sizeof(huge_s));
	if (block < huge || block & (block - 1)) {
		pr_err("%s %s: block must be a power of two of at least %s, "
		       "the host's huge page", opt, arg, huge_s);
		return -EINVAL;
	}
	if (size % block || cfg->mem_requested % block ||
	    cfg->mem_requested > size) {
		pr_err("%s %s: SIZE and requested must be whole blocks of %s, "
		       "requested at most SIZE", opt, arg,
		       size_format(block, size_s, sizeof(size_s)));
		return -EINVAL;
	}
	cfg->vm.hotplug_size = size;
	return 0;
}

static int parse_virtio_transport(struct run_options *opts, const char *opt,
				  const char *arg, void *field)
{
	return arg_transport(opt, NULL, arg, &opts->machine.virtio_transport);
}

static int parse_name(struct run_options *opts, const char *opt,
		      const char *arg, void *field)
{
	struct vm_config *vm = &opts->machine.vm;

	if (!control_path_name_valid(arg))
		return arg_bad(opt, NULL, arg, "1 to %d letters, digits, '.', "
			       "'_' or '-', not starting with '.' or '-'",
			       VM_NAME_MAX);
	snprintf(vm->name, sizeof(vm->name), "%s", arg);
	return 0;
}

/* A socket's path, in a const char * field: one that fits a Unix
 * socket address. */
static int parse_socket_path(struct run_options *opts, const char *opt,
			     const char *arg, void *field)
{
	int err = arg_path(opt, arg, CONTROL_PATH_MAX);

	if (!err)
		*(const char **)field = arg;
	return err;
}

static int parse_hugetlbfs(struct run_options *opts, const char *opt,
			   const char *arg, void *field)
{
	struct vm_config *vm = &opts->machine.vm;

	if (vm->ram_backing == RAM_BACKING_NO_THP)
		return arg_excludes("--no-thp", opt);
	vm->hugetlbfs_dir = arg;
	vm->ram_backing = RAM_BACKING_HUGETLBFS;
	return 0;
}

static int parse_no_thp(struct run_options *opts, const char *opt,
			const char *arg, void *field)
{
	struct vm_config *vm = &opts->machine.vm;

	if (vm->hugetlbfs_dir)
		return arg_excludes(opt, "--hugetlbfs");
	vm->ram_backing = RAM_BACKING_NO_THP;
	return 0;
}

static int parse_boot(struct run_options *opts, const char *opt,
		      const char *arg, void *field)
{
	int entry = arg_choice(opt, NULL, arg, arch_boot_entries);

	if (entry < 0)
		return entry;
	opts->machine.boot_entry = entry;
	return 0;
}

/* Options an arch without a choice of interrupt controllers refuses. */
static int irqchip_offered(const char *opt)
{
	if (arch_facts.irqchip)
		return 0;
	pr_err("%s: %s has one interrupt controller setup, KVM's", opt,
	       arch_facts.name);
	return -EINVAL;
}

static int parse_irqchip(struct run_options *opts, const char *opt,
			 const char *arg, void *field)
{
	static const char *const modes[] = {
		[IRQCHIP_SPLIT] = "split", [IRQCHIP_KERNEL] = "kernel", NULL
	};
	int mode = irqchip_offered(opt) ?: arg_choice(opt, NULL, arg, modes);

	if (mode < 0)
		return mode;
	opts->machine.vm.irqchip = mode;
	return 0;
}

static int parse_pit(struct run_options *opts, const char *opt,
		     const char *arg, void *field)
{
	int err = irqchip_offered(opt);

	if (!err)
		opts->machine.vm.pit = true;
	return err;
}

static int parse_seccomp(struct run_options *opts, const char *opt,
			 const char *arg, void *field)
{
	bool on;
	int err = arg_on_off(opt, NULL, arg, &on);

	if (!err)
		opts->no_seccomp = !on;
	return err;
}

static int parse_verbose(struct run_options *opts, const char *opt,
			 const char *arg, void *field)
{
	log_max_level = LOG_DEBUG;
	return 0;
}

/* The command whose options these are prints its own usage. */
static int parse_help(struct run_options *opts, const char *opt,
		      const char *arg, void *field)
{
	return 1;
}

/* lkvm's --console: the serial port (the default) or a virtio-console;
 * the last one given counts, as in lkvm. */
static int parse_console(struct run_options *opts, const char *opt,
			 const char *arg, void *field)
{
	static const char *const consoles[] = { "serial", "virtio", NULL };
	int i;

	if (!strcmp(arg, "hv")) {
		pr_err("lkvm's %s hv is not supported by thpvm (it is for "
		       "powerpc; use serial or virtio)", opt);
		return -EINVAL;
	}
	i = arg_choice(opt, NULL, arg, consoles);
	if (i < 0)
		return i;
	opts->machine.virtio_console = i == 1;
	return 0;
}

/* lkvm's --loglevel names thpvm's levels. */
static int parse_loglevel(struct run_options *opts, const char *opt,
			  const char *arg, void *field)
{
	static const char *const levels[] = {
		[LOG_ERR] = "error", [LOG_WARN] = "warning",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug", NULL,
	};
	int i = arg_choice(opt, NULL, arg, levels);

	if (i < 0)
		return i;
	log_max_level = (enum log_level)i;
	return 0;
}

/* The help of options that state facts from elsewhere: the arch's, the
 * host's, limits defined with the code they bound. An option the arch
 * does not offer gets none, which leaves it out of the help. */

static void help_kernel(char *buf, size_t len)
{
	snprintf(buf, len, "a Linux kernel: %s", arch_facts.kernel_images);
}

static void help_params(char *buf, size_t len)
{
	snprintf(buf, len, "kernel command line parameters; a Linux kernel "
		 "gets them after the defaults, here \"console=%s %s\" "
		 "(--nodefaults: PARAMS alone); the test guest gets PARAMS "
		 "alone", arch_linux_uart, arch_linux_params);
}

static void help_ram(char *buf, size_t len)
{
	char def[32], lo[32], hi[32], huge[32];

	snprintf(buf, len, "guest RAM, e.g. 512M, 2G, or 1024 (a bare number "
		 "is MiB; default %s): %s to %s, and no more than the host's "
		 "RAM plus swap; rounded up to a multiple of the host's huge "
		 "page (%s here)", size_format(VM_DEFAULT_RAM, def, sizeof(def)),
		 size_format(VM_MIN_RAM, lo, sizeof(lo)),
		 size_format(MAX_RAM, hi, sizeof(hi)),
		 size_format(guest_ram_align(), huge, sizeof(huge)));
}

static void help_cpus(char *buf, size_t len)
{
	const char *limit = arch_facts.vcpus_limit;

	snprintf(buf, len, "number of vCPUs (default 1): 1 to %u%s%s%s",
		 arch_max_vcpus(), limit ? " (" : "", limit ?: "",
		 limit ? ")" : "");
}

static void help_disk(char *buf, size_t len)
{
	snprintf(buf, len, "a virtio-blk disk: image file (raw or qcow2) or "
		 "block device (repeatable, up to %d). OPTIONs: "
		 "ro: read-only; direct: O_DIRECT, bypassing the host page "
		 "cache; format=raw|qcow2 (default: qcow2 if its header says "
		 "so, then without backing files); aio=io_uring|threads: its "
		 "requests through io_uring or worker threads (default: "
		 "io_uring where the kernel allows it); queues=N: request "
		 "queues, each with a thread, 1 to %d (default: one per vCPU, "
		 "up to %d); pci or mmio: its transport. A directory (lkvm's "
		 "rootfs) is shared over 9p as tag %s instead, and a kernel "
		 "with no root= in -p gets \"%s\" (with ro: \"%s\")",
		 MACHINE_MAX_DISKS, BLK_MAX_QUEUES, BLK_MAX_QUEUES,
		 SHARE_ROOT_TAG, SHARE_ROOT_PARAMS, SHARE_ROOT_PARAMS_RO);
}

static void help_9p(char *buf, size_t len)
{
	snprintf(buf, len, "share host directory DIR with the guest over "
		 "virtio-9p (9P2000.L), under mount tag TAG (1 to %d bytes; "
		 "Linux: mount -t 9p -o trans=virtio TAG /mnt); repeatable, up "
		 "to %d; ro: read-only; pci or mmio: its transport. Files are "
		 "made as the user running thpvm; see docs/lkvm-and-qemu.md",
		 P9_TAG_MAX, MACHINE_MAX_SHARES);
}

static void help_mem_hotplug(char *buf, size_t len)
{
	char huge[32];

	if (!arch_facts.mem_hotplug)
		return;
	snprintf(buf, len, "a virtio-mem device over SIZE of hotpluggable "
		 "memory above guest RAM, plugged and unplugged by the guest "
		 "in blocks (default and least: the host's huge page, %s here; "
		 "a power of two); requested: what the guest is asked to plug "
		 "at boot (default 0; later: thpvm mem); see "
		 "docs/memory-hotplug.md",
		 size_format(guest_ram_align(), huge, sizeof(huge)));
}

static void help_virtio_transport(char *buf, size_t len)
{
	const char *where = arch_facts.mmio_discovery;

	snprintf(buf, len, "the transport of virtio devices that do not name "
		 "one (default pci); %s%s", where ? "an MMIO device is "
		 "described " : "this architecture offers no virtio-mmio",
		 where ?: "");
}

static void help_dump_dtb(char *buf, size_t len)
{
	if (arch_facts.device_tree)
		snprintf(buf, len, "also write the guest's device tree to FILE");
}

static void help_irqchip(char *buf, size_t len)
{
	if (arch_facts.irqchip)
		snprintf(buf, len, "where the interrupt controllers are: %s "
			 "(docs/interrupts.md)", arch_facts.irqchip);
}

static void help_pit(char *buf, size_t len)
{
	if (arch_facts.irqchip)
		snprintf(buf, len, "an i8254 PIT (KVM's; with --irqchip=kernel "
			 "only, as KVM wires its PIT to its 8259s); Linux "
			 "needs none");
}

static void help_no_acpi(char *buf, size_t len)
{
	if (arch_facts.no_acpi)
		snprintf(buf, len, "no ACPI tables: %s", arch_facts.no_acpi);
}

/* One option of `thpvm run`. */
struct run_option {
	const char *name;	/* the long one, without "--" */
	char letter;		/* the short one; 0: none */
	int has_arg;		/* getopt's no_, required_, optional_argument */
	const char *metavar;	/* its value in the help */
	/* The help: text, or what text() writes; none: another spelling of
	 * an option listed, which its help names, or one the arch does not
	 * offer (parsed all the same, refused or ignored by the arch). */
	const char *help;
	void (*text)(char *buf, size_t len);
	int (*parse)(struct run_options *opts, const char *opt,
		     const char *arg, void *field);
	size_t field;		/* what parse_string, parse_set... set */
	bool once;		/* one device per VM: given twice is an error */
	bool lkvm;		/* listed among lkvm's spellings */
};

#define ARG_NO no_argument
#define ARG_REQ required_argument
#define ARG_OPT optional_argument
#define FIELD(f) .field = offsetof(struct run_options, f)

static const struct run_option run_option_table[] = {
	{ "kernel", 'k', ARG_REQ, "IMAGE", .text = help_kernel,
	  .parse = parse_string, FIELD(machine.kernel_path) },
	{ "initrd", 'i', ARG_REQ, "FILE", "initial ramdisk",
	  .parse = parse_string, FIELD(machine.initrd_path) },
	{ "params", 'p', ARG_REQ, "PARAMS", .text = help_params,
	  .parse = parse_string, FIELD(params) },
	{ "mem", 'm', ARG_REQ, "SIZE", .text = help_ram, .parse = parse_ram },
	{ "cpus", 'c', ARG_REQ, "N", .text = help_cpus, .parse = parse_cpus },
	{ "disk", 'd', ARG_REQ,
	  "PATH[,OPTION]...",
	  .text = help_disk, .parse = parse_disk },
	{ "9p", 0, ARG_REQ, "DIR,TAG[,ro][,pci|,mmio]", .text = help_9p,
	  .parse = parse_9p },
	{ "network", 'n', ARG_REQ,
	  "mode=user|tap|none[,KEY=VALUE...]",
	  "a virtio-net device. mode=user: a user-mode network on libslirp, "
	  "needing no privilege (DHCP gives the guest 10.0.2.15, the host is "
	  "10.0.2.2, DNS 10.0.2.3), with net=10.0.2.0/24, restrict=on and "
	  "hostfwd=tcp|udp:[HOSTADDR]:PORT-[GUESTADDR]:PORT (repeatable); "
	  "mode=tap with tapif=NAME: tap NAME (default thpvmN), created if "
	  "missing, its link and addresses left to the user; both take "
	  "mac=MAC (default 52:54:00:xx:xx:xx with random xx) and "
	  "transport=pci|mmio; mode=none: no network (default)",
	  .parse = parse_net },
	{ "balloon", 0, ARG_OPT, "OPTIONS",
	  "a virtio-balloon device; OPTIONS, comma-separated: stats=SECONDS "
	  "(guest statistics interval, default 5, 0: none), "
	  "deflate_on_oom=on|off (default on), reporting=on|off (free page "
	  "reporting, default off), cont_pages=on|off (continuous pages, "
	  "default on), policy=eager|preserve (release ballooned pages at "
	  "once, or only whole host huge pages; default eager), "
	  "transport=pci|mmio; see docs/balloon.md",
	  .parse = parse_balloon, .once = true },
	{ "mem-hotplug", 0, ARG_REQ,
	  "SIZE[,block=SIZE][,requested=SIZE][,transport=pci|mmio]",
	  .text = help_mem_hotplug, .parse = parse_mem_hotplug,
	  .once = true },
	{ "rng", 0, ARG_OPT, "OPTIONS",
	  "a virtio-rng device fed from the host's getrandom(); OPTIONS, "
	  "comma-separated: bytes_per_sec=N (at most N bytes a second, N a "
	  "number of bytes or a size such as 64K, from 1 to 64M; default "
	  "1M), transport=pci|mmio",
	  .parse = parse_rng, .once = true },
	{ "virtio-transport", 0, ARG_REQ, "pci|mmio",
	  .text = help_virtio_transport, .parse = parse_virtio_transport },
	{ "name", 0, ARG_REQ, "NAME",
	  "name for the control socket (default guest-PID)",
	  .parse = parse_name },
	{ "control-socket", 0, ARG_REQ, "PATH",
	  "listen for thpvm stop, stat, ... at PATH instead; they then name "
	  "the VM by PATH (with a '/', e.g. ./vm.sock), and thpvm list does "
	  "not show it",
	  .parse = parse_socket_path, FIELD(control_socket) },
	{ "no-control", 0, ARG_NO, NULL,
	  "no control socket: stop the VM with Ctrl-A x or a signal",
	  .parse = parse_set, FIELD(no_control) },
	{ "detach", 0, ARG_NO, NULL,
	  "run in the background (QEMU's --daemonize too): return once the "
	  "VM's control socket is ready, with its console on a socket (see "
	  "below) that thpvm console NAME attaches to; thpvm's later messages "
	  "go to stderr only if it is a file",
	  .parse = parse_set, FIELD(detach) },
	{ "daemonize", 0, ARG_NO, .parse = parse_set, FIELD(detach) },
	{ "console-socket", 0, ARG_REQ, "PATH",
	  "the console on a Unix socket at PATH, not the terminal (default "
	  "with --detach: NAME.console next to the control socket), with the "
	  "last 64 KiB of output kept for whoever attaches",
	  .parse = parse_socket_path, FIELD(console_socket) },
	{ "console-filter", 0, ARG_NO, NULL,
	  "pass the guest's console output through a filter: text, and the "
	  "escapes that move the cursor, colour and erase, but no terminal "
	  "titles or clipboard writes (OSC), no sequences that make the "
	  "terminal answer, no reset (default: raw)",
	  .parse = parse_set, FIELD(machine.vm.console_filter) },
	{ "hugetlbfs", 0, ARG_REQ, "PATH",
	  "back guest RAM with files on this hugetlbfs mount",
	  .parse = parse_hugetlbfs },
	{ "no-thp", 0, ARG_NO, NULL,
	  "back guest RAM with base pages (MADV_NOHUGEPAGE)",
	  .parse = parse_no_thp },
	{ "boot", 0, ARG_REQ, "ENTRY",
	  "kernel entry: auto (default: chosen per image), or one of the "
	  "architecture's (a wrong ENTRY lists them; see docs/booting.md)",
	  .parse = parse_boot },
	{ "dump-dtb", 0, ARG_REQ, "FILE", .text = help_dump_dtb,
	  .parse = parse_string, FIELD(machine.dump_dtb) },
	{ "no-acpi", 0, ARG_NO, NULL, .text = help_no_acpi,
	  .parse = parse_set, FIELD(machine.no_acpi) },
	{ "irqchip", 0, ARG_REQ, "split|kernel", .text = help_irqchip,
	  .parse = parse_irqchip },
	{ "pit", 0, ARG_NO, NULL, .text = help_pit, .parse = parse_pit },
	{ "user", 0, ARG_REQ, "NAME",
	  "started as root, run the VM as user NAME (or UID:GID; QEMU's "
	  "--runas too) once /dev/kvm, taps, disks and the sockets are open "
	  "(docs/security.md)",
	  .parse = parse_string, FIELD(user) },
	{ "runas", 0, ARG_REQ, .parse = parse_string, FIELD(user) },
	{ "seccomp", 0, ARG_REQ, "on|off",
	  "seccomp filters per thread (default on): a forbidden system call "
	  "ends the VM, naming it; off is for debugging (docs/security.md)",
	  .parse = parse_seccomp },
	{ "json", 0, ARG_NO, NULL,
	  "at the end, print {\"name\", \"exit_status\", \"reason\"} as one "
	  "JSON line on stderr; reason is guest, reset, stop, signal or "
	  "failure",
	  .parse = parse_set, FIELD(json) },
	{ "verbose", 'v', ARG_NO, NULL,
	  "more messages on stderr, the kernel command line as the guest gets "
	  "it among them",
	  .parse = parse_verbose },
	{ "help", 'h', ARG_NO, NULL, "show this help", .parse = parse_help },
	/* lkvm's */
	{ "nodefaults", 0, ARG_NO, NULL,
	  "the kernel command line is -p alone, without the defaults (thpvm "
	  "adds no devices of its own to drop; the serial console stays)",
	  .parse = parse_set, FIELD(nodefaults), .lkvm = true },
	{ "console", 0, ARG_REQ, "serial|virtio",
	  "the guest's console: the serial port (default), or a "
	  "virtio-console on the default transport (Linux: hvc0, and "
	  "console=hvc0 instead of the serial port's in the defaults; early "
	  "messages still on the serial port)",
	  .parse = parse_console, .lkvm = true },
	{ "loglevel", 0, ARG_REQ, "LEVEL",
	  "error, warning, info or debug (-v); --debug: debug",
	  .parse = parse_loglevel, .lkvm = true },
	{ "debug", 0, ARG_NO, .parse = parse_verbose, .lkvm = true },
};

#undef ARG_NO
#undef ARG_REQ
#undef ARG_OPT
#undef FIELD

#define NR_RUN_OPTIONS ARRAY_SIZE(run_option_table)
/* getopt's val for row i (a letter stands for the rows that have one). */
#define OPT_ROW_BASE 256

/* The help's layout: an option's spellings from column 2, its text from
 * HELP_COLUMN (on a line of its own after spellings that reach it), all
 * wrapped to HELP_WIDTH columns. */
#define HELP_WIDTH 79
#define HELP_COLUMN 25

/* Writes text's words from column col on, the lines it wraps onto from
 * column indent, and ends the line. */
static void help_wrap(FILE *f, const char *text, int col, int indent)
{
	bool fresh = true;	/* nothing written past col yet */
	int len;

	for (;;) {
		text += strspn(text, " ");
		len = (int)strcspn(text, " ");
		if (!len)
			break;
		if (!fresh && col + 1 + len > HELP_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			fresh = true;
		}
		col += fprintf(f, "%s%.*s", fresh ? "" : " ", len, text);
		fresh = false;
		text += len;
	}
	fputc('\n', f);
}

/* "  -k, --kernel IMAGE     a Linux kernel: ..." */
static void help_option(FILE *f, const struct run_option *o)
{
	bool optional = o->has_arg == optional_argument;
	char letter[5] = "    ", text[1024] = "";
	int col;

	if (o->text)
		o->text(text, sizeof(text));
	if (!o->text ? !o->help : !text[0])
		return;
	if (o->letter)
		snprintf(letter, sizeof(letter), "-%c, ", o->letter);
	col = fprintf(f, "  %s--%s%s%s%s", letter, o->name,
		      optional ? "[=" : o->metavar ? " " : "",
		      o->metavar ?: "", optional ? "]" : "");
	if (col > HELP_COLUMN - 2) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", HELP_COLUMN - col, "");
	help_wrap(f, o->text ? text : o->help, HELP_COLUMN, HELP_COLUMN);
}

static void help_options(FILE *f, bool lkvm)
{
	unsigned i;

	for (i = 0; i < NR_RUN_OPTIONS; i++)
		if (run_option_table[i].lkvm == lkvm)
			help_option(f, &run_option_table[i]);
}

const char *run_usage(void)
{
	static const char synopsis[] = "usage: thpvm run [options]\n";
	static char *usage;
	size_t len;
	FILE *f;

	if (usage)
		return usage;
	f = open_memstream(&usage, &len);
	if (!f)
		return synopsis;
	fprintf(f, "%s\n", synopsis);
	help_wrap(f, "Boots a guest. Without -k, boots the bundled test "
		  "guest.", 0, 0);
	fputc('\n', f);
	help_options(f, false);
	fputs("\nlkvm's spellings, besides those above:\n", f);
	help_options(f, true);
	help_wrap(f, "Other lkvm options (--vnc, --sandbox, -f/--firmware, "
		  "...) are refused by name.", 0, 0);
	fputc('\n', f);
	help_wrap(f, "Ctrl-A x stops the VM from its console, which is the "
		  "terminal unless --detach or --console-socket.", 0, 0);
	help_wrap(f, "The exit status is the guest's (through its debug-exit "
		  "device), 0 after a guest reset or a stop, 1 when the VM "
		  "failed.", 0, 0);
	if (fclose(f)) {
		free(usage);
		usage = NULL;
		return synopsis;
	}
	return usage;
}

/* getopt's tables for run_option_table: shortopts has room for 3 bytes a
 * row and 3 more, longopts for a row each and the zero entry. */
static void getopt_tables(char *shortopts, struct option *longopts)
{
	unsigned i;

	/* '+': options end at the first argument; ':': a missing value
	 * ends in ':', an unknown option in '?'. */
	shortopts += sprintf(shortopts, "+:");
	for (i = 0; i < NR_RUN_OPTIONS; i++) {
		const struct run_option *o = &run_option_table[i];

		longopts[i] = (struct option){
			o->name, o->has_arg, NULL,
			o->letter ?: OPT_ROW_BASE + (int)i,
		};
		if (!o->letter)
			continue;
		*shortopts++ = o->letter;
		if (o->has_arg != no_argument)
			*shortopts++ = ':';
		if (o->has_arg == optional_argument)
			*shortopts++ = ':';
	}
	*shortopts = '\0';
	longopts[i] = (struct option){ 0 };
}

/* The row of what getopt_long returned for it. */
static unsigned option_row(int opt)
{
	unsigned i;

	if (opt >= OPT_ROW_BASE)
		return opt - OPT_ROW_BASE;
	for (i = 0; run_option_table[i].letter != opt; i++)
		;
	return i;
}

/* Whether params has a root= of its own. */
static bool params_name_root(const char *params)
{
	const char *p;

	for (p = params; (p = strstr(p, "root=")); p++)
		if (p == params || p[-1] == ' ')
			return true;
	return false;
}

static bool root_share_read_only(const struct machine_config *cfg)
{
	for (unsigned i = 0; i < cfg->nr_shares; i++)
		if (!strcmp(cfg->shares[i].tag, SHARE_ROOT_TAG))
			return cfg->shares[i].read_only;
	return false;
}

/* As kvmtool does: a Linux kernel gets -p after the arch's defaults
 * (its console on the arch's UART, or hvc0 with --console virtio, and
 * with -d DIR, the root file system on 9p unless -p names a root),
 * unless --nodefaults; the test guest reads its own keys and gets -p
 * alone. */
static int cmdline_build(struct run_options *opts)
{
	const struct machine_config *cfg = &opts->machine;
	const char *params = opts->params ? opts->params : "";
	bool root = opts->root_share && !params_name_root(params);
	const char *root_params = root_share_read_only(cfg) ?
		SHARE_ROOT_PARAMS_RO : SHARE_ROOT_PARAMS;
	int n;

	if (!cfg->kernel_path || opts->nodefaults)
		n = snprintf(opts->cmdline, sizeof(opts->cmdline), "%s",
			     params);
	else
		n = snprintf(opts->cmdline, sizeof(opts->cmdline),
			     "console=%s %s%s%s%s%s", cfg->virtio_console ?
			     "hvc0" : arch_linux_uart, arch_linux_params,
			     root ? " " : "", root ? root_params : "",
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
static void unknown_option(const char *cmd, const char *arg)
{
	char letter[3] = { '-', (char)optopt, 0 };
	const char *lkvm = lkvm_run_option_find(optopt ? NULL : arg, optopt);

	if (lkvm)
		pr_err("lkvm's %s is not supported by thpvm", lkvm);
	else
		pr_err("%s: unknown option %s (see thpvm %s --help)", cmd,
		       optopt ? letter : arg, cmd);
}

/* What the options say together, once all are read. */
static int options_check(struct run_options *opts)
{
	if (opts->no_control && opts->control_socket)
		return arg_excludes("--control-socket", "--no-control");
	if (opts->machine.vm.pit &&
	    opts->machine.vm.irqchip != IRQCHIP_KERNEL) {
		pr_err("--pit needs --irqchip=kernel: KVM's PIT is wired to "
		       "its 8259 PICs, which the split irqchip leaves out");
		return -EINVAL;
	}
	if (opts->detach && opts->no_control) {
		pr_err("--detach needs the control socket (thpvm stop and "
		       "thpvm console find the VM through it): drop "
		       "--no-control");
		return -EINVAL;
	}
	return cmdline_build(opts);
}

enum run_parse_result run_options_parse_args(int argc, char **argv,
					     struct run_options *opts,
					     int *first_arg)
{
	struct option longopts[NR_RUN_OPTIONS + 1];
	char shortopts[3 * NR_RUN_OPTIONS + 3], spelling[32];
	unsigned given[NR_RUN_OPTIONS] = { 0 };
	struct machine_config *cfg = &opts->machine;
	const struct run_option *o;
	unsigned row;
	int opt, err;

	memset(opts, 0, sizeof(*opts));
	cfg->vm.ram_size = VM_DEFAULT_RAM;
	cfg->vm.nr_vcpus = 1;
	cfg->vm.ram_backing = RAM_BACKING_THP;
	cfg->vm.console_fd = STDOUT_FILENO;
	snprintf(cfg->vm.name, sizeof(cfg->vm.name), "guest-%d", (int)getpid());

	getopt_tables(shortopts, longopts);
	optind = 0;	/* full re-initialisation of getopt */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shortopts, longopts,
				  NULL)) != -1) {
		if (opt == ':') {
			pr_err("%s: missing value for %s (see thpvm %s --help)",
			       argv[0], argv[optind - 1], argv[0]);
			return RUN_PARSE_ERROR;
		}
		if (opt == '?') {
			unknown_option(argv[0], argv[optind - 1]);
			return RUN_PARSE_ERROR;
		}
		row = option_row(opt);
		o = &run_option_table[row];
		/* Messages spell an option the short way where it has one. */
		if (o->letter)
			snprintf(spelling, sizeof(spelling), "-%c", o->letter);
		else
			snprintf(spelling, sizeof(spelling), "--%s", o->name);
		if (o->once && given[row]++) {
			pr_err("%s: given twice (one per VM)", spelling);
			return RUN_PARSE_ERROR;
		}
		err = o->parse(opts, spelling, optarg,
			       (char *)opts + o->field);
		if (err)
			return err > 0 ? RUN_PARSE_HELP : RUN_PARSE_ERROR;
	}
	*first_arg = optind;
	return RUN_PARSE_OK;
}

int run_options_finish(struct run_options *opts)
{
	return options_check(opts);
}

enum run_parse_result run_options_parse(int argc, char **argv,
					struct run_options *opts)
{
	enum run_parse_result res;
	int first_arg;

	res = run_options_parse_args(argc, argv, opts, &first_arg);
	if (res != RUN_PARSE_OK)
		return res;
	if (first_arg < argc) {
		pr_err("run: unexpected argument \"%s\"", argv[first_arg]);
		return RUN_PARSE_ERROR;
	}
	return run_options_finish(opts) ? RUN_PARSE_ERROR : RUN_PARSE_OK;
}
