/* virtio-9p without KVM, as test_virtio_blk.c drives virtio-blk: guest
 * RAM mapped, rings built by hand, the device on its threads, a scratch
 * directory as the share. p9_server_handle is wrapped (--wrap) so that
 * a case can hold the requests of chosen tags inside a worker, and see
 * how many run at once: what the device does with requests in flight
 * (flushes, a reset) is then up to the case, not to timing. */
#include <errno.h>
#include <linux/virtio_9p.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_ring.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_driver.h"
#include "lib/util.h"
#include "unit.h"
#include "virtio/p9.h"

#define FEATURES (1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTIO_9P_MOUNT_TAG)
#define TAG "hostshare"
/* Request slot i: its message, its reply buffer; descriptors 2i, 2i+1. */
#define REQ_GPA(i) (0x100000 + (i) * 0x4000)
#define RESP_GPA(i) (REQ_GPA(i) + 0x2000)
#define RESP_LEN 0x2000
#define SLOTS (QSIZE / 2)
#define MSIZE 8192

static struct virtio_p9 p9;
static char share[64];

/* The gate in front of the server: requests whose tag is held (tags
 * below 64) wait in their worker; running counts those inside. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	uint64_t held;
	unsigned running, most_running;
} gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };

int64_t __real_p9_server_handle(struct p9_server *s, const struct iovec *req,
				unsigned nr_req, const struct iovec *resp,
				unsigned nr_resp);
int64_t __wrap_p9_server_handle(struct p9_server *s, const struct iovec *req,
				unsigned nr_req, const struct iovec *resp,
				unsigned nr_resp);

static bool held(const uint8_t *hdr)
{
	uint16_t tag = get_le16(hdr + 5);

	return tag < 64 && gate.held & 1ULL << tag;
}

int64_t __wrap_p9_server_handle(struct p9_server *s, const struct iovec *req,
				unsigned nr_req, const struct iovec *resp,
				unsigned nr_resp)
{
	uint8_t hdr[P9_HEADER_SIZE] = { 0 };
	int64_t n;

	iov_to_buf(req, nr_req, 0, hdr, sizeof(hdr));
	pthread_mutex_lock(&gate.lock);
	gate.running++;
	gate.most_running = MAX(gate.most_running, gate.running);
	while (held(hdr))
		pthread_cond_wait(&gate.changed, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
	n = __real_p9_server_handle(s, req, nr_req, resp, nr_resp);
	pthread_mutex_lock(&gate.lock);
	gate.running--;
	pthread_mutex_unlock(&gate.lock);
	return n;
}

static void hold(uint64_t tags)
{
	pthread_mutex_lock(&gate.lock);
	gate.held = tags;
	pthread_cond_broadcast(&gate.changed);
	pthread_mutex_unlock(&gate.lock);
}

static unsigned running(void)
{
	unsigned n;

	pthread_mutex_lock(&gate.lock);
	n = gate.running;
	pthread_mutex_unlock(&gate.lock);
	return n;
}

static bool setup_with(uint64_t features)
{
	snprintf(share, sizeof(share), "/tmp/thpvm-9p-XXXXXX");
	if (!mkdtemp(share)) {
		CHECK(!"mkdtemp");
		return false;
	}
	if (!fake_driver_map_ram()) {
		CHECK(!"guest_ram_map");
		rmdir(share);
		return false;
	}
	hold(0);
	gate.most_running = 0;
	if (virtio_p9_create(&p9, 0, share, TAG, false, &ram)) {
		CHECK(!"virtio_p9_create");
		guest_ram_unmap(&ram);
		rmdir(share);
		return false;
	}
	p9.vdev.notify = count_irq;
	p9.vdev.isr_cleared = count_isr_cleared;
	CHECK_EQ(virtio_device_start(&p9.vdev), 0);
	driver_start(&p9.vdev, features, 1);
	return true;
}

static bool setup(void)
{
	return setup_with(FEATURES);
}

static void teardown(void)
{
	hold(0);
	virtio_p9_destroy(&p9);
	guest_ram_unmap(&ram);
	rmdir(share);
}

/* A message's header at p, for a body of len bytes after it. */
static uint8_t *header(uint8_t *p, uint8_t type, uint16_t tag, uint32_t len)
{
	put_le32(p, P9_HEADER_SIZE + len);
	p[4] = type;
	put_le16(p + 5, tag);
	return p + P9_HEADER_SIZE;
}

