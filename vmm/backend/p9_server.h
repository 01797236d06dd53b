/* A 9P2000.L file server over one host directory (a share), the protocol
 * Linux's v9fs speaks over virtio (trans=virtio). The transport hands it
 * one request at a time per call, as the buffers the guest gave: it
 * copies the message (not a Twrite's data) out of them before reading a
 * field, writes the reply into the reply buffers, and moves read and
 * write data straight between the guest's buffers and the host file.
 *
 * Every guest-given name is looked up below the share's directory,
 * never through a symbolic link nor above the share (a path is resolved
 * with openat2's RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS, and `..` is
 * taken lexically, stopping at the share's root); a read-only share
 * refuses every change. Files are made as the user running thpvm and the
 * guest sees the host's owners and modes (QEMU's security_model=none).
 *
 * Calls may come from several threads at once: the server keeps its fid
 * table consistent itself. A Tflush is the transport's to answer (it
 * knows which requests are still queued); the server answers one at once.
 */
#ifndef THPVM_BACKEND_P9_SERVER_H
#define THPVM_BACKEND_P9_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backend/p9_wire.h"

/* The largest message, header included: Linux's virtio transport sends
 * up to about 512 KiB. */
#define P9_MAX_MSIZE (512 * 1024)
/* Fids a guest may hold at once, and files among them open. */
#define P9_MAX_FIDS 16384
#define P9_MAX_OPEN 1024
/* Buffers a request's data may span (a virtqueue chain's most). */
#define P9_MAX_BUFFERS 256

struct p9_server;

struct p9_server_stats {
	uint64_t requests;	/* messages answered */
	uint64_t errors;	/* of which with Rlerror */
	unsigned fids;		/* held now */
	unsigned open;		/* of which open */
};

/* Opens dir (a directory the user named) as a share; name is for
 * messages ("virtio-9p0"). Reports its own errors: 0 or -errno. */
int p9_server_create(struct p9_server **sp, const char *name,
		     const char *dir, bool read_only);
void p9_server_destroy(struct p9_server *s);
/* The driver went away (device reset): every fid is clunked and the
 * next message must be a Tversion. No call may be running. */
void p9_server_reset(struct p9_server *s);
/* Answers one request: req (nr_req buffers, what the guest wrote) holds
 * the T-message, the R-message goes into resp (nr_resp buffers). Returns
 * the bytes of the reply, or -EPROTO when the request has no header or
 * the reply buffers cannot hold even an Rlerror (the transport's error:
 * the guest broke the protocol). */
int64_t p9_server_handle(struct p9_server *s, const struct iovec *req,
			 unsigned nr_req, const struct iovec *resp,
			 unsigned nr_resp);
void p9_server_stats(struct p9_server *s, struct p9_server_stats *st);

#endif
