/* thpvm run --user NAME (or UID:GID): started as root only to open what
 * needs root (/dev/kvm, a tap, a block device, hugetlbfs), the VM runs as
 * NAME. */
#ifndef THPVM_RUN_USER_H
#define THPVM_RUN_USER_H

#include <stdbool.h>
#include <sys/types.h>

struct run_user {
	const char *name;
	uid_t uid;
	gid_t gid;
};

/* Looks NAME up, or reads UID:GID, before anything is opened. 0, or
 * -errno after one message (no such user, a malformed UID:GID, uid 0;
 * not root). */
int run_user_lookup(const char *name, struct run_user *user);

/* Becomes user in every thread (groups: its primary group alone), for
 * good: no way back to root. 0, or -errno after one message. */
int run_user_drop(const struct run_user *user);

#endif
