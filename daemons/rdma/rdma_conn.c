/* RDMA engine: connections over rdma_cm (outbound per peer, inbound from
 * peers writing into our memory) and their teardown. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "copy_engine_rdma.h"
#include "netutil.h"

#define RDMA_LISTEN_BACKLOG 64

static void cm_cb(evutil_socket_t fd, short what, void *arg);

static int listen_open(struct rdma_engine *e, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sslen;

	if (net_resolve(NULL, e->rdma_port, 1, &ss, &sslen, err, errlen))
		return -1;
	if (e->ops->create_id(e->octx, e->cm_ch, &e->listen_id, NULL)) {
		snprintf(err, errlen, "rdma: rdma_create_id: %s",
			 strerror(errno));
		return -1;
	}
	if (e->ops->bind_addr(e->octx, e->listen_id, (struct sockaddr *)&ss) ||
	    e->ops->listen(e->octx, e->listen_id, RDMA_LISTEN_BACKLOG)) {
		snprintf(err, errlen,
			 "rdma: cannot listen on rdma_cm port %u: %s",
			 (unsigned)e->rdma_port, strerror(errno));
		goto out_destroy_id;
	}
	return 0;

out_destroy_id:
	e->ops->destroy_id(e->octx, e->listen_id);
	e->listen_id = NULL;
	return -1;
}

/* See copy_engine_rdma.h: the CM event channel (non-blocking, watched by
 * the loop) and the listener. */
int rdma_cm_open(struct rdma_engine *e, char *err, size_t errlen)
{
	e->cm_ch = e->ops->create_event_channel(e->octx);
	if (!e->cm_ch) {
		snprintf(err, errlen, "rdma: rdma_create_event_channel: %s",
			 strerror(errno));
		return -1;
	}
	if (net_set_nonblock(e->cm_ch->fd, 1)) {
		snprintf(err, errlen, "rdma: CM event channel: %s",
			 strerror(errno));
		goto out_destroy_channel;
	}
	e->cm_ev = event_new(e->base.base, e->cm_ch->fd, EV_READ | EV_PERSIST,
			     cm_cb, e);
	if (!e->cm_ev || event_add(e->cm_ev, NULL)) {
		snprintf(err, errlen,
			 "rdma: cannot watch the CM event channel");
		goto out_free_event;
	}
	if (listen_open(e, err, errlen))
		goto out_free_event;
	return 0;

out_free_event:
	if (e->cm_ev)
		event_free(e->cm_ev);
	e->cm_ev = NULL;
out_destroy_channel:
	e->ops->destroy_event_channel(e->octx, e->cm_ch);
	e->cm_ch = NULL;
	return -1;
}

/* Connections must be gone first. */
void rdma_cm_close(struct rdma_engine *e)
{
	if (e->listen_id && e->ops->destroy_id(e->octx, e->listen_id))
		rdma_log(e, "rdma: rdma_destroy_id (listener): %s",
			 strerror(errno));
	if (e->cm_ev)
		event_free(e->cm_ev);
	if (e->cm_ch)
		e->ops->destroy_event_channel(e->octx, e->cm_ch);
	e->listen_id = NULL;
	e->cm_ev = NULL;
	e->cm_ch = NULL;
}

static struct rdma_conn *conn_new(struct rdma_engine *e, const char *host,
				  uint16_t port, bool inbound)
{
	struct rdma_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->ring = calloc(e->max_wr, sizeof(*conn->ring));
	if (!conn->ring) {
		free(conn);
		return NULL;
	}
	conn->e = e;
	conn->inbound = inbound;
	conn->port = port;
	snprintf(conn->host, sizeof(conn->host), "%s", host);
	snprintf(conn->peer, sizeof(conn->peer),
		 strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, (unsigned)port);
	TAILQ_INIT(&conn->queue);
	TAILQ_INIT(&conn->inflight);
	TAILQ_INSERT_TAIL(&e->conns, conn, link);
	return conn;
}

/* Destroys the CQ (its events acked first) and the id; the QP is gone. */
static void conn_free(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;
	int rc;

	if (conn->cq) {
		if (conn->cq_unacked)
			e->ops->ack_cq_events(e->octx, conn->cq,
					      conn->cq_unacked);
		rc = e->ops->destroy_cq(e->octx, conn->cq);
		if (rc)
			rdma_log(e, "rdma: ibv_destroy_cq (%s): %s", conn->peer,
				 strerror(rc));
	}
	if (conn->id && e->ops->destroy_id(e->octx, conn->id))
		rdma_log(e, "rdma: rdma_destroy_id (%s): %s", conn->peer,
			 strerror(errno));
	TAILQ_REMOVE(&e->conns, conn, link);
	free(conn->ring);
	free(conn);
}

