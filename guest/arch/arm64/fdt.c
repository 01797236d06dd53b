/* Flattened device tree reader (fdt.h). The blob is read in place with
 * aligned 32-bit loads only, as this runs before the MMU is on, when
 * memory is Device memory and takes no unaligned access. */
#include "fdt.h"

#include "lib.h"

#define FDT_MAGIC		0xd00dfeed
#define FDT_BEGIN_NODE		1
#define FDT_END_NODE		2
#define FDT_PROP		3
#define FDT_NOP			4
#define FDT_END			9
#define HEADER_SIZE		40
#define VERSION_MIN		17	/* has size_dt_struct */

struct fdt_error fdt_error;

static const uint8_t *blob;
static uint32_t total, st_off, st_size, str_off, str_size;

static bool fail(const char *what, uint32_t off)
{
	if (!fdt_error.what) {
		fdt_error.what = what;
		fdt_error.offset = off;
	}
	return false;
}

static uint32_t be32(uint32_t off)
{
	return __builtin_bswap32(*(const uint32_t *)(blob + off));
}

/* [off, off + len) inside [0, limit), without overflow. */
static bool inside(uint32_t off, uint32_t len, uint32_t limit)
{
	return off <= limit && len <= limit - off;
}

bool fdt_open(uint64_t addr)
{
	uint32_t version, last_comp;

	blob = (const uint8_t *)addr;
	fdt_error.what = 0;
	if (!addr || addr & 7)
		return fail("misaligned-blob", 0);
	if (be32(0) != FDT_MAGIC)
		return fail("bad-magic", 0);
	total = be32(4);
	st_off = be32(8);
	str_off = be32(12);
	version = be32(20);
	last_comp = be32(24);
	str_size = be32(32);
	st_size = be32(36);
	if (total < HEADER_SIZE || total > FDT_MAX_SIZE)
		return fail("bad-totalsize", 4);
	if (version < VERSION_MIN || last_comp > VERSION_MIN)
		return fail("unsupported-version", 20);
	if (st_off & 3 || st_size & 3 || !inside(st_off, st_size, total))
		return fail("bad-struct-block", 8);
	if (!inside(str_off, str_size, total))
		return fail("bad-strings-block", 12);
	return true;
}

/* The token at off in the structure block, 0 when off is outside it
 * or an earlier read failed. */
static uint32_t token(uint32_t off)
{
	if (fdt_error.what)
		return 0;
	if (!inside(off, 4, st_size)) {
		fail("struct-overrun", st_off + off);
		return 0;
	}
	return be32(st_off + off);
}

/* Length of the NUL-terminated string at blob offset off that must end
 * before end, or -1. */
static int string_len(uint32_t off, uint32_t end)
{
	for (uint32_t i = off; i < end; i++)
		if (!blob[i])
			return i - off;
	return -1;
}

/* Where the token after the one at off starts; 0 on a malformed one. */
static uint32_t next_token(uint32_t off)
{
	uint32_t len;
	int n;

	switch (token(off)) {
	case FDT_BEGIN_NODE:
		n = string_len(st_off + off + 4, st_off + st_size);
		if (n < 0)
			return fail("unterminated-node-name", st_off + off);
		return off + 4 + ALIGN_UP(n + 1, 4);
	case FDT_PROP:
		len = token(off + 4);
		if (!inside(off + 12, len, st_size))
			return fail("property-overrun", st_off + off);
		return off + 12 + ALIGN_UP(len, 4);
	case FDT_NOP:
	case FDT_END_NODE:
		return off + 4;
	default:
		return fail("bad-token", st_off + off);
	}
}

/* Past the END_NODE of the node at off. */
static uint32_t skip_node(uint32_t off)
{
	unsigned depth = 0;

	do {
		uint32_t tok = token(off);

		if (tok == FDT_BEGIN_NODE)
			depth++;
		else if (tok == FDT_END_NODE)
			depth--;
		off = next_token(off);
	} while (off && depth);
	return off;
}

