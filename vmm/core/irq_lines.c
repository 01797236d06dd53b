/* Shared, level-triggered interrupt lines (see irq_lines.h). */
#include "core/irq_lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

int irq_lines_init(struct irq_lines *l, unsigned nr, unsigned first,
		   unsigned count, irq_line_set_fn set, void *opaque)
{
	memset(l, 0, sizeof(*l));
	if (first > nr || count > nr - first)
		return -EINVAL;
	l->holders_high = calloc(nr ?: 1, sizeof(*l->holders_high));
	if (!l->holders_high)
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	l->nr = nr;
	l->first = first;
	l->count = count;
	l->set = set;
	l->opaque = opaque;
	return 0;
}

void irq_lines_free(struct irq_lines *l)
{
	if (!l->holders_high)
		return;
	free(l->holders_high);
	pthread_mutex_destroy(&l->lock);
	memset(l, 0, sizeof(*l));
}

void irq_lines_set_driver(struct irq_lines *l, irq_line_set_fn set,
			  void *opaque)
{
	pthread_mutex_lock(&l->lock);
	l->set = set;
	l->opaque = opaque;
	pthread_mutex_unlock(&l->lock);
}

int irq_lines_alloc(struct irq_lines *l, struct irq_source *src)
{
	if (!l->count)
		return -ENOSPC;
	pthread_mutex_lock(&l->lock);
	src->line = l->first + l->handed_out++ % l->count;
	pthread_mutex_unlock(&l->lock);
	src->level = false;
	return 0;
}

int irq_lines_claim(struct irq_lines *l, struct irq_source *src,
		    unsigned line)
{
	if (line >= l->nr)
		return -EINVAL;
	src->line = line;
	src->level = false;
	return 0;
}

void irq_source_set(struct irq_lines *l, struct irq_source *src, bool level)
{
	uint16_t *high = &l->holders_high[src->line];
	int err = 0;

	pthread_mutex_lock(&l->lock);
	if (src->level != level) {
		src->level = level;
		*high += level ? 1 : -1;
		/* The first holder up or the last one down moves the line. */
		if (*high == level)
			err = l->set(l->opaque, src->line, level);
	}
	pthread_mutex_unlock(&l->lock);
	if (err)
		pr_warn_ratelimited("interrupt line %u not %s: %s", src->line,
				    level ? "raised" : "lowered",
				    strerror(-err));
}
