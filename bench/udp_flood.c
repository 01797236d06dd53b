/* The host end of bench/net.py: sends UDP datagrams as fast as the kernel
 * takes them, or counts the ones that arrive, in batches of BATCH through
 * sendmmsg/recvmmsg so that this end is never what limits the rate (the
 * Python loop it replaces managed about 80,000 a second).
 *
 *   udp_flood send IP PORT COUNT SECONDS PAYLOAD_BYTES RATE
 *       sends COUNT datagrams or for SECONDS, whichever ends first, at
 *       RATE datagrams a second (0: as fast as it can), and prints
 *       "sent=N"
 *   udp_flood sink IP PORT
 *       prints "ready" once bound, counts datagrams until SIGTERM or
 *       SIGINT, then prints "got=N" */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define MAX_PAYLOAD 1472	/* one Ethernet frame */
#define RCVBUF (64 << 20)

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: udp_flood send IP PORT COUNT SECONDS "
		"PAYLOAD_BYTES RATE\n       udp_flood sink IP PORT\n");
	return 2;
}

static int parse_addr(const char *ip, const char *port,
		      struct sockaddr_in *sa)
{
	char *end;
	unsigned long p = strtoul(port, &end, 10);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)p);
	return *end || !p || p > 65535 || inet_pton(AF_INET, ip,
						    &sa->sin_addr) != 1 ?
		       -1 : 0;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Sleeps until sent datagrams are due at rate a second from start. */
static void pace(double start, unsigned long sent, double rate)
{
	double ahead = start + sent / rate - now();
	struct timespec t;

	if (ahead <= 0)
		return;
	t.tv_sec = (time_t)ahead;
	t.tv_nsec = (long)((ahead - t.tv_sec) * 1e9);
	nanosleep(&t, NULL);
}

static int flood(int fd, const struct sockaddr_in *to, unsigned long count,
		 double seconds, size_t payload, double rate)
{
	static char data[MAX_PAYLOAD];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { data, payload };
	double start = now(), deadline = start + seconds;
	unsigned long sent = 0;
	unsigned i;

	memset(data, 'x', sizeof(data));
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_name = (void *)to;
		msgs[i].msg_hdr.msg_namelen = sizeof(*to);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (sent < count && !stopping && now() < deadline) {
		unsigned n = count - sent < BATCH ? count - sent : BATCH;
		int r = sendmmsg(fd, msgs, n, 0);

		if (r > 0)
			sent += r;
		if (r > 0 && rate > 0)
			pace(start, sent, rate);
		else if (r < 0 && errno != ENOBUFS && errno != EAGAIN &&
			 errno != EINTR) {
			perror("sendmmsg");
			return 1;
		}
	}
	printf("sent=%lu\n", sent);
	return 0;
}

static int count_arrivals(int fd)
{
	static char bufs[BATCH][MAX_PAYLOAD];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	unsigned long got = 0;
	unsigned i;

	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!stopping) {
		int r = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);

		if (r > 0)
			got += r;
		else if (r < 0 && errno != EINTR && errno != EAGAIN) {
			perror("recvmmsg");
			return 1;
		}
	}
	printf("got=%lu\n", got);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct sockaddr_in addr;
	int fd, rc;

	if (argc < 4 || parse_addr(argv[2], argv[3], &addr))
		return usage();
	/* No SA_RESTART: a signal ends the blocking receive. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	if (!strcmp(argv[1], "send") && argc == 8) {
		char *e1, *e2, *e3, *e4;
		unsigned long count = strtoul(argv[4], &e1, 10);
		double seconds = strtod(argv[5], &e2);
		unsigned long payload = strtoul(argv[6], &e3, 10);
		double rate = strtod(argv[7], &e4);

		if (*e1 || *e2 || *e3 || *e4 || !payload ||
		    payload > MAX_PAYLOAD || rate < 0)
			return usage();
		rc = flood(fd, &addr, count, seconds, payload, rate);
	} else if (!strcmp(argv[1], "sink") && argc == 4) {
		/* A signal just before the receive blocks would be missed:
		 * wake up now and then to look. */
		struct timeval tick = { .tv_usec = 200000 };
		int rcvbuf = RCVBUF;

		/* Room for bursts the counting loop has not caught up with
		 * (root may go past net.core.rmem_max). */
		if ((setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
				sizeof(rcvbuf)) < 0 &&
		     setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)) < 0) ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tick,
			       sizeof(tick)) < 0 ||
		    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
			perror("sink socket");
			return 1;
		}
		/* The bind is done: the caller may start sending. */
		printf("ready\n");
		fflush(stdout);
		rc = count_arrivals(fd);
	} else {
		return usage();
	}
	close(fd);
	return rc;
}
