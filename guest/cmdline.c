/* Kernel command line: space-separated key[=value] tokens
 * (docs/test-guest.md). Unknown tokens are ignored so that loaders may add
 * their own. */
#include "guest.h"
#include "lib.h"
#include "virtio.h"

struct params params;

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

bool cmdline_has_token(const char *cl, const char *tok)
{
	size_t n = strlen(tok);

	if (!cl)
		return false;
	while (*cl) {
		size_t len = 0;

		while (is_space(*cl))
			cl++;
		while (cl[len] && !is_space(cl[len]))
			len++;
		if (len == n && !memcmp(cl, tok, n))
			return true;
		cl += len;
	}
	return false;
}

static const char *const check_names[CHK_COUNT] = CHECK_NAMES;

/* Names of the bits of a vfeat= list, 1 << index each (VFEAT_*). */
static const char *const vfeat_names[] = {
	"noevent", "noindirect", "nomrg", "nocont",
};

/* A comma-separated list of names; each sets bit 1 << (its index in
 * names). An unknown or empty name fails the whole list. */
static bool parse_name_list(const char *v, size_t len,
			    const char *const *names, unsigned count,
			    unsigned *bits)
{
	while (len) {
		size_t n = 0;
		bool known = false;

		while (n < len && v[n] != ',')
			n++;
		for (unsigned i = 0; i < count; i++) {
			if (names[i] && strlen(names[i]) == n &&
			    !memcmp(v, names[i], n)) {
				*bits |= 1u << i;
				known = true;
			}
		}
		if (!known)
			return false;
		v += n;
		len -= n;
		if (len) {
			v++;
			len--;
		}
	}
	return true;
}

/* Names of the virtio= bits (VIRTIO_T_*). */
static const char *const transport_names[] = { "pci", "mmio" };

/* Linux's virtio_mmio.device=<size>@<base>:<irq>[:<id>]: a virtio-mmio
 * register window and its interrupt, a GSI. Size and base as SIZE (Linux
 * takes a suffix on the size only and octal with a leading 0, which is
 * decimal here); the id, Linux's platform device number, must be a
 * number and is not used. */
static bool parse_mmio_dev(const char *v, size_t len)
{
	struct mmio_param *m = &params.mmio[params.nmmio];
	size_t at = 0, colon, end;
	uint64_t gsi, id;

	if (params.nmmio == MMIO_MAX_DEVS)
		return false;
	while (at < len && v[at] != '@')
		at++;
	for (colon = at; colon < len && v[colon] != ':'; colon++)
		;
	for (end = colon + 1; end < len && v[end] != ':'; end++)
		;
	if (colon >= len || !parse_u64(v, at, true, &m->size) || !m->size ||
	    !parse_u64(v + at + 1, colon - at - 1, true, &m->base) ||
	    !parse_u64(v + colon + 1, end - colon - 1, false, &gsi) ||
	    gsi > 255 ||
	    (end < len && !parse_u64(v + end + 1, len - end - 1, false, &id)))
		return false;
	m->gsi = gsi;
	params.nmmio++;
	return true;
}

/* A virtio-9p mount tag, 1 to P9_TAG_MAX bytes, into tag. */
static bool parse_tag(const char *v, size_t len, char *tag)
{
	if (!len || len > P9_TAG_MAX)
		return false;
	memcpy(tag, v, len);
	tag[len] = 0;
	return true;
}

/* A dotted quad, into host byte order. */
static bool parse_ipv4(const char *v, size_t len, uint32_t *out)
{
	uint32_t ip = 0;

	for (int i = 0; i < 4; i++) {
		bool last = i == 3;
		size_t n = 0;
		uint64_t x;

		while (n < len && v[n] != '.')
			n++;
		/* Three numbers end in a dot, the last one at the end. */
		if (!n || n > 3 || !parse_u64(v, n, false, &x) || x > 255 ||
		    last != (n == len))
			return false;
		ip = ip << 8 | x;
		v += n + !last;
		len -= n + !last;
	}
	*out = ip;
	return true;
}

static bool is_key(const char *tok, size_t klen, const char *key)
{
	return strlen(key) == klen && !memcmp(tok, key, klen);
}

