/* The consoles' byte FIFO (lib/byte_ring.c): bytes come out in the order
 * they went in across the end of the storage, a full ring takes what
 * fits (put) or drops the oldest (overwrite span), spans end where the
 * storage does, and positions keep counting past wraps; checked against
 * a model over random operations and capacities. */
#include <string.h>

#include "lib/byte_ring.h"
#include "lib/util.h"
#include "unit.h"

static void test_put_get_in_order(void)
{
	uint8_t store[8], out[8];
	struct byte_ring r;

	byte_ring_init(&r, store, sizeof(store));
	CHECK_EQ(byte_ring_used(&r), 0);
	CHECK_EQ(byte_ring_room(&r), 8);
	CHECK_EQ(byte_ring_get(&r, out, sizeof(out)), 0);
	CHECK_EQ(byte_ring_put(&r, "abcde", 5), 5);
	CHECK_EQ(byte_ring_get(&r, out, 3), 3);
	CHECK(!memcmp(out, "abc", 3));
	/* Across the end of the storage. */
	CHECK_EQ(byte_ring_put(&r, "fghijk", 6), 6);
	CHECK_EQ(byte_ring_used(&r), 8);
	CHECK_EQ(byte_ring_room(&r), 0);
	CHECK_EQ(byte_ring_get(&r, out, sizeof(out)), 8);
	CHECK(!memcmp(out, "defghijk", 8));
	CHECK_EQ(r.head, 11);
	CHECK_EQ(r.tail, 11);
}

/* Full: put takes what fits and leaves the newest out. */
static void test_put_when_full_keeps_oldest(void)
{
	uint8_t store[5], out[5];
	struct byte_ring r;

	byte_ring_init(&r, store, sizeof(store));
	CHECK_EQ(byte_ring_put(&r, "abc", 3), 3);
	CHECK_EQ(byte_ring_put(&r, "defg", 4), 2);
	CHECK_EQ(byte_ring_put(&r, "x", 1), 0);
	CHECK_EQ(byte_ring_get(&r, out, sizeof(out)), 5);
	CHECK(!memcmp(out, "abcde", 5));
}

/* Peek shows the oldest bytes up to the end of the storage; consume
 * drops what a short write took. */
static void test_peek_and_consume(void)
{
	uint8_t store[6];
	struct byte_ring r;
	const uint8_t *p;
	size_t n;

	byte_ring_init(&r, store, sizeof(store));
	p = byte_ring_peek(&r, &n);
	CHECK_EQ(n, 0);
	byte_ring_put(&r, "abcd", 4);
	byte_ring_consume(&r, 3);
	byte_ring_put(&r, "efgh", 4);	/* d e f at 3..5, g h at 0..1 */
	p = byte_ring_peek(&r, &n);
	CHECK_EQ(n, 3);
	CHECK(!memcmp(p, "def", 3));
	byte_ring_consume(&r, 1);
	p = byte_ring_peek(&r, &n);
	CHECK_EQ(n, 2);
	CHECK(!memcmp(p, "ef", 2));
	byte_ring_consume(&r, 2);
	p = byte_ring_peek(&r, &n);
	CHECK_EQ(n, 2);
	CHECK(!memcmp(p, "gh", 2));
	/* A span from a position of the reader's own. */
	p = byte_ring_span_at(&r, r.head + 1, &n);
	CHECK_EQ(n, 1);
	CHECK_EQ(*p, 'h');
	byte_ring_span_at(&r, r.tail, &n);
	CHECK_EQ(n, 0);
	byte_ring_clear(&r);
	CHECK_EQ(byte_ring_used(&r), 0);
	CHECK_EQ(byte_ring_room(&r), 6);
	CHECK_EQ(r.tail, 8);
}

/* Read straight into the ring: the oldest bytes make room, and the
 * positions say what a reader behind lost. */
