/* The RDMA copy engine: create/destroy, post_write, the work-request pump
 * and completions. Behaviour is documented in copy_engine_rdma.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "copy_engine_rdma.h"
#include "netutil.h"

void rdma_log(const struct rdma_engine *e, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	e->ops->log(e->octx, line);
}

/* See copy_engine_rdma.h. */
int rdma_parse_endpoint(const char *endpoint, uint16_t default_port, char *host,
			size_t hostlen, uint16_t *port)
{
	const char *slash = strchr(endpoint, '/');
	size_t n = slash ? (size_t)(slash - endpoint) : strlen(endpoint);
	char hostport[RDMA_HOSTLEN + 16], *end;
	uint16_t data_port;
	long v;

	if (n >= sizeof(hostport))
		return -1;
	memcpy(hostport, endpoint, n);
	hostport[n] = '\0';
	if (net_split_hostport(hostport, host, hostlen, &data_port) || !*host)
		return -1;
	*port = default_port;
	if (slash) {
		if (slash[1] < '0' || slash[1] > '9')
			return -1;
		errno = 0;
		v = strtol(slash + 1, &end, 10);
		if (errno || *end || v < 1 || v > 65535)
			return -1;
		*port = (uint16_t)v;
	}
	return *port ? 0 : -1;
}

/* The rdma_cm host and port to dial for dst (copy_engine_rdma.h,
 * "Peers"); 0, or -1 when dst names none: the target's advertised rdma_cm
 * endpoint, else an explicit "/rdma_port" on its data endpoint. Never our
 * own port: a peer's listener is where its PD is. */
static int rdma_target_peer(const struct copy_target *dst, char *host,
			    size_t hostlen, uint16_t *port)
{
	if (!dst->rdma_endpoint || !dst->rdma_endpoint[0])
		return rdma_parse_endpoint(dst->endpoint, 0, host, hostlen,
					   port);
	if (net_split_hostport(dst->rdma_endpoint, host, hostlen, port) ||
	    !*host || !*port)
		return -1;
	return 0;
}

/* ---- copies ----------------------------------------------------------- */

static struct rdma_copy_list *copy_list(struct rdma_copy *c)
{
	if (!c->conn)
		return &c->e->done;
	return c->posted == c->len ? &c->conn->inflight : &c->conn->queue;
}

/* See copy_engine_rdma.h: off its list and onto the done list; the
 * callback runs from done_ev. */
void rdma_copy_finish(struct rdma_copy *c, int status, const char *error)
{
	struct rdma_engine *e = c->e;

	TAILQ_REMOVE(copy_list(c), c, link);
	if (c->timer)
		evtimer_del(c->timer);
	c->status = status;
	if (error != c->error)
		snprintf(c->error, sizeof(c->error), "%s", error ? error : "");
	c->conn = NULL;
	TAILQ_INSERT_TAIL(&e->done, c, link);
	event_active(e->done_ev, 0, 0);
}

static void copy_free(struct rdma_copy *c)
{
	if (c->timer)
		event_free(c->timer);
	free(c);
}

static void copy_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdma_copy *c = arg;
	struct rdma_conn *conn = c->conn;
	struct rdma_engine *e = c->e;

	(void)fd;
	(void)what;
	c->status = -ETIMEDOUT;
	snprintf(c->error, sizeof(c->error),
		 "rdma: copy of %llu bytes to %s timed out after %u ms",
		 (unsigned long long)c->len, conn->peer,
		 (unsigned)e->timeout_ms);
	if (c->posted == 0) {
		rdma_log(e, "%s", c->error);
		rdma_copy_finish(c, c->status, c->error);
		return;
	}
	/* Its WRs cannot be withdrawn: only destroying the QP stops them. */
	rdma_conn_fail(
	    conn, -EIO, false,
	    "rdma: connection to %s reset: a copy timed out after %u ms",
	    conn->peer, (unsigned)e->timeout_ms);
}

static struct rdma_copy *copy_new(struct rdma_engine *e, const void *src,
				  uint64_t len, const struct copy_target *dst,
				  copy_done_cb cb, void *arg)
{
	struct rdma_copy *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (e->timeout_ms) {
		c->timer = evtimer_new(e->base.base, copy_timeout_cb, c);
		if (!c->timer) {
			free(c);
			return NULL;
		}
	}
	c->e = e;
	c->src = src;
	c->len = len;
	c->remote_addr = dst->remote_addr;
	c->rkey = dst->rkey;
	c->cb = cb;
	c->arg = arg;
	return c;
}

/* ---- work requests ---------------------------------------------------- */

