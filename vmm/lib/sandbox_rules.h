/* The system calls each thread kind may make (sandbox_rules.c), read by
 * sandbox.c, which turns them into seccomp filters. */
#ifndef THPVM_SANDBOX_RULES_H
#define THPVM_SANDBOX_RULES_H

#include "lib/sandbox.h"

/* Argument checks a rule may carry; sandbox.c fills in the values that
 * are only known at run time (the pid, the socket paths). */
enum sandbox_arg {
	SANDBOX_ANY,		/* any arguments */
	SANDBOX_NO_EXEC,	/* mmap, mprotect: no PROT_EXEC (arg 2) */
	SANDBOX_OWN_PID,	/* tgkill, kill: this process only (arg 0) */
	SANDBOX_UNLINK_A0,	/* unlink: an allowed path (arg 0) */
	SANDBOX_UNLINK_A1,	/* unlinkat: an allowed path (arg 1) */
	SANDBOX_READ_ONLY_A1,	/* open: O_RDONLY, no O_CREAT (arg 1) */
	SANDBOX_READ_ONLY_A2,	/* openat: the same (arg 2) */
	SANDBOX_TO_UID,		/* setresuid: to --user's uid, if any */
	SANDBOX_TO_GID,		/* setresgid: to its gid */
	SANDBOX_ONE_GROUP,	/* setgroups: one group (arg 0) */
	SANDBOX_EACCES,		/* not allowed, but fails with EACCES
				 * rather than ending the VM */
};

struct sandbox_rule {
	const char *name;	/* libseccomp's name; skipped on an arch
				 * without it (open, poll on arm64) */
	enum sandbox_arg arg;
};

struct sandbox_rules {
	const struct sandbox_rule *rules;
	unsigned nr;
};

/* What every kind may call: the C library's own needs and the logging,
 * locking and fatal-signal paths any thread can reach. */
extern const struct sandbox_rules sandbox_common_rules;
/* What only the sanitizer runtime needs (its reports and the leak check
 * at exit); empty in a build without sanitizers. */
extern const struct sandbox_rules sandbox_sanitizer_rules;
/* Each kind's own list. */
extern const struct sandbox_rules sandbox_kind_rules[SANDBOX_NR_KINDS];

#endif
