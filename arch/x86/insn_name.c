/* x86_insn_name(): prefixes, then a one- or two-byte opcode and, where
 * the opcode names a group, the ModRM byte's reg field (and mod, which
 * tells the memory forms, xsave, from the register ones, lfence). */
#include <stdio.h>

#include "arch/x86/insn_name.h"

#define PREFIX_LOCK 0xf0
#define PREFIX_REPNE 0xf2
#define PREFIX_REP 0xf3

struct modrm_name {
	uint8_t opcode;		/* after 0x0f */
	uint8_t reg;		/* ModRM bits 5:3 */
	bool reg_form;		/* mod == 3 */
	const char *name;
	const char *name64;	/* with REX.W, where it differs */
};

/* Opcodes after 0x0f that name an instruction alone. */
static const struct {
	uint8_t opcode;
	const char *name;
} two_byte[] = {
	{ 0x05, "syscall" }, { 0x06, "clts" }, { 0x07, "sysret" },
	{ 0x08, "invd" }, { 0x09, "wbinvd" }, { 0x0b, "ud2" },
	{ 0x20, "mov from cr" }, { 0x21, "mov from dr" },
	{ 0x22, "mov to cr" }, { 0x23, "mov to dr" },
	{ 0x30, "wrmsr" }, { 0x31, "rdtsc" }, { 0x32, "rdmsr" },
	{ 0x33, "rdpmc" }, { 0x34, "sysenter" }, { 0x35, "sysexit" },
	{ 0xa2, "cpuid" }, { 0xaa, "rsm" },
};

/* 0x0f 0x01 with a register-form ModRM: whole bytes. */
static const struct {
	uint8_t modrm;
	const char *name;
} group7_reg[] = {
	{ 0xc1, "vmcall" }, { 0xc8, "monitor" }, { 0xc9, "mwait" },
	{ 0xca, "clac" }, { 0xcb, "stac" }, { 0xd0, "xgetbv" },
	{ 0xd1, "xsetbv" }, { 0xd8, "vmrun" }, { 0xd9, "vmmcall" },
	{ 0xf8, "swapgs" }, { 0xf9, "rdtscp" },
};

static const struct modrm_name groups[] = {
	{ 0x01, 0, false, "sgdt", NULL }, { 0x01, 1, false, "sidt", NULL },
	{ 0x01, 2, false, "lgdt", NULL }, { 0x01, 3, false, "lidt", NULL },
	{ 0x01, 7, false, "invlpg", NULL },
	{ 0xae, 0, false, "fxsave", "fxsave64" },
	{ 0xae, 1, false, "fxrstor", "fxrstor64" },
	{ 0xae, 2, false, "ldmxcsr", NULL },
	{ 0xae, 3, false, "stmxcsr", NULL },
	{ 0xae, 4, false, "xsave", "xsave64" },
	{ 0xae, 5, false, "xrstor", "xrstor64" },
	{ 0xae, 6, false, "xsaveopt", "xsaveopt64" },
	{ 0xae, 7, false, "clflush", NULL },
	{ 0xae, 5, true, "lfence", NULL }, { 0xae, 6, true, "mfence", NULL },
	{ 0xae, 7, true, "sfence", NULL },
	{ 0xc7, 1, false, "cmpxchg8b", "cmpxchg16b" },
	{ 0xc7, 3, false, "xrstors", "xrstors64" },
	{ 0xc7, 4, false, "xsavec", "xsavec64" },
	{ 0xc7, 5, false, "xsaves", "xsaves64" },
	{ 0xc7, 6, true, "rdrand", NULL }, { 0xc7, 7, true, "rdseed", NULL },
};

static bool is_legacy_prefix(uint8_t b)
{
	return b == PREFIX_LOCK || b == PREFIX_REPNE || b == PREFIX_REP ||
	       b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 ||
	       b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67;
}

static const char *one_byte(uint8_t op)
{
	switch (op) {
	case 0xcc: return "int3";
	case 0xcd: return "int";
	case 0xcf: return "iret";
	case 0xe4: case 0xe5: case 0xec: case 0xed: return "in";
	case 0xe6: case 0xe7: case 0xee: case 0xef: return "out";
	case 0x6c: case 0x6d: return "ins";
	case 0x6e: case 0x6f: return "outs";
	case 0xf4: return "hlt";
	case 0xfa: return "cli";
	case 0xfb: return "sti";
	default: return NULL;
	}
}

static const char *two_bytes(const uint8_t *p, size_t left, bool rex_w,
			     bool rep)
{
	uint8_t op, modrm, mod, reg;
	size_t i;

	if (!left)
		return NULL;
	op = p[0];
	for (i = 0; i < sizeof(two_byte) / sizeof(two_byte[0]); i++)
		if (two_byte[i].opcode == op)
			return two_byte[i].name;
	if (left < 2)
		return NULL;
	modrm = p[1];
	mod = modrm >> 6;
	reg = modrm >> 3 & 7;
	if (op == 0xc7 && reg == 7 && mod == 3 && rep)
		return "rdpid";
	if (op == 0x01 && mod == 3) {
		for (i = 0; i < sizeof(group7_reg) / sizeof(group7_reg[0]); i++)
			if (group7_reg[i].modrm == modrm)
				return group7_reg[i].name;
		return NULL;
	}
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		const struct modrm_name *g = &groups[i];

		if (g->opcode == op && g->reg == reg &&
		    g->reg_form == (mod == 3))
			return rex_w && g->name64 ? g->name64 : g->name;
	}
	return NULL;
}

bool x86_insn_name(const uint8_t *insn, size_t len, char *out,
		   size_t out_len)
{
	bool lock = false, rep = false, rex_w = false, string_op;
	const char *name = NULL;
	size_t i = 0;
	int n;

	while (i < len && is_legacy_prefix(insn[i])) {
		lock |= insn[i] == PREFIX_LOCK;
		rep |= insn[i] == PREFIX_REP || insn[i] == PREFIX_REPNE;
		i++;
	}
	/* REX (64-bit mode) comes last, right before the opcode. */
	if (i < len && (insn[i] & 0xf0) == 0x40) {
		rex_w = insn[i] & 0x08;
		i++;
	}
	if (i >= len)
		return false;
	if (insn[i] == 0x0f)
		name = two_bytes(insn + i + 1, len - i - 1, rex_w, rep);
	else
		name = one_byte(insn[i]);
	if (!name)
		return false;
	/* rep means repeat only on the string instructions (ins, outs);
	 * elsewhere it is part of the opcode (rdpid) or meaningless. */
	string_op = insn[i] >= 0x6c && insn[i] <= 0x6f;
	n = snprintf(out, out_len, "%s%s%s", lock ? "lock " : "",
		     rep && string_op ? "rep " : "", name);
	return n > 0 && (size_t)n < out_len;
}
