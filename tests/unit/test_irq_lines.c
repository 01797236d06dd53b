/* Shared level-triggered interrupt lines: who drives the line when
 * devices share it, how lines are handed out, and bad line numbers. */
#include <errno.h>

#include "core/irq_lines.h"
#include "unit.h"

#define NR_LINES 24

static int level[NR_LINES];	/* what the line was last driven to */
static unsigned writes;		/* calls of the setter */
static int fail_with;		/* errno the setter returns, or 0 */

static int record(void *opaque, unsigned line, bool high)
{
	CHECK(line < NR_LINES);
	level[line] = high;
	writes++;
	return -fail_with;
}

static void setup(struct irq_lines *l, unsigned first, unsigned count)
{
	memset(level, 0, sizeof(level));
	writes = 0;
	fail_with = 0;
	CHECK_EQ(irq_lines_init(l, NR_LINES, first, count, record, NULL), 0);
}

/* Two devices on one line: it stays high until both have let go, and
 * a device repeating its level changes nothing. */
static void test_shared_line(void)
{
	struct irq_lines l;
	struct irq_source a, b;

	setup(&l, 16, 1);
	CHECK_EQ(irq_lines_alloc(&l, &a), 0);
	CHECK_EQ(irq_lines_alloc(&l, &b), 0);
	CHECK_EQ(a.line, 16);
	CHECK_EQ(b.line, 16);
	irq_source_set(&l, &a, true);
	CHECK_EQ(level[16], 1);
	irq_source_set(&l, &b, true);
	irq_source_set(&l, &a, true);
	CHECK_EQ(writes, 1);
	irq_source_set(&l, &a, false);
	CHECK_EQ(level[16], 1);
	irq_source_set(&l, &b, false);
	CHECK_EQ(level[16], 0);
	irq_source_set(&l, &b, false);
	CHECK_EQ(writes, 2);
	irq_lines_free(&l);
}

/* Lines go round the arch's range; a fixed line is claimed as is. */
static void test_allocation(void)
{
	struct irq_lines l;
	struct irq_source s[10], com;
	unsigned i;

	setup(&l, 16, 8);
	for (i = 0; i < 10; i++) {
		CHECK_EQ(irq_lines_alloc(&l, &s[i]), 0);
		CHECK_EQ(s[i].line, 16 + i % 8);
		CHECK(!s[i].level);
	}
	CHECK_EQ(irq_lines_claim(&l, &com, 4), 0);
	CHECK_EQ(com.line, 4);
	CHECK_EQ(irq_lines_claim(&l, &com, NR_LINES), -EINVAL);
	irq_source_set(&l, &s[0], true);
	irq_source_set(&l, &s[8], true);	/* shares line 16 */
	irq_source_set(&l, &s[0], false);
	CHECK_EQ(level[16], 1);
	irq_lines_free(&l);

	setup(&l, 0, 0);
	CHECK_EQ(irq_lines_alloc(&l, &s[0]), -ENOSPC);
	irq_lines_free(&l);
	CHECK_EQ(irq_lines_init(&l, NR_LINES, 20, 8, record, NULL), -EINVAL);
}

/* A setter that fails leaves the count right for the next change. */
static void test_setter_failure(void)
{
	struct irq_lines l;
	struct irq_source a;

	setup(&l, 16, 8);
	CHECK_EQ(irq_lines_alloc(&l, &a), 0);
	fail_with = EIO;
	irq_source_set(&l, &a, true);
	fail_with = 0;
	irq_source_set(&l, &a, false);
	CHECK_EQ(level[16], 0);
	CHECK_EQ(writes, 2);
	irq_lines_free(&l);
}

static int other_writes;

static int record_other(void *opaque, unsigned line, bool high)
{
	other_writes++;
	return 0;
}

/* A new driver (x86's user-space IOAPIC) takes every later change. */
static void test_set_driver(void)
{
	struct irq_lines l;
	struct irq_source a;

	setup(&l, 16, 8);
	CHECK_EQ(irq_lines_alloc(&l, &a), 0);
	irq_lines_set_driver(&l, record_other, NULL);
	irq_source_set(&l, &a, true);
	irq_source_set(&l, &a, false);
	CHECK_EQ(writes, 0);
	CHECK_EQ(other_writes, 2);
	irq_lines_free(&l);
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_shared_line),
		UNIT_TEST(test_allocation),
		UNIT_TEST(test_setter_failure),
		UNIT_TEST(test_set_driver),
	};

	return UNIT_RUN(tests);
}
