/* net_user.h where thpvm was built without libslirp (meson's slirp
 * option): mode=user is refused with one line saying why. */
#include "backend/net_user.h"

#include <errno.h>

#include "lib/log.h"

int net_user_open(struct net_user **out, const struct net_user_config *cfg,
		  int *dev_fd)
{
	*out = NULL;
	*dev_fd = -1;
	pr_err("-n mode=user: this thpvm was built without libslirp "
	       "(install libslirp-dev and build again)");
	return -ENOTSUP;
}

void net_user_close(struct net_user *nu)
{
}

const struct net_user_config *net_user_config(const struct net_user *nu)
{
	return NULL;
}

int net_user_stats(struct net_user *nu, struct net_user_stats *st)
{
	return -ENOTSUP;
}
