/* The 9p server's fids and path resolution (see p9_fid.h). */
#include "backend/p9_fid.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct p9_fid **bucket(struct p9_server *s, uint32_t id)
{
	return &s->fids[id % P9_FID_BUCKETS];
}

/* With s->lock held. */
static struct p9_fid *lookup(struct p9_server *s, uint32_t id)
{
	struct p9_fid *f;

	for (f = *bucket(s, id); f; f = f->next)
		if (f->id == id)
			return f;
	return NULL;
}

struct p9_fid *p9_fid_get(struct p9_server *s, uint32_t id, char *path)
{
	struct p9_fid *f;

	pthread_mutex_lock(&s->lock);
	f = lookup(s, id);
	if (f) {
		f->refs++;
		if (path)
			strcpy(path, f->path);
	}
	pthread_mutex_unlock(&s->lock);
	return f;
}

/* With s->lock held: f's last reference went. */
static void fid_free(struct p9_server *s, struct p9_fid *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		s->nr_open--;
	}
	pthread_mutex_destroy(&f->dir_lock);
	free(f->path);
	free(f);
}

void p9_fid_put(struct p9_server *s, struct p9_fid *f)
{
	pthread_mutex_lock(&s->lock);
	if (!--f->refs)
		fid_free(s, f);
	pthread_mutex_unlock(&s->lock);
}

