/* The command table and the answer to one request (control_commands.h). */
#include "control/control_commands.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int control_reply_add(json_t *reply, json_t *fields)
{
	return json_object_update_new(reply, fields) ? -ENOMEM : 0;
}

int control_reply_error(json_t *reply, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_clear(reply);
	/* The message may hold what the client sent, or be cut short in
	 * the middle of a character. */
	json_object_set_new(reply, "ok", json_false());
	json_object_set_new(reply, "error", json_string_lossy(msg));
	return err;
}

static bool reply_failed(json_t *reply)
{
	return json_is_false(json_object_get(reply, "ok"));
}

static const struct control_command *
commands_find(const struct control_commands *t, const char *name)
{
	unsigned i;

	for (i = 0; i < t->nr; i++)
		if (!strcmp(t->cmd[i].name, name))
			return &t->cmd[i];
	return NULL;
}

static unsigned args_count(const char *const *args)
{
	unsigned n = 0;

	while (args && args[n])
		n++;
	return n;
}

int control_commands_add(struct control_commands *t, const char *cmd,
			 const char *const *args, control_handler_fn fn,
			 void *opaque)
{
	struct control_command *c;

	if (!cmd[0] || strlen(cmd) > CONTROL_COMMAND_NAME_MAX ||
	    args_count(args) > CONTROL_MAX_ARGS)
		return -EINVAL;
	if (commands_find(t, cmd))
		return -EEXIST;
	if (t->nr == CONTROL_MAX_COMMANDS)
		return -ENOSPC;
	c = &t->cmd[t->nr++];
	strcpy(c->name, cmd);
	c->args = args;
	c->fn = fn;
	c->opaque = opaque;
	return 0;
}

static bool member_taken(const struct control_command *cmd, const char *key)
{
	unsigned n;

	if (!strcmp(key, "cmd"))
		return true;
	for (n = 0; cmd->args && cmd->args[n]; n++)
		if (!strcmp(key, cmd->args[n]))
			return true;
	return false;
}

/* The request's members must be "cmd" and the command's arguments (the
 * parser refuses one given twice): a misspelt argument is refused, not
 * silently ignored. */
static int request_check_members(const struct control_command *cmd,
				 json_t *req, json_t *reply)
{
	const char *key;
	json_t *value;

	json_object_foreach(req, key, value)
		if (!member_taken(cmd, key))
			return control_reply_error(reply, -EINVAL,
						   "\"%s\" takes no member "
						   "\"%.64s\"", cmd->name, key);
	return 0;
}

json_t *control_commands_answer(const struct control_commands *t,
				const char *line, size_t len)
{
	const struct control_command *cmd;
	json_t *req = NULL, *reply;
	struct json_error jerr;
	const char *name;
	int err;

	reply = json_pack("{s:b}", "ok", true);
	if (!reply)
		return NULL;
	err = json_parse(line, len, &req, &jerr);
	if (err == -EINVAL && jerr.offset == JSON_OFFSET_NONE) {
		control_reply_error(reply, err, "invalid JSON: %s", jerr.msg);
	} else if (err == -EINVAL) {
		control_reply_error(reply, err, "invalid JSON at byte %zu: %s",
				    jerr.offset, jerr.msg);
	} else if (err) {
		control_reply_error(reply, err, "%s", strerror(-err));
	} else if (!json_is_object(req)) {
		control_reply_error(reply, -EINVAL,
				    "a request must be a JSON object");
	} else if (!(name = json_string_value(json_object_get(req, "cmd")))) {
		control_reply_error(reply, -EINVAL,
				    "a request needs \"cmd\" (a string)");
	} else if (!(cmd = commands_find(t, name))) {
		control_reply_error(reply, -EINVAL,
				    "unknown command \"%.64s\"", name);
	} else if (!request_check_members(cmd, req, reply)) {
		err = cmd->fn(cmd->opaque, req, reply);
		if (err < 0 && !reply_failed(reply))
			control_reply_error(reply, err, "%s", strerror(-err));
	}
	json_decref(req);
	return reply;
}