static uint8_t *put_str(uint8_t *p, const char *s)
{
	put_le16(p, strlen(s));
	memcpy(p + 2, s, strlen(s));
	return p + 2 + strlen(s);
}

/* The message of slot i as one readable and one writable buffer of
 * resp_len, made available. */
static void offer_slot(unsigned i, uint32_t resp_len)
{
	set_desc(0, 2 * i, REQ_GPA(i), get_le32(gpa(REQ_GPA(i))),
		 VRING_DESC_F_NEXT, 2 * i + 1);
	set_desc(0, 2 * i + 1, RESP_GPA(i), resp_len, VRING_DESC_F_WRITE, 0);
	memset(gpa(RESP_GPA(i)), 0xa5, RESP_LEN);
	publish(0, 2 * i);
}

/* The same, and kicked. */
static void send_slot(unsigned i, uint32_t resp_len)
{
	offer_slot(i, resp_len);
	virtio_queue_kick(&p9.vdev, 0);
}

static void msg_version(unsigned i, uint16_t tag)
{
	uint8_t *p = gpa(REQ_GPA(i));

	p = header(p, P9_TVERSION, tag, 4 + 2 + 8);
	put_le32(p, MSIZE);
	put_str(p + 4, "9P2000.L");
}

static void send_version(unsigned i, uint16_t tag)
{
	msg_version(i, tag);
	send_slot(i, RESP_LEN);
}

static void send_attach(unsigned i, uint16_t tag, uint32_t fid)
{
	uint8_t *p = gpa(REQ_GPA(i));

	p = header(p, P9_TATTACH, tag, 4 + 4 + 2 + 2 + 4);
	put_le32(p, fid);
	put_le32(p + 4, P9_NOFID);
	p = put_str(p + 8, "");
	p = put_str(p, "");
	put_le32(p, 0);
	send_slot(i, RESP_LEN);
}

static void msg_flush(unsigned i, uint16_t tag, uint16_t oldtag)
{
	uint8_t *p = gpa(REQ_GPA(i));

	p = header(p, P9_TFLUSH, tag, 2);
	put_le16(p, oldtag);
}

static void send_flush(unsigned i, uint16_t tag, uint16_t oldtag)
{
	msg_flush(i, tag, oldtag);
	send_slot(i, RESP_LEN);
}

/* Slot 0's message as req_len readable bytes, a reply buffer at
 * resp_gpa of resp_len: made available and kicked. */
static void send_chain(uint32_t req_len, uint64_t resp_gpa, uint32_t resp_len)
{
	set_desc(0, 0, REQ_GPA(0), req_len, VRING_DESC_F_NEXT, 1);
	set_desc(0, 1, resp_gpa, resp_len, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&p9.vdev, 0);
}

/* A Tgetattr of a fid nobody attached: an Rlerror, quick. */
static void msg_getattr(unsigned i, uint16_t tag)
{
	uint8_t *p = gpa(REQ_GPA(i));

	p = header(p, P9_TGETATTR, tag, 4 + 8);
	put_le32(p, 99);
	put_le64(p + 4, 0x7ff);
}

static void send_getattr(unsigned i, uint16_t tag)
{
	msg_getattr(i, tag);
	send_slot(i, RESP_LEN);
}

/* The reply of used entry n: its slot's buffer, checked against the
 * used length and the reply's own size field. */
