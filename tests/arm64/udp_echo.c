/* The UDP echo server of the test guest's net checks, for the emulated
 * arm64 host, which has no Python (tests/integration/udp_echo.py does
 * this on x86): echoes each datagram back to its sender with "echo:" in
 * front, and logs "from IP:PORT BYTES" for each to stdout.
 *
 *   udp_echo ADDR PORT     prints "ready" once bound */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define PREFIX "echo:"
#define MAX_DATAGRAM 65536

int main(int argc, char **argv)
{
	static char buf[sizeof(PREFIX) - 1 + MAX_DATAGRAM];
	struct sockaddr_in self = { .sin_family = AF_INET }, peer;
	int fd;

	if (argc != 3 || inet_pton(AF_INET, argv[1], &self.sin_addr) != 1) {
		fprintf(stderr, "usage: udp_echo ADDR PORT\n");
		return 2;
	}
	self.sin_port = htons(atoi(argv[2]));
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0) {
		perror("udp_echo");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	memcpy(buf, PREFIX, sizeof(PREFIX) - 1);
	for (;;) {
		socklen_t len = sizeof(peer);
		ssize_t n = recvfrom(fd, buf + sizeof(PREFIX) - 1, MAX_DATAGRAM,
				     0, (struct sockaddr *)&peer, &len);

		if (n < 0) {
			perror("udp_echo: recvfrom");
			return 1;
		}
		printf("from %s:%d %zd\n", inet_ntoa(peer.sin_addr),
		       ntohs(peer.sin_port), n);
		fflush(stdout);
		if (sendto(fd, buf, sizeof(PREFIX) - 1 + n, 0,
			   (struct sockaddr *)&peer, len) < 0)
			perror("udp_echo: sendto");
	}
}