int p9_fid_add(struct p9_server *s, uint32_t id, const char *path,
	       bool replace)
{
	struct p9_fid *f;
	char *copy;
	int err = 0;

	if (id == P9_NOFID)
		return -EBADF;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	f = lookup(s, id);
	if (f && (!replace || f->fd >= 0)) {
		err = -EBADF;
	} else if (f) {
		free(f->path);
		f->path = copy;
		copy = NULL;
	} else if (s->nr_fids >= P9_MAX_FIDS) {
		err = -EMFILE;
	} else if (!(f = calloc(1, sizeof(*f)))) {
		err = -ENOMEM;
	} else {
		f->id = id;
		f->refs = 1;
		f->path = copy;
		f->fd = -1;
		pthread_mutex_init(&f->dir_lock, NULL);
		f->next = *bucket(s, id);
		*bucket(s, id) = f;
		s->nr_fids++;
		copy = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(copy);
	return err;
}

/* With s->lock held. */
static void unlink_fid(struct p9_server *s, struct p9_fid **pp)
{
	struct p9_fid *f = *pp;

	*pp = f->next;
	s->nr_fids--;
	if (!--f->refs)
		fid_free(s, f);
}

int p9_fid_remove(struct p9_server *s, uint32_t id)
{
	struct p9_fid **pp;
	int err = -EBADF;

	pthread_mutex_lock(&s->lock);
	for (pp = bucket(s, id); *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			unlink_fid(s, pp);
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

void p9_fids_clear(struct p9_server *s)
{
	unsigned b;

	pthread_mutex_lock(&s->lock);
	for (b = 0; b < P9_FID_BUCKETS; b++)
		while (s->fids[b])
			unlink_fid(s, &s->fids[b]);
	pthread_mutex_unlock(&s->lock);
}

int p9_fid_set_open(struct p9_server *s, struct p9_fid *f, const char *path,
		    int fd, int access)
{
	char *copy = path ? strdup(path) : NULL;
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (path && !copy) {
		err = -ENOMEM;
	} else if (f->fd >= 0) {
		err = -EBADF;
	} else if (s->nr_open >= P9_MAX_OPEN) {
		err = -EMFILE;
	} else {
		if (copy) {
			free(f->path);
			f->path = copy;
			copy = NULL;
		}
		f->fd = fd;
		f->access = access;
		s->nr_open++;
	}
	pthread_mutex_unlock(&s->lock);
	free(copy);
	if (err)
		close(fd);
	return err;
}

int p9_fid_fd(struct p9_server *s, struct p9_fid *f, int *access)
{
	int fd;

	pthread_mutex_lock(&s->lock);
	fd = f->fd;
	if (access)
		*access = f->access;
	pthread_mutex_unlock(&s->lock);
	return fd;
}

/* from's new name is to: path, at or below from, follows into out. */
static char *renamed(const char *path, const char *from, const char *to)
{
	size_t flen = strlen(from), tlen = strlen(to);
	char *out;

	if (strncmp(path, from, flen) || (path[flen] && path[flen] != '/'))
		return NULL;
	if (tlen + strlen(path + flen) >= PATH_MAX)
		return NULL;
	out = malloc(tlen + strlen(path + flen) + 1);
	if (out) {
		memcpy(out, to, tlen);
		strcpy(out + tlen, path + flen);
	}
	return out;
}

void p9_fids_renamed(struct p9_server *s, const char *from, const char *to)
{
	struct p9_fid *f;
	unsigned b;

	pthread_mutex_lock(&s->lock);
	for (b = 0; b < P9_FID_BUCKETS; b++) {
		for (f = s->fids[b]; f; f = f->next) {
			char *path = renamed(f->path, from, to);

			if (path) {
				free(f->path);
				f->path = path;
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
}

int p9_open(struct p9_server *s, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = flags | O_NOFOLLOW | O_CLOEXEC,
		.mode = mode,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	unsigned tries = 0;
	long fd;

	/* EAGAIN: a rename raced the lookup (which a guest can make happen
	 * as often as it likes, so a few tries only). */
	do
		fd = syscall(SYS_openat2, s->root_fd, path[0] ? path : ".",
			     &how, sizeof(how));
	while (fd < 0 && (errno == EINTR || errno == EAGAIN) && ++tries < 8);
	return fd < 0 ? -errno : (int)fd;
}

int p9_open_parent(struct p9_server *s, const char *path, const char **base)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!path[0])
		return -EINVAL;
	if (!slash) {
		*base = path;
		return p9_open(s, "", O_PATH | O_DIRECTORY, 0);
	}
	memcpy(dir, path, slash - path);
	dir[slash - path] = 0;
	*base = slash + 1;
	return p9_open(s, dir, O_PATH | O_DIRECTORY, 0);
}

int p9_fid_path(struct p9_server *s, uint32_t id, char *path)
{
	struct p9_fid *f = p9_fid_get(s, id, path);

	if (!f)
		return -EBADF;
	p9_fid_put(s, f);
	return 0;
}

int p9_open_entry(struct p9_server *s, uint32_t dfid, const char *name,
		  char *path)
{
	char dir[PATH_MAX];
	int err = p9_fid_path(s, dfid, dir);

	if (!err)
		err = p9_path_join(path, dir, name);
	return err ?: p9_open(s, dir, O_PATH | O_DIRECTORY, 0);
}

int p9_path_join(char *out, const char *dir, const char *name)
{
	int n;

	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	n = snprintf(out, PATH_MAX, "%s%s%s", dir, dir[0] ? "/" : "", name);
	return n < PATH_MAX ? 0 : -ENAMETOOLONG;
}

void p9_qid_of(const struct p9_server *s, const struct stat *st,
	       struct p9_qid *q)
{
	q->type = S_ISDIR(st->st_mode) ? P9_QTDIR :
		  S_ISLNK(st->st_mode) ? P9_QTSYMLINK : P9_QTFILE;
	/* As QEMU does: a change of time or size is a new version. Shifted
	 * unsigned: a guest can make a file as large as the file system
	 * allows (2^63 on tmpfs and XFS), past what an off_t holds << 8. */
	q->version = st->st_mtime ^ ((uint64_t)st->st_size << 8);
	/* Inode numbers repeat across file systems: one mounted inside the
	 * share gets its device number mixed into the high bits. */
	q->path = st->st_ino;
	if (st->st_dev != s->root_dev)
		q->path ^= (uint64_t)st->st_dev * 0x9e3779b97f4a7c15ULL &
			   ~0ULL << 40;
}

int p9_stat_fd(const struct p9_server *s, int fd, struct stat *st,
	       struct p9_qid *q)
{
	if (fstat(fd, st) < 0)
		return -errno;
	if (q)
		p9_qid_of(s, st, q);
	return 0;
}
