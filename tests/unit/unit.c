/* TAP output for the unit tests (see unit.h). */
#include "unit.h"

struct unit_state unit;

void unit_run(const char *name, void (*fn)(void))
{
	unit.current_failures = 0;
	unit.skip_reason = NULL;
	fn();
	unit.run++;
	if (unit.current_failures) {
		unit.failed_tests++;
		printf("not ok %u - %s\n", unit.run, name);
	} else if (unit.skip_reason) {
		printf("ok %u - %s # SKIP %s\n", unit.run, name,
		       unit.skip_reason);
	} else {
		printf("ok %u - %s\n", unit.run, name);
	}
	fflush(stdout);
}

int unit_finish(void)
{
	printf("1..%u\n", unit.run);
	return unit.failed_tests ? 1 : 0;
}

uint64_t unit_rand(uint64_t n)
{
	static uint64_t state = 0x9e3779b97f4a7c15ULL;

	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state % n;
}
