/* The disk patterns (the word at disk byte offset o is o ^ key), filled
 * into and checked over device buffers in ring 3, which runs natively
 * where kernel mode is emulated. */
#include "blk.h"
#include "guest.h"

__attribute__((section(".noinit"))) struct pat_list pat;

static long u_pat(long arg)
{
	struct pat_list *l = (struct pat_list *)arg;

	for (unsigned i = 0; i < l->n; i++) {
		uint64_t *p = (uint64_t *)l->job[i].buf;
		uint64_t off = l->job[i].off, words = l->job[i].len / 8;

		for (uint64_t w = 0; w < words; w++) {
			uint64_t want = (off + 8 * w) ^ l->key;

			/* A block that starts with zero is all zeros. */
			if (l->op == PAT_CLASSIFY && w % PAT_BLOCK_WORDS == 0 &&
			    p[w] == 0) {
				for (uint64_t z = w; z < w + PAT_BLOCK_WORDS; z++)
					if (p[z]) {
						l->bad_off = off + 8 * z;
						l->found = p[z];
						return 0;
					}
				l->zero_blocks++;
				w += PAT_BLOCK_WORDS - 1;
				continue;
			}
			if (l->op == PAT_FILL) {
				p[w] = want;
				continue;
			}
			if (l->op == PAT_CHECK_ZERO)
				want = 0;
			if (p[w] != want) {
				l->bad_off = off + 8 * w;
				l->found = p[w];
				return 0;
			}
		}
	}
	return 1;
}

void pat_begin(enum pat_op op, uint64_t key)
{
	pat.op = op;
	pat.key = key;
	pat.n = 0;
	pat.zero_blocks = 0;
}

void pat_add(uint64_t buf, uint64_t len, uint64_t off)
{
	pat.job[pat.n].buf = buf;
	pat.job[pat.n].len = len;
	pat.job[pat.n].off = off;
	pat.n++;
}

/* False at the first mismatch (pat.bad_off, pat.found). */
bool pat_run(void)
{
	return run_user(u_pat, (long)&pat);
}
