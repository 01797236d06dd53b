/* The 9P2000.L server (vmm/backend/p9_*.c) in-process, on a scratch
 * share: the input is a session of messages, each cut off the input by
 * its own size field (a size past the input's end sends what is left, a
 * size below the header sends a header's worth). The first byte picks
 * the share (bit 0: read-only), whether the harness opens the session
 * first (bit 1: Tversion and a Tattach of fid 0, so that a single
 * mutated message gets past them), and the size of the pieces each
 * request is cut into (bits 2-7, 0 for one buffer); the second, the room
 * of the reply's buffers (cut likewise).
 *
 * The share (tmp/share, tmp a directory in /dev/shm or /tmp) holds
 * files, a directory and symbolic links out of it, to tmp/outside/secret
 * and its directory; it is made again before each input and the server
 * reset after it, so an input always does the same. Every reply must fit
 * its buffers (guard bytes after them stay untouched) and carry a sane
 * header, and the sentinel outside the share must never change. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/p9_server.h"
#include "fuzz.h"
#include "lib/util.h"

#define SECRET "secret\n"
/* The most reply room an input asks for, and the guard after it. */
#define ROOM_MAX (11 + 255 * 64)
#define GUARD 64
#define GUARD_BYTE 0xa5

static char tmp_root[64], share_dir[96], outside_dir[96], secret_path[128];
static struct p9_server *servers[2];	/* read-write, read-only */
static struct stat secret_st;
static uint8_t resp_buf[ROOM_MAX + GUARD];
static struct iovec req_iov[P9_MAX_BUFFERS], resp_iov[P9_MAX_BUFFERS];

const char *fuzz_unavailable(void)
{
	struct open_how how = { .flags = O_PATH };
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == ENOSYS ? "no openat2 here" : NULL;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	/* The share's directory itself stays: the servers hold it open. */
	return ftw->level ? remove(path) : 0;
}

static int give_rights(const char *path, const struct stat *st, int flag,
		       struct FTW *ftw)
{
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, 0755);
	return 0;
}

/* Empties the share. A guest may have taken away the rights a removal
 * needs (a directory of mode 0, which binds a user other than root):
 * they are given back before a second try. */
static void share_clear(void)
{
	chmod(share_dir, 0755);
	if (!nftw(share_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS))
		return;
	nftw(share_dir, give_rights, 16, FTW_PHYS);
	if (nftw(share_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS))
		abort();
}

static int remove_all(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	return remove(path);
}

static void share_cleanup(void)
{
	p9_server_destroy(servers[0]);
	p9_server_destroy(servers[1]);
	nftw(tmp_root, remove_all, 16, FTW_DEPTH | FTW_PHYS);
}

/* The share's contents, as every input finds them. */
static void share_fill(void)
{
	char path[160];

	share_clear();
#define AT(rel) (snprintf(path, sizeof(path), "%s/%s", share_dir, rel), path)
	write_file(AT("a"), "0123456789abcdef");
	write_file(AT("b"), "");
	if (mkdir(AT("d"), 0755))
		abort();
	write_file(AT("d/e"), "inside d");
	if (symlink(secret_path, AT("abs")) ||
	    symlink("../outside/secret", AT("rel")) ||
	    symlink(outside_dir, AT("dirlink")) ||
	    symlink("../outside", AT("d/up")) || symlink("a", AT("self")))
		abort();
#undef AT
}

/* The scratch directory: on tmpfs where there is one, as making and
 * removing the share's entries for every input cost about six times as
 * much on ext4 (its journal) and was most of a run's time there. */
static void scratch_make(void)
{
	snprintf(tmp_root, sizeof(tmp_root), "/dev/shm/thpvm-fuzz-p9-XXXXXX");
	if (mkdtemp(tmp_root))
		return;
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/thpvm-fuzz-p9-XXXXXX");
	if (!mkdtemp(tmp_root))
		abort();
}

static void share_setup(void)
{
	scratch_make();
	snprintf(share_dir, sizeof(share_dir), "%s/share", tmp_root);
	snprintf(outside_dir, sizeof(outside_dir), "%s/outside", tmp_root);
	snprintf(secret_path, sizeof(secret_path), "%s/secret", outside_dir);
	if (mkdir(share_dir, 0755) || mkdir(outside_dir, 0755))
		abort();
	write_file(secret_path, SECRET);
	/* Times in the past: a read of the file would set its atime (as
	 * relatime does where the atime is not after the mtime). */
	if (utimensat(AT_FDCWD, secret_path, (struct timespec[2]){
			{ 1000000000, 0 }, { 1000000000, 0 } }, 0) ||
	    stat(secret_path, &secret_st) ||
	    p9_server_create(&servers[0], "fuzz-p9", share_dir, false) ||
	    p9_server_create(&servers[1], "fuzz-p9-ro", share_dir, true))
		abort();
	atexit(share_cleanup);
}

