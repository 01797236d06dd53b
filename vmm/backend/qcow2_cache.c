/* Cached qcow2 tables of one cluster each (see qcow2_internal.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/qcow2_internal.h"
#include "lib/log.h"

int table_cache_init(struct table_cache *c, const char *what,
		     unsigned nr_slots, uint64_t nr_index)
{
	memset(c, 0, sizeof(*c));
	c->what = what;
	c->nr_slots = nr_slots;
	c->slots = calloc(nr_slots, sizeof(*c->slots));
	if (!c->slots)
		return -ENOMEM;
	return table_cache_grow(c, nr_index);
}

void table_cache_free(struct table_cache *c)
{
	unsigned i;

	for (i = 0; i < c->nr_slots; i++)
		free(c->slots[i].table);
	free(c->slots);
	free(c->slot_of);
	memset(c, 0, sizeof(*c));
}

int table_cache_grow(struct table_cache *c, uint64_t nr_index)
{
	int32_t *slot_of;
	uint64_t i;

	if (nr_index <= c->nr_index)
		return 0;
	slot_of = realloc(c->slot_of, nr_index * sizeof(*slot_of));
	if (!slot_of)
		return -ENOMEM;
	for (i = c->nr_index; i < nr_index; i++)
		slot_of[i] = -1;
	c->slot_of = slot_of;
	c->nr_index = nr_index;
	return 0;
}

static unsigned victim_of(const struct table_cache *c)
{
	unsigned i, victim = 0;

	for (i = 1; i < c->nr_slots; i++)
		if (c->slots[i].used < c->slots[victim].used)
			victim = i;
	return victim;
}

int table_cache_get(struct qcow2 *q, struct table_cache *c, uint64_t index,
		    uint64_t offset, bool fresh, struct table_slot **out)
{
	struct table_slot *s;
	unsigned victim;
	int err;

	if (index >= c->nr_index)
		return -EIO;
	if (c->slot_of[index] >= 0) {
		s = &c->slots[c->slot_of[index]];
		s->used = ++c->clock;
		*out = s;
		return 0;
	}
	victim = victim_of(c);
	s = &c->slots[victim];
	if (s->dirty) {
		err = qcow2_write_out(q);
		if (err)
			return err;
	}
	if (s->table)
		c->slot_of[s->index] = -1;
	else if (posix_memalign((void **)&s->table, 4096, q->cluster_size))
		return -ENOMEM;
	s->used = 0;
	s->dirty = fresh;
	if (fresh) {
		memset(s->table, 0, q->cluster_size);
	} else {
		err = qcow2_read_file(q, s->table, q->cluster_size, offset);
		if (err) {
			pr_warn_ratelimited("disk %s: cannot read a qcow2 %s at "
					    "0x%" PRIx64 ": %s", q->path,
					    c->what, offset, strerror(-err));
			free(s->table);
			s->table = NULL;
			return err;
		}
	}
	s->index = index;
	s->offset = offset;
	s->used = ++c->clock;
	c->slot_of[index] = victim;
	*out = s;
	return 0;
}

int table_cache_write(struct qcow2 *q, struct table_cache *c)
{
	unsigned i;
	int err;

	for (i = 0; i < c->nr_slots; i++) {
		struct table_slot *s = &c->slots[i];

		if (!s->table || !s->dirty)
			continue;
		err = qcow2_write_file(q, s->table, q->cluster_size, s->offset);
		if (err)
			return err;
		s->dirty = false;
	}
	return 0;
}

bool table_cache_dirty(const struct table_cache *c)
{
	unsigned i;

	for (i = 0; i < c->nr_slots; i++)
		if (c->slots[i].table && c->slots[i].dirty)
			return true;
	return false;
}
