/* Finding the running VMs through their sockets (control_vms.h). */
#include "control/control_vms.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/control_path.h"
#include "core/vm.h"

#define SUFFIX_LEN (sizeof(CONTROL_SOCKET_SUFFIX) - 1)

/* scandir() filter: <valid name>.sock */
static int is_socket_name(const struct dirent *d)
{
	char name[VM_NAME_MAX + 1];
	size_t len = strlen(d->d_name);

	if (len <= SUFFIX_LEN || len - SUFFIX_LEN > VM_NAME_MAX ||
	    strcmp(d->d_name + len - SUFFIX_LEN, CONTROL_SOCKET_SUFFIX))
		return 0;
	memcpy(name, d->d_name, len - SUFFIX_LEN);
	name[len - SUFFIX_LEN] = '\0';
	return control_path_name_valid(name);
}

static void vm_visit(const char *name, control_vm_fn fn, void *ctx)
{
	struct control_result res;
	int err;

	err = control_client_command(name, "info", 0, &res);
	if (err == -ECONNREFUSED)
		control_client_remove_stale(name);
	/* Gone, or died without removing its socket. */
	if (err != -ECONNREFUSED && err != -ENOENT)
		fn(ctx, name, err, &res);
	control_result_free(&res);
}

int control_vms_each(control_vm_fn fn, void *ctx)
{
	struct dirent **entries = NULL;
	char dir[CONTROL_PATH_MAX];
	int i, n, err;

	err = control_path_dir(dir, sizeof(dir));
	if (err)
		return err;
	n = scandir(dir, &entries, is_socket_name, alphasort);
	if (n < 0)
		return errno == ENOENT ? 0 : -errno;
	for (i = 0; i < n; i++) {
		entries[i]->d_name[strlen(entries[i]->d_name) - SUFFIX_LEN] =
			'\0';
		vm_visit(entries[i]->d_name, fn, ctx);
		free(entries[i]);
	}
	free(entries);
	return 0;
}
