/* A device tree written front to back with libfdt's sequential-write
 * API, for the arches whose guests read one (arm64, powerpc). Errors
 * stick: after the first one every call does nothing and fdtw_finish
 * returns it, so a tree is written as a plain list of calls and checked
 * once. */
#ifndef THPVM_FDT_WRITER_H
#define THPVM_FDT_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct fdt_writer {
	void *fdt;
	size_t size;
	int err;		/* first error, as -errno */
	unsigned depth;		/* nodes open, the root included */
};

/* A range of guest memory the guest must leave alone (the memory
 * reservation map's entries). */
struct fdt_reservation {
	uint64_t addr, size;
};

/* An empty tree of at most size bytes: the header and a memory
 * reservation map of the nr ranges in rsv (rsv may be NULL when nr is
 * 0) written. */
void fdtw_init(struct fdt_writer *w, size_t size,
	       const struct fdt_reservation *rsv, unsigned nr);
/* Nodes: "name", or "name@<addr in hex>" with fdtw_begin_at. */
void fdtw_begin(struct fdt_writer *w, const char *name);
void fdtw_begin_at(struct fdt_writer *w, const char *name, uint64_t addr);
void fdtw_end(struct fdt_writer *w);
/* Properties. */
void fdtw_empty(struct fdt_writer *w, const char *name);
void fdtw_string(struct fdt_writer *w, const char *name, const char *value);
/* A string list (NULL-terminated), as "compatible" often is. */
void fdtw_strings(struct fdt_writer *w, const char *name,
		  const char *const *values);
void fdtw_u32(struct fdt_writer *w, const char *name, uint32_t value);
void fdtw_u64(struct fdt_writer *w, const char *name, uint64_t value);
void fdtw_cells(struct fdt_writer *w, const char *name,
		const uint32_t *cells, unsigned nr);
/* A property of len raw bytes. */
void fdtw_bytes(struct fdt_writer *w, const char *name, const void *data,
		size_t len);
/* "reg" of one range with #address-cells = #size-cells = 2. */
void fdtw_reg(struct fdt_writer *w, uint64_t addr, uint64_t size);
/* A "memory@<gpa>" node for each range of guest RAM (device_type
 * "memory", reg as fdtw_reg writes it). */
struct guest_ram;
void fdtw_memory_nodes(struct fdt_writer *w, const struct guest_ram *ram);
/* Ends the tree, whose nodes but the root must all be ended (libfdt
 * does not check). Returns 0 with the blob in *fdt (the caller frees it)
 * and its size in *size, or the first error (-ENOSPC: it did not fit). */
int fdtw_finish(struct fdt_writer *w, void **fdt, size_t *size);

/* Writes a finished tree to path (thpvm run --dump-dtb). Returns 0, or
 * -errno after saying why. */
int fdtw_dump(const char *path, const void *fdt, size_t size);

#endif