static void fail_list(struct rdma_copy_list *list, int status, const char *why)
{
	struct rdma_copy *c;

	while ((c = TAILQ_FIRST(list))) {
		if (c->status)
			rdma_copy_finish(c, c->status, c->error);
		else
			rdma_copy_finish(c, status, why);
	}
}

/* See copy_engine_rdma.h. The QP goes first (after a last look at the CQ
 * for copies that did complete), so the NIC no longer reads the sources
 * when the callbacks tell their owners they may reuse them. */
void rdma_conn_fail(struct rdma_conn *conn, int status, bool quiet,
		    const char *fmt, ...)
{
	struct rdma_engine *e = conn->e;
	char why[RDMA_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!quiet)
		rdma_log(e, "%s", why);
	conn->closing = true;
	if (conn->id && conn->id->qp) {
		if (conn->state == RDMA_CONN_CONNECTED)
			e->ops->disconnect(e->octx, conn->id);
		rdma_conn_drain_closing(conn);
		e->ops->destroy_qp(e->octx, conn->id);
	}
	fail_list(&conn->inflight, status, why);
	fail_list(&conn->queue, status, why);
	conn_free(conn);
}

static struct rdma_conn *conn_open(struct rdma_engine *e, const char *host,
				   uint16_t port, int *rc)
{
	struct sockaddr_storage ss;
	struct rdma_conn *conn;
	socklen_t sslen;
	char err[RDMA_ERRLEN];

	if (net_resolve(host, port, 0, &ss, &sslen, err, sizeof(err))) {
		rdma_log(e, "rdma: %s", err);
		*rc = -EHOSTUNREACH;
		return NULL;
	}
	conn = conn_new(e, host, port, false);
	if (!conn) {
		*rc = -ENOMEM;
		return NULL;
	}
	if (e->ops->create_id(e->octx, e->cm_ch, &conn->id, conn))
		goto out_free;
	if (e->ops->resolve_addr(e->octx, conn->id, (struct sockaddr *)&ss,
				 RDMA_CM_TIMEOUT_MS))
		goto out_free;
	conn->state = RDMA_CONN_RESOLVING_ADDR;
	return conn;

out_free:
	*rc = errno ? -errno : -EIO;
	rdma_log(e, "rdma: connect to %s: %s", conn->peer, strerror(-*rc));
	conn_free(conn);
	return NULL;
}

/* See copy_engine_rdma.h: the live outbound connection to host:port, or a
 * new one being resolved; NULL with *rc a negative errno. */
struct rdma_conn *rdma_conn_get(struct rdma_engine *e, const char *host,
				uint16_t port, int *rc)
{
	struct rdma_conn *conn;

	TAILQ_FOREACH(conn, &e->conns, link)
	{
		if (!conn->inbound && conn->port == port &&
		    !strcmp(conn->host, host))
			return conn;
	}
	return conn_open(e, host, port, rc);
}

/* CQ (on ch, or without events when NULL), armed, then an RC QP. */
static int conn_make_qp(struct rdma_conn *conn, struct ibv_comp_channel *ch,
			int cqe, uint32_t max_send_wr)
{
	struct rdma_engine *e = conn->e;
	struct ibv_qp_init_attr attr;
	int rc;

	conn->cq = e->ops->create_cq(e->octx, e->ctx, cqe, conn, ch);
	if (!conn->cq)
		return -1;
	if (ch) {
		rc = e->ops->req_notify_cq(e->octx, conn->cq);
		if (rc)
			return errno = rc, -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = max_send_wr;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_all = 0;
	return e->ops->create_qp(e->octx, conn->id, e->pd, &attr);
}

static void conn_param_init(struct rdma_conn_param *param)
{
	/* Only RDMA WRITEs travel: no read/atomic resources either way. */
	memset(param, 0, sizeof(*param));
	param->retry_count = 7;
	param->rnr_retry_count = 7;
}

static const char *verbs_name(const struct ibv_context *ctx)
{
	return ctx ? ibv_get_device_name(ctx->device) : "none";
}

static void on_addr_resolved(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;

	if (conn->id->verbs != e->ctx) {
		rdma_conn_fail(
		    conn, -EIO, false,
		    "rdma: route to %s goes through device %s, not %s",
		    conn->peer, verbs_name(conn->id->verbs), e->dev_name);
		return;
	}
	if (e->ops->resolve_route(e->octx, conn->id, RDMA_CM_TIMEOUT_MS)) {
		rdma_conn_fail(conn, -EIO, false,
			       "rdma: resolve route to %s: %s", conn->peer,
			       strerror(errno));
		return;
	}
	conn->state = RDMA_CONN_RESOLVING_ROUTE;
}

static void on_route_resolved(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;
	struct rdma_conn_param param;

	if (conn_make_qp(conn, e->comp_ch, e->cq_depth, e->max_wr)) {
		rdma_conn_fail(conn, -EIO, false, "rdma: queue pair for %s: %s",
			       conn->peer, strerror(errno));
		return;
	}
	conn_param_init(&param);
	if (e->ops->connect(e->octx, conn->id, &param)) {
		rdma_conn_fail(conn, -EIO, false,
			       "rdma: rdma_connect to %s: %s", conn->peer,
			       strerror(errno));
		return;
	}
	conn->state = RDMA_CONN_CONNECTING;
}

static void peer_name(struct rdma_cm_id *id, char *out, size_t outlen)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						  : sizeof(struct sockaddr_in);

	net_format_addr(sa, len, out, outlen);
}

