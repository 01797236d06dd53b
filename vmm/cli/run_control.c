/* Where `thpvm run` listens for control requests (run_control.h). */
#include "cli/run_control.h"

#include <errno.h>
#include <string.h>

#include "control/control_path.h"
#include "lib/log.h"

#define WAY_OUT "use --control-socket PATH, or --no-control"

/* The usual directory, made if needed, and <name>.sock in it. */
static int default_path(const char *name, char *path, size_t len)
{
	char dir[CONTROL_PATH_MAX];
	int err = control_path_dir_create(dir, sizeof(dir));

	if (err == -ENOENT && control_path_dir(dir, sizeof(dir)) == -ENOENT)
		pr_err("no directory for the control socket: neither "
		       "XDG_RUNTIME_DIR nor HOME is an absolute path ("
		       WAY_OUT ")");
	else if (err == -ENOTDIR)
		pr_err("cannot use %s for control sockets: not a directory, "
		       "or a symlink (" WAY_OUT ")", dir);
	else if (err == -EPERM)
		pr_err("cannot use %s for control sockets: another user owns "
		       "it (" WAY_OUT ")", dir);
	else if (err)
		pr_err("cannot create the control socket directory %s: %s ("
		       WAY_OUT ")", dir, strerror(-err));
	if (err)
		return err;
	err = control_path_socket(name, path, len);
	if (err == -ENAMETOOLONG)
		pr_err("the control socket %s/%s%s would be longer than %zu "
		       "bytes (" WAY_OUT ")", dir, name, CONTROL_SOCKET_SUFFIX,
		       CONTROL_PATH_MAX - 1);
	return err;
}

int run_control_open(const struct run_options *opts,
		     struct control_server **out)
{
	const char *name = opts->machine.vm.name;
	char path[CONTROL_PATH_MAX];
	int err;

	*out = NULL;
	if (opts->no_control)
		return 0;
	if (opts->control_socket) {
		/* run_options checked that it fits. */
		strcpy(path, opts->control_socket);
	} else {
		err = default_path(name, path, sizeof(path));
		if (err)
			return err;
	}
	err = control_server_open(path, out);
	if (err == -EADDRINUSE && !opts->control_socket)
		pr_err("a VM named \"%s\" is already running", name);
	else if (err == -EADDRINUSE)
		pr_err("--control-socket %s: another VM listens there", path);
	else if (err == -EEXIST)
		pr_err("cannot create the control socket %s: a file that is "
		       "not a socket is in the way", path);
	else if (err)
		pr_err("cannot create the control socket %s: %s%s", path,
		       strerror(-err), opts->control_socket ? "" :
		       " (" WAY_OUT ")");
	return err;
}