static const uint8_t *reply(unsigned n)
{
	unsigned i = used_id(0, n) / 2;
	const uint8_t *r = gpa(RESP_GPA(i));

	CHECK_EQ(used_len(0, n), get_le32(r));
	return r;
}

static uint8_t reply_type(unsigned n)
{
	return reply(n)[4];
}

static uint16_t reply_tag(unsigned n)
{
	return get_le16(reply(n) + 5);
}

/* Tversion, then a Tattach: both answered, the fid counted. */
static void start_session(void)
{
	struct p9_server_stats st;
	uint16_t base = used_idx(0);

	send_version(0, P9_NOTAG);
	CHECK(WAIT_FOR(used_idx(0) == (uint16_t)(base + 1)));
	send_attach(1, 1, 1);
	CHECK(WAIT_FOR(used_idx(0) == (uint16_t)(base + 2)));
	p9_server_stats(p9.server, &st);
	CHECK_EQ(st.fids, 1);
}

/* Whether a driver that honours the device's suppression notifies
 * after moving the available index from old to old + 1: the used ring's
 * flag is clear, or (EVENT_IDX) avail_event is old, the one index the
 * move crosses. */
static bool notify_wanted(bool event_idx, uint16_t old)
{
	uint16_t *flags = (uint16_t *)gpa(USED_GPA(0));
	uint16_t *event = (uint16_t *)gpa(USED_GPA(0) + 4 + 8 * QSIZE);

	/* Ordered after publish()'s store of the index. */
	if (!event_idx)
		return !(le16toh(__atomic_load_n(flags, __ATOMIC_SEQ_CST)) &
			 VRING_USED_F_NO_NOTIFY);
	return le16toh(__atomic_load_n(event, __ATOMIC_SEQ_CST)) == old;
}

/* used_idx(0) reaching want, watched closely for a while (so that the
 * next request can come inside the device's poll window), then within
 * WAIT_FOR's time. */
static bool answered(uint16_t want)
{
	uint64_t end = monotonic_ns() + 1000000;

	while (used_idx(0) != want && monotonic_ns() < end)
		;
	return WAIT_FOR(used_idx(0) == want);
}

/* One request at a time, each offered as soon as the last is answered
 * by a driver that notifies only where the device asks: every one is
 * answered, whether the worker that polls after each answer took it
 * with notifications off or left it to a notification. How many went
 * without one is timing's and is only printed. */
static void one_at_a_time(bool event_idx)
{
	const unsigned n = 200;
	unsigned i, quiet = 0;
	uint16_t old;

	if (!setup_with(FEATURES |
			(event_idx ? 1ULL << VIRTIO_RING_F_EVENT_IDX : 0)))
		return;
	for (i = 0; i < n; i++) {
		msg_getattr(0, i + 1);
		old = get_le16(gpa(AVAIL_GPA(0) + 2));
		offer_slot(0, RESP_LEN);
		if (notify_wanted(event_idx, old))
			virtio_queue_kick(&p9.vdev, 0);
		else
			quiet++;
		if (!answered(i + 1)) {
			CHECK(!"request answered");
			break;
		}
		CHECK_EQ(reply_type(i), P9_RLERROR);
		CHECK_EQ(reply_tag(i), i + 1);
	}
	printf("# event_idx=%d: %u of %u requests without a notification\n",
	       event_idx, quiet, n);
	teardown();
}

static void test_one_at_a_time(void)
{
	one_at_a_time(false);
	one_at_a_time(true);
}

