/* Data-plane client and connection pool (see data_client.h). */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "data_client.h"
#include "data_proto.h"
#include "netutil.h"

#define EP_MAX 256

struct data_conn {
	char ep[EP_MAX];
	int fd;	       /* -1: a free slot */
	uint64_t used; /* pool tick of the last use (LRU) */
};

struct data_pool {
	size_t cap;
	uint64_t tick;
	struct data_pool_stats st;
	struct data_conn conns[];
};

/* One request: what to send and where the READ payload goes. */
struct data_call {
	const char *ep;
	struct data_req req;
	const void *head; /* WRITE: head_len bytes sent before payload */
	uint64_t head_len;
	const void *payload; /* WRITE: the rest of req.length */
	void *buf;	     /* READ: the rest of req.length */
	void *head_buf;	     /* READ: head_len bytes received first */
};

struct data_pool *data_pool_create(size_t max_conns)
{
	size_t cap = max_conns ? max_conns : DATA_POOL_DEFAULT_CONNS;
	struct data_pool *p =
	    calloc(1, sizeof(*p) + cap * sizeof(struct data_conn));

	if (!p)
		return NULL;
	p->cap = cap;
	for (size_t i = 0; i < cap; i++)
		p->conns[i].fd = -1;
	return p;
}

static void conn_close(struct data_pool *p, struct data_conn *c)
{
	if (c->fd < 0)
		return;
	close(c->fd);
	c->fd = -1;
	c->ep[0] = '\0';
	p->st.open--;
}

void data_pool_destroy(struct data_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++)
		conn_close(p, &p->conns[i]);
	free(p);
}

void data_pool_get_stats(const struct data_pool *p, struct data_pool_stats *out)
{
	if (p)
		*out = p->st;
	else
		memset(out, 0, sizeof(*out));
}

/* ---- blocking I/O ------------------------------------------------------- */

