/* qcow2 metadata: header checks and the L1/L2 lookup (see qcow2.h). */
#include "backend/qcow2_internal.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/log.h"
#include "lib/util.h"

#define V2_HEADER_LEN 72
#define V3_HEADER_LEN 104
#define MIN_CLUSTER_BITS 9
#define MAX_CLUSTER_BITS 21		/* 2 MiB, as qemu-img allows */
#define MAX_L1_BYTES (32u << 20)	/* QEMU's bound on the L1 table */
#define MAX_SLOTS 4096
#define MIN_SLOTS 4
/* Refcount blocks cached: each covers 2^(cluster_bits + 3 - order)
 * clusters, 2 GiB of 64 KiB clusters at 16 bits. */
#define RB_SLOTS 32

/* Header extension types. */
#define EXT_END 0
#define EXT_BACKING_FORMAT 0xe2792acau

/* Incompatible feature bits, each named when refused. */
static const char *const incompatible_names[] = {
	("dirty: it was not closed cleanly and its refcounts may be wrong "
	 "(qemu-img check -r all repairs it)"),
	"marked corrupt (qemu-img check -r all)",
	"an external data file",
	"a compression type other than zlib",
	"extended L2 entries (subclusters)",
};

int qcow2_read_file(struct qcow2 *q, void *buf, uint64_t len,
		    uint64_t offset)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	if (offset > q->file->file_bytes || len > q->file->file_bytes - offset)
		return -EIO;
	return disk_image_readv(q->file, &v, 1, offset);
}

/* Grows the file where it writes past its end: file_bytes follows, so
 * the tables just written can be read back. */
int qcow2_write_file(struct qcow2 *q, const void *buf, uint64_t len,
		     uint64_t offset)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	int err = disk_image_writev(q->file, &v, 1, offset);

	if (!err && offset + len > q->file->file_bytes)
		q->file->file_bytes = offset + len;
	return err;
}

/* The header fields thpvm uses, in host order. */
struct header {
	uint32_t version, cluster_bits, crypt_method, l1_size;
	uint32_t backing_size, nb_snapshots, refcount_order, header_len;
	uint32_t refcount_clusters;
	uint64_t backing_offset, size, l1_offset, refcount_offset;
	uint64_t incompatible;
};

static void header_decode(const uint8_t *h, struct header *hd)
{
	hd->version = get_be32(h + 4);
	hd->backing_offset = get_be64(h + 8);
	hd->backing_size = get_be32(h + 16);
	hd->cluster_bits = get_be32(h + 20);
	hd->size = get_be64(h + 24);
	hd->crypt_method = get_be32(h + 32);
	hd->l1_size = get_be32(h + 36);
	hd->l1_offset = get_be64(h + 40);
	hd->refcount_offset = get_be64(h + 48);
	hd->refcount_clusters = get_be32(h + 56);
	hd->nb_snapshots = get_be32(h + 60);
	if (hd->version < 3) {
		hd->incompatible = 0;
		hd->refcount_order = 4;
		hd->header_len = V2_HEADER_LEN;
		return;
	}
	hd->incompatible = get_be64(h + 72);
	hd->refcount_order = get_be32(h + 96);
	hd->header_len = get_be32(h + 100);
}

/* What thpvm does not read, each with its own line. */
static int header_features(const char *path, const struct header *hd)
{
	unsigned bit;

	if (hd->crypt_method) {
		pr_err("disk %s: encrypted qcow2 images (%s) are not supported",
		       path, hd->crypt_method == 1 ? "AES" :
		       hd->crypt_method == 2 ? "LUKS" : "unknown method");
		return -ENOTSUP;
	}
	if (hd->nb_snapshots) {
		pr_err("disk %s: has %" PRIu32 " internal snapshot(s), which "
		       "thpvm does not support (qemu-img snapshot -l lists "
		       "them)", path, hd->nb_snapshots);
		return -ENOTSUP;
	}
	for (bit = 0; bit < 64; bit++) {
		if (!(hd->incompatible & 1ull << bit))
			continue;
		if (bit < ARRAY_SIZE(incompatible_names))
			pr_err("disk %s: qcow2 image with %s", path,
			       incompatible_names[bit]);
		else
			pr_err("disk %s: qcow2 incompatible feature bit %u, "
			       "which thpvm does not know", path, bit);
		return -ENOTSUP;
	}
	return 0;
}