static unsigned entries(const char *path)
{
	DIR *dir = opendir(path);
	unsigned n = 0;

	if (!dir)
		abort();
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/* The sentinel outside the share, and the directories around it, as
 * they were: nothing read (the sentinel's atime), written, moved, made
 * or removed outside. */
static void check_outside(void)
{
	char buf[64];
	struct stat st;
	ssize_t n;
	int fd;

	/* The check's own read leaves the atime alone (the file is ours). */
	fd = open(secret_path, O_RDONLY | O_NOATIME | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		abort();
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n != (ssize_t)strlen(SECRET) || memcmp(buf, SECRET, n) ||
	    st.st_ino != secret_st.st_ino || st.st_mode != secret_st.st_mode ||
	    st.st_atim.tv_sec != secret_st.st_atim.tv_sec ||
	    st.st_nlink != 1 ||
	    st.st_mtim.tv_nsec != secret_st.st_mtim.tv_nsec ||
	    st.st_ctim.tv_nsec != secret_st.st_ctim.tv_nsec)
		abort();
	/* Theirs and ".", "..". */
	if (entries(outside_dir) != 3 || entries(tmp_root) != 4)
		abort();
}

/* buf[0..len) as iovecs of piece bytes each (all of it in one where
 * piece is 0), at most P9_MAX_BUFFERS. */
static unsigned cut(uint8_t *buf, size_t len, size_t piece,
		    struct iovec *iov)
{
	unsigned n = 0;

	if (!piece || len / piece >= P9_MAX_BUFFERS)
		piece = len;
	do {
		size_t take = MIN(piece, len);

		iov[n++] = (struct iovec){ buf, take };
		buf += take;
		len -= take;
	} while (len);
	return n;
}

/* Sends msg (len bytes) with the reply's room; the reply must be sane. */
static void exchange(struct p9_server *s, uint8_t *msg, size_t len,
		     size_t piece, size_t room)
{
	unsigned nr_req = cut(msg, len, piece, req_iov);
	unsigned nr_resp = cut(resp_buf, room, piece, resp_iov);
	int64_t n;

	memset(resp_buf, GUARD_BYTE, room + GUARD);
	n = p9_server_handle(s, req_iov, nr_req, resp_iov, nr_resp);
	for (size_t i = room; i < room + GUARD; i++)
		if (resp_buf[i] != GUARD_BYTE)
			abort();
	if (n == -EPROTO)
		return;
	if (n < P9_HEADER_SIZE || (uint64_t)n > room ||
	    get_le32(resp_buf) != n ||
	    (len >= P9_HEADER_SIZE && get_le16(resp_buf + 5) !=
	     get_le16(msg + 5)))
		abort();
}

/* Tversion (the largest msize) and a Tattach of fid 0. */
static void session_open(struct p9_server *s, size_t piece, size_t room)
{
	static uint8_t version[] = {
		21, 0, 0, 0, 100, 0xff, 0xff, 0, 0, 8, 0, 8, 0,
		'9', 'P', '2', '0', '0', '0', '.', 'L',
	};
	/* fid 0, afid NOFID, uname "", aname "", n_uname 0. */
	static uint8_t attach[] = {
		23, 0, 0, 0, 104, 1, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0, 0,
	};

	put_le32(version + 7, P9_MAX_MSIZE);
	exchange(s, version, sizeof(version), piece, room);
	exchange(s, attach, sizeof(attach), piece, room);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t msg[64 * 1024];
	struct fuzz_input in = { data, size };
	uint8_t mode = fuzz_u8(&in);
	size_t room = P9_IO_HEADER + fuzz_u8(&in) * 64;
	size_t piece = mode >> 2;
	struct p9_server *s;

	if (!servers[0])
		share_setup();
	share_fill();
	s = servers[mode & 1];
	if (mode & 2)
		session_open(s, piece, room);
	while (in.len) {
		size_t len = in.len >= 4 ? get_le32(in.data) : in.len;

		len = MIN(MAX(len, P9_HEADER_SIZE), MIN(in.len, sizeof(msg)));
		/* A copy, as the guest's buffers would be: the server may
		 * not write into a request. */
		memcpy(msg, in.data, len);
		exchange(s, msg, len, piece, room);
		if (memcmp(msg, in.data, len))
			abort();
		in.data += len;
		in.len -= len;
	}
	/* Its fids and open files go, for the next input's fresh start. */
	p9_server_reset(s);
	check_outside();
	return 0;
}
