/* Tests for arch/x86/insn_name.c: the instructions an emulator gives up
 * on, named from their bytes with their prefixes; bytes it does not
 * know, or too few of them, are not named. */
#include "arch/x86/insn_name.h"
#include "unit.h"

static void check_name(const uint8_t *b, size_t n, const char *want)
{
	char out[32] = "";

	CHECK(x86_insn_name(b, n, out, sizeof(out)));
	CHECK_STR(out, want);
}

#define NAMED(want, ...)                                                   \
	do {                                                               \
		static const uint8_t b[] = { __VA_ARGS__ };                \
		check_name(b, sizeof(b), want);                            \
	} while (0)

#define UNNAMED(...)                                                       \
	do {                                                               \
		static const uint8_t b[] = { __VA_ARGS__ };                \
		char out[32];                                              \
		CHECK(!x86_insn_name(b, sizeof(b), out, sizeof(out)));     \
	} while (0)

static void test_named(void)
{
	/* What Debian's kernel stops on under PVM. */
	NAMED("lock cmpxchg16b", 0xf0, 0x48, 0x0f, 0xc7, 0x4d, 0x20, 0x74);
	NAMED("cmpxchg8b", 0x0f, 0xc7, 0x0e);
	NAMED("xrstor64", 0x48, 0x0f, 0xae, 0x2f);
	NAMED("xrstor", 0x0f, 0xae, 0x6c, 0x24, 0x10);
	NAMED("xsaves64", 0x48, 0x0f, 0xc7, 0x2f);
	NAMED("xsaveopt", 0x0f, 0xae, 0x37);
	NAMED("fxsave64", 0x48, 0x0f, 0xae, 0x07);
	NAMED("rdrand", 0x48, 0x0f, 0xc7, 0xf0);
	NAMED("rdpid", 0xf3, 0x0f, 0xc7, 0xf8);
	NAMED("lfence", 0x0f, 0xae, 0xe8);
	NAMED("mfence", 0x0f, 0xae, 0xf0);
	NAMED("xsetbv", 0x0f, 0x01, 0xd1);
	NAMED("rdtscp", 0x0f, 0x01, 0xf9);
	NAMED("lidt", 0x0f, 0x01, 0x1f);
	NAMED("invlpg", 0x0f, 0x01, 0x38);
	NAMED("wrmsr", 0x0f, 0x30);
	NAMED("cpuid", 0x0f, 0xa2);
	NAMED("mov to cr", 0x0f, 0x22, 0xd8);
	NAMED("int3", 0xcc, 0xe9);
	NAMED("hlt", 0xf4);
	NAMED("rep outs", 0xf3, 0x66, 0x6f);
	NAMED("out", 0x66, 0xef);
	/* A segment prefix is skipped; rep on a non-string one is not
	 * printed. */
	NAMED("cpuid", 0x2e, 0xf3, 0x0f, 0xa2);
}

static void test_unnamed(void)
{
	char out[32];

	UNNAMED(0x48, 0x89, 0xc7);		/* mov rdi, rax */
	UNNAMED(0xc4, 0xe2, 0x79, 0x18, 0x00);	/* a VEX instruction */
	UNNAMED(0x0f, 0xc7, 0xf0 & 0x3f);	/* 0f c7 /6, memory form */
	UNNAMED(0x0f, 0x01, 0xc0);		/* 0f 01 c0: not one named */
	/* Cut short: prefixes only, an opcode without its ModRM. */
	UNNAMED(0xf0, 0x48);
	UNNAMED(0x0f);
	UNNAMED(0x0f, 0xae);
	CHECK(!x86_insn_name(NULL, 0, out, sizeof(out)));
	/* A name that does not fit is not reported. */
	{
		static const uint8_t b[] = { 0xf0, 0x48, 0x0f, 0xc7, 0x0e };
		char small[8];

		CHECK(!x86_insn_name(b, sizeof(b), small, sizeof(small)));
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_named),
		UNIT_TEST(test_unnamed),
	};

	return UNIT_RUN(tests);
}
