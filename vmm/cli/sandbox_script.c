/* The guest side of `thpvm sandbox` (sandbox_script.h). */
#include "cli/sandbox_script.h"

#include <arpa/inet.h>
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
 * sysfs and devtmpfs where an initramfs has not moved its own. What the
 * command needs and cannot have is said with unready, on the console. */
static const char script_head[] =
	"#!/bin/sh\n"
	"# Written by thpvm sandbox (docs/sandbox.md), run as the guest's "
	"init.\n"
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
	"export PATH\n"
	"mounted() { grep -q \"^[^ ]* $1 \" /proc/mounts; }\n"
	"unready() { printf 'thpvm sandbox: %s; the command is not run\\n' "
	"\"$1\" >&2; }\n"
	"mount -t proc proc /proc\n"
	"mounted /sys || mount -t sysfs sysfs /sys\n"
	"mounted /dev || mount -t devtmpfs devtmpfs /dev\n"
	"mount -t tmpfs tmpfs /tmp\n"
	"mount -t tmpfs tmpfs /run\n";

/* Each thing the command needs in turn; the first that fails is said
 * and the command does not run: without its directory there is nowhere
 * for its status, and without the current directory it would run in
 * the wrong place. */
static const char status_mount[] =
	"if ! { mkdir " SANDBOX_GUEST_DIR " &&\n"
	"\tmount -t 9p -o trans=virtio,version=9p2000.L " SANDBOX_TAG " "
	SANDBOX_GUEST_DIR "; }; then\n"
	"\tunready \"cannot mount thpvm's directory (9p tag " SANDBOX_TAG
	") on " SANDBOX_GUEST_DIR "\"\n";

/* mkdir -p: where the guest's own tmpfs on /tmp or /run hides the path,
 * it is made there; anywhere else the host's is already there. */
static const char cwd_mount[] =
	"elif ! { mkdir -p \"$dir\" &&\n"
	"\tmount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 "
	SANDBOX_CWD_TAG " \"$dir\"; }; then\n"
	"\tunready \"cannot mount the current directory (9p tag "
	SANDBOX_CWD_TAG ") on $dir\"\n";

static const char cwd_enter[] =
	"elif ! cd \"$dir\"; then\n"
	"\tunready \"cannot change to $dir\"\n"
	"else\n";

/* After it: its status for thpvm, the console drained (the power-off
 * does not wait for it), and the end, by the host's poweroff where it
 * has one (quiet: it would complain of the read-only /), else by sysrq.
 * PID 1 must not return: the kernel would panic. */
static const char script_tail[] =
	"\techo $? >" SANDBOX_GUEST_DIR "/" SANDBOX_STATUS "\n"
	"fi\n"
	"sync\n"
	"stty -F /dev/console \"$(stty -F /dev/console -g)\" 2>/dev/null\n"
	"command -v poweroff >/dev/null && poweroff -f >/dev/null 2>&1\n"
	"echo o >/proc/sysrq-trigger\n"
	"sleep 60\n";

/* net_up: lo and eth0 up on the user-mode network, and its DNS
 * forwarder in place of the host's resolv.conf (read-only here, and
 * maybe naming a resolver on the host's loopback): written where it
 * points if that is on the guest's tmpfs, else bound over it. */
static void net_up_write(FILE *f, const struct net_user_config *net)
{
	char addr[INET_ADDRSTRLEN], gw[INET_ADDRSTRLEN], dns[INET_ADDRSTRLEN];
	struct in_addr a;

	a = net_user_addr(net, NET_USER_DHCP_FIRST);
	inet_ntop(AF_INET, &a, addr, sizeof(addr));
	a = net_user_addr(net, NET_USER_GATEWAY);
	inet_ntop(AF_INET, &a, gw, sizeof(gw));
	a = net_user_addr(net, NET_USER_DNS);
	inet_ntop(AF_INET, &a, dns, sizeof(dns));
	fprintf(f, "net_up() {\n"
		"\tip link set lo up && ip link set eth0 up &&\n"
		"\tip addr add %s/%u dev eth0 &&\n"
		"\tip route add default via %s || return 1\n"
		"\tresolv=$(readlink -m /etc/resolv.conf)\n"
		"\tcase \"$resolv\" in\n"
		"\t/run/*|/tmp/*) mkdir -p \"${resolv%%/*}\" &&\n"
		"\t\techo 'nameserver %s' >\"$resolv\" ;;\n"
		"\t*) echo 'nameserver %s' >/run/thpvm-resolv.conf &&\n"
		"\t\tmount --bind /run/thpvm-resolv.conf \"$resolv\" ;;\n"
		"\tesac\n"
		"}\n", addr, net->prefix, gw, dns, dns);
}

int sandbox_script_write(FILE *f, const char *cwd,
			 const struct net_user_config *net,
			 char *const argv[])
{
	fputs(script_head, f);
	if (net)
		net_up_write(f, net);
	/* The path once, quoted; "$dir" after, which nothing re-reads. */
	fputs("dir=", f);
	shell_quote(f, cwd ?: "/");
	fputc('\n', f);
	fputs(status_mount, f);
	if (cwd)
		fputs(cwd_mount, f);
	if (net)
		fputs("elif ! net_up; then\n"
		      "\tunready \"cannot set up eth0 on the user-mode "
		      "network\"\n", f);
	fputs(cwd_enter, f);
	/* exec runs a program, never a builtin, and in a subshell leaves
	 * the script to carry on. */
	fputs("\t( exec", f);
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
