/* The 9p shares of `thpvm run`: lkvm's --9p DIR,TAG[,ro], and -d DIR,
 * which shares DIR as the guest's root file system. Each share is
 * checked as it is given: DIR an existing directory, TAG 1 to
 * P9_TAG_MAX bytes and not taken, at most MACHINE_MAX_SHARES. */
#ifndef THPVM_SHARE_OPTIONS_H
#define THPVM_SHARE_OPTIONS_H

#include <stdbool.h>

#include "machine/machine.h"

/* The tag Linux mounts as root with root=/dev/root rootfstype=9p. */
#define SHARE_ROOT_TAG "/dev/root"
/* What a kernel is given for -d DIR, as kvmtool gives it, and for a
 * read-only root share (-d DIR,ro, a sandbox's /), read-only too: the
 * guest's init then neither writes nor remounts it read-write. */
#define SHARE_ROOT_FLAGS "trans=virtio,version=9p2000.L rootfstype=9p"
#define SHARE_ROOT_PARAMS "root=/dev/root rw rootflags=rw," SHARE_ROOT_FLAGS
#define SHARE_ROOT_PARAMS_RO "root=/dev/root ro rootflags=ro," SHARE_ROOT_FLAGS

/* --9p DIR,TAG[,ro][,pci|,mmio], opt as messages spell it: 0, or
 * -errno after one message. */
int share_option_parse(struct machine_config *cfg, const char *opt,
		       const char *arg);
/* Whether path, a -d argument without its options, is a directory. */
bool share_is_dir(const char *path);
/* -d's dir (arg as the user gave it, for messages) as the root share. */
int share_option_root(struct machine_config *cfg, const char *opt,
		      const char *arg, const char *dir, bool read_only,
		      enum virtio_transport transport);
/* dir as tag (the caller's own, 1 to P9_TAG_MAX bytes), for a command
 * that adds shares of its own: any path, commas and all, with no
 * DIR,TAG words to split. 0, or -errno after one message naming opt
 * and dir. */
int share_option_tagged(struct machine_config *cfg, const char *opt,
			const char *dir, const char *tag, bool read_only);

#endif