static bool parse_one(const char *tok, size_t len)
{
	size_t klen = 0;
	const char *v;
	size_t vlen;
	uint64_t x;

	while (klen < len && tok[klen] != '=')
		klen++;
	v = tok + klen + 1;
	vlen = klen < len ? len - klen - 1 : 0;
	if (klen == len) {
		if (is_key(tok, klen, "serve"))
			params.serve = true;
		else if (is_key(tok, klen, "echo"))
			params.echo = true;
		else if (is_key(tok, klen, "pci"))
			params.pci = true;
		else if (is_key(tok, klen, "blk"))
			params.blk = true;
		else if (is_key(tok, klen, "blkbench"))
			params.blkbench = true;
		else if (is_key(tok, klen, "blk_evil"))
			params.blk_evil = true;
		else if (is_key(tok, klen, "blk_stream"))
			params.blk_stream = true;
		else if (is_key(tok, klen, "blk_verify"))
			params.blk_verify = true;
		else if (is_key(tok, klen, "net"))
			params.net = true;
		else if (is_key(tok, klen, "netbench"))
			params.netbench = true;
		else if (is_key(tok, klen, "dhcp"))
			params.dhcp = true;
		else if (is_key(tok, klen, "balloon"))
			params.balloon = true;
		else if (is_key(tok, klen, "balloon_flood"))
			params.balloon_flood = true;
		else if (is_key(tok, klen, "rng"))
			params.rng = true;
		else if (is_key(tok, klen, "mem"))
			params.mem = true;
		else if (is_key(tok, klen, "mem_evil"))
			params.mem_evil = true;
		else if (is_key(tok, klen, "vcons"))
			params.vcons = true;
		else if (is_key(tok, klen, "9p"))
			params.p9 = true;
		else if (is_key(tok, klen, "9p_hostile"))
			params.p9_hostile = true;
		else if (is_key(tok, klen, "p9bench"))
			params.p9bench = true;
		else if (is_key(tok, klen, "p9bench_wait"))
			params.p9bench_wait = true;
		else if (is_key(tok, klen, "punch_holes"))
			params.punch_holes = true;
		return true;
	}
	if (is_key(tok, klen, "ram")) {
		params.has_ram = true;
		return parse_u64(v, vlen, true, &params.ram);
	}
	if (is_key(tok, klen, "cpus")) {
		params.has_cpus = parse_u64(v, vlen, false, &x) && x >= 1 &&
				  x <= MAX_CPUS;
		params.cpus = x;
		return params.has_cpus;
	}
	if (is_key(tok, klen, "initrd_crc32")) {
		char hex[20] = "0x";

		if (vlen > 2 && v[0] == '0' && (v[1] | 0x20) == 'x') {
			v += 2;
			vlen -= 2;
		}
		if (vlen > 8)
			return false;
		memcpy(hex + 2, v, vlen);
		params.has_crc = parse_u64(hex, vlen + 2, false, &x);
		params.initrd_crc = x;
		return params.has_crc;
	}
	if (is_key(tok, klen, "touch")) {
		params.touch = true;
		if (vlen == 3 && !memcmp(v, "all", 3)) {
			params.touch_all = true;
			return true;
		}
		return parse_u64(v, vlen, true, &params.touch_size);
	}
	if (is_key(tok, klen, "touch_stride"))
		return parse_u64(v, vlen, true, &params.touch_stride) &&
		       params.touch_stride >= 8 &&
		       !(params.touch_stride & 7);
	if (is_key(tok, klen, "rand")) {
		params.has_rand = true;
		return parse_u64(v, vlen, false, &params.rand_reads);
	}
	if (is_key(tok, klen, "usemem"))
		return parse_u64(v, vlen, true, &params.usemem) &&
		       params.usemem;
	if (is_key(tok, klen, "reuse"))
		return parse_u64(v, vlen, true, &params.reuse) && params.reuse;
	if (is_key(tok, klen, "exit_status")) {
		params.has_exit_status = parse_u64(v, vlen, false, &x) &&
					 x <= 255;
		params.exit_status = x;
		return params.has_exit_status;
	}
	if (is_key(tok, klen, "skip"))
		return parse_name_list(v, vlen, check_names, CHK_COUNT,
				       &params.skip);
	if (is_key(tok, klen, "ecam"))
		return parse_u64(v, vlen, false, &params.ecam) && params.ecam &&
		       !(params.ecam & 0xfffff);
	if (is_key(tok, klen, "virtio")) {
		params.virtio = 0;
		return parse_name_list(v, vlen, transport_names,
				       sizeof(transport_names) /
				       sizeof(transport_names[0]),
				       &params.virtio) && params.virtio;
	}
	if (is_key(tok, klen, "virtio_mmio.device"))
		return parse_mmio_dev(v, vlen);
	if (is_key(tok, klen, "vfeat"))
		return parse_name_list(v, vlen, vfeat_names,
				       sizeof(vfeat_names) / sizeof(vfeat_names[0]),
				       &params.vfeat_off);
	if (is_key(tok, klen, "blkbench_qd")) {
		params.blkbench_qd = parse_u64(v, vlen, false, &x) && x >= 1 &&
				     x <= BLKBENCH_QD_MAX ? x : 0;
		return params.blkbench_qd;
	}
	/* A bad count keeps the default: blk0's rings are sized by it. */
	if (is_key(tok, klen, "blkbench_queues")) {
		if (!parse_u64(v, vlen, false, &x) || x < 1 ||
		    x > VIRTIO_MAX_QUEUES)
			return false;
		params.blkbench_queues = x;
		return true;
	}
	if (is_key(tok, klen, "9p_tag"))
		return parse_tag(v, vlen, params.p9_tag);
	if (is_key(tok, klen, "9p_ro"))
		return parse_tag(v, vlen, params.p9_ro_tag);
	if (is_key(tok, klen, "p9bench_reads"))
		return parse_u64(v, vlen, false, &params.p9bench_reads);
	if (is_key(tok, klen, "p9bench_files"))
		return parse_u64(v, vlen, false, &params.p9bench_files);
	if (is_key(tok, klen, "p9bench_creates"))
		return parse_u64(v, vlen, false, &params.p9bench_creates);
	if (is_key(tok, klen, "ip"))
		return parse_ipv4(v, vlen, &params.ip);
	if (is_key(tok, klen, "hostip"))
		return parse_ipv4(v, vlen, &params.hostip);
	/* netbench uses the next two ports as well. */
	if (is_key(tok, klen, "udp_port")) {
		params.udp_port = parse_u64(v, vlen, false, &x) && x >= 1 &&
				  x <= 65533 ? x : 0;
		return params.udp_port;
	}
	if (is_key(tok, klen, "net_ping_in")) {
		if (!parse_u64(v, vlen, false, &x) || x > 1000000)
			return false;
		params.net_ping_in = x;
		return true;
	}
	if (is_key(tok, klen, "net_udp_in")) {
		if (!parse_u64(v, vlen, false, &x) || x > 1000000)
			return false;
		params.net_udp_in = x;
		return true;
	}
	if (is_key(tok, klen, "netbench_packets"))
		return parse_u64(v, vlen, false, &params.netbench_packets) &&
		       params.netbench_packets;
	return true;
}