static int header_check(const char *path, const struct header *hd,
			uint64_t file_bytes)
{
	uint64_t cs, l2_cover, needed;

	if (hd->version != 2 && hd->version != 3) {
		pr_err("disk %s: qcow2 version %" PRIu32 " (thpvm reads 2 "
		       "and 3)", path, hd->version);
		return -ENOTSUP;
	}
	if (hd->cluster_bits < MIN_CLUSTER_BITS ||
	    hd->cluster_bits > MAX_CLUSTER_BITS) {
		pr_err("disk %s: qcow2 cluster size 2^%" PRIu32 " (expected "
		       "512 bytes to 2 MiB)", path, hd->cluster_bits);
		return -EINVAL;
	}
	cs = 1ull << hd->cluster_bits;
	if (hd->version == 3 && (hd->header_len < V3_HEADER_LEN ||
				 hd->header_len > cs || hd->header_len % 8)) {
		pr_err("disk %s: qcow2 header length %" PRIu32 " is not valid",
		       path, hd->header_len);
		return -EINVAL;
	}
	if (hd->refcount_order > 6) {
		pr_err("disk %s: qcow2 refcount width 2^%" PRIu32 " bits is "
		       "not valid", path, hd->refcount_order);
		return -EINVAL;
	}
	if (hd->size < DISK_SECTOR_SIZE) {
		pr_err("disk %s: qcow2 disk of %" PRIu64 " bytes is smaller "
		       "than one sector", path, hd->size);
		return -EINVAL;
	}
	l2_cover = cs / 8 * cs;
	needed = hd->size / l2_cover + !!(hd->size % l2_cover);
	if ((uint64_t)hd->l1_size * 8 > MAX_L1_BYTES || hd->l1_size < needed) {
		pr_err("disk %s: qcow2 L1 table of %" PRIu32 " entries does "
		       "not fit a disk of %" PRIu64 " bytes", path,
		       hd->l1_size, hd->size);
		return -EINVAL;
	}
	if (!hd->l1_offset || hd->l1_offset % cs ||
	    hd->l1_offset > file_bytes ||
	    (uint64_t)hd->l1_size * 8 > file_bytes - hd->l1_offset ||
	    hd->refcount_offset % cs) {
		pr_err("disk %s: qcow2 L1 or refcount table is not at a "
		       "cluster inside the file", path);
		return -EINVAL;
	}
	return header_features(path, hd);
}

/* The backing file's name, and the extensions: the backing format is the
 * only one read; unknown ones are skipped, as the specification says. */
static int header_names(struct qcow2 *q, const uint8_t *cluster,
			uint64_t avail, const struct header *hd,
			struct qcow2_info *info)
{
	uint64_t pos = hd->header_len;

	if (hd->backing_offset) {
		if (hd->backing_size > QCOW2_BACKING_NAME_MAX ||
		    hd->backing_offset > avail ||
		    hd->backing_size > avail - hd->backing_offset ||
		    !hd->backing_size) {
			pr_err("disk %s: qcow2 backing file name is not "
			       "inside the header cluster", q->path);
			return -EINVAL;
		}
		memcpy(info->backing, cluster + hd->backing_offset,
		       hd->backing_size);
		info->backing[hd->backing_size] = '\0';
		if (strlen(info->backing) != hd->backing_size) {
			pr_err("disk %s: qcow2 backing file name holds a NUL "
			       "byte", q->path);
			return -EINVAL;
		}
	}
	while (pos + 8 <= avail) {
		uint32_t type = get_be32(cluster + pos);
		uint32_t len = get_be32(cluster + pos + 4);

		if (type == EXT_END)
			return 0;
		pos += 8;
		if (len > avail - pos) {
			pr_err("disk %s: qcow2 header extension 0x%08" PRIx32
			       " runs past the header cluster", q->path, type);
			return -EINVAL;
		}
		if (type == EXT_BACKING_FORMAT) {
			if (len >= sizeof(info->backing_format) || !len) {
				pr_err("disk %s: qcow2 backing format name of "
				       "%" PRIu32 " bytes", q->path, len);
				return -EINVAL;
			}
			memcpy(info->backing_format, cluster + pos, len);
			info->backing_format[len] = '\0';
		}
		pos += ALIGN_UP((uint64_t)len, 8);
	}
	/* v2 images may end the header area without an end marker. */
	return 0;
}

