/* virtio-9p (virtio/p9.c): request chains from the input's driver
 * (fuzz_virtio.h), answered by the device's workers, Tflushes by the
 * device, over a read-only share of a scratch directory made once (a
 * file and a directory): what an input can do to it does not change
 * what the next one finds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_virtio.h"
#include "virtio/p9.h"

static struct virtio_p9 p9;
static char dir[] = "/tmp/thpvm-fuzz-9p-XXXXXX";
static bool ready;

static bool share_make(void)
{
	static const char text[] = "thpvm\n";
	int root, fd;
	bool ok;

	if (!mkdtemp(dir))
		return false;
	root = open(dir, O_DIRECTORY | O_RDONLY);
	fd = root < 0 ? -1 : openat(root, "file", O_CREAT | O_WRONLY, 0644);
	ok = fd >= 0 && write(fd, text, sizeof(text) - 1) > 0 &&
	     mkdirat(root, "dir", 0755) == 0;
	if (fd >= 0)
		close(fd);
	if (root >= 0)
		close(root);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready) {
		fuzz_ram_load(NULL, 0);
		if (!share_make() ||
		    virtio_p9_create(&p9, 0, dir, "fuzz", true, &fuzz_ram)) {
			fprintf(stderr, "fuzz_virtio_p9: cannot set up %s\n",
				dir);
			abort();
		}
		fuzz_virtio_attach(&p9.vdev);
		ready = true;
	}
	fuzz_virtio_run(&p9.vdev, data, size, NULL);
	return 0;
}
