/* The throw-away directory of `thpvm sandbox` (sandbox_dir.h). */
#include "cli/sandbox_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/sandbox_script.h"
#include "lib/log.h"

/* Where the directory goes: the user's runtime directory (private,
 * memory-backed) where there is one, else /tmp. */
static const char *dir_parent(void)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	return run && run[0] == '/' ? run : "/tmp";
}

/* The guest finds its script through init= on the kernel command line,
 * which splits at spaces and knows no quoting: a path of plain bytes. */
static bool path_plain(const char *path)
{
	return strspn(path, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789/._-+") == strlen(path);
}

static int script_write(const char *path, const char *cwd,
			const struct net_user_config *net, char *const argv[])
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	FILE *f;
	int err;

	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		pr_err("sandbox: %s: %s", path, strerror(-err));
		return err;
	}
	err = sandbox_script_write(f, cwd, net, argv);
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		pr_err("sandbox: cannot write %s: %s", path, strerror(-err));
	return err;
}

int sandbox_dir_make(struct sandbox_dir *d, const char *cwd,
		     const struct net_user_config *net, char *const argv[])
{
	char script[PATH_MAX + sizeof("/" SANDBOX_SCRIPT)];
	const char *parent = dir_parent();
	int err;

	d->path[0] = '\0';
	if (!path_plain(parent)) {
		pr_err("sandbox: $XDG_RUNTIME_DIR %s: the guest's kernel "
		       "command line cannot name a path with other bytes than "
		       "letters, digits and /._-+", parent);
		return -EINVAL;
	}
	if (snprintf(d->path, sizeof(d->path), "%s/thpvm-sandbox-XXXXXX",
		     parent) >= (int)sizeof(d->path)) {
		pr_err("sandbox: %s: the path is too long", parent);
		d->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(d->path)) {
		err = -errno;
		pr_err("sandbox: cannot make a directory in %s: %s", parent,
		       strerror(-err));
		d->path[0] = '\0';
		return err;
	}
	snprintf(script, sizeof(script), "%s/" SANDBOX_SCRIPT, d->path);
	err = script_write(script, cwd, net, argv);
	if (err)
		sandbox_dir_remove(d);
	return err;
}

int sandbox_dir_status(const struct sandbox_dir *d, int *status)
{
	char path[PATH_MAX + sizeof("/" SANDBOX_STATUS)], text[8];
	struct stat st;
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/" SANDBOX_STATUS, d->path);
	/* The guest may have put a link or a FIFO there (Tmknod makes
	 * FIFOs): O_NOFOLLOW and O_NONBLOCK, and a regular file alone read,
	 * so that nothing it made can hold thpvm up. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		if (!fstat(fd, &st) && S_ISREG(st.st_mode))
			n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	if (n < 0) {
		pr_err("sandbox: the command's exit status is missing: the "
		       "guest did not finish it (see its console output)");
		return -ENOENT;
	}
	text[n] = '\0';
	if (sandbox_status_parse(text, n, status)) {
		pr_err("sandbox: the guest's exit status \"%.*s\" is not a "
		       "number from 0 to 255", (int)strcspn(text, "\n"), text);
		return -EINVAL;
	}
	return 0;
}

/* nftw's callback: 0, or the errno that stops the walk. */
static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? errno : 0;
}

void sandbox_dir_remove(struct sandbox_dir *d)
{
	int err;

	if (!d->path[0])
		return;
	/* FTW_PHYS: a link the guest made is removed, not followed. */
	err = nftw(d->path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (err)
		pr_err("sandbox: cannot remove %s: %s", d->path,
		       strerror(err > 0 ? err : errno));
	d->path[0] = '\0';
}
