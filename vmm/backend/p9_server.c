/* The 9P2000.L server (see p9_server.h): the session (Tversion,
 * Tattach), fids (Twalk, Tclunk), and the way one request is read and
 * answered; the file operations are in p9_ops*.c. */
#include "backend/p9_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/p9_fid.h"
#include "lib/log.h"
#include "lib/util.h"

/* A message other than a Twrite is read whole into a buffer of this
 * size: the longest Linux sends (a Twalk of 16 names, a Tsymlink) is
 * about 4.5 KiB. A reply other than Rread's and Rreaddir's data fits in
 * the same (Rreadlink's PATH_MAX at most). */
#define SMALL_MSG (8 * 1024)
/* Linux's v9fs needs room for a page and headers. */
#define MIN_MSIZE 4096
#define VERSION "9P2000.L"

static int op_version(struct p9_server *s, struct p9_req *rq)
{
	uint32_t msize = p9_get_u32(&rq->in);
	char version[32];

	/* A version too long to be ours is answered "unknown". */
	p9_get_str(&rq->in, version, sizeof(version));
	if (msize < MIN_MSIZE)
		return -EINVAL;
	msize = MIN(msize, P9_MAX_MSIZE);
	/* A new session: what the last one held goes. */
	p9_fids_clear(s);
	pthread_mutex_lock(&s->lock);
	s->msize = msize;
	pthread_mutex_unlock(&s->lock);
	p9_put_u32(&rq->out, msize);
	if (!rq->in.bad && !strcmp(version, VERSION))
		p9_put_str(&rq->out, VERSION, strlen(VERSION));
	else
		p9_put_str(&rq->out, "unknown", strlen("unknown"));
	return 0;
}

static int op_attach(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);
	char uname[256], aname[PATH_MAX];
	struct p9_qid qid;
	struct stat st;
	int err;

	p9_get_u32(&rq->in);	/* afid: no authentication here */
	p9_get_str(&rq->in, uname, sizeof(uname));
	/* Every aname attaches the share's root. */
	p9_get_str(&rq->in, aname, sizeof(aname));
	p9_get_u32(&rq->in);	/* n_uname: files are the host user's */
	if (rq->in.bad)
		return -EINVAL;
	err = p9_stat_fd(s, s->root_fd, &st, &qid);
	if (!err)
		err = p9_fid_add(s, fid, "", false);
	if (err)
		return err;
	p9_put_qid(&rq->out, &qid);
	return 0;
}

/* One step of a walk from path (PATH_MAX bytes), in place: ".." goes up
 * and stops at the share's root, "." stays. */
static int walk_step(char *path, const char *name)
{
	char next[PATH_MAX];
	char *slash;
	int err;

	if (!strcmp(name, ".."))  {
		slash = strrchr(path, '/');
		if (slash)
			*slash = 0;
		else
			path[0] = 0;
		return 0;
	}
	if (!strcmp(name, "."))
		return 0;
	err = p9_path_join(next, path, name);
	if (!err)
		strcpy(path, next);
	return err;
}

static int walk_qid(struct p9_server *s, const char *path, struct p9_qid *q)
{
	struct stat st;
	int fd, err;

	fd = p9_open(s, path, O_PATH, 0);
	if (fd < 0)
		return fd;
	err = p9_stat_fd(s, fd, &st, q);
	close(fd);
	return err;
}

static int op_walk(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in), newfid = p9_get_u32(&rq->in);
	uint16_t n = p9_get_u16(&rq->in), i;
	char names[P9_MAXWELEM][NAME_MAX + 2];
	struct p9_qid qids[P9_MAXWELEM];
	char path[PATH_MAX];
	struct p9_fid *f;
	int err = 0;

	if (n > P9_MAXWELEM)
		return -EINVAL;
	for (i = 0; i < n; i++)
		p9_get_str(&rq->in, names[i], sizeof(names[i]));
	if (rq->in.bad)
		return -EINVAL;
	f = p9_fid_get(s, fid, path);
	if (!f)
		return -EBADF;
	for (i = 0; i < n; i++) {
		err = walk_step(path, names[i]);
		if (!err)
			err = walk_qid(s, path, &qids[i]);
		if (err)
			break;
	}
	p9_fid_put(s, f);
	/* The first name not found is an error; a later one ends the walk
	 * there, and newfid is not made. */
	if (err && !i)
		return err;
	if (!err) {
		err = fid == newfid && !n ? 0 :
		      p9_fid_add(s, newfid, path, fid == newfid);
		if (err)
			return err;
	}
	p9_put_u16(&rq->out, i);
	for (uint16_t k = 0; k < i; k++)
		p9_put_qid(&rq->out, &qids[k]);
	return 0;
}

static int op_clunk(struct p9_server *s, struct p9_req *rq)
{
	uint32_t fid = p9_get_u32(&rq->in);

	if (rq->in.bad)
		return -EINVAL;
	return p9_fid_remove(s, fid);
}

/* The transport answers the flushes of requests it still holds; by the
 * time one reaches here, nothing is left to flush. */
static int op_flush(struct p9_server *s, struct p9_req *rq)
{
	p9_get_u16(&rq->in);
	return rq->in.bad ? -EINVAL : 0;
}

