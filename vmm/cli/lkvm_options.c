/* lkvm's run options thpvm refuses by name: those of kvmtool's
 * builtin-run.c and of its x86 and arm64 code that thpvm has no
 * counterpart for. Its --name, -c, -m, -d, -k, -i, -p, -n, --9p,
 * --balloon, --hugetlbfs, --virtio-transport, --dump-dtb, --console,
 * --rng, --nodefaults, --loglevel, --debug and --irqchip (x86's
 * choice here, arm64's GIC model there) are run_options.c's. */
#include "cli/lkvm_options.h"

#include <stddef.h>
#include <string.h>

#include "lib/util.h"

struct lkvm_option {
	char letter;		/* 0: long only */
	const char *name;
	const char *spelling;	/* for the message */
};

static const struct lkvm_option lkvm_options[] = {
	{ 0, "vnc", "--vnc" },
	{ 0, "gtk", "--gtk" },
	{ 0, "sdl", "--sdl" },
	{ 0, "vsock", "--vsock" },
	{ 0, "dev", "--dev" },
	{ 0, "tty", "--tty" },
	{ 0, "sandbox", "--sandbox" },
	{ 0, "virtio-legacy", "--virtio-legacy" },
	{ 'f', "firmware", "-f/--firmware" },
	{ 'F', "flash", "-F/--flash" },
	{ 0, "no-dhcp", "--no-dhcp" },
	{ 0, "vfio-pci", "--vfio-pci" },
	{ 0, "debug-single-step", "--debug-single-step" },
	{ 0, "debug-ioport", "--debug-ioport" },
	{ 0, "debug-mmio", "--debug-mmio" },
	{ 0, "debug-iodelay", "--debug-iodelay" },
	/* x86 */
	{ 0, "vidmode", "--vidmode" },
	/* arm64 */
	{ 0, "aarch32", "--aarch32" },
	{ 0, "pmu", "--pmu" },
	{ 0, "disable-mte", "--disable-mte" },
	{ 0, "vcpu-affinity", "--vcpu-affinity" },
	{ 0, "kaslr-seed", "--kaslr-seed" },
	{ 0, "no-pvtime", "--no-pvtime" },
	{ 0, "sve-max-vl", "--sve-max-vl" },
	{ 0, "override-bad-firmware-cntfrq", "--override-bad-firmware-cntfrq" },
	{ 0, "force-pci", "--force-pci" },
	{ 0, "firmware-address", "--firmware-address" },
};

const char *lkvm_run_option_find(const char *arg, int short_opt)
{
	size_t i, len = 0;

	if (arg && !strncmp(arg, "--", 2)) {
		arg += 2;
		len = strcspn(arg, "=");
	}
	for (i = 0; i < ARRAY_SIZE(lkvm_options); i++) {
		const struct lkvm_option *o = &lkvm_options[i];

		if (short_opt && o->letter == short_opt)
			return o->spelling;
		if (len && strlen(o->name) == len && !strncmp(o->name, arg, len))
			return o->spelling;
	}
	return NULL;
}
