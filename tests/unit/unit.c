/* TAP output for the unit tests (see unit.h). */
#include "unit.h"

struct unit_state unit;

static void unit_run(const char *name, void (*fn)(void))
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

int unit_main(const struct unit_test *tests, unsigned nr)
{
	unsigned i;

	printf("1..%u\n", nr);
	fflush(stdout);
	for (i = 0; i < nr; i++)
		unit_run(tests[i].name, tests[i].fn);
	return unit.failed_tests ? 1 : 0;
}

int unit_skip_all(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	return 0;
}

uint64_t unit_rand64(void)
{
	static uint64_t state = 0x9e3779b97f4a7c15ULL;

	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

uint64_t unit_rand(uint64_t n)
{
	return unit_rand64() % n;
}
