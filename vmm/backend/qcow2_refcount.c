/* qcow2 refcounts of a writable image: the refcount table in memory,
 * refcount blocks in a cache, cluster allocation (first fit from a
 * hint) and frees held back until nothing on disk points at the
 * clusters (see qcow2_internal.h). Widths of 1 to 64 bits. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>

#include "backend/qcow2_internal.h"
#include "lib/log.h"
#include "lib/util.h"

#define RB_SLOTS 32
/* QEMU's bound on the refcount table. */
#define MAX_RT_BYTES (8u << 20)
/* Frees held back before they force a write-out of their own. */
#define MAX_PENDING_FREES 1024

static uint64_t entry_get(const uint8_t *t, uint64_t i, unsigned order)
{
	unsigned w = 1u << order;

	switch (order) {
	case 4: return get_be16(t + 2 * i);
	case 5: return get_be32(t + 4 * i);
	case 6: return get_be64(t + 8 * i);
	default:	/* sub-byte: bit 0 is the least significant */
		return (t[i * w / 8] >> (i * w % 8)) & ((1u << w) - 1);
	}
}

static void entry_set(uint8_t *t, uint64_t i, unsigned order, uint64_t v)
{
	unsigned w = 1u << order, shift;

	switch (order) {
	case 4: put_be16(t + 2 * i, v); return;
	case 5: put_be32(t + 4 * i, v); return;
	case 6: put_be64(t + 8 * i, v); return;
	default:
		shift = i * w % 8;
		t[i * w / 8] = (t[i * w / 8] & ~(((1u << w) - 1) << shift)) |
			       (v << shift);
	}
}

int qcow2_refcount_open(struct qcow2 *q, uint64_t rt_offset,
			uint32_t rt_clusters)
{
	uint64_t bytes = (uint64_t)rt_clusters << q->cluster_bits, i;
	int err;

	if (!rt_clusters || bytes > MAX_RT_BYTES ||
	    rt_offset > q->file->file_bytes ||
	    bytes > q->file->file_bytes - rt_offset) {
		pr_err("disk %s: qcow2 refcount table of %" PRIu32 " clusters "
		       "does not fit the file", q->path, rt_clusters);
		return -EINVAL;
	}
	q->rb_bits = q->cluster_bits + 3 - q->refcount_order;
	q->rt_offset = rt_offset;
	q->rt_clusters = rt_clusters;
	q->rt_entries = bytes / 8;
	q->rt = malloc(bytes);
	if (!q->rt)
		return -ENOMEM;
	err = qcow2_read_file(q, q->rt, bytes, rt_offset);
	for (i = 0; !err && i < q->rt_entries; i++) {
		q->rt[i] = be64toh(q->rt[i]);
		if (q->rt[i] & (RT_RESERVED | (q->cluster_size - 1) |
				~ENTRY_OFFSET_MASK)) {
			pr_err("disk %s: corrupt qcow2 refcount table entry "
			       "0x%" PRIx64, q->path, q->rt[i]);
			err = -EINVAL;
		}
	}
	if (!err)
		err = table_cache_init(&q->rb, "refcount block", RB_SLOTS,
				       q->rt_entries);
	return err;
}

void qcow2_refcount_close(struct qcow2 *q)
{
	table_cache_free(&q->rb);
	free(q->rt);
	free(q->frees);
	q->rt = NULL;
	q->frees = NULL;
}

int qcow2_refcount_get(struct qcow2 *q, uint64_t cluster, uint64_t *rc)
{
	uint64_t block = cluster >> q->rb_bits;
	struct table_slot *s;
	int err;

	*rc = 0;
	if (block >= q->rt_entries || !q->rt[block])
		return 0;
	err = table_cache_get(q, &q->rb, block, q->rt[block], false, &s);
	if (!err)
		*rc = entry_get(s->table, cluster & ((1ull << q->rb_bits) - 1),
				q->refcount_order);
	return err;
}

bool qcow2_is_metadata(const struct qcow2 *q, uint64_t cluster)
{
	uint64_t at = cluster << q->cluster_bits;
	uint64_t l1_end = q->l1_offset + (uint64_t)q->l1_size * 8;
	uint64_t rt_end = q->rt_offset + ((uint64_t)q->rt_clusters
					  << q->cluster_bits);

	return !cluster || (at + q->cluster_size > q->l1_offset &&
			    at < l1_end) ||
	       (at >= q->rt_offset && at < rt_end);
}

/* Clusters an image can have in use: the disk's data, every table
 * the L1 and refcount tables can point at, those tables and the header.
 * Among that many plus one in a row, one is free. */
static uint64_t max_used(const struct qcow2 *q)
{
	return (q->size >> q->cluster_bits) + 1 + q->l1_size +
	       ((uint64_t)q->l1_size * 8 >> q->cluster_bits) + 1 +
	       q->rt_entries + q->rt_clusters + 1;
}