static void inbound_accept(struct rdma_engine *e, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct rdma_conn *conn;
	char peer[NET_ADDRSTRLEN];

	peer_name(id, peer, sizeof(peer));
	if (id->verbs != e->ctx) {
		rdma_log(e,
			 "rdma: refused %s: it came through device %s, not %s",
			 peer, verbs_name(id->verbs), e->dev_name);
		goto out_reject;
	}
	conn = conn_new(e, peer, 0, true);
	if (!conn) {
		rdma_log(e, "rdma: refused %s: out of memory", peer);
		goto out_reject;
	}
	snprintf(conn->peer, sizeof(conn->peer), "%s", peer);
	conn->id = id;
	id->context = conn;
	conn_param_init(&param);
	if (conn_make_qp(conn, NULL, 2, 1) ||
	    e->ops->accept(e->octx, id, &param)) {
		int rc = errno;

		e->ops->reject(e->octx, id);
		rdma_conn_fail(conn, -EIO, false, "rdma: accepting %s: %s",
			       peer, strerror(rc));
		return;
	}
	conn->state = RDMA_CONN_ACCEPTING;
	return;

out_reject:
	e->ops->reject(e->octx, id);
	e->ops->destroy_id(e->octx, id);
}

static void on_established(struct rdma_conn *conn)
{
	conn->state = RDMA_CONN_CONNECTED;
	if (!conn->inbound)
		rdma_conn_pump(conn);
}

static void on_cm_error(struct rdma_conn *conn, const struct rdma_cm_event *ev)
{
	bool normal = ev->event == RDMA_CM_EVENT_DISCONNECTED;

	if (conn->inbound)
		rdma_conn_fail(
		    conn, -EIO, normal,
		    "rdma: inbound connection from %s: %s (status %d)",
		    conn->peer, rdma_event_str(ev->event), ev->status);
	else
		rdma_conn_fail(
		    conn, -EIO, false, "rdma: connection to %s: %s (status %d)",
		    conn->peer, rdma_event_str(ev->event), ev->status);
}

static void cm_dispatch(struct rdma_engine *e, const struct rdma_cm_event *ev)
{
	struct rdma_conn *conn = ev->id ? ev->id->context : NULL;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		inbound_accept(e, ev->id);
		return;
	}
	if (!conn) {
		rdma_log(e, "rdma: listener: %s (status %d)",
			 rdma_event_str(ev->event), ev->status);
		return;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		on_addr_resolved(conn);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		on_route_resolved(conn);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		on_established(conn);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		on_cm_error(conn, ev);
		break;
	}
}

/* Each event is acked as soon as it is read (a copy is kept), so that
 * tearing a connection down never waits on its rdma_destroy_id. */
static void cm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdma_engine *e = arg;
	struct rdma_cm_event *ev, copy;

	(void)fd;
	(void)what;
	for (;;) {
		if (e->ops->get_cm_event(e->octx, e->cm_ch, &ev)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				rdma_log(e, "rdma: rdma_get_cm_event: %s",
					 strerror(errno));
			return;
		}
		copy = *ev;
		e->ops->ack_cm_event(e->octx, ev);
		cm_dispatch(e, &copy);
	}
}
