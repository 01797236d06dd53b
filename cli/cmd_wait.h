/* --wait of thpvm balloon and thpvm mem: ask the VM again until the
 * guest's driver has done what the host asked, or time runs out. */
#ifndef THPVM_CMD_WAIT_H
#define THPVM_CMD_WAIT_H

#include "control/control_client.h"

#define WAIT_DEFAULT_S 60
#define WAIT_MAX_S 86400

/* What to ask and compare, and the words for messages. */
struct cmd_wait {
	const char *cmd;		/* "balloon" */
	const char *target_key;		/* the host's figure: "target" */
	const char *actual_key;		/* the guest's: "actual" */
	const char *target_words;	/* "the target of" */
	const char *actual_word;	/* "actual" */
	const char *no_driver;		/* "no balloon driver has started" */
};

/* Sends w->cmd again until the reply's actual equals its target or
 * timeout_s pass; res holds the last reply. On a terminal, a progress
 * line on stderr. Returns 0, or 1 after reporting why (naming what holds
 * the guest back where known: the VM paused, no driver). */
int cmd_wait_target(const char *name, const struct cmd_wait *w,
		    unsigned timeout_s, struct control_result *res);

#endif
