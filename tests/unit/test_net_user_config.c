/* The user-mode network's settings (backend/net_user_config.c): QEMU's
 * spellings of net= and hostfwd= accepted and written back as stat shows
 * them, everything else refused with nothing changed, and the checks
 * only the whole list allows (guest addresses, clashing host ports). */
#include <arpa/inet.h>

#include "backend/net_user_config.h"
#include "unit.h"

static const char *fwd_text(const char *spec, const char *net)
{
	static char buf[64];
	struct net_user_config c;

	net_user_config_init(&c);
	if (net && net_user_parse_net(net, &c))
		return "net refused";
	if (net_user_parse_fwd(spec, &c))
		return "refused";
	net_user_fwd_format(&c, &c.fwds[0], buf, sizeof(buf));
	return buf;
}

static void test_defaults(void)
{
	struct net_user_config c;
	struct in_addr a;

	net_user_config_init(&c);
	CHECK_EQ(ntohl(c.net.s_addr), 0x0a000200);
	CHECK_EQ(c.prefix, 24);
	CHECK(!c.restricted);
	CHECK_EQ(c.nr_fwds, 0);
	a = net_user_addr(&c, NET_USER_GATEWAY);
	CHECK_EQ(ntohl(a.s_addr), 0x0a000202);
	a = net_user_addr(&c, NET_USER_DNS);
	CHECK_EQ(ntohl(a.s_addr), 0x0a000203);
	a = net_user_addr(&c, NET_USER_DHCP_FIRST);
	CHECK_EQ(ntohl(a.s_addr), 0x0a00020f);
}

static void test_fwd_spellings(void)
{
	CHECK(!strcmp(fwd_text("tcp::2222-:22", NULL),
		      "tcp:0.0.0.0:2222-10.0.2.15:22"));
	/* QEMU takes an empty protocol as tcp. */
	CHECK(!strcmp(fwd_text("::2222-:22", NULL),
		      "tcp:0.0.0.0:2222-10.0.2.15:22"));
	CHECK(!strcmp(fwd_text("udp:127.0.0.1:5353-10.0.2.20:53", NULL),
		      "udp:127.0.0.1:5353-10.0.2.20:53"));
	CHECK(!strcmp(fwd_text("tcp::65535-:1", NULL),
		      "tcp:0.0.0.0:65535-10.0.2.15:1"));
	/* The default guest follows the network. */
	CHECK(!strcmp(fwd_text("tcp::80-:8080", "192.168.7.0/24"),
		      "tcp:0.0.0.0:80-192.168.7.15:8080"));
}

static void test_fwd_refused(void)
{
	static const char *const bad[] = {
		"", "tcp", "tcp:", "tcp::", "tcp::22", "tcp::22-", "tcp::22-:",
		"tcp::-:22", "tcp::0-:22", "tcp::22-:0", "tcp::65536-:22",
		"tcp::22-:65536", "tcp::+22-:22", "tcp:: 22-:22",
		"tcp::22-:22x", "tcp::0x16-:22", "tcp::022222-:22",
		"sctp::22-:22", "TCP::22-:22", "tcpx::22-:22",
		"tcp:localhost:22-:22", "tcp:1.2.3:22-:22",
		"tcp:1.2.3.4.5:22-:22", "tcp:256.0.0.1:22-:22",
		"tcp:01.2.3.4:22-:22", "tcp::22-10.0.2:22",
		"tcp::22-10.0.2.15.1:22", "tcp::22-:22-:23",
		"tcp:1.2.3.4:5:22-:22", "udp::22", ":2222-:22",
	};
	struct net_user_config c;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		net_user_config_init(&c);
		if (!net_user_parse_fwd(bad[i], &c) || c.nr_fwds) {
			printf("# accepted \"%s\"\n", bad[i]);
			unit.current_failures++;
		}
	}
}