/* Extended attributes are not offered: Linux then reports none. */
static const p9_handler handlers[256] = {
	[P9_TVERSION] = op_version,
	[P9_TATTACH] = op_attach,
	[P9_TWALK] = op_walk,
	[P9_TCLUNK] = op_clunk,
	[P9_TFLUSH] = op_flush,
	[P9_TGETATTR] = p9_op_getattr,
	[P9_TSETATTR] = p9_op_setattr,
	[P9_TSTATFS] = p9_op_statfs,
	[P9_TREADLINK] = p9_op_readlink,
	[P9_TLOPEN] = p9_op_lopen,
	[P9_TLCREATE] = p9_op_lcreate,
	[P9_TREAD] = p9_op_read,
	[P9_TWRITE] = p9_op_write,
	[P9_TFSYNC] = p9_op_fsync,
	[P9_TREADDIR] = p9_op_readdir,
	[P9_TLOCK] = p9_op_lock,
	[P9_TGETLOCK] = p9_op_getlock,
	[P9_TMKDIR] = p9_op_mkdir,
	[P9_TSYMLINK] = p9_op_symlink,
	[P9_TMKNOD] = p9_op_mknod,
	[P9_TLINK] = p9_op_link,
	[P9_TRENAME] = p9_op_rename,
	[P9_TRENAMEAT] = p9_op_renameat,
	[P9_TUNLINKAT] = p9_op_unlinkat,
	[P9_TREMOVE] = p9_op_remove,
};

/* Reads the message into msg and runs its handler: 0 or -errno. */
static int dispatch(struct p9_server *s, struct p9_req *rq, uint8_t *msg,
		    uint32_t msize)
{
	uint32_t limit = msize ? msize : P9_MAX_MSIZE;
	size_t copy;

	if (rq->size < P9_HEADER_SIZE || rq->size > iov_bytes(rq->req,
							      rq->nr_req))
		return -EINVAL;
	if (rq->size > limit)
		return -EMSGSIZE;
	/* A Twrite's data stays in the guest's buffers. */
	copy = rq->type == P9_TWRITE ? MIN(rq->size, P9_TWRITE_HEADER) :
				       rq->size;
	if (copy > SMALL_MSG)
		return -EMSGSIZE;
	iov_to_buf(rq->req, rq->nr_req, 0, msg, copy);
	rq->in = (struct p9_reader){ msg + P9_HEADER_SIZE,
				     copy - P9_HEADER_SIZE, 0, false };
	rq->msize = limit;
	if (!msize && rq->type != P9_TVERSION)
		return -EPROTO;
	if (!handlers[rq->type])
		return -EOPNOTSUPP;
	return handlers[rq->type](s, rq);
}

int64_t p9_server_handle(struct p9_server *s, const struct iovec *req,
			 unsigned nr_req, const struct iovec *resp,
			 unsigned nr_resp)
{
	uint8_t msg[SMALL_MSG], reply[SMALL_MSG];
	struct p9_req rq = {
		.req = req, .nr_req = nr_req, .resp = resp, .nr_resp = nr_resp,
	};
	uint32_t msize;
	size_t len;
	int err;

	if (iov_to_buf(req, nr_req, 0, msg, P9_HEADER_SIZE) < P9_HEADER_SIZE)
		return -EPROTO;
	rq.size = get_le32(msg);
	rq.type = msg[4];
	rq.tag = get_le16(msg + 5);
	rq.resp_room = iov_bytes(resp, nr_resp);
	if (rq.resp_room < P9_IO_HEADER)
		return -EPROTO;
	pthread_mutex_lock(&s->lock);
	msize = s->msize;
	pthread_mutex_unlock(&s->lock);
	/* The reply's own bytes fit the guest's buffers and the msize. */
	rq.out = (struct p9_writer){ reply, MIN(MIN(sizeof(reply),
				     rq.resp_room), msize ?: P9_MAX_MSIZE), 0,
				     false };
	p9_begin(&rq.out, rq.type + 1, rq.tag);
	err = dispatch(s, &rq, msg, msize);
	len = err ? 0 : p9_end(&rq.out, rq.data_len);
	if (!err && !len)
		err = -ENOBUFS;
	if (err) {
		log_msg(LOG_DEBUG, "%s: message %u: %s", s->name, rq.type,
			strerror(-err));
		p9_begin(&rq.out, P9_RLERROR, rq.tag);
		p9_put_u32(&rq.out, -err);
		len = p9_end(&rq.out, 0);
	}
	buf_to_iov(resp, nr_resp, 0, reply, rq.out.pos);
	pthread_mutex_lock(&s->lock);
	s->requests++;
	s->errors += err != 0;
	pthread_mutex_unlock(&s->lock);
	return len;
}

int p9_server_create(struct p9_server **sp, const char *name,
		     const char *dir, bool read_only)
{
	struct p9_server *s = calloc(1, sizeof(*s));
	struct stat st;

	*sp = NULL;
	if (!s) {
		pr_err("%s: out of memory", name);
		return -ENOMEM;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->read_only = read_only;
	/* The user's path is theirs to resolve, symbolic links and all. */
	s->root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->root_fd < 0 || fstat(s->root_fd, &st) < 0) {
		int err = -errno;

		pr_err("%s: %s: %s", name, dir, strerror(-err));
		if (s->root_fd >= 0)
			close(s->root_fd);
		free(s);
		return err;
	}
	s->root_dev = st.st_dev;
	pthread_mutex_init(&s->lock, NULL);
	*sp = s;
	return 0;
}

void p9_server_reset(struct p9_server *s)
{
	p9_fids_clear(s);
	pthread_mutex_lock(&s->lock);
	s->msize = 0;
	pthread_mutex_unlock(&s->lock);
}

void p9_server_destroy(struct p9_server *s)
{
	if (!s)
		return;
	p9_fids_clear(s);
	close(s->root_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void p9_server_stats(struct p9_server *s, struct p9_server_stats *st)
{
	pthread_mutex_lock(&s->lock);
	st->requests = s->requests;
	st->errors = s->errors;
	st->fids = s->nr_fids;
	st->open = s->nr_open;
	pthread_mutex_unlock(&s->lock);
}
