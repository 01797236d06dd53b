/* The balloon request of the control socket (control/balloon_control.c):
 * which target each request asks for, and the errors a malformed or
 * impossible one gets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/balloon_control.h"
#include "lib/json.h"
#include "lib/util.h"
#include "unit.h"

#define RAM (1 * GiB)

/* Runs one request against a balloon target of target bytes. */
static int request(const char *text, uint64_t target, uint64_t *out,
		   char *reply_text, size_t len)
{
	json_t *req, *reply = json_object();
	struct json_error jerr;
	char *reply_json;
	int err;

	*out = UINT64_MAX;
	if (json_parse(text, strlen(text), &req, &jerr)) {
		CHECK(!"json_parse");
		json_decref(reply);
		return -EINVAL;
	}
	err = balloon_control_target(req, RAM, target, out, reply);
	reply_json = json_encode(reply);
	snprintf(reply_text, len, "%s", reply_json ? reply_json : "");
	free(reply_json);
	json_decref(reply);
	json_decref(req);
	return err;
}

static void test_targets(void)
{
	char reply[256];
	uint64_t t;

	CHECK_EQ(request("{\"cmd\":\"balloon\"}", 5 * MiB, &t, reply,
			 sizeof(reply)), 0);
	CHECK_EQ(t, 5 * MiB);
	CHECK_EQ(request("{\"cmd\":\"balloon\",\"inflate\":104857600}",
			 5 * MiB, &t, reply, sizeof(reply)), 0);
	CHECK_EQ(t, 105 * MiB);
	CHECK_EQ(request("{\"cmd\":\"balloon\",\"deflate\":5242880}", 5 * MiB,
			 &t, reply, sizeof(reply)), 0);
	CHECK_EQ(t, 0);
	/* set is the guest's memory: the balloon holds the rest. */
	CHECK_EQ(request("{\"cmd\":\"balloon\",\"set\":629145600}", 0, &t,
			 reply, sizeof(reply)), 0);
	CHECK_EQ(t, RAM - 600 * MiB);
	CHECK_EQ(request("{\"cmd\":\"balloon\",\"set\":1073741824}", 7, &t,
			 reply, sizeof(reply)), 0);
	CHECK_EQ(t, 0);
	CHECK_EQ(request("{\"cmd\":\"balloon\",\"inflate\":1073741824}", 0, &t,
			 reply, sizeof(reply)), 0);
	CHECK_EQ(t, RAM);
}

static void test_errors(void)
{
	static const struct {
		const char *req;
		int err;
		const char *msg;
	} cases[] = {
		{ "{\"cmd\":\"balloon\",\"inflate\":-1}", -EINVAL,
		  "inflate\\\" must be a size in bytes" },
		{ "{\"cmd\":\"balloon\",\"deflate\":\"1G\"}", -EINVAL,
		  "deflate\\\" must be a size in bytes" },
		{ "{\"cmd\":\"balloon\",\"set\":1.5}", -EINVAL,
		  "set\\\" must be a size in bytes" },
		{ "{\"cmd\":\"balloon\",\"set\":null}", -EINVAL,
		  "set\\\" must be a size in bytes" },
		{ "{\"cmd\":\"balloon\",\"inflate\":4096,\"set\":4096}", -EINVAL,
		  "balloon takes one of" },
		/* Two sizes: that is the error, whatever their values. */
		{ "{\"cmd\":\"balloon\",\"inflate\":4097,\"set\":4096}", -EINVAL,
		  "balloon takes one of" },
		{ "{\"cmd\":\"balloon\",\"inflate\":4096,\"deflate\":\"x\"}",
		  -EINVAL, "balloon takes one of" },
		{ "{\"cmd\":\"balloon\",\"inflate\":4097}", -EINVAL,
		  "inflate\\\" must be a multiple of 4 KiB" },
		{ "{\"cmd\":\"balloon\",\"set\":1}", -EINVAL,
		  "set\\\" must be a multiple of 4 KiB" },
		{ "{\"cmd\":\"balloon\",\"inflate\":1052672}", -ERANGE,
		  "cannot inflate by 1.0 MiB: the balloon would hold more "
		  "than the guest's 1 GiB of RAM" },
		{ "{\"cmd\":\"balloon\",\"deflate\":2147483648}", -ERANGE,
		  "cannot deflate by 2 GiB: the balloon target is 1023 MiB" },
		{ "{\"cmd\":\"balloon\",\"set\":0}", -ERANGE,
		  "cannot set guest memory to 0 B" },
		{ "{\"cmd\":\"balloon\",\"set\":1073745920}", -ERANGE,
		  "cannot set guest memory to 1.0 GiB" },
	};
	char reply[256];
	uint64_t t;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		CHECK_EQ(request(cases[i].req, RAM - MiB, &t, reply,
				 sizeof(reply)), cases[i].err);
		if (!strstr(reply, cases[i].msg) ||
		    !strstr(reply, "\"ok\":false")) {
			printf("# %s -> %s\n", cases[i].req, reply);
			CHECK(!"error text");
		}
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_targets),
		UNIT_TEST(test_errors),
	};

	return UNIT_RUN(tests);
}
