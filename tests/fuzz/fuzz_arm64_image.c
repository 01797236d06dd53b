/* The arm64 Image header (arch/arm64/image.c, plain C, so it is fuzzed
 * on every host). */
#include "arch/arm64/image.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arm64_image img;
	const char *why;

	arm64_image_parse(data, size, &img, &why);
	return 0;
}