static void test_identity(void)
{
	uint8_t b[2 + P9_TAG_MAX + 4];

	if (!setup())
		return;
	CHECK_EQ(p9.vdev.device_id, VIRTIO_ID_9P);
	CHECK_EQ(p9.vdev.nr_queues, 1);
	CHECK_EQ(virtio_queue_read(&p9.vdev, 0, VQ_REG_MAX_SIZE),
		 P9_QUEUE_SIZE);
	CHECK(virtio_get_device_features(&p9.vdev, 0) &
	      1u << VIRTIO_9P_MOUNT_TAG);
	/* le16 tag_len, the tag without a terminator, nothing after. */
	memset(b, 0xff, sizeof(b));
	virtio_config_access(&p9.vdev, 0, b, 2 + strlen(TAG), false);
	CHECK_EQ(get_le16(b), strlen(TAG));
	CHECK(!memcmp(b + 2, TAG, strlen(TAG)));
	virtio_config_access(&p9.vdev, 2 + strlen(TAG), b, 4, false);
	CHECK_EQ(get_le32(b), 0);
	teardown();
}

/* A tag of 31 bytes is the most; none or 32 are refused. */
static void test_tag_limits(void)
{
	char tag[P9_TAG_MAX + 2];
	uint8_t len[2];

	if (!setup())
		return;
	virtio_p9_destroy(&p9);
	memset(tag, 't', P9_TAG_MAX + 1);
	tag[P9_TAG_MAX + 1] = '\0';
	CHECK_EQ(virtio_p9_create(&p9, 0, share, tag, false, &ram), -EINVAL);
	CHECK_EQ(virtio_p9_create(&p9, 0, share, "", false, &ram), -EINVAL);
	tag[P9_TAG_MAX] = '\0';
	CHECK_EQ(virtio_p9_create(&p9, 0, share, tag, false, &ram), 0);
	virtio_config_access(&p9.vdev, 0, len, 2, false);
	CHECK_EQ(get_le16(len), P9_TAG_MAX);
	CHECK_EQ(p9.vdev.config_size, 2 + P9_TAG_MAX);
	/* A share that is no directory is refused with the server's
	 * message. */
	virtio_p9_destroy(&p9);
	CHECK(virtio_p9_create(&p9, 0, "/nonexistent-thpvm", TAG, false,
			       &ram) < 0);
	CHECK_EQ(virtio_p9_create(&p9, 0, share, TAG, false, &ram), 0);
	teardown();
}

/* Rversion with our msize and version, Rattach with the root's qid. */
static void test_version_attach(void)
{
	const uint8_t *r;

	if (!setup())
		return;
	send_version(0, P9_NOTAG);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(used_id(0, 0), 0);
	r = reply(0);
	CHECK_EQ(r[4], P9_TVERSION + 1);
	CHECK_EQ(get_le16(r + 5), P9_NOTAG);
	CHECK_EQ(get_le32(r + 7), MSIZE);
	CHECK_EQ(get_le16(r + 11), 8);
	CHECK(!memcmp(r + 13, "9P2000.L", 8));
	CHECK(WAIT_FOR(irq_count(0) >= 1));

	send_attach(1, 7, 1);
	CHECK(WAIT_FOR(used_idx(0) == 2));
	CHECK_EQ(used_id(0, 1), 2);
	CHECK_EQ(reply_type(1), P9_TATTACH + 1);
	CHECK_EQ(reply_tag(1), 7);
	CHECK_EQ(used_len(0, 1), P9_HEADER_SIZE + P9_QID_SIZE);
	CHECK_EQ(reply(1)[P9_HEADER_SIZE], P9_QTDIR);
	CHECK(!needs_reset(&p9.vdev));
	teardown();
}

/* Four requests held at once, one in each worker; a fifth waits for
 * one; all answered once let go. */
static void test_requests_in_flight(void)
{
	unsigned i;

	if (!setup())
		return;
	start_session();
	hold(0x3e);	/* tags 1 to 5 */
	for (i = 0; i < 5; i++)
		send_getattr(2 + i, 1 + i);
	CHECK(WAIT_FOR(running() == P9_WORKERS));
	poll(NULL, 0, 50);
	CHECK_EQ(running(), P9_WORKERS);
	CHECK_EQ(used_idx(0), 2);
	hold(0);
	CHECK(WAIT_FOR(used_idx(0) == 7));
	CHECK_EQ(gate.most_running, P9_WORKERS);
	for (i = 2; i < 7; i++) {
		CHECK_EQ(reply_type(i), P9_RLERROR);
		CHECK_EQ(get_le32(reply(i) + P9_HEADER_SIZE), EBADF);
	}
	CHECK(!needs_reset(&p9.vdev));
	teardown();
}