static int send_all(int fd, const uint8_t *p, uint64_t len, int64_t deadline)
{
	while (len > 0) {
		size_t chunk = len > (1u << 20) ? (1u << 20) : (size_t)len;
		ssize_t n = send(fd, p, chunk, MSG_NOSIGNAL);
		int st;

		if (n > 0) {
			p += n;
			len -= (uint64_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			return -errno;
		st = net_wait_fd(fd, POLLOUT, deadline);
		if (st)
			return st;
	}
	return 0;
}

static int recv_all(int fd, uint8_t *p, uint64_t len, int64_t deadline)
{
	while (len > 0) {
		size_t chunk = len > (1u << 20) ? (1u << 20) : (size_t)len;
		ssize_t n = recv(fd, p, chunk, 0);
		int st;

		if (n > 0) {
			p += n;
			len -= (uint64_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		st = net_wait_fd(fd, POLLIN, deadline);
		if (st)
			return st;
	}
	return 0;
}

/* Reads the reply header; on a refusal reads its reason into err and sets
 * *refused. */
static int take_resp(int fd, const char *ep, struct data_resp *r,
		     int64_t deadline, bool *refused, char *err, size_t errlen)
{
	uint8_t hdr[DATA_RESP_BYTES];
	char text[DATA_ERR_MAX + 1];
	int st = recv_all(fd, hdr, sizeof(hdr), deadline);

	if (st) {
		snprintf(err, errlen, "%s: no reply: %s", ep, strerror(-st));
		return st;
	}
	if (data_resp_decode(hdr, r) != 0 ||
	    (r->status != DATA_OK && r->length > DATA_ERR_MAX)) {
		snprintf(err, errlen, "%s: malformed reply", ep);
		return -EPROTO;
	}
	if (r->status == DATA_OK)
		return 0;
	*refused = true;
	st = recv_all(fd, (uint8_t *)text, r->length, deadline);
	text[st ? 0 : r->length] = '\0';
	snprintf(err, errlen, "%s refused: %s (%s)", ep, text,
		 data_status_str(r->status));
	return data_status_errno(r->status);
}

/* One request and its whole reply on an open connection. */
static int run_call(int fd, const struct data_call *k, int64_t deadline,
		    bool *refused, char *err, size_t errlen)
{
	const struct data_req *req = &k->req;
	uint8_t hdr[DATA_REQ_BYTES];
	struct data_resp resp;
	int st;

	data_req_encode(req, hdr);
	st = send_all(fd, hdr, sizeof(hdr), deadline);
	if (!st && k->head)
		st = send_all(fd, k->head, k->head_len, deadline);
	if (!st && k->payload)
		st = send_all(fd, k->payload, req->length - k->head_len,
			      deadline);
	if (st && st != -EPIPE && st != -ECONNRESET) {
		snprintf(err, errlen, "%s: send failed: %s", k->ep,
			 strerror(-st));
		return st;
	}
	/* A refusal may arrive (and the peer close) before all was sent. */
	st = take_resp(fd, k->ep, &resp, deadline, refused, err, errlen);
	if (st || req->op != DATA_OP_READ)
		return st;
	if (resp.length != req->length) {
		snprintf(err, errlen, "%s: read returned %llu bytes, not %llu",
			 k->ep, (unsigned long long)resp.length,
			 (unsigned long long)req->length);
		return -EPROTO;
	}
	st = k->head_buf ? recv_all(fd, k->head_buf, k->head_len, deadline) : 0;
	if (!st)
		st = recv_all(fd, k->buf, req->length - k->head_len, deadline);
	if (st)
		snprintf(err, errlen, "%s: read failed: %s", k->ep,
			 strerror(-st));
	return st;
}

static int data_connect(const char *ep, int timeout_ms, char *err,
			size_t errlen)
{
	char host[256];
	uint16_t port;
	int fd;

	if (!ep || strlen(ep) >= EP_MAX ||
	    net_split_hostport(ep, host, sizeof(host), &port)) {
		snprintf(err, errlen, "bad data endpoint '%s'", ep ? ep : "");
		return -EINVAL;
	}
	fd = net_connect(host, port, timeout_ms, err, errlen);
	return fd < 0 ? -ECONNREFUSED : fd;
}

/* ---- pool ----------------------------------------------------------------- */

/* An idle connection must have nothing to read: readable means the peer
 * closed it (or sent junk), so it cannot carry a request. */
static bool conn_alive(const struct data_conn *c)
{
	struct pollfd pfd = {.fd = c->fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 0;
}

static struct data_conn *pool_find(struct data_pool *p, const char *ep)
{
	for (size_t i = 0; i < p->cap; i++)
		if (p->conns[i].fd >= 0 && strcmp(p->conns[i].ep, ep) == 0)
			return &p->conns[i];
	return NULL;
}

/* A free slot, or the least recently used one emptied. */
static struct data_conn *pool_slot(struct data_pool *p)
{
	struct data_conn *lru = &p->conns[0];

	for (size_t i = 0; i < p->cap; i++) {
		if (p->conns[i].fd < 0)
			return &p->conns[i];
		if (p->conns[i].used < lru->used)
			lru = &p->conns[i];
	}
	conn_close(p, lru);
	p->st.evicted++;
	return lru;
}

/* The endpoint's connection: the cached one when alive (*reused), else a
 * new one. 0 or a negative errno (err). */
static int pool_get(struct data_pool *p, const char *ep, int timeout_ms,
		    struct data_conn **out, bool *reused, char *err,
		    size_t errlen)
{
	struct data_conn *c = pool_find(p, ep);
	int fd;

	if (c && conn_alive(c)) {
		*reused = true;
	} else {
		if (c)
			conn_close(p, c);
		fd = data_connect(ep, timeout_ms, err, errlen);
		if (fd < 0)
			return fd;
		c = pool_slot(p);
		c->fd = fd;
		snprintf(c->ep, sizeof(c->ep), "%s", ep);
		p->st.connects++;
		p->st.open++;
		*reused = false;
	}
	c->used = ++p->tick;
	*out = c;
	return 0;
}

int data_pool_take(struct data_pool *p, const char *ep, int timeout_ms,
		   bool fresh, int *fd, bool *reused, char *err, size_t errlen)
{
	struct data_conn *c = p && !fresh ? pool_find(p, ep) : NULL;

	*reused = c && conn_alive(c);
	if (*reused) {
		*fd = c->fd;
		c->fd = -1; /* the caller's now: out of the pool */
		c->ep[0] = '\0';
		p->st.open--;
		p->st.reuses++;
		return 0;
	}
	if (c)
		conn_close(p, c);
	*fd = data_connect(ep, timeout_ms, err, errlen);
	if (*fd < 0)
		return *fd;
	if (p)
		p->st.connects++;
	return 0;
}

void data_pool_give(struct data_pool *p, const char *ep, int fd)
{
	struct data_conn *c;

	if (!p || strlen(ep) >= EP_MAX || pool_find(p, ep)) {
		close(fd);
		return;
	}
	c = pool_slot(p);
	c->fd = fd;
	snprintf(c->ep, sizeof(c->ep), "%s", ep);
	c->used = ++p->tick;
	p->st.open++;
}

void data_pool_count_retry(struct data_pool *p)
{
	if (p)
		p->st.retries++;
}

static int oneshot(const struct data_call *k, int timeout_ms, char *err,
		   size_t errlen)
{
	int64_t deadline = net_now_ms() + timeout_ms;
	int fd = data_connect(k->ep, timeout_ms, err, errlen), st;
	bool refused = false;

	if (fd < 0)
		return fd;
	st = run_call(fd, k, deadline, &refused, err, errlen);
	close(fd);
	return st;
}

static int pooled(struct data_pool *p, const struct data_call *k,
		  int timeout_ms, char *err, size_t errlen)
{
	for (int attempt = 0;; attempt++) {
		int64_t deadline = net_now_ms() + timeout_ms;
		struct data_conn *c;
		bool reused, refused = false;
		int st =
		    pool_get(p, k->ep, timeout_ms, &c, &reused, err, errlen);

		if (st)
			return st;
		p->st.reuses += reused;
		st = run_call(c->fd, k, deadline, &refused, err, errlen);
		if (st == 0)
			return 0;
		conn_close(p, c);
		if (refused || !reused || st == -ETIMEDOUT || attempt > 0)
			return st;
		p->st.retries++;
	}
}

static int submit(struct data_pool *p, const struct data_call *k,
		  int timeout_ms, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	return p ? pooled(p, k, timeout_ms, err, errlen)
		 : oneshot(k, timeout_ms, err, errlen);
}

/* A READ or WRITE of head_len + len bytes at segment_id:offset. */
static int submit_parts(struct data_pool *pool, struct data_call *k,
			uint64_t segment_id, uint64_t offset, uint64_t len,
			int timeout_ms, char *err, size_t errlen)
{
	if (len > UINT64_MAX - k->head_len) {
		snprintf(err, errlen, "%s of %llu + %llu bytes overflows",
			 k->req.op == DATA_OP_READ ? "read" : "write",
			 (unsigned long long)k->head_len,
			 (unsigned long long)len);
		return -EINVAL;
	}
	k->req.segment_id = segment_id;
	k->req.offset = offset;
	k->req.length = k->head_len + len;
	return submit(pool, k, timeout_ms, err, errlen);
}

static struct data_grant grant_of(const struct data_grant *g)
{
	return g ? *g : (struct data_grant){0};
}

int data_read_parts(struct data_pool *pool, const char *endpoint,
		    uint64_t segment_id, uint64_t offset, void *head,
		    uint64_t head_len, void *buf, uint64_t len,
		    const struct data_grant *grant, int timeout_ms, char *err,
		    size_t errlen)
{
	struct data_call k = {
	    .ep = endpoint,
	    .req = {.op = DATA_OP_READ, .grant = grant_of(grant)},
	    .head_buf = head_len ? head : NULL,
	    .head_len = head_len,
	    .buf = buf,
	};

	return submit_parts(pool, &k, segment_id, offset, len, timeout_ms, err,
			    errlen);
}

int data_read(struct data_pool *pool, const char *endpoint, uint64_t segment_id,
	      uint64_t offset, void *buf, uint64_t len,
	      const struct data_grant *grant, int timeout_ms, char *err,
	      size_t errlen)
{
	return data_read_parts(pool, endpoint, segment_id, offset, NULL, 0, buf,
			       len, grant, timeout_ms, err, errlen);
}

int data_write_parts(struct data_pool *pool, const char *endpoint,
		     uint64_t segment_id, uint64_t offset, const void *head,
		     uint64_t head_len, const void *buf, uint64_t len,
		     const struct data_grant *grant, int timeout_ms, char *err,
		     size_t errlen)
{
	struct data_call k = {
	    .ep = endpoint,
	    .req = {.op = DATA_OP_WRITE, .grant = grant_of(grant)},
	    .head = head_len ? head : NULL,
	    .head_len = head_len,
	    .payload = buf,
	};

	return submit_parts(pool, &k, segment_id, offset, len, timeout_ms, err,
			    errlen);
}

int data_write(struct data_pool *pool, const char *endpoint,
	       uint64_t segment_id, uint64_t offset, const void *buf,
	       uint64_t len, const struct data_grant *grant, int timeout_ms,
	       char *err, size_t errlen)
{
	return data_write_parts(pool, endpoint, segment_id, offset, NULL, 0,
				buf, len, grant, timeout_ms, err, errlen);
}