static int load_header(struct qcow2 *q, struct qcow2_info *info)
{
	uint8_t first[V3_HEADER_LEN] = { 0 };
	struct header hd;
	uint8_t *cluster;
	uint64_t avail;
	int err;

	err = qcow2_read_file(q, first, MIN(sizeof(first),
					     q->file->file_bytes), 0);
	if (err || get_be32(first) != QCOW2_MAGIC ||
	    q->file->file_bytes < V2_HEADER_LEN) {
		pr_err("disk %s: not a qcow2 image", q->path);
		return err ? err : -EINVAL;
	}
	header_decode(first, &hd);
	err = header_check(q->path, &hd, q->file->file_bytes);
	if (err)
		return err;
	q->cluster_bits = hd.cluster_bits;
	q->cluster_size = 1ull << hd.cluster_bits;
	q->l2_bits = hd.cluster_bits - 3;
	q->size = ALIGN_DOWN(hd.size, DISK_SECTOR_SIZE);
	q->l1_size = hd.l1_size;
	q->l1_offset = hd.l1_offset;
	q->version = hd.version;
	q->refcount_order = hd.refcount_order;
	q->has_backing = hd.backing_offset;

	avail = MIN(q->cluster_size, q->file->file_bytes);
	cluster = malloc(avail);
	if (!cluster)
		return -ENOMEM;
	err = qcow2_read_file(q, cluster, avail, 0);
	if (!err)
		err = header_names(q, cluster, avail, &hd, info);
	free(cluster);
	if (err)
		return err;

	q->l1 = calloc(MAX(q->l1_size, 1), sizeof(*q->l1));
	if (!q->l1)
		return -ENOMEM;
	err = qcow2_read_file(q, q->l1, (uint64_t)q->l1_size * 8,
			hd.l1_offset);
	if (err)
		pr_err("disk %s: cannot read the qcow2 L1 table: %s", q->path,
		       strerror(-err));
	if (!err && q->writable)
		err = qcow2_refcount_open(q, hd.refcount_offset,
					  hd.refcount_clusters);
	info->size = q->size;
	info->cluster_size = q->cluster_size;
	info->version = hd.version;
	return err;
}

/* The L2 cache: l2_cache bytes of tables (default: the whole disk's, up
 * to QCOW2_L2_CACHE_MAX), indexed by L1 index. */
static int cache_init(struct qcow2 *q, uint64_t l2_cache)
{
	uint64_t cover = 1ull << (q->l2_bits + q->cluster_bits);
	uint64_t tables = q->size / cover + !!(q->size % cover);

	if (!l2_cache)
		l2_cache = MIN(tables * q->cluster_size, QCOW2_L2_CACHE_MAX);
	return table_cache_init(&q->l2, "L2 table",
				MIN(MAX(l2_cache / q->cluster_size, MIN_SLOTS),
				    MAX_SLOTS), q->l1_size);
}

int qcow2_open(struct qcow2 **out, struct disk_image *file, bool writable,
	       uint64_t l2_cache, struct qcow2_info *info)
{
	struct qcow2 *q = calloc(1, sizeof(*q));
	int err;

	if (!q)
		return -ENOMEM;
	memset(info, 0, sizeof(*info));
	q->file = file;
	q->path = file->path;
	q->writable = writable;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->io_done, NULL);
	err = load_header(q, info);
	if (!err)
		err = cache_init(q, l2_cache);
	if (err == -ENOMEM)
		pr_err("disk %s: out of memory for the qcow2 tables", q->path);
	if (err) {
		qcow2_close(q);
		return err;
	}
	*out = q;
	return 0;
}