/* A Tflush of a request in a worker or waiting for one is answered
 * right after it; of a tag not in flight, at once. */
static void test_flush(void)
{
	unsigned i;

	if (!setup())
		return;
	start_session();
	/* Unknown tag: Rflush, the 7-byte header, at once. */
	send_flush(2, 9, 33);
	CHECK(WAIT_FOR(used_idx(0) == 3));
	CHECK_EQ(used_len(0, 2), P9_HEADER_SIZE);
	CHECK_EQ(reply_type(2), P9_RFLUSH);
	CHECK_EQ(reply_tag(2), 9);

	/* Tags 1 to 4 fill the workers, 5 waits; flushes of 4 (running),
	 * 5 (pending, twice) and 40 (unknown). */
	hold(0x1e);
	for (i = 0; i < 4; i++)
		send_getattr(i, 1 + i);
	CHECK(WAIT_FOR(running() == P9_WORKERS));
	send_getattr(4, 5);
	send_flush(5, 10, 4);
	send_flush(6, 11, 5);
	send_flush(7, 12, 5);
	poll(NULL, 0, 50);
	CHECK_EQ(used_idx(0), 3);
	send_flush(2, 13, 40);
	CHECK(WAIT_FOR(used_idx(0) == 4));
	CHECK_EQ(reply_tag(3), 13);

	/* Let 4 go alone: its reply, then its flush's. */
	hold(0x0e);
	CHECK(WAIT_FOR(used_idx(0) >= 6));
	CHECK_EQ(reply_tag(4), 4);
	CHECK_EQ(reply_type(5), P9_RFLUSH);
	CHECK_EQ(reply_tag(5), 10);
	/* A worker is free: 5 runs and comes back before both flushes. */
	CHECK(WAIT_FOR(used_idx(0) == 9));
	CHECK_EQ(reply_tag(6), 5);
	CHECK_EQ(reply_tag(7), 11);
	CHECK_EQ(reply_tag(8), 12);
	hold(0);
	CHECK(WAIT_FOR(used_idx(0) == 12));
	CHECK(!needs_reset(&p9.vdev));
	teardown();
}

struct reset_thread {
	pthread_t thread;
	bool done;
};

