/* Inside the qcow2 driver: qcow2.c (open, lookup, reads), qcow2_cache.c
 * (cached tables), qcow2_refcount.c (refcounts and allocation) and
 * qcow2_write.c (writes, discard, flush) share this; nothing else
 * includes it. Everything here is under struct qcow2's lock unless it
 * says otherwise. */
#ifndef THPVM_QCOW2_INTERNAL_H
#define THPVM_QCOW2_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/qcow2.h"

/* Bits of L1, L2 and refcount table entries. */
#define ENTRY_OFFSET_MASK 0x00fffffffffffe00ull	/* bits 9-55 */
#define ENTRY_COPIED (1ull << 63)	/* refcount exactly 1: write in place */
#define L1_RESERVED 0x7f000000000001ffull
#define L2_ZERO (1ull << 0)
#define L2_RESERVED 0x3f000000000001feull
#define L2_COMPRESSED (1ull << 62)
#define RT_RESERVED 0x1ffull

/* Header fields rewritten in place. */
#define HEADER_REFCOUNT_TABLE 48	/* offset (8 bytes), clusters (4) */
#define HEADER_AUTOCLEAR 88

/* Tables of one cluster each (L2 tables, refcount blocks), the least
 * recently used evicted; a dirty one is written out (with everything it
 * depends on: qcow2_write_out) before its slot is reused. */
struct table_slot {
	uint8_t *table;		/* NULL: empty */
	uint64_t index;		/* L1 or refcount table index it belongs to */
	uint64_t offset;	/* where it lives in the file */
	uint64_t used;		/* the cache's clock at its last use */
	bool dirty;
};

struct table_cache {
	const char *what;	/* for messages */
	struct table_slot *slots;
	unsigned nr_slots;
	int32_t *slot_of;	/* per index: its slot, or -1 */
	uint64_t nr_index;
	uint64_t clock;
};

/* Clusters whose last reference is gone but whose refcount drops only
 * once that is on disk (qcow2_flush). */
struct pending_free {
	uint64_t offset, bytes;
};

struct qcow2 {
	struct disk_image *file;
	const char *path;
	bool writable;
	bool has_backing;
	unsigned version;
	unsigned cluster_bits, l2_bits;	/* l2_bits: entries per table, log2 */
	uint64_t cluster_size, size;

	pthread_mutex_t lock;
	/* Reads and in-place writes running without the lock on clusters
	 * looked up under it (qcow2_map, qcow2_writev): no cluster is freed
	 * while one is, or another disk offset could get it meanwhile. */
	unsigned unlocked_io;
	pthread_cond_t io_done;
	/* A table change failed halfway: what is in memory may not reach
	 * the file consistently, so nothing more is written (-errno). */
	int broken;
	uint64_t *l1;			/* big-endian, as on disk */
	uint32_t l1_size;
	uint64_t l1_offset;
	bool l1_dirty;
	struct table_cache l2;

	/* Refcounts, kept only when writable. */
	unsigned refcount_order;	/* width 2^order bits */
	unsigned rb_bits;		/* entries per refcount block, log2 */
	uint64_t *rt;			/* the refcount table, host order */
	uint64_t rt_entries;		/* in memory; may exceed the file's */
	uint64_t rt_offset;
	uint32_t rt_clusters;
	bool rt_dirty;			/* an entry changed */
	/* A grown table not yet in the header: where it goes, and the old
	 * one, freed once the header points at the new. */
	uint64_t rt_old_offset;
	uint32_t rt_old_clusters;
	bool rt_moved;
	struct table_cache rb;
	uint64_t free_hint;		/* no free cluster below it */
	uint64_t alloc_end;		/* past every cluster allocated */
	struct pending_free *frees;
	unsigned nr_frees, max_frees;
};

int qcow2_corrupt(struct qcow2 *q, const char *what, uint64_t value);
/* One L2 entry as an extent of its cluster (len left to the caller). */
int qcow2_decode_l2(struct qcow2 *q, uint64_t entry, struct qcow2_extent *e);
/* The compressed cluster at host into out (cluster_size bytes). */
int qcow2_inflate_cluster(struct qcow2 *q, uint64_t host, uint32_t csize,
			  uint8_t *out);
/* len bytes of the file at offset; -EIO past its end. */
int qcow2_read_file(struct qcow2 *q, void *buf, uint64_t len,
		    uint64_t offset);
int qcow2_write_file(struct qcow2 *q, const void *buf, uint64_t len,
		     uint64_t offset);

int table_cache_init(struct table_cache *c, const char *what,
		     unsigned nr_slots, uint64_t nr_index);
void table_cache_free(struct table_cache *c);
/* More indexes (a grown refcount table). */
int table_cache_grow(struct table_cache *c, uint64_t nr_index);
/* The table of index at offset: cached, read from the file, or (fresh)
 * a zeroed one that is dirty. A dirty victim makes everything be
 * written out first (qcow2_write_out). */
int table_cache_get(struct qcow2 *q, struct table_cache *c, uint64_t index,
		    uint64_t offset, bool fresh, struct table_slot **slot);
/* Writes the dirty tables (no sync); -errno from the first that fails. */
int table_cache_write(struct qcow2 *q, struct table_cache *c);
bool table_cache_dirty(const struct table_cache *c);

/* Writable images: refcounts loaded, autoclear bits cleared. */
int qcow2_refcount_open(struct qcow2 *q, uint64_t rt_offset,
			uint32_t rt_clusters);
void qcow2_refcount_close(struct qcow2 *q);
int qcow2_refcount_get(struct qcow2 *q, uint64_t cluster, uint64_t *rc);
/* The header's, the L1 table's or the refcount table's cluster: never
 * data, never freed, whatever the refcounts or an L2 entry say. (L2
 * tables and refcount blocks are not checked: an image whose entries
 * point there corrupts only itself.) */
bool qcow2_is_metadata(const struct qcow2 *q, uint64_t cluster);
/* A free cluster, its refcount 1 (in memory): its file offset. */
int qcow2_alloc_cluster(struct qcow2 *q, uint64_t *offset);
/* The clusters holding [offset, offset + bytes) lose a reference once
 * the entries that pointed there are on disk. */
int qcow2_free_later(struct qcow2 *q, uint64_t offset, uint64_t bytes);
/* The dirty refcount blocks written; where the table changed, synced,
 * the table written and synced, and the header pointed at a grown one. */
int qcow2_refcount_flush(struct qcow2 *q);
/* The held-back frees, once what pointed at the clusters is on disk. */
int qcow2_refcount_apply_frees(struct qcow2 *q);

/* Every change in memory on disk, in the order that keeps the image
 * consistent at each step: data, refcounts, L2 tables, the L1 table,
 * each synced before the next. Reads no table, so no cache slot changes
 * under its caller. */
int qcow2_write_out(struct qcow2 *q);

#endif
