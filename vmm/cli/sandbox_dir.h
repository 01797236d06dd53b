/* The throw-away directory of `thpvm sandbox` on the host: made private
 * (mode 0700) under $XDG_RUNTIME_DIR or /tmp, holding the guest's script
 * and, once the guest is done, the command's exit status; removed with
 * whatever the guest left in it. */
#ifndef THPVM_SANDBOX_DIR_H
#define THPVM_SANDBOX_DIR_H

#include <limits.h>

#include "backend/net_user_config.h"

struct sandbox_dir {
	char path[PATH_MAX];	/* "": none made */
};

/* Makes the directory with the script that runs argv (NULL-terminated)
 * in cwd, shared as SANDBOX_CWD_TAG, or in / where cwd is NULL, with
 * eth0 on user-mode network net where it is not NULL
 * (sandbox_script_write). 0, or -errno after one message (then nothing
 * is left). */
int sandbox_dir_make(struct sandbox_dir *d, const char *cwd,
		     const struct net_user_config *net, char *const argv[]);

/* The command's exit status from the guest: 0, or -errno after one
 * message (none there, or not a status). */
int sandbox_dir_status(const struct sandbox_dir *d, int *status);

/* Removes the directory and all in it; a failure is said, not
 * returned: there is nothing else to do about it. */
void sandbox_dir_remove(struct sandbox_dir *d);

#endif
