/* A reader of flattened device trees (the devicetree specification's
 * DTB format): nodes by path or by walking children, properties by
 * name, big-endian cells. Every offset is checked against the blob; the
 * first thing found wrong is kept in fdt_error (what and where) and
 * reads fail from then on. */
#ifndef TG_FDT_H
#define TG_FDT_H

#include <stdbool.h>
#include <stdint.h>

#define FDT_MAX_SIZE	(2u << 20)	/* Linux's limit too */

struct fdt_error {
	const char *what;	/* 0: none */
	uint32_t offset;	/* in the blob */
};

extern struct fdt_error fdt_error;

/* Checks the header of the blob at addr; false (and fdt_error) if it
 * is not one this reader takes. */
bool fdt_open(uint64_t addr);

/* Nodes are offsets of their FDT_BEGIN_NODE token; -1 is none. */
int fdt_root(void);
int fdt_child(int node, int prev);	/* first child after prev, or -1 */
int fdt_path(const char *path);		/* "/a/b", unit addresses optional */
const char *fdt_name(int node);

/* A property's value and length, or 0 if the node has none. */
const void *fdt_prop(int node, const char *name, uint32_t *len);
bool fdt_prop_u32(int node, const char *name, uint32_t *v);
/* A string property whose value is one NUL-terminated string. */
const char *fdt_prop_str(int node, const char *name);
/* Whether a string-list property (compatible) holds s. */
bool fdt_prop_has(int node, const char *name, const char *s);

/* Cell i of a property value (big endian), and a number of ncells
 * (1 or 2) cells from cell i. */
uint32_t fdt_cell(const void *p, uint32_t i);
uint64_t fdt_cells(const void *p, uint32_t i, uint32_t ncells);

#endif
