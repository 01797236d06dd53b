/* The user-mode network's settings (backend/net_user_config.c), the text
 * a user gives -n mode=user: the input is a list of net= and hostfwd=
 * values, one per line, the first byte of each saying which. A refused
 * value changes nothing; an accepted forward, written as stat shows it,
 * parses back to itself; the list check names a forward that exists. */
#include <stdlib.h>
#include <string.h>

#include "backend/net_user_config.h"
#include "fuzz.h"

#define LINE_MAX 128

static void check_round_trip(const struct net_user_config *c,
			     const struct net_user_fwd *f)
{
	struct net_user_config again;
	char text[64];

	net_user_fwd_format(c, f, text, sizeof(text));
	net_user_config_init(&again);
	again.net = c->net;
	again.prefix = c->prefix;
	if (net_user_parse_fwd(text, &again) || again.nr_fwds != 1 ||
	    again.fwds[0].udp != f->udp ||
	    again.fwds[0].host_addr.s_addr != f->host_addr.s_addr ||
	    again.fwds[0].host_port != f->host_port ||
	    again.fwds[0].guest_port != f->guest_port ||
	    net_user_fwd_guest(c, f).s_addr !=
	    again.fwds[0].guest_addr.s_addr)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_user_config c, before;
	char line[LINE_MAX];
	const char *why;
	size_t i = 0, n;
	unsigned bad;

	net_user_config_init(&c);
	while (i < size) {
		uint8_t kind = data[i++];

		for (n = 0; i < size && data[i] != '\n' && n < LINE_MAX - 1;)
			line[n++] = (char)data[i++];
		line[n] = '\0';
		i++;	/* the newline, or past the end */
		before = c;
		why = kind & 1 ? net_user_parse_net(line, &c) :
		      net_user_parse_fwd(line, &c);
		if (why) {
			if (!*why || memcmp(&before, &c, sizeof(c)))
				abort();
			continue;
		}
		if (!(kind & 1)) {
			if (c.nr_fwds != before.nr_fwds + 1 ||
			    !c.fwds[c.nr_fwds - 1].host_port ||
			    !c.fwds[c.nr_fwds - 1].guest_port)
				abort();
			check_round_trip(&c, &c.fwds[c.nr_fwds - 1]);
		} else if (c.prefix < NET_USER_MIN_PREFIX ||
			   c.prefix > NET_USER_MAX_PREFIX) {
			abort();
		}
	}
	why = net_user_config_check(&c, &bad);
	if (why && (!*why || bad >= c.nr_fwds))
		abort();
	return 0;
}
