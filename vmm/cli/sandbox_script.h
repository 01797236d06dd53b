/* The guest side of `thpvm sandbox` (docs/sandbox.md): the shell script
 * the guest runs as init, with the user's command in it quoted word by
 * word, and the exit status it leaves behind. Pure: it writes to and
 * reads from buffers and streams only. */
#ifndef THPVM_SANDBOX_SCRIPT_H
#define THPVM_SANDBOX_SCRIPT_H

#include <stddef.h>
#include <stdio.h>

#include "backend/net_user_config.h"

/* The 9p tag of the throw-away directory, the script's and the status
 * file's, and where the guest mounts it (on a tmpfs: its / is the
 * host's, read-only). */
#define SANDBOX_TAG "thpvm-sandbox"
#define SANDBOX_GUEST_DIR "/run/thpvm"
#define SANDBOX_SCRIPT "init"
#define SANDBOX_STATUS "status"
/* The 9p tag of the directory thpvm was started in, shared read-write
 * and mounted at its own path in the guest. */
#define SANDBOX_CWD_TAG "thpvm-cwd"

/* s as one single-quoted shell word: every byte as it is, a ' as '\''. */
void shell_quote(FILE *f, const char *s);

/* The script: mounts, SANDBOX_CWD_TAG mounted at cwd and cd there (to
 * / where cwd is NULL), with net (NULL: none) eth0 set up on that
 * user-mode network (the first lease's address, its gateway, its DNS
 * forwarder as the only name server), argv[0] with the arguments up to
 * the NULL run as a command (never a shell builtin), its status written
 * to SANDBOX_GUEST_DIR/SANDBOX_STATUS, then power-off. Where a mount,
 * the cd or the network fails, the script says so on the console and
 * powers off without running the command or writing a status. 0, or
 * -EIO where f failed. */
int sandbox_script_write(FILE *f, const char *cwd,
			 const struct net_user_config *net,
			 char *const argv[]);

/* The status file's text, len bytes: "N\n", N from 0 to 255, into
 * *status. 0, or -EINVAL where it is anything else. */
int sandbox_status_parse(const char *text, size_t len, int *status);

#endif
