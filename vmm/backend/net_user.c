/* libslirp on its own thread (net_user.h). The thread owns the stack:
 * every libslirp call is made under nu->lock, which the thread lets go
 * only while it sleeps in poll(), so that stat's connection counts come
 * from a stack at rest. libslirp is single-threaded and asks its host
 * for a poll set, timers and a clock; all three are here.
 *
 * The library is loaded when a VM first asks for a user-mode network:
 * linked in, libslirp and GLib cost every thpvm start about 0.5 ms (11%
 * of a VM's start to exit, measured), VMs without one too; and a host
 * without libslirp0 still runs thpvm. */
#include "backend/net_user.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/virtio_net.h>
#include <poll.h>
#include <pthread.h>
#include <slirp/libslirp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/sandbox.h"
#include "lib/thread_start.h"
#include "lib/util.h"

#define NAME "net-user"
#define LIBSLIRP "libslirp.so.0"
#define HDR_SIZE sizeof(struct virtio_net_hdr_v1)
/* virtio-net's largest frame without offloads, with the header, and one
 * byte more to see a message cut short. */
#define MAX_PACKET (HDR_SIZE + 65550u)
/* Frames from the guest per turn, so that sockets and timers get their
 * turn under a guest that never stops sending. */
#define BUDGET 64
/* What each direction of the pair may hold: a few hundred full-sized
 * Ethernet frames, as a tap's default queue of 1000 small ones. */
#define PAIR_BUFFER (1024 * 1024)
/* The poll set's first size: the thread's two fds and a few sockets. */
#define FDS_FIRST 16

/* The entry points this file calls, as the header declares them. */
static struct {
	__typeof__(&slirp_new) new_;
	__typeof__(&slirp_cleanup) cleanup;
	__typeof__(&slirp_pollfds_fill) pollfds_fill;
	__typeof__(&slirp_pollfds_poll) pollfds_poll;
	__typeof__(&slirp_input) input;
	__typeof__(&slirp_add_hostfwd) add_hostfwd;
	__typeof__(&slirp_connection_info) connection_info;
} lib;

struct nu_timer {
	SlirpTimerCb cb;
	void *cb_opaque;
	int64_t expire_ms;	/* -1: not armed */
	struct nu_timer *next;
};

struct net_user {
	struct net_user_config cfg;
	Slirp *slirp;
	int pkt_fd;		/* the stack's end of the pair */
	int wake_fd;		/* eventfd: stop, or libslirp's notify */
	pthread_t thread;
	bool started;
	bool stopping;		/* under lock */
	pthread_mutex_t lock;
	struct nu_timer *timers;
	struct pollfd *fds;	/* the poll set being built */
	unsigned nr_fds, max_fds;
	uint8_t *buf;
	struct net_user_stats st;	/* counters, under lock */
};

static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
	static const uint8_t hdr[HDR_SIZE];
	struct net_user *nu = opaque;
	struct iovec iov[2] = {
		{ (void *)hdr, HDR_SIZE }, { (void *)buf, len },
	};

	/* The guest is not taking frames: drop, as a full tap queue does;
	 * TCP sends again and the guest's DHCP or DNS asks again. */
	if (writev(nu->pkt_fd, iov, 2) < 0) {
		nu->st.dropped++;
		/* EAGAIN: the guest is slow; ECONNRESET, EPIPE: the device,
		 * which goes first at the VM's end, is gone. */
		if (errno != EAGAIN && errno != ECONNRESET &&
		    errno != EPIPE)
			pr_warn_ratelimited("%s: cannot pass a frame to the "
					    "device: %s", NAME,
					    strerror(errno));
	} else {
		nu->st.frames_out++;
	}
	return len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
	pr_warn_ratelimited("%s: the guest sent a bad frame: %s", NAME, msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
	return monotonic_ns();
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
	struct net_user *nu = opaque;
	struct nu_timer *t = calloc(1, sizeof(*t));

	/* libslirp has no way to hear of a failure here. */
	if (!t) {
		pr_err("%s: out of memory for a timer", NAME);
		abort();
	}
	t->cb = cb;
	t->cb_opaque = cb_opaque;
	t->expire_ms = -1;
	t->next = nu->timers;
	nu->timers = t;
	return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
	struct net_user *nu = opaque;
	struct nu_timer **p;

	for (p = &nu->timers; *p; p = &(*p)->next)
		if (*p == timer) {
			*p = ((struct nu_timer *)timer)->next;
			free(timer);
			return;
		}
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
	((struct nu_timer *)timer)->expire_ms = expire_ms;
}