static void *do_reset(void *arg)
{
	struct reset_thread *t = arg;

	virtio_set_status(&p9.vdev, 0);
	__atomic_store_n(&t->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

/* A reset waits for the requests in the workers, drops those waiting
 * for one, and forgets the session: the next driver must send a
 * Tversion first. */
static void test_reset_in_flight(void)
{
	struct reset_thread t = { .done = false };
	struct p9_server_stats st;
	unsigned i;

	if (!setup())
		return;
	start_session();
	hold(0x3e);
	for (i = 0; i < 5; i++)
		send_getattr(2 + i, 1 + i);
	CHECK(WAIT_FOR(running() == P9_WORKERS));
	CHECK_EQ(pthread_create(&t.thread, NULL, do_reset, &t), 0);
	/* Status 0 is read once the reset let the lock go to wait, having
	 * dropped the request no worker took. */
	CHECK(WAIT_FOR(virtio_get_status(&p9.vdev) == 0));
	poll(NULL, 0, 50);
	CHECK(!__atomic_load_n(&t.done, __ATOMIC_SEQ_CST));
	hold(0);
	CHECK(WAIT_FOR(__atomic_load_n(&t.done, __ATOMIC_SEQ_CST)));
	pthread_join(t.thread, NULL);
	CHECK_EQ(running(), 0);
	p9_server_stats(p9.server, &st);
	CHECK_EQ(st.fids, 0);
	/* The four that ran, not the one that waited. */
	CHECK_EQ(st.requests, 2 + P9_WORKERS);

	driver_start(&p9.vdev, FEATURES, 1);
	send_attach(0, 1, 1);
	CHECK(WAIT_FOR(used_idx(0) == 1));
	CHECK_EQ(reply_type(0), P9_RLERROR);
	CHECK_EQ(get_le32(reply(0) + P9_HEADER_SIZE), EPROTO);
	start_session();
	CHECK(!needs_reset(&p9.vdev));
	teardown();
}

/* A pause returns once every request taken is answered. */
static void test_pause_waits(void)
{
	if (!setup())
		return;
	start_session();
	hold(0x2);
	send_getattr(2, 1);
	CHECK(WAIT_FOR(running() == 1));
	hold(0);
	virtio_device_pause(&p9.vdev);
	CHECK_EQ(used_idx(0), 3);
	virtio_device_resume(&p9.vdev);
	teardown();
}

/* After a chain no driver sends: NEEDS_RESET with a configuration
 * interrupt, nothing used, and after a reset the device serves again. */
static void expect_refused(const char *what)
{
	static unsigned config_irqs;

	if (!WAIT_FOR(needs_reset(&p9.vdev)))
		printf("# %s: no NEEDS_RESET\n", what);
	CHECK(needs_reset(&p9.vdev));
	CHECK(WAIT_FOR(irq_count(CONFIG_VECTOR) > config_irqs));
	config_irqs = irq_count(CONFIG_VECTOR);
	CHECK_EQ(used_idx(0), 0);
	virtio_set_status(&p9.vdev, 0);
	driver_start(&p9.vdev, FEATURES, 1);
	start_session();
	CHECK(!needs_reset(&p9.vdev));
	virtio_set_status(&p9.vdev, 0);
	driver_start(&p9.vdev, FEATURES, 1);
}

static void test_malformed_chains(void)
{
	if (!setup())
		return;
	/* No writable buffer for the reply. */
	msg_version(0, 0);
	set_desc(0, 0, REQ_GPA(0), 64, 0, 0);
	publish(0, 0);
	virtio_queue_kick(&p9.vdev, 0);
	expect_refused("readable only");

	/* No message: a writable buffer alone. */
	set_desc(0, 0, RESP_GPA(0), 64, VRING_DESC_F_WRITE, 0);
	publish(0, 0);
	virtio_queue_kick(&p9.vdev, 0);
	expect_refused("writable only");

	/* Fewer bytes than a header, either way. */
	msg_version(0, 0);
	send_chain(P9_HEADER_SIZE - 1, RESP_GPA(0), 64);
	expect_refused("short message");
	msg_flush(0, 3, 1);
	send_chain(P9_HEADER_SIZE + 2, RESP_GPA(0), P9_HEADER_SIZE - 1);
	expect_refused("short Rflush room");

	/* Room for a header, not for an Rlerror: the server's refusal. */
	msg_version(0, 0);
	send_chain(P9_HEADER_SIZE + 14, RESP_GPA(0), 8);
	expect_refused("no room for an Rlerror");

	/* A reply buffer past the end of guest RAM. */
	msg_version(0, 0);
	send_chain(P9_HEADER_SIZE + 14, RAM_SIZE - 16, 64);
	expect_refused("past RAM");
	teardown();
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_identity),
		UNIT_TEST(test_tag_limits),
		UNIT_TEST(test_version_attach),
		UNIT_TEST(test_requests_in_flight),
		UNIT_TEST(test_flush),
		UNIT_TEST(test_reset_in_flight),
		UNIT_TEST(test_pause_waits),
		UNIT_TEST(test_malformed_chains),
		UNIT_TEST(test_one_at_a_time),
	};

	return UNIT_RUN(tests);
}