/* The first of n free clusters in a row from the hint. Past the end of
 * the file and of what was allocated in memory every cluster is free,
 * and within max_used() of the hint one is: refcounts that claim
 * otherwise are corrupt, and the search stops there rather than run
 * through the whole offset space (and the image takes no more writes,
 * so that it does not run again). */
static int find_free(struct qcow2 *q, uint64_t n, uint64_t *first)
{
	uint64_t file_end = ALIGN_UP(q->file->file_bytes, q->cluster_size) >>
			    q->cluster_bits;
	uint64_t limit = MIN(MAX(file_end, q->alloc_end),
			     q->free_hint + max_used(q)) + n;
	uint64_t c, run = 0, rc;
	int err;

	for (c = q->free_hint; c < limit; c++) {
		err = qcow2_refcount_get(q, c, &rc);
		if (err)
			return err;
		run = rc || qcow2_is_metadata(q, c) ? 0 : run + 1;
		if (run == n) {
			*first = c + 1 - n;
			return 0;
		}
	}
	q->broken = qcow2_corrupt(q, "refcounts: no free cluster where one "
				  "must be, from", q->free_hint);
	return q->broken;
}

/* Clusters [first, first + n) now in use: the search goes on after them. */
static void taken(struct qcow2 *q, uint64_t first, uint64_t n)
{
	q->free_hint = first + n;
	q->alloc_end = MAX(q->alloc_end, first + n);
}

static int refcount_set(struct qcow2 *q, uint64_t cluster, uint64_t rc);

/* A grown refcount table: twice the entries, or enough for block and
 * for the blocks that count the table's own clusters, which come first
 * (a write-out meanwhile writes the old table, as far as it goes, and
 * the header still points at it). Only then does the table move in
 * memory; the header follows once it and its blocks are on disk
 * (qcow2_refcount_flush). A failure halfway leaves entries that no
 * table on disk will hold: the image takes no more writes (broken). */
static int rt_grow(struct qcow2 *q, uint64_t block)
{
	uint64_t per_cluster = q->cluster_size / 8;
	uint64_t entries = ALIGN_UP(MAX(block + 1, q->rt_entries * 2),
				    per_cluster);
	uint64_t clusters, first, last, i;
	uint64_t *rt;
	int err;

	for (;;) {
		clusters = entries / per_cluster;
		if (entries * 8 > MAX_RT_BYTES)
			return -ENOSPC;
		err = find_free(q, clusters, &first);
		if (err)
			return err;
		/* The table, and the blocks that count it right after it,
		 * within the blocks it holds: no growth nests in this one. */
		last = first + 2 * clusters + 2;
		if ((last >> q->rb_bits) < entries)
			break;
		entries = ALIGN_UP((last >> q->rb_bits) + 1, per_cluster);
	}
	rt = realloc(q->rt, entries * 8);
	if (!rt)
		return -ENOMEM;
	memset(rt + q->rt_entries, 0, (entries - q->rt_entries) * 8);
	q->rt = rt;
	q->rt_entries = entries;
	q->broken = table_cache_grow(&q->rb, entries);
	taken(q, first, clusters);
	for (i = 0; i < clusters && !q->broken; i++)
		q->broken = refcount_set(q, first + i, 1);
	if (q->broken)
		return q->broken;
	if (q->rt_moved) {
		/* The last grown table never reached the header. */
		for (i = 0; i < q->rt_clusters && !q->broken; i++)
			q->broken = refcount_set(q, (q->rt_offset >>
						     q->cluster_bits) + i, 0);
		q->free_hint = MIN(q->free_hint,
				   q->rt_offset >> q->cluster_bits);
	} else {
		q->rt_old_offset = q->rt_offset;
		q->rt_old_clusters = q->rt_clusters;
	}
	q->rt_offset = first << q->cluster_bits;
	q->rt_clusters = clusters;
	q->rt_moved = true;
	q->rt_dirty = true;
	return q->broken;
}

/* Refcount block block exists: a new one goes in the first free
 * cluster, and counts itself when it covers that cluster. */
static int block_ensure(struct qcow2 *q, uint64_t block)
{
	struct table_slot *s;
	uint64_t c;
	int err;

	if (block >= q->rt_entries) {
		err = rt_grow(q, block);
		if (err)
			return err;
	}
	if (q->rt[block])
		return 0;
	err = find_free(q, 1, &c);
	if (err)
		return err;
	taken(q, c, 1);
	err = table_cache_get(q, &q->rb, block, c << q->cluster_bits, true,
			      &s);
	if (err)
		return err;
	q->rt[block] = c << q->cluster_bits;
	q->rt_dirty = true;
	return refcount_set(q, c, 1);
}