static void ring_push(struct rdma_conn *conn, struct rdma_copy *c, bool last)
{
	uint32_t slot = (conn->ring_head + conn->ring_count) % conn->e->max_wr;

	conn->ring[slot] = (struct rdma_signal){
	    .seq = conn->posted_seq, .copy = c, .last = last};
	conn->ring_count++;
}

static int ring_pop(struct rdma_conn *conn, struct rdma_signal *out)
{
	if (!conn->ring_count)
		return -1;
	*out = conn->ring[conn->ring_head];
	conn->ring_head = (conn->ring_head + 1) % conn->e->max_wr;
	conn->ring_count--;
	return 0;
}

/* The next WR of c: at most max_msg bytes, never across a local MR. */
static void build_wr(struct rdma_conn *conn, struct rdma_copy *c,
		     struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct rdma_engine *e = conn->e;
	const char *p = c->src + c->posted;
	const struct rdma_mr_entry *m = rdma_mr_find(e, p);
	uint64_t n = c->len - c->posted;
	uint64_t in_mr = m->len - (size_t)(p - m->base);
	bool last;

	n = n < e->max_msg ? n : e->max_msg;
	n = n < in_mr ? n : in_mr;
	*sge = (struct ibv_sge){(uintptr_t)p, (uint32_t)n, m->mr->lkey};
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = (uintptr_t)c;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->wr.rdma.remote_addr = c->remote_addr + c->posted;
	wr->wr.rdma.rkey = c->rkey;
	c->posted += n;
	conn->posted_seq++;
	last = c->posted == c->len;
	if (last || conn->unsignalled + 1 >= e->signal_every) {
		wr->send_flags = IBV_SEND_SIGNALED;
		conn->unsignalled = 0;
		ring_push(conn, c, last);
	} else {
		conn->unsignalled++;
	}
}

/* See copy_engine_rdma.h: posts queued WRs while the QP has room, as one
 * chain. A copy moves to the in-flight list once its last WR is built. */
void rdma_conn_pump(struct rdma_conn *conn)
{
	struct ibv_send_wr wrs[RDMA_MAX_SEND_WR], *bad = NULL;
	struct ibv_sge sges[RDMA_MAX_SEND_WR];
	struct rdma_engine *e = conn->e;
	struct rdma_copy *c;
	uint32_t n = 0, room;
	int rc;

	if (conn->state != RDMA_CONN_CONNECTED || conn->closing)
		return;
	room = e->max_wr - (uint32_t)(conn->posted_seq - conn->done_seq);
	while (n < room && (c = TAILQ_FIRST(&conn->queue))) {
		build_wr(conn, c, &wrs[n], &sges[n]);
		if (n)
			wrs[n - 1].next = &wrs[n];
		n++;
		if (c->posted == c->len) {
			TAILQ_REMOVE(&conn->queue, c, link);
			TAILQ_INSERT_TAIL(&conn->inflight, c, link);
		}
	}
	if (!n)
		return;
	rc = e->ops->post_send(e->octx, conn->id->qp, wrs, &bad);
	if (rc)
		rdma_conn_fail(conn, -EIO, false,
			       "rdma: ibv_post_send to %s: %s", conn->peer,
			       strerror(rc));
}

/* ---- completions ------------------------------------------------------ */

/* 0, or -1 once conn is torn down. */
static int conn_on_wc(struct rdma_conn *conn, const struct ibv_wc *wc)
{
	struct rdma_signal s;

	if (wc->status != IBV_WC_SUCCESS)
		conn->flushed = true; /* the QP is in error: all else flushes */
	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		rdma_conn_fail(
		    conn, -EIO, false,
		    "rdma: connection to %s lost (work request flushed)",
		    conn->peer);
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		rdma_conn_fail(
		    conn, -EIO, false,
		    "rdma: write to %s failed: %s (wc status %d, vendor error 0x%x)",
		    conn->peer, ibv_wc_status_str(wc->status), (int)wc->status,
		    (unsigned)wc->vendor_err);
		return -1;
	}
	if (ring_pop(conn, &s) || (uintptr_t)s.copy != wc->wr_id) {
		conn->flushed = true;
		rdma_conn_fail(
		    conn, -EIO, false,
		    "rdma: unexpected completion from %s (wr_id 0x%llx)",
		    conn->peer, (unsigned long long)wc->wr_id);
		return -1;
	}
	conn->done_seq = s.seq;
	if (s.last)
		rdma_copy_finish(s.copy, 0, NULL);
	return 0;
}

