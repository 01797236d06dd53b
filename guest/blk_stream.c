/* blk_stream on blk0: writes the disk over and over in 256 KiB chunks,
 * pass p with the pattern key PATTERN_B + p, each chunk followed by a
 * flush, and prints a line once the flush has completed. The host kills
 * the VMM at one of those lines and checks that the image holds every
 * write whose flush was reported (tests/integration/test_durability.py). */
#include "blk.h"
#include "guest.h"
#include "lib.h"

#define STREAM_CHUNK		(256 * 1024)
#define STREAM_REQ		(64 * 1024)
#define STREAM_PASSES		256

static int write_chunk(struct blk_dev *b, uint64_t off)
{
	for (uint64_t done = 0; done < STREAM_CHUNK; done += STREAM_REQ) {
		int rc = blk_io(b, VIRTIO_BLK_T_OUT, (off + done) / SECTOR,
				blk_buf + done, STREAM_REQ, 1, 0);

		if (rc)
			return rc;
	}
	return blk_io(b, VIRTIO_BLK_T_FLUSH, 0, 0, 0, 1, 0);
}

void blk_stream(struct blk_dev *b)
{
	uint64_t bytes = b->capacity * SECTOR / STREAM_CHUNK * STREAM_CHUNK;

	if (b->ro || !bytes || !virtio_has(&b->vd, VIRTIO_BLK_F_FLUSH)) {
		report(false, "blk0-stream", "reason=%s", b->ro ? "read-only" :
		       bytes ? "no-flush" : "too-small");
		return;
	}
	for (uint64_t pass = 1; pass <= STREAM_PASSES; pass++) {
		for (uint64_t off = 0; off < bytes; off += STREAM_CHUNK) {
			int rc;

			pat_begin(PAT_FILL, PATTERN_B + pass);
			pat_add(blk_buf, STREAM_CHUNK, off);
			pat_run();
			rc = write_chunk(b, off);
			if (rc) {
				report(false, "blk0-stream", "pass=%lu "
				       "offset=%lu got=%s", pass, off,
				       blk_rc_name(rc));
				return;
			}
			print("tg: blk0-stream flushed pass=%lu end=%lu\n",
			      pass, off + STREAM_CHUNK);
		}
	}
	report(true, "blk0-stream", "passes=%u bytes=%lu", STREAM_PASSES,
	       bytes);
}
