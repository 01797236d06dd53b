/* The device tree writer's error handling around libfdt. */
#include "boot/fdt_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/guest_ram.h"
#include "lib/log.h"

/* libfdt's errors as -errno: a full buffer is the one a caller can act
 * on; every other one is a bug in the tree being written. */
static int check(struct fdt_writer *w, int ret)
{
	if (ret < 0 && !w->err)
		w->err = ret == -FDT_ERR_NOSPACE ? -ENOSPC : -EINVAL;
	return w->err;
}

void fdtw_init(struct fdt_writer *w, size_t size,
	       const struct fdt_reservation *rsv, unsigned nr)
{
	unsigned i;

	w->size = size;
	w->err = 0;
	w->depth = 0;
	w->fdt = calloc(1, size);
	if (!w->fdt) {
		w->err = -ENOMEM;
		return;
	}
	check(w, fdt_create(w->fdt, size));
	for (i = 0; i < nr && !w->err; i++)
		check(w, fdt_add_reservemap_entry(w->fdt, rsv[i].addr,
						  rsv[i].size));
	if (!w->err)
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

void fdtw_bytes(struct fdt_writer *w, const char *name, const void *data,
		size_t len)
{
	if (!w->err)
		check(w, fdt_property(w->fdt, name, data, (int)len));
}

void fdtw_reg(struct fdt_writer *w, uint64_t addr, uint64_t size)
{
	const uint32_t cells[] = { addr >> 32, (uint32_t)addr, size >> 32,
				   (uint32_t)size };

	fdtw_cells(w, "reg", cells, 4);
}

void fdtw_memory_nodes(struct fdt_writer *w, const struct guest_ram *ram)
{
	struct ram_range r;
	unsigned i;

	for (i = 0; guest_ram_range(ram, i, &r); i++) {
		fdtw_begin_at(w, "memory", r.gpa);
		fdtw_string(w, "device_type", "memory");
		fdtw_reg(w, r.gpa, r.size);
		fdtw_end(w);
	}
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

int fdtw_dump(const char *path, const void *fdt, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;
	int err;

	if (fd < 0) {
		pr_err("--dump-dtb %s: %s", path, strerror(errno));
		return -errno;
	}
	n = write(fd, fdt, size);
	err = n < 0 ? -errno : n != (ssize_t)size ? -EIO : 0;
	if (close(fd) && !err)
		err = -errno;
	if (err)
		pr_err("--dump-dtb %s: %s", path, strerror(-err));
	return err;
}