/* libslirp uses these on Windows only. */
static void cb_register_poll_fd(int fd, void *opaque)
{
}

static void cb_unregister_poll_fd(int fd, void *opaque)
{
}

static void cb_notify(void *opaque)
{
	struct net_user *nu = opaque;

	eventfd_signal(nu->wake_fd);
}

static const SlirpCb callbacks = {
	.send_packet = cb_send_packet,
	.guest_error = cb_guest_error,
	.clock_get_ns = cb_clock_get_ns,
	.timer_new = cb_timer_new,
	.timer_free = cb_timer_free,
	.timer_mod = cb_timer_mod,
	.register_poll_fd = cb_register_poll_fd,
	.unregister_poll_fd = cb_unregister_poll_fd,
	.notify = cb_notify,
};

/* libslirp's poll bits and poll(2)'s. */
static const struct {
	int slirp;
	short poll;
} poll_bits[] = {
	{ SLIRP_POLL_IN, POLLIN }, { SLIRP_POLL_OUT, POLLOUT },
	{ SLIRP_POLL_PRI, POLLPRI }, { SLIRP_POLL_ERR, POLLERR },
	{ SLIRP_POLL_HUP, POLLHUP },
};

static short to_poll(int events)
{
	short out = 0;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(poll_bits); i++)
		if (events & poll_bits[i].slirp)
			out |= poll_bits[i].poll;
	return out;
}

static int from_poll(short revents)
{
	int out = 0;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(poll_bits); i++)
		if (revents & poll_bits[i].poll)
			out |= poll_bits[i].slirp;
	return out;
}

/* Adds fd to the poll set: its index, or -1 when no memory is left
 * (libslirp then leaves that socket out of this turn). */
static int add_fd(struct net_user *nu, int fd, short events)
{
	if (nu->nr_fds == nu->max_fds) {
		unsigned max = 2 * nu->max_fds;
		struct pollfd *fds = realloc(nu->fds, max * sizeof(*fds));

		if (!fds)
			return -1;
		nu->fds = fds;
		nu->max_fds = max;
	}
	nu->fds[nu->nr_fds].fd = fd;
	nu->fds[nu->nr_fds].events = events;
	nu->fds[nu->nr_fds].revents = 0;
	return nu->nr_fds++;
}

static int cb_add_poll(int fd, int events, void *opaque)
{
	return add_fd(opaque, fd, to_poll(events));
}

static int cb_get_revents(int idx, void *opaque)
{
	struct net_user *nu = opaque;

	return idx >= 0 && (unsigned)idx < nu->nr_fds ?
	       from_poll(nu->fds[idx].revents) : 0;
}

/* Fires the timers that are due; the time to the next one in ms, or
 * UINT32_MAX for none. */
static uint32_t timers_run(struct net_user *nu)
{
	int64_t now = monotonic_ms(), next = INT64_MAX;
	struct nu_timer *t;

again:
	for (t = nu->timers; t; t = t->next) {
		if (t->expire_ms < 0)
			continue;
		if (t->expire_ms <= now) {
			t->expire_ms = -1;
			/* It may free or add timers: start over. */
			t->cb(t->cb_opaque);
			goto again;
		}
		next = MIN(next, t->expire_ms);
	}
	return next == INT64_MAX ? UINT32_MAX : (uint32_t)MIN(next - now,
							      INT32_MAX);
}

/* Hands up to BUDGET frames from the guest to the stack. */
static void frames_in(struct net_user *nu)
{
	unsigned budget = BUDGET;
	ssize_t n;

	while (budget--) {
		n = read(nu->pkt_fd, nu->buf, MAX_PACKET + 1);
		if (n < 0)
			return;
		/* The device frames every message itself; a short or cut
		 * one cannot come from it, so it is just not passed on. */
		if (n <= (ssize_t)HDR_SIZE || n > (ssize_t)MAX_PACKET)
			continue;
		nu->st.frames_in++;
		lib.input(nu->slirp, nu->buf + HDR_SIZE, n - HDR_SIZE);
	}
}

