/* Size and number parsing. */
#include <errno.h>

#include "unit.h"
#include "util.h"

static void test_size_parse_units(void)
{
	uint64_t v;

	CHECK_EQ(size_parse("512M", &v), 0);
	CHECK_EQ(v, 512ULL << 20);
	CHECK_EQ(size_parse("2G", &v), 0);
	CHECK_EQ(v, 2ULL << 30);
	CHECK_EQ(size_parse("2g", &v), 0);
	CHECK_EQ(v, 2ULL << 30);
	CHECK_EQ(size_parse("4096K", &v), 0);
	CHECK_EQ(v, 4096ULL << 10);
	CHECK_EQ(size_parse("1GiB", &v), 0);
	CHECK_EQ(v, 1ULL << 30);
	CHECK_EQ(size_parse("3MB", &v), 0);
	CHECK_EQ(v, 3ULL << 20);
	CHECK_EQ(size_parse("1T", &v), 0);
	CHECK_EQ(v, 1ULL << 40);
	CHECK_EQ(size_parse("123", &v), 0);
	CHECK_EQ(v, 123);
}

static void test_size_parse_rejects(void)
{
	uint64_t v = 7;

	CHECK_EQ(size_parse("", &v), -EINVAL);
	CHECK_EQ(size_parse("M", &v), -EINVAL);
	CHECK_EQ(size_parse("-1G", &v), -EINVAL);
	CHECK_EQ(size_parse("1.5G", &v), -EINVAL);
	CHECK_EQ(size_parse("12X", &v), -EINVAL);
	CHECK_EQ(size_parse("12 M", &v), -EINVAL);
	CHECK_EQ(size_parse("0", &v), -EINVAL);
	CHECK_EQ(size_parse("1Gx", &v), -EINVAL);
	CHECK_EQ(size_parse("99999999999999999999", &v), -ERANGE);
	CHECK_EQ(size_parse("17179869184G", &v), -ERANGE);
	CHECK_EQ(v, 7);
}

static void test_size_format(void)
{
	char buf[32];

	CHECK_STR(size_format(512ULL << 20, buf, sizeof(buf)), "512 MiB");
	CHECK_STR(size_format(3ULL << 29, buf, sizeof(buf)), "1.5 GiB");
	CHECK_STR(size_format(100, buf, sizeof(buf)), "100 B");
}

static void test_uint_parse(void)
{
	unsigned long v;

	CHECK_EQ(uint_parse("42", 100, &v), 0);
	CHECK_EQ(v, 42);
	CHECK_EQ(uint_parse("101", 100, &v), -ERANGE);
	CHECK_EQ(uint_parse("4x", 100, &v), -EINVAL);
	CHECK_EQ(uint_parse("", 100, &v), -EINVAL);
	CHECK_EQ(uint_parse("-1", 100, &v), -EINVAL);
	CHECK_EQ(uint_parse("99999999999999999999999", ~0UL, &v), -ERANGE);
}

int main(void)
{
	RUN_TEST(test_size_parse_units);
	RUN_TEST(test_size_parse_rejects);
	RUN_TEST(test_size_format);
	RUN_TEST(test_uint_parse);
	return unit_finish();
}