int fdt_root(void)
{
	uint32_t off = 0;

	while (token(off) == FDT_NOP)
		off += 4;
	if (token(off) != FDT_BEGIN_NODE) {
		fail("no-root-node", st_off + off);
		return -1;
	}
	return off;
}

int fdt_child(int node, int prev)
{
	uint32_t off = prev < 0 ? next_token(node) : skip_node(prev);

	while (off) {
		uint32_t tok = token(off);

		if (tok == FDT_BEGIN_NODE)
			return off;
		if (tok == FDT_END_NODE)
			return -1;
		off = next_token(off);	/* fails on anything but PROP, NOP */
	}
	return -1;
}

const char *fdt_name(int node)
{
	return (const char *)blob + st_off + node + 4;
}

/* Whether node name (unit address included) is the path component
 * comp[0..n): all of it, or what precedes its '@'. */
static bool name_is(const char *name, const char *comp, size_t n)
{
	return !memcmp(name, comp, n) && (!name[n] || name[n] == '@');
}

int fdt_path(const char *path)
{
	int node = fdt_root();

	while (node >= 0 && *path) {
		size_t n = 0;
		int c = -1;

		while (*path == '/')
			path++;
		while (path[n] && path[n] != '/')
			n++;
		if (!n)
			break;
		while ((c = fdt_child(node, c)) >= 0)
			if (name_is(fdt_name(c), path, n))
				break;
		node = c;
		path += n;
	}
	return node;
}

const void *fdt_prop(int node, const char *name, uint32_t *len)
{
	size_t want = strlen(name);
	uint32_t off;

	if (node < 0)
		return 0;
	for (off = next_token(node); off;) {
		uint32_t tok = token(off), next, name_off;
		int n;

		if (tok == FDT_BEGIN_NODE || tok == FDT_END_NODE)
			return 0;
		/* Checks the value's length (and fails on a bad token). */
		next = next_token(off);
		if (tok != FDT_PROP || !next) {
			off = next;
			continue;
		}
		name_off = token(off + 8);
		if (name_off >= str_size) {
			fail("bad-property-name", st_off + off);
			return 0;
		}
		n = string_len(str_off + name_off, str_off + str_size);
		if (n < 0) {
			fail("unterminated-property-name", st_off + off);
			return 0;
		}
		if ((size_t)n == want &&
		    !memcmp(blob + str_off + name_off, name, n)) {
			*len = token(off + 4);
			return blob + st_off + off + 12;
		}
		off = next;
	}
	return 0;
}

bool fdt_prop_u32(int node, const char *name, uint32_t *v)
{
	uint32_t len;
	const void *p = fdt_prop(node, name, &len);

	if (!p || len != 4)
		return false;
	*v = fdt_cell(p, 0);
	return true;
}

const char *fdt_prop_str(int node, const char *name)
{
	uint32_t len;
	const char *p = fdt_prop(node, name, &len);

	if (!p || !len || p[len - 1])
		return 0;
	return p;
}

bool fdt_prop_has(int node, const char *name, const char *s)
{
	uint32_t len, i = 0;
	const char *p = fdt_prop(node, name, &len);
	size_t n = strlen(s);

	while (p && i < len) {
		uint32_t l = 0;

		while (i + l < len && p[i + l])
			l++;
		if (l == n && !memcmp(p + i, s, n))
			return true;
		i += l + 1;
	}
	return false;
}

uint32_t fdt_cell(const void *p, uint32_t i)
{
	return __builtin_bswap32(((const uint32_t *)p)[i]);
}

uint64_t fdt_cells(const void *p, uint32_t i, uint32_t ncells)
{
	uint64_t v = fdt_cell(p, i);

	if (ncells == 2)
		v = v << 32 | fdt_cell(p, i + 1);
	return v;
}