void qcow2_close(struct qcow2 *q)
{
	if (!q)
		return;
	table_cache_free(&q->l2);
	qcow2_refcount_close(q);
	free(q->l1);
	pthread_cond_destroy(&q->io_done);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

int qcow2_start_writing(struct qcow2 *q)
{
	uint8_t autoclear[8];
	int err = 0;

	if (q->version < 3)
		return 0;
	pthread_mutex_lock(&q->lock);
	err = qcow2_read_file(q, autoclear, 8, HEADER_AUTOCLEAR);
	if (!err && memcmp(autoclear, "\0\0\0\0\0\0\0\0", 8)) {
		memset(autoclear, 0, 8);
		err = qcow2_write_file(q, autoclear, 8, HEADER_AUTOCLEAR);
		if (!err)
			err = disk_image_flush(q->file);
	}
	pthread_mutex_unlock(&q->lock);
	if (err)
		pr_err("disk %s: cannot clear the qcow2 autoclear bits: %s",
		       q->path, strerror(-err));
	return err;
}

int qcow2_corrupt(struct qcow2 *q, const char *what, uint64_t value)
{
	pr_warn_ratelimited("disk %s: corrupt qcow2 %s 0x%" PRIx64, q->path,
			    what, value);
	return -EIO;
}

int qcow2_decode_l2(struct qcow2 *q, uint64_t entry, struct qcow2_extent *e)
{
	if (entry & L2_COMPRESSED) {
		unsigned shift = 62 - (q->cluster_bits - 8);
		uint64_t sectors = (entry >> shift) &
				   ((1ull << (q->cluster_bits - 8)) - 1);

		e->kind = QCOW2_COMPRESSED;
		e->host = entry & ((1ull << shift) - 1);
		e->csize = (sectors + 1) * DISK_SECTOR_SIZE -
			   (e->host % DISK_SECTOR_SIZE);
		return 0;
	}
	if (entry & L2_RESERVED)
		return qcow2_corrupt(q, "L2 entry", entry);
	e->host = entry & ENTRY_OFFSET_MASK;
	e->copied = entry & ENTRY_COPIED;
	/* v2 has no zero clusters; a zero cluster may keep one allocated. */
	if (entry & L2_ZERO && (q->version < 3 ||
				e->host & (q->cluster_size - 1)))
		return qcow2_corrupt(q, "L2 entry (zero cluster)", entry);
	if (entry & L2_ZERO)
		e->kind = QCOW2_ZERO;
	else if (!e->host)
		e->kind = QCOW2_BACKING;
	else if (e->host & (q->cluster_size - 1))
		return qcow2_corrupt(q, "L2 entry (unaligned cluster)", entry);
	else
		e->kind = QCOW2_DATA;
	return 0;
}

/* With q->lock: grows e over the entries after index i of table while
 * they continue it, up to max bytes. */
static int extend_run(struct qcow2 *q, const uint64_t *table, uint64_t i,
		      uint64_t max, struct qcow2_extent *e)
{
	uint64_t entries = 1ull << q->l2_bits;
	uint64_t host = e->host;	/* DATA: the last cluster's */

	for (i++; i < entries && e->len < max; i++) {
		struct qcow2_extent next;
		int err = qcow2_decode_l2(q, be64toh(table[i]), &next);

		if (err)
			return err;
		if (next.kind != e->kind || (e->kind == QCOW2_DATA &&
		    (next.host != host + q->cluster_size ||
		     next.copied != e->copied)))
			break;
		host = next.host;
		e->len += MIN(q->cluster_size, max - e->len);
	}
	return 0;
}

/* With q->lock. */
static int map_locked(struct qcow2 *q, uint64_t offset, uint64_t len,
		      struct qcow2_extent *e)
{
	uint64_t cluster = offset >> q->cluster_bits;
	uint64_t in = offset & (q->cluster_size - 1);
	uint64_t l2_index = cluster & ((1ull << q->l2_bits) - 1);
	uint64_t l1_index = cluster >> q->l2_bits;
	/* A run ends with its L2 table. */
	uint64_t max = MIN(len, (((1ull << q->l2_bits) - l2_index)
				 << q->cluster_bits) - in);
	uint64_t l1_entry, l2_offset;
	struct table_slot *slot;
	const uint64_t *table;
	int err;

	memset(e, 0, sizeof(*e));
	e->len = MIN(q->cluster_size - in, max);
	if (l1_index >= q->l1_size || !len)
		return -EIO;
	l1_entry = be64toh(q->l1[l1_index]);
	l2_offset = l1_entry & ENTRY_OFFSET_MASK;
	if (l1_entry & L1_RESERVED || l2_offset & (q->cluster_size - 1))
		return qcow2_corrupt(q, "L1 entry", l1_entry);
	if (!l2_offset) {
		e->kind = QCOW2_BACKING;
		e->len = max;
		return 0;
	}
	err = table_cache_get(q, &q->l2, l1_index, l2_offset, false, &slot);
	if (err)
		return err;
	table = (const uint64_t *)slot->table;
	err = qcow2_decode_l2(q, be64toh(table[l2_index]), e);
	if (!err && e->kind == QCOW2_COMPRESSED)
		e->skip = in;
	else if (!err)
		err = extend_run(q, table, l2_index, max, e);
	if (!err && e->kind == QCOW2_DATA)
		e->host += in;
	return err;
}

int qcow2_map(struct qcow2 *q, uint64_t offset, uint64_t len,
	      struct qcow2_extent *e)
{
	uint64_t c;
	int err;

	pthread_mutex_lock(&q->lock);
	err = map_locked(q, offset, len, e);
	/* A write there goes the slow way, which refuses it: a cluster of
	 * the header or a table, or one wholly past the end of the file
	 * (whose refcount cannot be 1, so it could be allocated again). */
	for (c = e->host >> q->cluster_bits; !err && e->kind == QCOW2_DATA &&
	     q->writable && c <= (e->host + e->len - 1) >> q->cluster_bits;
	     c++)
		if (qcow2_is_metadata(q, c) ||
		    c << q->cluster_bits >= q->file->file_bytes)
			e->copied = false;
	if (!err)
		q->unlocked_io++;
	pthread_mutex_unlock(&q->lock);
	return err;
}

void qcow2_io_done(struct qcow2 *q)
{
	pthread_mutex_lock(&q->lock);
	if (!--q->unlocked_io)
		pthread_cond_broadcast(&q->io_done);
	pthread_mutex_unlock(&q->lock);
}

/* zlib's raw deflate with a 4 KiB window, as QEMU writes it; the data
 * must fill the cluster exactly. */
static int inflate_cluster(uint8_t *in, uint64_t in_len, uint8_t *out,
			   uint64_t out_len)
{
	z_stream zs = { 0 };
	int ret;

	if (inflateInit2(&zs, -12) != Z_OK)
		return -ENOMEM;
	zs.next_in = in;
	zs.avail_in = in_len;
	zs.next_out = out;
	zs.avail_out = out_len;
	ret = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if ((ret == Z_STREAM_END || ret == Z_BUF_ERROR) && !zs.avail_out)
		return 0;
	return -EIO;
}

int qcow2_inflate_cluster(struct qcow2 *q, uint64_t host, uint32_t csize,
			  uint8_t *out)
{
	uint64_t n;
	uint8_t *in;
	int err;

	/* The last cluster's sectors may run past the end of the file. */
	if (host >= q->file->file_bytes)
		return qcow2_corrupt(q, "compressed cluster offset", host);
	n = MIN(csize, q->file->file_bytes - host);
	in = malloc(n);
	if (!in)
		return -ENOMEM;
	err = qcow2_read_file(q, in, n, host);
	if (!err && inflate_cluster(in, n, out, q->cluster_size))
		err = qcow2_corrupt(q, "compressed cluster at", host);
	free(in);
	return err;
}

/* Under the lock: a writer may be growing the file meanwhile. */
int qcow2_read_compressed(struct qcow2 *q, const struct qcow2_extent *e,
			  const struct iovec *iov, unsigned nr)
{
	uint8_t *out = malloc(q->cluster_size);
	int err;

	if (!out)
		return -ENOMEM;
	pthread_mutex_lock(&q->lock);
	err = qcow2_inflate_cluster(q, e->host, e->csize, out);
	pthread_mutex_unlock(&q->lock);
	if (!err)
		buf_to_iov(iov, nr, 0, out + e->skip, e->len);
	free(out);
	return err;
}
