/* The device tree writer's error handling around libfdt. */
#include "boot/fdt_writer.h"

#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libfdt's errors as -errno: a full buffer is the one a caller can act
 * on; every other one is a bug in the tree being written. */
static int check(struct fdt_writer *w, int ret)
{
	if (ret < 0 && !w->err)
		w->err = ret == -FDT_ERR_NOSPACE ? -ENOSPC : -EINVAL;
	return w->err;
}

void fdtw_init(struct fdt_writer *w, size_t size)
{
	w->size = size;
	w->err = 0;
	w->depth = 0;
	w->fdt = calloc(1, size);
	if (!w->fdt) {
		w->err = -ENOMEM;
		return;
	}
	if (!check(w, fdt_create(w->fdt, size)))
		check(w, fdt_finish_reservemap(w->fdt));
	fdtw_begin(w, "");
}

void fdtw_begin(struct fdt_writer *w, const char *name)
{
	if (!w->err && !check(w, fdt_begin_node(w->fdt, name)))
		w->depth++;
}

void fdtw_begin_at(struct fdt_writer *w, const char *name, uint64_t addr)
{
	char full[64];

	if (snprintf(full, sizeof(full), "%s@%llx", name,
		     (unsigned long long)addr) >= (int)sizeof(full)) {
		check(w, -FDT_ERR_BADVALUE);
		return;
	}
	fdtw_begin(w, full);
}

/* Ends a node other than the root. */
void fdtw_end(struct fdt_writer *w)
{
	if (w->depth < 2)
		check(w, -FDT_ERR_BADSTRUCTURE);
	else if (!w->err && !check(w, fdt_end_node(w->fdt)))
		w->depth--;
}

void fdtw_empty(struct fdt_writer *w, const char *name)
{
	if (!w->err)
		check(w, fdt_property(w->fdt, name, NULL, 0));
}

void fdtw_string(struct fdt_writer *w, const char *name, const char *value)
{
	if (!w->err)
		check(w, fdt_property_string(w->fdt, name, value));
}

void fdtw_strings(struct fdt_writer *w, const char *name,
		  const char *const *values)
{
	char buf[256];
	size_t len = 0, n;

	for (; *values; values++) {
		n = strlen(*values) + 1;
		if (len + n > sizeof(buf)) {
			check(w, -FDT_ERR_BADVALUE);
			return;
		}
		memcpy(buf + len, *values, n);
		len += n;
	}
	if (!w->err)
		check(w, fdt_property(w->fdt, name, buf, len));
}

void fdtw_u32(struct fdt_writer *w, const char *name, uint32_t value)
{
	if (!w->err)
		check(w, fdt_property_u32(w->fdt, name, value));
}

void fdtw_u64(struct fdt_writer *w, const char *name, uint64_t value)
{
	if (!w->err)
		check(w, fdt_property_u64(w->fdt, name, value));
}

void fdtw_cells(struct fdt_writer *w, const char *name,
		const uint32_t *cells, unsigned nr)
{
	fdt32_t *be;
	unsigned i;

	if (w->err ||
	    check(w, fdt_property_placeholder(w->fdt, name,
					      nr * sizeof(*be), (void **)&be)))
		return;
	for (i = 0; i < nr; i++)
		be[i] = cpu_to_fdt32(cells[i]);
}

void fdtw_reg(struct fdt_writer *w, uint64_t addr, uint64_t size)
{
	const uint32_t cells[] = { addr >> 32, (uint32_t)addr, size >> 32,
				   (uint32_t)size };

	fdtw_cells(w, "reg", cells, 4);
}

int fdtw_finish(struct fdt_writer *w, void **fdt, size_t *size)
{
	if (w->depth != 1)
		check(w, -FDT_ERR_BADSTRUCTURE);
	if (!w->err)
		check(w, fdt_end_node(w->fdt));		/* the root */
	if (!w->err)
		check(w, fdt_finish(w->fdt));
	if (!w->err)
		check(w, fdt_pack(w->fdt));
	if (w->err) {
		free(w->fdt);
		w->fdt = NULL;
		return w->err;
	}
	*fdt = w->fdt;
	*size = fdt_totalsize(w->fdt);
	w->fdt = NULL;
	return 0;
}