static void *net_user_thread(void *arg)
{
	struct net_user *nu = arg;
	uint32_t timeout;
	uint64_t count;
	int n;

	sandbox_enter(SANDBOX_NET_USER);
	pthread_mutex_lock(&nu->lock);
	while (!nu->stopping) {
		nu->nr_fds = 0;
		add_fd(nu, nu->wake_fd, POLLIN);
		add_fd(nu, nu->pkt_fd, POLLIN);
		timeout = timers_run(nu);
		lib.pollfds_fill(nu->slirp, &timeout, cb_add_poll, nu);
		pthread_mutex_unlock(&nu->lock);

		n = poll(nu->fds, nu->nr_fds,
			 timeout > INT32_MAX ? -1 : (int)timeout);

		pthread_mutex_lock(&nu->lock);
		if (n < 0 && errno != EINTR) {
			pr_err("%s: poll: %s", NAME, strerror(errno));
			break;
		}
		if (nu->fds[0].revents & POLLIN &&
		    read(nu->wake_fd, &count, sizeof(count)) < 0 &&
		    errno != EAGAIN)
			pr_warn_ratelimited("%s: cannot read its eventfd: %s",
					    NAME, strerror(errno));
		lib.pollfds_poll(nu->slirp, n < 0, cb_get_revents, nu);
		if (nu->fds[1].revents & POLLIN)
			frames_in(nu);
	}
	pthread_mutex_unlock(&nu->lock);
	return NULL;
}

/* One forward's host socket, bound now: a port in use is the user's
 * error, said before the guest starts. */
static int add_fwd(struct net_user *nu, const struct net_user_fwd *f)
{
	char text[64];

	errno = 0;
	if (!lib.add_hostfwd(nu->slirp, f->udp, f->host_addr, f->host_port,
			       net_user_fwd_guest(&nu->cfg, f), f->guest_port))
		return 0;
	net_user_fwd_format(&nu->cfg, f, text, sizeof(text));
	pr_err("-n hostfwd=%s: cannot listen on the host port%s%s", text,
	       errno ? ": " : "", errno ? strerror(errno) : "");
	return errno ? -errno : -EADDRINUSE;
}

/* Loads libslirp once (the main thread, before the filters): 0, or
 * -ENOENT after one line saying what is missing. */
static int lib_load(void)
{
	static const struct {
		const char *name;
		void **fn;
	} syms[] = {
		{ "slirp_new", (void **)&lib.new_ },
		{ "slirp_cleanup", (void **)&lib.cleanup },
		{ "slirp_pollfds_fill", (void **)&lib.pollfds_fill },
		{ "slirp_pollfds_poll", (void **)&lib.pollfds_poll },
		{ "slirp_input", (void **)&lib.input },
		{ "slirp_add_hostfwd", (void **)&lib.add_hostfwd },
		{ "slirp_connection_info", (void **)&lib.connection_info },
	};
	void *h;
	unsigned i;

	if (lib.new_)
		return 0;
	h = dlopen(LIBSLIRP, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pr_err("-n mode=user: cannot load %s (install libslirp0): %s",
		       LIBSLIRP, dlerror());
		return -ENOENT;
	}
	for (i = 0; i < ARRAY_SIZE(syms); i++) {
		*syms[i].fn = dlsym(h, syms[i].name);
		if (!*syms[i].fn) {
			pr_err("-n mode=user: %s has no %s", LIBSLIRP,
			       syms[i].name);
			lib.new_ = NULL;
			dlclose(h);
			return -ENOENT;
		}
	}
	return 0;
}

static int stack_make(struct net_user *nu)
{
	const struct net_user_config *c = &nu->cfg;
	SlirpConfig sc = {
		.version = 1,
		.restricted = c->restricted,
		.in_enabled = true,
		.vnetwork = c->net,
		.vnetmask = { htonl(~0u << (32 - c->prefix)) },
		.vhost = net_user_addr(c, NET_USER_GATEWAY),
		.vdhcp_start = net_user_addr(c, NET_USER_DHCP_FIRST),
		.vnameserver = net_user_addr(c, NET_USER_DNS),
		.vhostname = "thpvm",
	};
	unsigned i;
	int err;

	err = lib_load();
	if (err)
		return err;
	nu->slirp = lib.new_(&sc, &callbacks, nu);
	if (!nu->slirp) {
		pr_err("%s: libslirp refused its settings", NAME);
		return -EINVAL;
	}
	for (i = 0; i < c->nr_fwds; i++) {
		err = add_fwd(nu, &c->fwds[i]);
		if (err)
			return err;
	}
	return 0;
}

