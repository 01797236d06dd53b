/* The request, wait and reply of thpvm balloon and thpvm mem
 * (cmd_wait.h). */
#include "cli/cmd_wait.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_util.h"
#include "lib/log.h"
#include "lib/util.h"

#define WAIT_POLL_MS 100

/* Why the guest's driver does not move, where that can be known: the VM
 * is paused, or no driver has started the device. "" otherwise. */
static const char *wait_blocker(const char *name, const struct cmd_wait *w,
				const struct control_result *last,
				char *buf, size_t len)
{
	struct control_result info;
	const char *state;
	bool paused = false;
	/* A reply without it says nothing about the driver. */
	bool driver_ok = !json_is_false(json_object_get(last->reply,
							"driver_ok"));

	if (!control_client_command(name, "info", 0, &info)) {
		state = json_string_value(json_object_get(info.reply, "state"));
		paused = state && !strcmp(state, "paused");
	}
	control_result_free(&info);
	if (paused)
		return ": the VM is paused (thpvm resume)";
	if (!driver_ok) {
		snprintf(buf, len, ": %s in the guest", w->no_driver);
		return buf;
	}
	return "";
}

int cmd_wait_target(const char *name, const struct cmd_wait *w,
		    unsigned long timeout_s, struct control_result *res)
{
	bool tty = isatty(STDERR_FILENO), shown = false;
	uint64_t target, actual;
	struct timespec t0;
	char a[32], b[32], why[96];
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		target = cmd_reply_u64(res->reply, w->target_key);
		actual = cmd_reply_u64(res->reply, w->actual_key);
		if (actual == target)
			break;
		if (time_ms_since(&t0) >= timeout_s * 1e3) {
			if (shown)
				fputc('\n', stderr);
			pr_err("%s: VM \"%s\" did not reach %s %s within %lu s "
			       "(%s %s)%s", w->cmd, name, w->target_words,
			       size_format(target, a, sizeof(a)), timeout_s,
			       w->actual_word,
			       size_format(actual, b, sizeof(b)),
			       wait_blocker(name, w, res, why, sizeof(why)));
			return 1;
		}
		if (tty)
			shown = fprintf(stderr, "\r%s: %s %s, target %s ",
					w->cmd, w->actual_word,
					size_format(actual, a, sizeof(a)),
					size_format(target, b, sizeof(b))) > 0;
		usleep(WAIT_POLL_MS * 1000);
		control_result_free(res);
		rc = control_client_command(name, w->cmd, 0, res);
		if (rc) {
			if (shown)
				fputc('\n', stderr);
			pr_err("%s", res->error);
			return 1;
		}
	}
	if (shown)
		fputc('\n', stderr);
	return 0;
}

int cmd_wait_parse(const char *cmd, const char *arg, unsigned long *wait_s)
{
	*wait_s = WAIT_DEFAULT_S;
	if (arg && (uint_parse(arg, WAIT_MAX_S, wait_s) || !*wait_s)) {
		pr_err("%s: --wait=%s: expected seconds from 1 to %d", cmd, arg,
		       WAIT_MAX_S);
		return EXIT_USAGE;
	}
	return 0;
}

/* One VM's request, wait and reply (cmd_change_main). */
static int cmd_change_one(const char *name, const struct cmd_wait *w,
			  const struct cmd_change *c)
{
	struct control_result res;
	json_t *req = json_pack("{s:s}", "cmd", w->cmd);
	int rc;

	if (req && c->key &&
	    json_object_set_new(req, c->key, json_from_u64(c->value))) {
		json_decref(req);
		req = NULL;
	}
	rc = control_client_send(name, req, 0, &res);
	json_decref(req);
	if (rc) {
		pr_err("%s", res.error);
		control_result_free(&res);
		return 1;
	}
	if (c->wait_s && cmd_wait_target(name, w, c->wait_s, &res)) {
		control_result_free(&res);
		return 1;
	}
	rc = c->json ? cmd_print_json(cmd_reply_json(res.reply)) :
		       w->print(name, res.reply);
	control_result_free(&res);
	return rc;
}

struct change_each {
	const struct cmd_wait *w;
	const struct cmd_change *change;
};

static int change_each_vm(void *ctx, const char *name, json_t *info)
{
	const struct change_each *e = ctx;

	return cmd_change_one(name, e->w, e->change);
}

int cmd_change_main(const struct command *cmd, const struct cmd_wait *w,
		    const struct option *options,
		    int (*take)(void *ctx, int opt, const char *arg),
		    int argc, char **argv)
{
	struct cmd_change_request req = { .change = { .key = NULL } };
	const struct cmd_options own = {
		.options = options, .take = take, .ctx = &req,
	};
	struct change_each each = { w, &req.change };
	struct cmd_args args;
	int rc;

	rc = vm_select_parse(&req.sel, cmd, argc, argv, &own, &args);
	if (rc >= 0)
		return rc;
	req.change.json = args.json;
	return vm_select_each(&req.sel, change_each_vm, &each);
}
