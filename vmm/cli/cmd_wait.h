/* What thpvm balloon and thpvm mem share: the request that changes the
 * host's target (or only asks), --wait, which asks the VM again until the
 * guest's driver has done what the host asked or time runs out, and the
 * reply printed. */
#ifndef THPVM_CMD_WAIT_H
#define THPVM_CMD_WAIT_H

#include "cli/vm_select.h"
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
	/* The reply without --json. Returns the exit status. */
	int (*print)(const char *name, json_t *reply);
};

/* What the options asked of each VM. */
struct cmd_change {
	const char *key;		/* the member to send, NULL: none */
	uint64_t value;
	unsigned long wait_s;		/* 0: no --wait */
	bool json;
};

/* --wait[=SECONDS] of command cmd: *wait_s from arg (NULL: the
 * default). Returns 0, or EXIT_USAGE after saying why. */
int cmd_wait_parse(const char *cmd, const char *arg, unsigned long *wait_s);

/* What the command line of thpvm balloon or mem asks: which VMs, and the
 * change for each. The command's own option function gets it as ctx. */
struct cmd_change_request {
	struct vm_select sel;
	struct cmd_change change;
};

/* The whole of such a command: parses argv with the command's own
 * options (and take), then, for each VM selected, sends {"cmd": w->cmd}
 * (with change.key: change.value where set), waits as asked and prints
 * the last reply. Returns the exit status. */
int cmd_change_main(const struct command *cmd, const struct cmd_wait *w,
		    const struct option *options,
		    int (*take)(void *ctx, int opt, const char *arg),
		    int argc, char **argv);

/* Sends w->cmd again until the reply's actual equals its target or
 * timeout_s pass; res holds the last reply. On a terminal, a progress
 * line on stderr. Returns 0, or 1 after reporting why (naming what holds
 * the guest back where known: the VM paused, no driver). */
int cmd_wait_target(const char *name, const struct cmd_wait *w,
		    unsigned long timeout_s, struct control_result *res);

#endif
