/* Inside the 9p server (p9_server.c, p9_fid.c, p9_ops*.c): the server's
 * state, its fids, and how a guest-given path reaches a host file. A fid
 * names a file by its path below the share, kept as the server last saw
 * it (renames through the server rewrite the paths of the fids below
 * them); every host call resolves that path anew from the share's
 * directory, beneath it and through no symbolic link. */
#ifndef THPVM_BACKEND_P9_FID_H
#define THPVM_BACKEND_P9_FID_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "backend/p9_server.h"
#include "backend/p9_wire.h"

#define P9_FID_BUCKETS 1024


struct p9_fid {
	uint32_t id;
	struct p9_fid *next;	/* in its bucket */
	unsigned refs;		/* the table's, and each call's using it */
	char *path;		/* "" is the share's root; no "." nor ".." */
	/* Open (Tlopen, Tlcreate): set once, under the lock, and closed
	 * with the last reference; -1 before. */
	int fd;
	int access;		/* O_RDONLY, O_WRONLY or O_RDWR when open */
	pthread_mutex_t dir_lock;	/* a Treaddir's seek and reads */
};

struct p9_server {
	char name[32];
	int root_fd;		/* O_PATH, the share's directory */
	dev_t root_dev;
	bool read_only;
	pthread_mutex_t lock;	/* what follows */
	uint32_t msize;		/* 0 until a Tversion */
	struct p9_fid *fids[P9_FID_BUCKETS];
	unsigned nr_fids, nr_open;
	uint64_t requests, errors;
};

/* One request being answered. */
struct p9_req {
	uint8_t type;
	uint16_t tag;
	uint32_t size;			/* the message's size field */
	uint32_t msize;			/* the session's, or the most */
	struct p9_reader in;		/* past the header */
	struct p9_writer out;		/* the reply, header begun */
	/* The guest's buffers: Twrite's data is read from req, Rread's
	 * and Rreaddir's written into resp, past the reply's own bytes,
	 * and data_len says how many. */
	const struct iovec *req;
	unsigned nr_req;
	const struct iovec *resp;
	unsigned nr_resp;
	uint64_t resp_room;		/* bytes resp holds */
	size_t data_len;
};

/* A handler: 0 with the reply in rq->out, or -errno for an Rlerror. */
typedef int (*p9_handler)(struct p9_server *s, struct p9_req *rq);

/* The fid id with a reference the caller drops with p9_fid_put, and its
 * path copied into path (PATH_MAX bytes) unless NULL; NULL if there is
 * none. */
struct p9_fid *p9_fid_get(struct p9_server *s, uint32_t id, char *path);
void p9_fid_put(struct p9_server *s, struct p9_fid *f);
/* Fid id's path into path (PATH_MAX bytes; NULL: only whether the fid
 * is there): 0, or -EBADF if there is no such fid. */
int p9_fid_path(struct p9_server *s, uint32_t id, char *path);
/* A new fid id at path: 0, -EBADF if id is in use or NOFID, -EMFILE
 * past P9_MAX_FIDS, -ENOMEM. With replace, an id in use takes the new
 * path (a walk onto itself), unless it is open (-EBADF). */
int p9_fid_add(struct p9_server *s, uint32_t id, const char *path,
	       bool replace);
/* Takes id out of the table (its last user closes it): 0 or -EBADF. */
int p9_fid_remove(struct p9_server *s, uint32_t id);
/* Every fid out (a Tversion, a reset). */
void p9_fids_clear(struct p9_server *s);
/* f opened as fd with access (Tlopen; Tlcreate, which also moves it to
 * the new file's path, else NULL): 0, -EBADF if it was open already,
 * -EMFILE past P9_MAX_OPEN, -ENOMEM; fd is closed on failure. */
int p9_fid_set_open(struct p9_server *s, struct p9_fid *f, const char *path,
		    int fd, int access);
/* f's open file (-1 if none) and, unless access is NULL, its access
 * mode, read under the lock: a Tlopen in another thread may be setting
 * them. The fd stays open while the caller holds its reference. */
int p9_fid_fd(struct p9_server *s, struct p9_fid *f, int *access);
/* After a rename of from to to below the share: the fids at or below
 * from follow. */
void p9_fids_renamed(struct p9_server *s, const char *from, const char *to);

/* Opens path below the share with openat2 (beneath the share's root,
 * through no symbolic link; a trailing one only with O_PATH, as itself).
 * Returns the fd or -errno. */
int p9_open(struct p9_server *s, const char *path, int flags, mode_t mode);
/* The directory holding path (O_PATH), and in *base path's last
 * component: -EINVAL for the root, which has none here. */
int p9_open_parent(struct p9_server *s, const char *path, const char **base);
/* For an operation on name in directory fid dfid: the entry's path
 * into path (PATH_MAX bytes, name checked as p9_path_join does) and the
 * directory (O_PATH) as the result, or -errno. */
int p9_open_entry(struct p9_server *s, uint32_t dfid, const char *name,
		  char *path);
/* dir/name into out (PATH_MAX bytes), name checked as a new entry's:
 * not empty, no '/', not "." or "..": 0, -EINVAL, -ENAMETOOLONG. */
int p9_path_join(char *out, const char *dir, const char *name);
/* A qid for st. */
void p9_qid_of(const struct p9_server *s, const struct stat *st,
	       struct p9_qid *q);
/* fstat of fd into st and q: 0 or -errno. */
int p9_stat_fd(const struct p9_server *s, int fd, struct stat *st,
	       struct p9_qid *q);

/* The handlers of the file operations (p9_ops*.c), by message type. */
int p9_op_getattr(struct p9_server *s, struct p9_req *rq);
int p9_op_setattr(struct p9_server *s, struct p9_req *rq);
int p9_op_statfs(struct p9_server *s, struct p9_req *rq);
int p9_op_readlink(struct p9_server *s, struct p9_req *rq);
int p9_op_lopen(struct p9_server *s, struct p9_req *rq);
int p9_op_lcreate(struct p9_server *s, struct p9_req *rq);
int p9_op_read(struct p9_server *s, struct p9_req *rq);
int p9_op_write(struct p9_server *s, struct p9_req *rq);
int p9_op_fsync(struct p9_server *s, struct p9_req *rq);
int p9_op_readdir(struct p9_server *s, struct p9_req *rq);
int p9_op_lock(struct p9_server *s, struct p9_req *rq);
int p9_op_getlock(struct p9_server *s, struct p9_req *rq);
int p9_op_mkdir(struct p9_server *s, struct p9_req *rq);
int p9_op_symlink(struct p9_server *s, struct p9_req *rq);
int p9_op_mknod(struct p9_server *s, struct p9_req *rq);
int p9_op_link(struct p9_server *s, struct p9_req *rq);
int p9_op_rename(struct p9_server *s, struct p9_req *rq);
int p9_op_renameat(struct p9_server *s, struct p9_req *rq);
int p9_op_unlinkat(struct p9_server *s, struct p9_req *rq);
int p9_op_remove(struct p9_server *s, struct p9_req *rq);

#endif
