/* Disk I/O through io_uring (see disk_ring.h). */
#include "backend/disk_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"

#define IMAGE_INDEX 0		/* the image, as the ring's fixed file */

/* io_uring_register() itself: Debian's liburing 2.3 declares
 * io_uring_register_restrictions() and io_uring_enable_rings() but its
 * shared library does not export them. */
static int ring_register(struct disk_ring *r, unsigned op, const void *arg,
			 unsigned nr)
{
	return syscall(__NR_io_uring_register, r->ring.ring_fd, op, arg, nr) <
	       0 ? -errno : 0;
}

/* What the ring may do once enabled: its three operations, on the
 * registered image only, and no further registrations. */
static int restrict_ring(struct disk_ring *r)
{
	static const uint8_t ops[] = {
		IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
	};
	struct io_uring_restriction res[ARRAY_SIZE(ops) + 2];
	unsigned n = 0, i;

	memset(res, 0, sizeof(res));
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		res[n].opcode = IORING_RESTRICTION_SQE_OP;
		res[n++].sqe_op = ops[i];
	}
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED;
	res[n++].sqe_flags = IOSQE_FIXED_FILE;
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[n++].sqe_flags = IOSQE_FIXED_FILE | IOSQE_IO_DRAIN;
	return ring_register(r, IORING_REGISTER_RESTRICTIONS, res, n);
}

/* The image again, as a new open file description with the same access
 * and O_DIRECT. The kernel frees a ring in the background after its fd is
 * closed (also when thpvm is killed), holding the registered file until
 * then; the image's OFD lock lives on d->fd's description, which this
 * one does not share, so a VM started right after this one ended finds
 * the image unlocked. */
static int reopen(const struct disk_image *d)
{
	char path[32];
	int flags = fcntl(d->fd, F_GETFL), fd;

	if (flags < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", d->fd);
	fd = open(path, (flags & (O_ACCMODE | O_DIRECT)) | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int disk_ring_init(struct disk_ring *r, struct disk_image *d,
		   unsigned entries)
{
	struct io_uring_params p;
	int err;

	memset(r, 0, sizeof(*r));
	r->file_fd = reopen(d);
	if (r->file_fd < 0)
		return r->file_fd;
	r->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->event_fd < 0) {
		err = -errno;
		close(r->file_fd);
		return err;
	}
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	err = io_uring_queue_init_params(entries, &r->ring, &p);
	if (err) {
		close(r->event_fd);
		close(r->file_fd);
		return err;
	}
	err = io_uring_register_files(&r->ring, &r->file_fd, 1);
	if (!err)
		err = io_uring_register_eventfd(&r->ring, r->event_fd);
	if (!err)
		err = restrict_ring(r);
	if (!err)
		err = ring_register(r, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	r->ready = true;
	if (err)
		disk_ring_exit(r);
	return err;
}

void disk_ring_exit(struct disk_ring *r)
{
	if (!r->ready)
		return;
	io_uring_queue_exit(&r->ring);
	close(r->file_fd);
	close(r->event_fd);
	r->ready = false;
}

/* A free submission entry, submitting what is queued if there is none;
 * NULL with *err set when there is none. */
static struct io_uring_sqe *get_sqe(struct disk_ring *r, int *err)
{
	struct io_uring_sqe *sqe;

	*err = r->failed;
	if (*err)
		return NULL;
	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe && disk_ring_submit(r) == 0)
		sqe = io_uring_get_sqe(&r->ring);
	if (sqe)
		r->queued++;
	else
		*err = r->failed ? r->failed : -EBUSY;
	return sqe;
}

int disk_ring_rw(struct disk_ring *r, bool write, const struct iovec *iov,
		 unsigned nr, uint64_t offset, uint64_t tag)
{
	int err;
	struct io_uring_sqe *sqe = get_sqe(r, &err);

	if (!sqe)
		return err;
	if (write)
		io_uring_prep_writev(sqe, IMAGE_INDEX, iov, nr, offset);
	else
		io_uring_prep_readv(sqe, IMAGE_INDEX, iov, nr, offset);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, tag);
	return 0;
}

int disk_ring_flush(struct disk_ring *r, uint64_t tag)
{
	int err;
	struct io_uring_sqe *sqe = get_sqe(r, &err);

	if (!sqe)
		return err;
	io_uring_prep_fsync(sqe, IMAGE_INDEX, IORING_FSYNC_DATASYNC);
	/* Drain: every request submitted before it completes first. */
	sqe->flags |= IOSQE_FIXED_FILE | IOSQE_IO_DRAIN;
	io_uring_sqe_set_data64(sqe, tag);
	return 0;
}

int disk_ring_submit(struct disk_ring *r)
{
	unsigned waits = 0;

	while (r->queued && !r->failed) {
		int n = io_uring_submit(&r->ring);

		if (n == -EINTR)
			continue;
		/* Out of resources for now. With requests in flight, their
		 * completions wake the caller to try again; with none, only
		 * time helps, and a second of it ends the ring. */
		if (n == -EAGAIN || n == -EBUSY || n == -ENOMEM) {
			if (r->in_flight)
				return -EAGAIN;
			if (++waits < 1000) {
				usleep(1000);
				continue;
			}
		}
		if (n < 0) {
			r->failed = n;
			break;
		}
		n = MIN((unsigned)n, r->queued);
		r->queued -= n;
		r->in_flight += n;
	}
	return r->failed;
}

bool disk_ring_pending(struct disk_ring *r)
{
	return io_uring_cq_ready(&r->ring) > 0;
}

/* After a failed submission, the entries the kernel never took (the
 * last `queued` before our tail), each as a completion with that error.
 * The kernel takes entries only when asked to submit, which the ring no
 * longer does. */
static unsigned reap_unsubmitted(struct disk_ring *r,
				 struct disk_ring_done *out, unsigned max)
{
	struct io_uring_sq *sq = &r->ring.sq;
	unsigned n;

	for (n = 0; n < max && r->queued; n++, r->queued--) {
		unsigned pos = sq->sqe_tail - r->queued;
		struct io_uring_sqe *sqe =
			&sq->sqes[sq->array[pos & sq->ring_mask]];

		out[n].tag = sqe->user_data;
		out[n].res = r->failed;
	}
	return n;
}

int disk_ring_reap(struct disk_ring *r, struct disk_ring_done *out,
		   unsigned max, bool wait)
{
	struct io_uring_cqe *cqe;
	unsigned n = 0, head;
	uint64_t count;
	int err = 0;

	/* The eventfd only wakes the poller; the ring itself is the truth,
	 * so a failed read (it cannot fail but with EAGAIN) loses nothing. */
	if (read(r->event_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		pr_warn_ratelimited("io_uring eventfd: %s", strerror(errno));
	if (wait && r->in_flight && !io_uring_cq_ready(&r->ring)) {
		do
			err = io_uring_wait_cqe(&r->ring, &cqe);
		while (err == -EINTR);
	}
	io_uring_for_each_cqe(&r->ring, head, cqe) {
		if (n == max)
			break;
		out[n].tag = io_uring_cqe_get_data64(cqe);
		out[n++].res = cqe->res;
	}
	io_uring_cq_advance(&r->ring, n);
	r->in_flight -= n;
	if (r->failed)
		n += reap_unsubmitted(r, out + n, max - n);
	return n ? (int)n : err;
}