/* Any of the tokens that run the virtio-blk driver. */
bool params_want_blk(void)
{
	return params.blk || params.blkbench || params.blk_evil ||
	       params.blk_stream || params.blk_verify;
}

/* Any of the tokens that run the virtio-9p checks or benchmark. */
bool params_want_9p(void)
{
	return params.p9 || params.p9_hostile || *params.p9_ro_tag ||
	       params.p9bench;
}

void parse_params(const char *cl)
{
	params.touch_stride = 4096;
	params.blkbench_qd = 16;
	params.blkbench_queues = 1;
	params.ip = 0x0a00020f;		/* 10.0.2.15 */
	params.hostip = 0x0a000202;	/* 10.0.2.2 */
	params.udp_port = 7777;
	params.netbench_packets = 100000;
	params.p9bench_reads = 20000;
	params.p9bench_files = 10000;
	params.p9bench_creates = 1000;
	params.virtio = VIRTIO_T_PCI | VIRTIO_T_MMIO;
	while (*cl) {
		size_t len = 0;

		while (is_space(*cl))
			cl++;
		while (cl[len] && !is_space(cl[len]))
			len++;
		if (len && !parse_one(cl, len))
			report(false, "cmdline", "param=%.*s", (int)len, cl);
		cl += len;
	}
}
