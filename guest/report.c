/* Results: the counts of passed and failed checks, and the result line
 * of a check. */
#include "guest.h"

unsigned checks_passed, checks_failed;

void count_result(bool ok)
{
	if (ok)
		checks_passed++;
	else
		checks_failed++;
}

void report(bool ok, const char *check, const char *fmt, ...)
{
	va_list ap;

	print("tg: %s %s ", ok ? "ok" : "FAIL", check);
	va_start(ap, fmt);
	vprint(fmt, ap);
	va_end(ap);
	print("\n");
	count_result(ok);
}
