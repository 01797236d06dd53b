/* Dropping root for --user (run_user.h). */
#include "cli/run_user.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"

int run_user_lookup(const char *name, struct run_user *user)
{
	struct passwd *pw;

	if (geteuid() != 0) {
		pr_err("--user %s: only root can run a VM as another user",
		       name);
		return -EPERM;
	}
	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		int err = errno ? -errno : -ENOENT;

		pr_err("--user %s: %s", name,
		       err == -ENOENT ? "no such user" : strerror(-err));
		return err;
	}
	if (pw->pw_uid == 0) {
		pr_err("--user %s: that is root, nothing would be dropped",
		       name);
		return -EINVAL;
	}
	user->name = name;
	user->uid = pw->pw_uid;
	user->gid = pw->pw_gid;
	return 0;
}

int run_user_drop(const struct run_user *user)
{
	/* glibc applies each to every thread of the process; the group
	 * calls first, while still allowed. */
	if (setgroups(1, &user->gid) < 0 ||
	    setresgid(user->gid, user->gid, user->gid) < 0 ||
	    setresuid(user->uid, user->uid, user->uid) < 0) {
		int err = -errno;

		pr_err("--user %s: cannot change to uid %u gid %u: %s",
		       user->name, (unsigned)user->uid, (unsigned)user->gid,
		       strerror(-err));
		return err;
	}
	return 0;
}
