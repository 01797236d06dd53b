/* Dropping root for --user (run_user.h). */
#include "cli/run_user.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

/* UID:GID in decimal (name has a ':'): ids that need no user database
 * (a static build's getpwnam works only where the glibc it was built with
 * is installed). 0, or -EINVAL after a message. */
static int ids_parse(const char *name, struct run_user *user)
{
	const char *colon = strchr(name, ':');
	unsigned long uid, gid;
	char num[16];
	size_t len = (size_t)(colon - name);

	if (len < sizeof(num)) {
		memcpy(num, name, len);
		num[len] = '\0';
	}
	/* (uid_t)-1 means "unchanged" to setresuid: never an id. */
	if (len >= sizeof(num) || uint_parse(num, (uid_t)-2, &uid) ||
	    uint_parse(colon + 1, (gid_t)-2, &gid)) {
		pr_err("--user %s: expected a user name or UID:GID", name);
		return -EINVAL;
	}
	user->uid = uid;
	user->gid = gid;
	return 0;
}

int run_user_lookup(const char *name, struct run_user *user)
{
	struct passwd *pw;
	int err;

	if (geteuid() != 0) {
		pr_err("--user %s: only root can run a VM as another user",
		       name);
		return -EPERM;
	}
	user->name = name;
	if (strchr(name, ':')) {
		err = ids_parse(name, user);
		if (err)
			return err;
	} else {
		errno = 0;
		pw = getpwnam(name);
		if (!pw) {
			err = errno ? -errno : -ENOENT;
			pr_err("--user %s: %s", name, err == -ENOENT ?
			       "no such user" : strerror(-err));
			return err;
		}
		user->uid = pw->pw_uid;
		user->gid = pw->pw_gid;
	}
	if (user->uid == 0) {
		pr_err("--user %s: that is root, nothing would be dropped",
		       name);
		return -EINVAL;
	}
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
