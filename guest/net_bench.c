/* netbench: UDP packet rates both ways, timed with the TSC. tx sends
 * netbench_packets datagrams of 18 bytes to hostip:udp_port+1 as fast as
 * the transmit ring takes them; rx counts the datagrams a host sender
 * fires at ip:udp_port+2. Both loops run in ring 3 with the device's
 * interrupts suppressed, polling the used rings: natively on PVM hosts,
 * where kernel mode would be emulated and the benchmark would measure
 * the emulator (as blkbench found). */
#include "guest.h"
#include "io.h"
#include "lib.h"
#include "net.h"

#define PAYLOAD_BYTES	18
#define STALL_MS	5000	/* tx: no packet used for this long */
#define RX_FIRST_MS	20000	/* rx: waiting for the first datagram */
#define RX_IDLE_MS	2000	/* rx: the sender has stopped */

struct job {
	struct net_dev *n;
	uint64_t packets;
	uint16_t port;
	uint64_t done;			/* used by the device / received */
	uint64_t t_first, t_last;	/* TSC */
	int rc;				/* a NET_ERR_*, or 0: timeout */
	const char *bad;		/* rx: a malformed frame */
};

static uint64_t ms_ticks(uint64_t ms)
{
	return clock_hz / 1000 * ms;
}

/* Ring 3: keeps the transmit ring full until every packet was used;
 * one notify check per batch. */
static long u_tx(long arg)
{
	struct job *j = (struct job *)arg;
	struct net_dev *n = j->n;
	struct virtq *tx = &n->vd.vq[NET_TXQ];
	uint8_t payload[PAYLOAD_BYTES] = "netbench";
	uint64_t issued = 0, progress;
	uint8_t *f;
	int slot, rc;

	vq_disarm(tx);
	vq_disarm(&n->vd.vq[NET_RXQ]);
	j->t_first = progress = clock_now();
	while (j->done < j->packets) {
		bool queued = false;

		if ((rc = net_tx_reclaim(n)) < 0) {
			j->rc = rc;
			return 0;
		}
		if (rc)
			progress = clock_now();
		j->done += rc;
		while (issued < j->packets && (f = net_tx_frame(n, &slot))) {
			memcpy(payload + PAYLOAD_BYTES - 8, &issued, 8);
			rc = net_tx(n, slot, udp_frame(f, &n->self, &n->host,
					n->ip_id++, j->port, j->port, payload,
					PAYLOAD_BYTES), false);
			if (rc)
				break;
			issued++;
			queued = true;
		}
		if (queued) {
			vq_kick(tx);
		} else if (clock_now() - progress > ms_ticks(STALL_MS)) {
			j->rc = 0;
			return 0;
		} else {
			cpu_relax();
		}
	}
	j->t_last = clock_now();
	return 1;
}

/* Ring 3: counts datagrams to the port until there are enough or the
 * sender has gone quiet, answering ARP (the host must learn the guest's
 * MAC address first) and echo requests meanwhile. */
static long u_rx(long arg)
{
	struct job *j = (struct job *)arg;
	struct net_dev *n = j->n;
	uint64_t start = clock_now(), now;
	struct pkt p;
	int rc;

	vq_disarm(&n->vd.vq[NET_TXQ]);
	vq_disarm(&n->vd.vq[NET_RXQ]);
	while (j->done < j->packets) {
		rc = net_tx_reclaim(n);
		if (rc >= 0)
			rc = net_rx(n);
		if (rc < 0) {
			j->rc = rc;
			return 0;
		}
		now = clock_now();
		if (rc) {
			inet_parse(&n->self, n->frame, n->frame_len, &p);
			if (p.kind == PKT_BAD) {
				j->bad = p.bad;
				return 0;
			}
			if (p.kind == PKT_UDP && p.dport == j->port) {
				if (!j->done++)
					j->t_first = now;
				j->t_last = now;
			} else {
				net_serve(n, &p);
			}
		} else {
			cpu_relax();
		}
		/* Other traffic does not keep it going. */
		if (j->done ? now - j->t_last > ms_ticks(RX_IDLE_MS) :
		    now - start > ms_ticks(RX_FIRST_MS))
			break;
	}
	return 1;
}

static const char *job_error(const struct job *j)
{
	return j->bad ? j->bad : net_err_name(j->rc);
}

void net_bench(struct net_dev *n)
{
	struct job j = { .n = n, .packets = params.netbench_packets,
			 .port = params.udp_port + 1 };
	uint64_t ns;

	if (!run_user(u_tx, (long)&j)) {
		report(false, "netbench", "tx packets=%lu used=%lu reason=%s",
		       j.packets, j.done, job_error(&j));
		net_broken = true;
		if (!net_recover(n))
			return;
	} else {
		ns = clock_to_ns(j.t_last - j.t_first);
		print("tg: netbench tx packets=%lu ns=%lu pps=%lu\n", j.done,
		      ns, ns ? j.done * 1000000000 / ns : 0);
	}

	j = (struct job){ .n = n, .packets = params.netbench_packets,
			  .port = params.udp_port + 2 };
	print("tg: netbench rx-ready port=%u\n", j.port);
	if (!run_user(u_rx, (long)&j)) {
		report(false, "netbench", "rx packets=%lu reason=%s", j.done,
		       job_error(&j));
		net_broken = !j.bad;
		net_recover(n);
		return;
	}
	/* Rates over the intervals between the first and the last. */
	ns = j.done ? clock_to_ns(j.t_last - j.t_first) : 0;
	print("tg: netbench rx packets=%lu ns=%lu pps=%lu\n", j.done, ns,
	      ns ? (j.done - 1) * 1000000000 / ns : 0);
	if (!j.done)
		report(false, "netbench", "rx packets=0 reason=timeout");
}
