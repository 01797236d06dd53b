/* The guest side of `thpvm sandbox` (sandbox_script.h). */
#include "cli/sandbox_script.h"

#include <errno.h>
#include <string.h>

void shell_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* Before the command: a guest of its own (/proc, /sys, /dev; /tmp and
 * /run writable) on the host's read-only /. proc first, whatever is
 * there: until then /proc may be the host's, seen through the share.
 * sysfs and devtmpfs where an initramfs has not moved its own. */
static const char script_head[] =
	"#!/bin/sh\n"
	"# Written by thpvm sandbox (docs/sandbox.md), run as the guest's "
	"init.\n"
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
	"export PATH\n"
	"mounted() { grep -q \"^[^ ]* $1 \" /proc/mounts; }\n"
	"mount -t proc proc /proc\n"
	"mounted /sys || mount -t sysfs sysfs /sys\n"
	"mounted /dev || mount -t devtmpfs devtmpfs /dev\n"
	"mount -t tmpfs tmpfs /tmp\n"
	"mount -t tmpfs tmpfs /run\n"
	"mkdir " SANDBOX_GUEST_DIR "\n"
	"mount -t 9p -o trans=virtio,version=9p2000.L " SANDBOX_TAG " "
	SANDBOX_GUEST_DIR "\n";

/* After it: its status for thpvm, the console drained (the power-off
 * does not wait for it), and the end, by the host's poweroff where it
 * has one (quiet: it would complain of the read-only /), else by sysrq.
 * PID 1 must not return: the kernel would panic. */
static const char script_tail[] =
	"echo $? >" SANDBOX_GUEST_DIR "/" SANDBOX_STATUS "\n"
	"sync\n"
	"stty -F /dev/console \"$(stty -F /dev/console -g)\" 2>/dev/null\n"
	"command -v poweroff >/dev/null && poweroff -f >/dev/null 2>&1\n"
	"echo o >/proc/sysrq-trigger\n"
	"sleep 60\n";

int sandbox_script_write(FILE *f, const char *cwd, char *const argv[])
{
	fputs(script_head, f);
	fputs("cd ", f);
	shell_quote(f, cwd);
	fputs(" 2>/dev/null || cd /\n", f);
	/* exec runs a program, never a builtin, and in a subshell leaves
	 * the script to carry on. */
	fputs("( exec", f);
	for (; *argv; argv++) {
		fputc(' ', f);
		shell_quote(f, *argv);
	}
	fputs(" )\n", f);
	fputs(script_tail, f);
	return ferror(f) ? -EIO : 0;
}

int sandbox_status_parse(const char *text, size_t len, int *status)
{
	int n = 0;
	size_t i;

	if (len < 2 || len > 4 || text[len - 1] != '\n')
		return -EINVAL;
	for (i = 0; i < len - 1; i++) {
		if (text[i] < '0' || text[i] > '9' || (i == 0 && text[i] == '0'
							&& len > 2))
			return -EINVAL;
		n = n * 10 + (text[i] - '0');
	}
	if (n > 255)
		return -EINVAL;
	*status = n;
	return 0;
}