static void test_fwd_limit(void)
{
	struct net_user_config c;
	char spec[32];
	unsigned i;

	net_user_config_init(&c);
	for (i = 0; i < NET_USER_MAX_FWDS; i++) {
		snprintf(spec, sizeof(spec), "tcp::%u-:22", 1000 + i);
		CHECK(!net_user_parse_fwd(spec, &c));
	}
	CHECK(net_user_parse_fwd("tcp::2000-:22", &c));
	CHECK_EQ(c.nr_fwds, NET_USER_MAX_FWDS);
}

static void test_net(void)
{
	static const char *const bad[] = {
		"", "10.0.2.0", "10.0.2.0/", "10.0.2.0/24x", "10.0.2.1/24",
		"10.0.2.0/28", "10.0.0.0/7", "10.0.2.0/33", "10.0.2/24",
		"/24", "10.0.2.0/-24", "10.0.2.0/024000",
	};
	struct net_user_config c;
	unsigned i;

	net_user_config_init(&c);
	CHECK(!net_user_parse_net("172.16.0.0/12", &c));
	CHECK_EQ(ntohl(c.net.s_addr), 0xac100000);
	CHECK_EQ(c.prefix, 12);
	CHECK(!net_user_parse_net("10.0.2.32/27", &c));
	CHECK(!net_user_parse_net("10.0.0.0/8", &c));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (!net_user_parse_net(bad[i], &c) ||
		    ntohl(c.net.s_addr) != 0x0a000000 || c.prefix != 8) {
			printf("# accepted \"%s\"\n", bad[i]);
			unit.current_failures++;
		}
	}
}

/* Each list with the forward the check names, or -1: none. */
static void test_check(void)
{
	static const struct {
		const char *net, *fwds[3];
		int bad;
	} cases[] = {
		{ NULL, { "tcp::22-:22", "udp::22-:22" }, -1 },
		{ NULL, { "tcp:127.0.0.1:22-:22", "tcp:127.0.0.2:22-:22" }, -1 },
		{ NULL, { "tcp::22-:22", "tcp:127.0.0.1:22-:23" }, 1 },
		{ NULL, { "tcp:127.0.0.1:22-:22", "tcp::22-:23" }, 1 },
		{ NULL, { "udp::53-:53", "udp::53-:54" }, 1 },
		{ NULL, { "tcp::22-10.0.3.15:22" }, 0 },
		{ NULL, { "tcp::22-10.0.2.0:22" }, 0 },
		{ NULL, { "tcp::22-10.0.2.255:22" }, 0 },
		{ NULL, { "tcp::22-10.0.2.2:22" }, 0 },
		{ NULL, { "tcp::22-10.0.2.3:22" }, 0 },
		{ NULL, { "tcp::22-10.0.2.254:22" }, -1 },
		{ "192.168.0.0/16", { "tcp::22-192.168.200.9:22" }, -1 },
		{ "192.168.0.0/16", { "tcp::22-:22" }, -1 },
		{ "192.168.0.0/16", { "tcp::22-10.0.2.15:22" }, 0 },
	};
	struct net_user_config c;
	const char *why;
	unsigned i, j, bad;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		net_user_config_init(&c);
		if (cases[i].net)
			CHECK(!net_user_parse_net(cases[i].net, &c));
		for (j = 0; j < 3 && cases[i].fwds[j]; j++)
			CHECK(!net_user_parse_fwd(cases[i].fwds[j], &c));
		why = net_user_config_check(&c, &bad);
		if (cases[i].bad < 0 ? why != NULL :
		    !why || bad != (unsigned)cases[i].bad) {
			printf("# case %u: %s (forward %u)\n", i,
			       why ? why : "accepted", why ? bad : 0);
			unit.current_failures++;
		}
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_defaults),
		UNIT_TEST(test_fwd_spellings),
		UNIT_TEST(test_fwd_refused),
		UNIT_TEST(test_fwd_limit),
		UNIT_TEST(test_net),
		UNIT_TEST(test_check),
	};

	return UNIT_RUN(tests);
}
