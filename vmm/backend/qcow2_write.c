/* qcow2 writes (see qcow2.h): in place where a cluster's refcount is 1,
 * otherwise into a newly allocated cluster filled first with what the
 * old one read as (copy-on-write from the backing file, a compressed or
 * a zero cluster); discard and write-zeroes on whole clusters; and the
 * flush that puts the tables on disk in dependency order. Metadata is
 * changed in memory and written out at a flush (or when a dirty table
 * leaves its cache): a crash before it loses writes the guest had not
 * flushed, and never leaves an entry pointing at unwritten data or at a
 * cluster whose refcount is not on disk. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/qcow2_internal.h"
#include "lib/log.h"
#include "lib/util.h"

/* With the lock: the L2 table that holds cluster's entry; with alloc, a
 * new one where the L1 entry has none (otherwise *slot is NULL). */
static int l2_for(struct qcow2 *q, uint64_t cluster, bool alloc,
		  struct table_slot **slot)
{
	uint64_t l1_index = cluster >> q->l2_bits;
	uint64_t entry, off, rc;
	int err;

	*slot = NULL;
	if (l1_index >= q->l1_size)
		return -EIO;
	entry = be64toh(q->l1[l1_index]);
	off = entry & ENTRY_OFFSET_MASK;
	if (entry & L1_RESERVED || off & (q->cluster_size - 1))
		return qcow2_corrupt(q, "L1 entry", entry);
	if (off && !(entry & ENTRY_COPIED)) {
		/* Shared with a snapshot: thpvm refuses those at open. */
		err = qcow2_refcount_get(q, off >> q->cluster_bits, &rc);
		if (!err && rc != 1)
			err = qcow2_corrupt(q, "L2 table refcount", rc);
		if (err)
			return err;
	}
	if (off)
		return table_cache_get(q, &q->l2, l1_index, off, false, slot);
	if (!alloc)
		return 0;
	err = qcow2_alloc_cluster(q, &off);
	if (!err)
		err = table_cache_get(q, &q->l2, l1_index, off, true, slot);
	if (err)
		return err;
	q->l1[l1_index] = htobe64(off | ENTRY_COPIED);
	q->l1_dirty = true;
	return 0;
}

static uint64_t *entry_of(struct qcow2 *q, struct table_slot *s,
			  uint64_t cluster)
{
	return (uint64_t *)s->table + (cluster & ((1ull << q->l2_bits) - 1));
}

/* What an entry replaced by a new one held in the file, freed once the
 * new one is on disk (drop_ref refuses the header's and tables'
 * clusters). */
static int free_old(struct qcow2 *q, const struct qcow2_extent *e)
{
	if (e->kind == QCOW2_COMPRESSED) {
		uint64_t first = ALIGN_DOWN(e->host, DISK_SECTOR_SIZE);

		return qcow2_free_later(q, first, e->host + e->csize - first);
	}
	if (e->host && e->kind != QCOW2_BACKING)
		return qcow2_free_later(q, e->host, q->cluster_size);
	return 0;
}

/* The bytes the cluster at disk offset start reads as now (e), for a
 * write that covers it only in part. */
static int old_bytes(struct qcow2 *q, const struct qcow2_extent *e,
		     uint64_t start, uint8_t *buf,
		     const struct qcow2_below *below)
{
	struct iovec v = { .iov_base = buf, .iov_len = q->cluster_size };

	switch (e->kind) {
	case QCOW2_ZERO:
		memset(buf, 0, q->cluster_size);
		return 0;
	case QCOW2_BACKING:
		return below->readv(below->ctx, &v, 1, start);
	case QCOW2_COMPRESSED:
		return qcow2_inflate_cluster(q, e->host, e->csize, buf);
	case QCOW2_DATA:
		return qcow2_read_file(q, buf, q->cluster_size, e->host);
	}
	return -EIO;
}

/* A write within one cluster, with the lock: into a new cluster, or
 * (*in_place, 0 otherwise) the file offset to write in place, which
 * the caller does without the lock. */
static int write_cluster(struct qcow2 *q, const struct iovec *iov,
			 unsigned nr, uint64_t offset, uint64_t len,
			 const struct qcow2_below *below, uint8_t *buf,
			 uint64_t *in_place)
{
	uint64_t cluster = offset >> q->cluster_bits, rc = 0, host;
	uint64_t in = offset & (q->cluster_size - 1);
	struct qcow2_extent e;
	struct table_slot *s;
	int err;

	*in_place = 0;
	err = l2_for(q, cluster, true, &s);
	if (!err)
		err = qcow2_decode_l2(q, be64toh(*entry_of(q, s, cluster)), &e);
	if (!err && e.kind == QCOW2_DATA && !e.copied)
		err = qcow2_refcount_get(q, e.host >> q->cluster_bits, &rc);
	if (err)
		return err;
	if (e.kind == QCOW2_DATA &&
	    (qcow2_is_metadata(q, e.host >> q->cluster_bits) ||
	     e.host >= q->file->file_bytes))
		return qcow2_corrupt(q, "L2 entry pointing at the header, a "
				     "table or past the end of the file",
				     e.host);
	if (e.kind == QCOW2_DATA && (e.copied || rc == 1)) {
		*entry_of(q, s, cluster) = htobe64(e.host | ENTRY_COPIED);
		s->dirty |= !e.copied;
		*in_place = e.host + in;
		q->unlocked_io++;
		return 0;
	}
	if (len < q->cluster_size)
		err = old_bytes(q, &e, offset - in, buf, below);
	if (!err)
		err = qcow2_alloc_cluster(q, &host);
	if (err)
		return err;
	if (len < q->cluster_size) {
		iov_to_buf(iov, nr, 0, buf + in, len);
		err = qcow2_write_file(q, buf, q->cluster_size, host);
	} else {
		err = disk_image_writev(q->file, iov, nr, host);
		if (!err && host + q->cluster_size > q->file->file_bytes)
			q->file->file_bytes = host + q->cluster_size;
	}
	/* The allocation may have written tables out; the slot stays. */
	if (!err)
		err = l2_for(q, cluster, false, &s);
	if (err)
		return err;
	*entry_of(q, s, cluster) = htobe64(host | ENTRY_COPIED);
	s->dirty = true;
	return free_old(q, &e);
}

