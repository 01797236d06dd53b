/* One control connection's lines and replies (control/control_conn.c),
 * without a socket: a reply holds the next line back until it is sent,
 * a line too long is refused once and skipped to its end, a last line
 * without its newline is answered at the end of input, and then the
 * connection is finished. */
#include <stdlib.h>
#include <string.h>

#include "control/control_conn.h"
#include "unit.h"

static int handle_hello(void *opaque, json_t *request, json_t *reply)
{
	return control_reply_add(reply, json_pack("{s:s}", "hello", "you"));
}

static struct control_commands commands;

static void receive(struct control_conn *c, const char *text, size_t len)
{
	size_t room;
	char *in = control_conn_in(c, &room);

	CHECK(len <= room);
	memcpy(in, text, len);
	control_conn_received(c, len);
}

/* The next reply, as text, taken whole; "" when there is none. */
static const char *next_reply(struct control_conn *c)
{
	static char text[256];
	const char *out;
	size_t len;

	text[0] = '\0';
	if (control_conn_answer_next(c, &commands) != 1)
		return text;
	out = control_conn_out(c, &len);
	CHECK(len < sizeof(text));
	memcpy(text, out, len);
	text[len] = '\0';
	control_conn_sent(c, len);
	return text;
}

static void test_one_reply_at_a_time(void)
{
	static const char two[] = "{\"cmd\":\"hello\"}\n{\"cmd\":\"nope\"}\n";
	struct control_conn c;
	size_t len;

	CHECK_EQ(control_conn_init(&c), 0);
	receive(&c, two, strlen(two));
	CHECK_EQ(control_conn_answer_next(&c, &commands), 1);
	/* Not sent yet: the second line waits. */
	CHECK_EQ(control_conn_answer_next(&c, &commands), 0);
	control_conn_out(&c, &len);
	control_conn_sent(&c, len - 1);
	CHECK(control_conn_pending(&c));
	CHECK_EQ(control_conn_answer_next(&c, &commands), 0);
	control_conn_out(&c, &len);
	CHECK_EQ(len, 1);
	control_conn_sent(&c, 1);
	CHECK_STR(next_reply(&c),
		  "{\"ok\":false,\"error\":\"unknown command \\\"nope\\\"\"}\n");
	CHECK_STR(next_reply(&c), "");
	CHECK(!control_conn_finished(&c));
	control_conn_input_ended(&c);
	CHECK(control_conn_finished(&c));
	control_conn_free(&c);
}

static void test_long_line_refused_once(void)
{
	static const char after[] = "tail of it\n{\"cmd\":\"hello\"}\n";
	char *line = malloc(CONTROL_LINE_MAX + 1);
	struct control_conn c;
	size_t room;

	CHECK_EQ(control_conn_init(&c), 0);
	memset(line, 'x', CONTROL_LINE_MAX + 1);
	receive(&c, line, CONTROL_LINE_MAX + 1);
	control_conn_in(&c, &room);
	CHECK_EQ(room, 0);
	CHECK_STR(next_reply(&c), "{\"ok\":false,\"error\":\"request line "
		  "longer than 65536 bytes\"}\n");
	/* The rest of that line is skipped, and the next answered. */
	receive(&c, line, 100);
	CHECK_STR(next_reply(&c), "");
	receive(&c, after, strlen(after));
	CHECK_STR(next_reply(&c), "{\"ok\":true,\"hello\":\"you\"}\n");
	CHECK_STR(next_reply(&c), "");
	free(line);
	control_conn_free(&c);
}

static void test_last_line_without_newline(void)
{
	static const char last[] = "{\"cmd\":\"hello\"}";
	struct control_conn c;

	CHECK_EQ(control_conn_init(&c), 0);
	receive(&c, last, strlen(last));
	CHECK_STR(next_reply(&c), "");
	control_conn_input_ended(&c);
	CHECK(!control_conn_finished(&c));
	CHECK_STR(next_reply(&c), "{\"ok\":true,\"hello\":\"you\"}\n");
	CHECK(control_conn_finished(&c));
	control_conn_free(&c);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_one_reply_at_a_time),
		UNIT_TEST(test_long_line_refused_once),
		UNIT_TEST(test_last_line_without_newline),
	};

	if (control_commands_add(&commands, "hello", NULL, handle_hello, NULL))
		abort();
	return UNIT_RUN(tests);
}