/* 0, or -1 once conn is torn down. */
static int conn_drain(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;
	struct ibv_wc wc[RDMA_POLL_BATCH];
	int n, i;

	do {
		n = e->ops->poll_cq(e->octx, conn->cq, RDMA_POLL_BATCH, wc);
		if (n < 0) {
			conn->flushed = true;
			rdma_conn_fail(conn, -EIO, false,
				       "rdma: ibv_poll_cq for %s failed (%d)",
				       conn->peer, n);
			return -1;
		}
		for (i = 0; i < n; i++)
			if (conn_on_wc(conn, &wc[i]))
				return -1;
	} while (n == RDMA_POLL_BATCH);
	return 0;
}

/* See copy_engine_rdma.h: while tearing down, copies whose last WR did
 * complete still succeed; flushed WRs are expected and say nothing. */
void rdma_conn_drain_closing(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;
	struct ibv_wc wc[RDMA_POLL_BATCH];
	struct rdma_signal s;
	int n, i;

	do {
		n = e->ops->poll_cq(e->octx, conn->cq, RDMA_POLL_BATCH, wc);
		if (n < 0)
			conn->flushed = true;
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				conn->flushed = true;
				continue;
			}
			if (ring_pop(conn, &s))
				continue;
			conn->done_seq = s.seq;
			if (s.last && (uintptr_t)s.copy == wc[i].wr_id)
				rdma_copy_finish(s.copy, 0, NULL);
		}
	} while (n == RDMA_POLL_BATCH);
}

/* get event, ack (batched), re-arm, drain, refill the send queue. */
static void conn_on_cq_event(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;
	int rc;

	if (++conn->cq_unacked >= RDMA_CQ_ACK_BATCH) {
		e->ops->ack_cq_events(e->octx, conn->cq, conn->cq_unacked);
		conn->cq_unacked = 0;
	}
	rc = e->ops->req_notify_cq(e->octx, conn->cq);
	if (conn->closing) {
		rdma_conn_drain_closing(conn);
		if (rc || rdma_conn_quiet(conn))
			rdma_conn_finish(conn);
		return;
	}
	if (rc) {
		rdma_conn_fail(conn, -EIO, false,
			       "rdma: ibv_req_notify_cq for %s: %s", conn->peer,
			       strerror(rc));
		return;
	}
	if (conn_drain(conn) == 0)
		rdma_conn_pump(conn);
}

static void comp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdma_engine *e = arg;
	struct ibv_cq *cq;
	void *cq_context;

	(void)fd;
	(void)what;
	for (;;) {
		if (e->ops->get_cq_event(e->octx, e->comp_ch, &cq,
					 &cq_context)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				rdma_log(e, "rdma: ibv_get_cq_event: %s",
					 strerror(errno));
			return;
		}
		conn_on_cq_event(cq_context);
	}
}

/* ---- callbacks, create, destroy --------------------------------------- */

static void deliver_done(struct rdma_engine *e)
{
	struct rdma_copy *c;

	e->delivering = true;
	while ((c = TAILQ_FIRST(&e->done))) {
		TAILQ_REMOVE(&e->done, c, link);
		c->cb(c->status, c->status ? c->error : NULL, c->arg);
		copy_free(c);
	}
	e->delivering = false;
}

static void engine_free(struct rdma_engine *e);

static void done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdma_engine *e = arg;

	(void)fd;
	(void)what;
	deliver_done(e);
	if (e->destroyed)
		engine_free(e);
}

static int rdma_post_write(struct copy_engine *ce, const void *src,
			   uint64_t len, const struct copy_target *dst,
			   copy_done_cb cb, void *arg)
{
	struct rdma_engine *e = (struct rdma_engine *)ce;
	char host[RDMA_HOSTLEN];
	struct rdma_copy *c;
	uint16_t port;
	int rc = 0;

	if (!src || !len || !dst || !dst->endpoint || !cb || e->destroyed)
		return -EINVAL;
	if (e->dead)
		return -ENODEV;
	/* The grant bounds the write: a region has a
	 * length, and the write neither exceeds it nor wraps. */
	if (!dst->length || len > dst->length ||
	    dst->remote_addr > UINT64_MAX - len ||
	    !rdma_mr_covers(e, src, len) ||
	    rdma_target_peer(dst, host, sizeof(host), &port))
		return -EINVAL;
	c = copy_new(e, src, len, dst, cb, arg);
	if (!c)
		return -ENOMEM;
	c->conn = rdma_conn_get(e, host, port, &rc);
	if (!c->conn) {
		copy_free(c);
		return rc;
	}
	TAILQ_INSERT_TAIL(&c->conn->queue, c, link);
	if (c->timer) {
		struct timeval tv = net_timeval_ms(e->timeout_ms);

		evtimer_add(c->timer, &tv);
	}
	rdma_conn_pump(c->conn);
	return 0;
}