static void test_overwrite_drops_oldest(void)
{
	uint8_t store[4];
	struct byte_ring r;
	const uint8_t *p;
	uint8_t *w;
	size_t n;

	byte_ring_init(&r, store, sizeof(store));
	w = byte_ring_overwrite_span(&r, &n);
	CHECK_EQ(n, 4);
	memcpy(w, "abc", 3);
	byte_ring_produce(&r, 3);
	CHECK_EQ(r.head, 0);
	w = byte_ring_overwrite_span(&r, &n);
	CHECK_EQ(n, 1);
	*w = 'd';
	byte_ring_produce(&r, 1);
	w = byte_ring_overwrite_span(&r, &n);
	CHECK_EQ(n, 4);
	memcpy(w, "ef", 2);
	byte_ring_produce(&r, 2);
	CHECK_EQ(r.head, 2);
	CHECK_EQ(r.tail, 6);
	CHECK_EQ(byte_ring_used(&r), 4);
	p = byte_ring_peek(&r, &n);
	CHECK_EQ(n, 2);
	CHECK(!memcmp(p, "cd", 2));
	p = byte_ring_span_at(&r, 4, &n);
	CHECK_EQ(n, 2);
	CHECK(!memcmp(p, "ef", 2));
}

/* Random puts, gets, partial consumes and overwrites, at capacities
 * that are and are not powers of two, against a flat model. */
static void test_random_against_model(void)
{
	static const size_t sizes[] = { 1, 2, 3, 7, 16, 100 };
	uint8_t store[100], model[4096], buf[300];
	unsigned s, i;

	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		size_t size = sizes[s], mhead = 0, mtail = 0;
		struct byte_ring r;
		uint8_t next = 0;

		byte_ring_init(&r, store, size);
		for (i = 0; i < 2000 && mtail + 300 < sizeof(model); i++) {
			size_t len = unit_rand(2 * size + 2), n, k;
			const uint8_t *p;
			uint8_t *w;

			switch (unit_rand(4)) {
			case 0:
				for (k = 0; k < len; k++)
					buf[k] = next++;
				n = byte_ring_put(&r, buf, len);
				CHECK_EQ(n, MIN(len, size - (mtail - mhead)));
				memcpy(model + mtail, buf, n);
				mtail += n;
				break;
			case 1:
				n = byte_ring_get(&r, buf, len);
				CHECK_EQ(n, MIN(len, mtail - mhead));
				CHECK(!memcmp(buf, model + mhead, n));
				mhead += n;
				break;
			case 2:
				p = byte_ring_peek(&r, &n);
				CHECK(n <= mtail - mhead);
				CHECK(n > 0 || mtail == mhead);
				CHECK(!memcmp(p, model + mhead, n));
				n = MIN(n, len);
				byte_ring_consume(&r, n);
				mhead += n;
				break;
			case 3:
				w = byte_ring_overwrite_span(&r, &n);
				CHECK(n >= 1 && n <= size);
				n = MIN(n, len);
				for (k = 0; k < n; k++)
					w[k] = model[mtail + k] = next++;
				byte_ring_produce(&r, n);
				mtail += n;
				if (mtail - mhead > size)
					mhead = mtail - size;
				break;
			}
			CHECK_EQ(r.head, mhead);
			CHECK_EQ(r.tail, mtail);
			CHECK_EQ(byte_ring_used(&r) + byte_ring_room(&r), size);
		}
		/* What is left comes out whole. */
		CHECK_EQ(byte_ring_get(&r, buf, sizeof(buf)), mtail - mhead);
		CHECK(!memcmp(buf, model + mhead, mtail - mhead));
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		UNIT_TEST(test_put_get_in_order),
		UNIT_TEST(test_put_when_full_keeps_oldest),
		UNIT_TEST(test_peek_and_consume),
		UNIT_TEST(test_overwrite_drops_oldest),
		UNIT_TEST(test_random_against_model),
	};

	return UNIT_RUN(tests);
}
