/* blk_verify on each disk (blkN-verify): reads the whole disk, 1 MiB a
 * request, and checks that each 4 KiB block holds pattern A or only
 * zeros; reports how many were zeros. For images whose layout the host
 * made (qcow2 with backing files, compressed and zero clusters:
 * tests/integration/test_qcow2.py), where a lookup that went wrong reads
 * the wrong offset's pattern. */
#include "blk.h"
#include "guest.h"
#include "lib.h"

#define VERIFY_REQ	(1024 * 1024)

/* Where the disk first differs (bytes = its size when it does not). */
static uint64_t verify(struct blk_dev *b, uint64_t bytes, uint64_t *zero,
		       const char **why)
{
	for (uint64_t off = 0; off < bytes; off += VERIFY_REQ) {
		uint64_t len = bytes - off < VERIFY_REQ ? bytes - off :
							 VERIFY_REQ;
		int rc = blk_io(b, VIRTIO_BLK_T_IN, off / SECTOR, blk_buf, len,
				1, 0);

		if (rc) {
			*why = blk_rc_name(rc);
			return off;
		}
		pat_begin(PAT_CLASSIFY, PATTERN_A);
		pat_add(blk_buf, len, off);
		if (!pat_run()) {
			*why = "pattern";
			return pat.bad_off;
		}
		*zero += pat.zero_blocks;
	}
	return bytes;
}

void blk_verify(struct blk_dev *b)
{
	uint64_t bytes = b->capacity * SECTOR, zero = 0, end;
	const char *why = "not-whole-blocks";

	end = bytes % 4096 ? 0 : verify(b, bytes, &zero, &why);
	if (end == bytes)
		print("tg: ok blk%u-verify bytes=%lu zero_blocks=%lu\n",
		      b->num, bytes, zero);
	else
		print("tg: FAIL blk%u-verify offset=%lu reason=%s\n", b->num,
		      end, why);
	count_result(end == bytes);
}