static int pair_make(struct net_user *nu, int *dev_fd)
{
	int sv[2], size = PAIR_BUFFER, i;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, sv)) {
		int err = -errno;

		pr_err("%s: socketpair: %s", NAME, strerror(-err));
		return err;
	}
	/* A larger buffer is a wish the kernel caps at wmem_max, not an
	 * error. */
	for (i = 0; i < 2; i++)
		setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	nu->pkt_fd = sv[0];
	*dev_fd = sv[1];
	return 0;
}

int net_user_open(struct net_user **out, const struct net_user_config *cfg,
		  int *dev_fd)
{
	struct net_user *nu = calloc(1, sizeof(*nu));
	int err;

	*out = NULL;
	*dev_fd = -1;
	if (!nu) {
		pr_err("%s: out of memory", NAME);
		return -ENOMEM;
	}
	nu->cfg = *cfg;
	nu->pkt_fd = -1;
	pthread_mutex_init(&nu->lock, NULL);
	nu->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	err = nu->wake_fd < 0 ? -errno : -ENOMEM;
	nu->buf = malloc(MAX_PACKET + 1);
	/* The thread's own fds always fit: add_fd() cannot fail for them. */
	nu->fds = calloc(FDS_FIRST, sizeof(*nu->fds));
	nu->max_fds = FDS_FIRST;
	if (nu->wake_fd < 0 || !nu->buf || !nu->fds) {
		pr_err("%s: cannot set up: %s", NAME, strerror(-err));
		goto fail;
	}
	err = stack_make(nu);
	if (!err)
		err = pair_make(nu, dev_fd);
	if (err)
		goto fail;
	err = thread_start_unsignalled(&nu->thread, net_user_thread, nu,
				       "net-user");
	if (err) {
		pr_err("%s: cannot start its thread: %s", NAME,
		       strerror(-err));
		goto fail;
	}
	nu->started = true;
	*out = nu;
	return 0;
fail:
	if (*dev_fd >= 0)
		close(*dev_fd);
	*dev_fd = -1;
	net_user_close(nu);
	return err;
}

void net_user_close(struct net_user *nu)
{
	if (!nu)
		return;
	if (nu->started) {
		pthread_mutex_lock(&nu->lock);
		nu->stopping = true;
		pthread_mutex_unlock(&nu->lock);
		eventfd_signal(nu->wake_fd);
		pthread_join(nu->thread, NULL);
	}
	if (nu->slirp)
		lib.cleanup(nu->slirp);
	/* slirp_cleanup frees its timers; what is left was never armed. */
	while (nu->timers)
		cb_timer_free(nu->timers, nu);
	if (nu->pkt_fd >= 0)
		close(nu->pkt_fd);
	if (nu->wake_fd >= 0)
		close(nu->wake_fd);
	pthread_mutex_destroy(&nu->lock);
	free(nu->fds);
	free(nu->buf);
	free(nu);
}

const struct net_user_config *net_user_config(const struct net_user *nu)
{
	return &nu->cfg;
}

/* The counter a line of libslirp's connection table adds to: one line
 * per socket, "  TCP[STATE]", "  UDP[N sec]" or "  ICMP[N sec]", and the
 * forwards' listeners as "[HOST_FORWARD]", which are not connections. */
static unsigned *line_counter(const char *line, struct net_user_stats *st)
{
	const char *rest;

	if (!strncmp(line, "  TCP[", 6))
		rest = line + 6;
	else if (!strncmp(line, "  UDP[", 6))
		rest = line + 6;
	else if (!strncmp(line, "  ICMP[", 7))
		return &st->icmp;
	else
		return NULL;
	if (!strncmp(rest, "HOST_FORWARD]", 13))
		return NULL;
	return line[2] == 'T' ? &st->tcp : &st->udp;
}

static void count_sockets(const char *info, struct net_user_stats *st)
{
	const char *line = info;
	unsigned *counter;

	while (line) {
		counter = line_counter(line, st);
		if (counter)
			++*counter;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
}

int net_user_stats(struct net_user *nu, struct net_user_stats *st)
{
	char *info;

	pthread_mutex_lock(&nu->lock);
	*st = nu->st;
	st->tcp = st->udp = st->icmp = 0;
	info = lib.connection_info(nu->slirp);
	pthread_mutex_unlock(&nu->lock);
	if (!info)
		return -ENOMEM;
	count_sockets(info, st);
	/* g_free, which is free() in every GLib since 2.46: this file
	 * needs no GLib headers. */
	free(info);
	return 0;
}
