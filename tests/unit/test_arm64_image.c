/* Tests for arch/arm64/image.c on synthetic Image headers. */
#include "arch/arm64/image.h"
#include "lib/util.h"
#include "unit.h"

#include <errno.h>

#define FILE_SIZE 4096

static uint8_t img[FILE_SIZE];

/* A valid header: text_offset 0, 64 KiB in memory, 4 KiB pages,
 * placeable anywhere (flags that do not matter to thpvm). */
static void make_valid(void)
{
	memset(img, 0, sizeof(img));
	put_le64(img + 8, 0);
	put_le64(img + 16, 0x10000);
	put_le64(img + 24, 1u << 1 | 1u << 3);
	put_le32(img + 56, 0x644d5241);
}

static int parse(size_t len, struct arm64_image *out, const char **why)
{
	*why = NULL;
	return arm64_image_parse(img, len, out, why);
}

static void test_valid(void)
{
	struct arm64_image out;
	const char *why;

	make_valid();
	CHECK_EQ(parse(FILE_SIZE, &out, &why), 0);
	CHECK_EQ(out.text_offset, 0);
	CHECK_EQ(out.image_size, 0x10000);

	/* The text_offset older kernels use; no flags. */
	put_le64(img + 8, 0x80000);
	put_le64(img + 24, 0);
	CHECK_EQ(parse(FILE_SIZE, &out, &why), 0);
	CHECK_EQ(out.text_offset, 0x80000);
}

static void test_refusals(void)
{
	struct arm64_image out;
	const char *why;

	make_valid();
	CHECK_EQ(parse(ARM64_IMAGE_HEADER_SIZE - 1, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "too short"));

	make_valid();
	img[56] = 'X';
	CHECK_EQ(parse(FILE_SIZE, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "magic"));

	make_valid();
	put_le64(img + 24, 1);
	CHECK_EQ(parse(FILE_SIZE, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "big-endian"));

	make_valid();
	put_le64(img + 16, 0);
	CHECK_EQ(parse(FILE_SIZE, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "image_size is 0"));

	make_valid();
	put_le64(img + 8, 2 * MiB);
	CHECK_EQ(parse(FILE_SIZE, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "text_offset"));

	make_valid();
	put_le64(img + 8, 0x80001);
	CHECK_EQ(parse(FILE_SIZE, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "text_offset"));

	make_valid();
	put_le64(img + 16, FILE_SIZE - 1);
	CHECK_EQ(parse(FILE_SIZE, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "smaller than the file"));

	make_valid();
	put_le64(img + 8, 0x1000);
	put_le64(img + 16, UINT64_MAX - 0x800);
	CHECK_EQ(parse(FILE_SIZE, &out, &why), -EINVAL);
	CHECK(why && strstr(why, "overflows"));
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_valid),
		UNIT_TEST(test_refusals),
	};

	return UNIT_RUN(tests);
}