static int comp_open(struct rdma_engine *e, char *err, size_t errlen)
{
	e->comp_ch = e->ops->create_comp_channel(e->octx, e->ctx);
	if (!e->comp_ch) {
		snprintf(err, errlen, "rdma: ibv_create_comp_channel on %s: %s",
			 e->dev_name, strerror(errno));
		return -1;
	}
	if (net_set_nonblock(e->comp_ch->fd, 1)) {
		snprintf(err, errlen, "rdma: completion channel: %s",
			 strerror(errno));
		goto out_destroy_channel;
	}
	e->comp_ev = event_new(e->base.base, e->comp_ch->fd,
			       EV_READ | EV_PERSIST, comp_cb, e);
	if (!e->comp_ev || event_add(e->comp_ev, NULL)) {
		snprintf(err, errlen,
			 "rdma: cannot watch the completion channel");
		goto out_free_event;
	}
	return 0;

out_free_event:
	if (e->comp_ev)
		event_free(e->comp_ev);
	e->comp_ev = NULL;
out_destroy_channel:
	e->ops->destroy_comp_channel(e->octx, e->comp_ch);
	e->comp_ch = NULL;
	return -1;
}

static void comp_close(struct rdma_engine *e)
{
	int rc;

	if (e->comp_ev)
		event_free(e->comp_ev);
	rc = e->ops->destroy_comp_channel(e->octx, e->comp_ch);
	if (rc)
		rdma_log(e, "rdma: ibv_destroy_comp_channel: %s", strerror(rc));
	e->comp_ev = NULL;
	e->comp_ch = NULL;
}

/* Reverse of creation; connections (QP, CQ, id) are already gone. */
static void engine_free(struct rdma_engine *e)
{
	rdma_mr_release_all(e);
	event_free(e->done_ev);
	rdma_cm_close(e);
	rdma_async_close(e);
	comp_close(e);
	rdma_dev_close(e);
	free(e);
}

static void rdma_destroy(struct copy_engine *ce)
{
	struct rdma_engine *e = (struct rdma_engine *)ce;
	struct rdma_conn *conn;

	if (e->destroyed)
		return;
	e->destroyed = true;
	while ((conn = TAILQ_FIRST(&e->conns)))
		rdma_conn_fail(conn, -ECANCELED, true,
			       "rdma: copy engine destroyed");
	if (e->delivering)
		return; /* inside a callback: done_cb finishes and frees */
	deliver_done(e);
	engine_free(e);
}

static const struct copy_engine_ops rdma_engine_ops = {
    .name = "rdma",
    .register_memory = rdma_register_memory,
    .unregister_memory = rdma_unregister_memory,
    .post_write = rdma_post_write,
    .destroy = rdma_destroy,
};

/* See copy_engine_rdma.h. Device, PD and caps; completion channel; CM
 * event channel and listener; the event that runs callbacks. */
struct copy_engine *copy_engine_rdma_create_with(
    struct event_base *base, const struct copy_engine_config *cfg,
    const struct rdma_verbs_ops *ops, void *ops_ctx, char *err, size_t errlen)
{
	struct rdma_engine *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "rdma: out of memory");
		return NULL;
	}
	e->base.ops = &rdma_engine_ops;
	e->base.base = base;
	e->ops = ops;
	e->octx = ops_ctx;
	e->timeout_ms = cfg->timeout_ms;
	e->rdma_port = cfg->rdma_port ? cfg->rdma_port : RDMA_DEFAULT_PORT;
	e->base.listen_port = e->rdma_port;
	TAILQ_INIT(&e->conns);
	TAILQ_INIT(&e->done);
	if (rdma_dev_open(e, cfg->rdma_device, err, errlen))
		goto out_free;
	if (comp_open(e, err, errlen))
		goto out_dev_close;
	if (rdma_async_open(e, err, errlen))
		goto out_comp_close;
	if (rdma_cm_open(e, err, errlen))
		goto out_async_close;
	e->done_ev = event_new(base, -1, 0, done_cb, e);
	if (!e->done_ev) {
		snprintf(err, errlen, "rdma: out of memory");
		goto out_cm_close;
	}
	rdma_log(
	    e,
	    "rdma: device %s port %u: max_mr_size %llu, max message %u, %u WRs per QP, rdma_cm port %u",
	    e->dev_name, (unsigned)e->port_num,
	    (unsigned long long)e->max_mr_size, (unsigned)e->max_msg,
	    (unsigned)e->max_wr, (unsigned)e->rdma_port);
	return &e->base;

out_cm_close:
	rdma_cm_close(e);
out_async_close:
	rdma_async_close(e);
out_comp_close:
	comp_close(e);
out_dev_close:
	rdma_dev_close(e);
out_free:
	free(e);
	return NULL;
}