static int refcount_set(struct qcow2 *q, uint64_t cluster, uint64_t rc)
{
	uint64_t block = cluster >> q->rb_bits;
	struct table_slot *s;
	int err = block_ensure(q, block);

	if (!err)
		err = table_cache_get(q, &q->rb, block, q->rt[block], false,
				      &s);
	if (err)
		return err;
	entry_set(s->table, cluster & ((1ull << q->rb_bits) - 1),
		  q->refcount_order, rc);
	s->dirty = true;
	return 0;
}

int qcow2_alloc_cluster(struct qcow2 *q, uint64_t *offset)
{
	uint64_t c;
	int err = find_free(q, 1, &c);

	if (err)
		return err;
	taken(q, c, 1);
	err = refcount_set(q, c, 1);
	if (!err)
		*offset = c << q->cluster_bits;
	return err;
}

static int pending_add(struct qcow2 *q, uint64_t offset, uint64_t bytes)
{
	if (q->nr_frees == q->max_frees) {
		unsigned max = q->max_frees ? 2 * q->max_frees : 64;
		struct pending_free *f = realloc(q->frees, max * sizeof(*f));

		if (!f)
			return -ENOMEM;
		q->frees = f;
		q->max_frees = max;
	}
	q->frees[q->nr_frees++] = (struct pending_free){ offset, bytes };
	return 0;
}

int qcow2_free_later(struct qcow2 *q, uint64_t offset, uint64_t bytes)
{
	int err = pending_add(q, offset, bytes);

	if (err || q->nr_frees < MAX_PENDING_FREES)
		return err;
	return qcow2_write_out(q) ?: qcow2_refcount_apply_frees(q);
}

/* One cluster loses a reference; unreferenced, its bytes go back to the
 * host filesystem (a hole), and the hint comes back to it. */
static int drop_ref(struct qcow2 *q, uint64_t c)
{
	uint64_t rc;
	int err = qcow2_refcount_get(q, c, &rc);

	if (err)
		return err;
	if (qcow2_is_metadata(q, c))
		return qcow2_corrupt(q, "entry freeing the header or a table", c);
	if (!rc)
		return qcow2_corrupt(q, "refcount of 0 for a used cluster", c);
	err = refcount_set(q, c, rc - 1);
	if (err || rc > 1)
		return err;
	/* Best effort: a file system without holes keeps the bytes. */
	fallocate(q->file->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		  c << q->cluster_bits, q->cluster_size);
	q->free_hint = MIN(q->free_hint, c);
	return 0;
}

int qcow2_refcount_apply_frees(struct qcow2 *q)
{
	unsigned i;
	int err = 0;

	while (q->unlocked_io)
		pthread_cond_wait(&q->io_done, &q->lock);
	for (i = 0; i < q->nr_frees && !err; i++) {
		uint64_t c = q->frees[i].offset >> q->cluster_bits;
		uint64_t end = (q->frees[i].offset + q->frees[i].bytes - 1) >>
			       q->cluster_bits;

		for (; c <= end && !err; c++)
			err = drop_ref(q, c);
	}
	q->nr_frees = 0;
	return err;
}

static int write_rt(struct qcow2 *q)
{
	uint64_t bytes = (uint64_t)q->rt_clusters << q->cluster_bits, i;
	uint64_t *be = calloc(1, bytes);
	int err;

	if (!be)
		return -ENOMEM;
	for (i = 0; i < q->rt_entries && i < bytes / 8; i++)
		be[i] = htobe64(q->rt[i]);
	err = qcow2_write_file(q, be, bytes, q->rt_offset);
	free(be);
	return err;
}

/* Points the header at a grown table, whose old clusters are then free
 * once that is on disk. */
static int write_header_rt(struct qcow2 *q)
{
	uint8_t h[12];
	int err;

	put_be64(h, q->rt_offset);
	put_be32(h + 8, q->rt_clusters);
	err = qcow2_write_file(q, h, sizeof(h), HEADER_REFCOUNT_TABLE);
	if (!err)
		err = disk_image_flush(q->file);
	if (err)
		return err;
	q->rt_moved = false;
	return pending_add(q, q->rt_old_offset,
				(uint64_t)q->rt_old_clusters << q->cluster_bits);
}

int qcow2_refcount_flush(struct qcow2 *q)
{
	int err;

	if (!q->rt)
		return 0;
	err = table_cache_write(q, &q->rb);
	if (err || (!q->rt_dirty && !q->rt_moved))
		return err;
	/* The blocks on disk before the table that points at them, the
	 * table before the header. */
	err = disk_image_flush(q->file);
	if (!err)
		err = write_rt(q);
	if (!err)
		err = disk_image_flush(q->file);
	if (!err)
		q->rt_dirty = false;
	if (!err && q->rt_moved)
		err = write_header_rt(q);
	return err;
}