int qcow2_writev(struct qcow2 *q, const struct iovec *iov, unsigned nr,
		 uint64_t offset, const struct qcow2_below *below)
{
	uint64_t len = iov_bytes(iov, nr), done = 0, in_place;
	struct iovec part[nr ? nr : 1];
	uint8_t *buf = NULL;
	int err = 0;

	if (!q->writable)
		return -EROFS;
	while (done < len && !err) {
		uint64_t pos = offset + done;
		uint64_t n = MIN(q->cluster_size - (pos & (q->cluster_size - 1)),
				 len - done);
		unsigned k = iov_truncate(part, iov_slice(iov, nr, done, part),
					  n);

		if (n < q->cluster_size && !buf &&
		    posix_memalign((void **)&buf, 4096, q->cluster_size))
			return -ENOMEM;
		pthread_mutex_lock(&q->lock);
		err = q->broken ?: write_cluster(q, part, k, pos, n, below, buf,
						 &in_place);
		pthread_mutex_unlock(&q->lock);
		if (!err && in_place) {
			err = disk_image_writev(q->file, part, k, in_place);
			qcow2_io_done(q);
		}
		done += n;
	}
	free(buf);
	return err;
}

/* With the lock: a whole cluster made to read as zeros (v3: a zero
 * cluster, hiding the backing file too), or unallocated (v2, which has
 * no zero clusters: zeros without a backing file; over one, a discard
 * shows its bytes and write-zeroes must write, false in *done). */
static int zero_cluster(struct qcow2 *q, uint64_t cluster, bool discard,
			bool *done)
{
	bool flag = q->version >= 3, hide = flag && q->has_backing;
	struct qcow2_extent e;
	struct table_slot *s;
	int err;

	*done = flag || discard || !q->has_backing;
	if (!*done)
		return 0;
	/* No table: unallocated already. */
	err = l2_for(q, cluster, hide, &s);
	if (err || !s)
		return err;
	err = qcow2_decode_l2(q, be64toh(*entry_of(q, s, cluster)), &e);
	if (err || (e.kind == QCOW2_BACKING && !hide) ||
	    (e.kind == QCOW2_ZERO && !e.host))
		return err;
	*entry_of(q, s, cluster) = htobe64(flag ? L2_ZERO : 0);
	s->dirty = true;
	return free_old(q, &e);
}

int qcow2_zero(struct qcow2 *q, uint64_t offset, uint64_t len, bool discard,
	       const struct qcow2_below *below)
{
	static const uint8_t zeros[4096];
	uint64_t done = 0;
	int err = 0;

	if (!q->writable)
		return -EROFS;
	while (done < len && !err) {
		uint64_t pos = offset + done;
		uint64_t in = pos & (q->cluster_size - 1);
		uint64_t n = MIN(q->cluster_size - in, len - done);
		bool whole = !in && (n == q->cluster_size || pos + n == q->size);
		bool zeroed = false;

		if (whole) {
			pthread_mutex_lock(&q->lock);
			err = q->broken ?: zero_cluster(q, pos >> q->cluster_bits,
							discard, &zeroed);
			pthread_mutex_unlock(&q->lock);
		}
		/* A part of a cluster: discard is only advice; zeros are
		 * written. */
		for (uint64_t z = 0; !err && !zeroed && !discard && z < n;
		     z += sizeof(zeros)) {
			struct iovec v = {
				.iov_base = (void *)zeros,
				.iov_len = MIN(sizeof(zeros), n - z),
			};

			err = qcow2_writev(q, &v, 1, pos + z, below);
		}
		done += n;
	}
	return err;
}

/* A failure leaves the tables on disk as they were at some step:
 * consistent, but nothing more may be written over them. */
int qcow2_write_out(struct qcow2 *q)
{
	bool dirty = q->rt && (q->rt_dirty || table_cache_dirty(&q->rb));
	int err = q->broken ?: disk_image_flush(q->file);

	if (!err)
		err = qcow2_refcount_flush(q);
	if (!err && dirty)
		err = disk_image_flush(q->file);
	if (!err && table_cache_dirty(&q->l2)) {
		err = table_cache_write(q, &q->l2);
		if (!err)
			err = disk_image_flush(q->file);
	}
	if (!err && q->l1_dirty) {
		err = qcow2_write_file(q, q->l1, (uint64_t)q->l1_size * 8,
				       q->l1_offset);
		if (!err)
			err = disk_image_flush(q->file);
		if (!err)
			q->l1_dirty = false;
	}
	if (err && !q->broken && q->writable)
		q->broken = err;
	return err;
}

/* The frees the tables on disk now allow are applied and written too,
 * so that a flushed image has no leaked clusters. */
int qcow2_flush(struct qcow2 *q)
{
	bool frees;
	int err;

	pthread_mutex_lock(&q->lock);
	err = qcow2_write_out(q);
	frees = q->nr_frees;
	if (!err && frees)
		err = qcow2_refcount_apply_frees(q);
	if (!err && frees)
		err = qcow2_write_out(q);
	pthread_mutex_unlock(&q->lock);
	return err;
}
