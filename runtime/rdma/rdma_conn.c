/* RDMA engine: connections over rdma_cm (outbound per peer, inbound from
 * peers writing into our memory) and their teardown. */
#include <arpa/inet.h>
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
	if (conn->drain_timer)
		event_free(conn->drain_timer);
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

/* See copy_engine_rdma.h. The QP goes before the callbacks run, so the
 * NIC no longer reads the sources when they tell their owners they may
 * reuse them. */
void rdma_conn_finish(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;

	if (conn->id && conn->id->qp)
		e->ops->destroy_qp(e->octx, conn->id);
	fail_list(&conn->inflight, conn->fail_status, conn->fail_why);
	fail_list(&conn->queue, conn->fail_status, conn->fail_why);
	conn_free(conn);
}

/* See copy_engine_rdma.h. WRs of a copy complete in order and its last is
 * signalled, so an empty ring leaves only the posted part of the queue
 * head, whose WRs (unsignalled) can only be flushed. */
bool rdma_conn_quiet(const struct rdma_conn *conn)
{
	const struct rdma_copy *head = TAILQ_FIRST(&conn->queue);

	return conn->flushed ||
	       (conn->ring_count == 0 && (!head || head->posted == 0));
}

static void drain_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	rdma_conn_finish(arg);
}

/* Waits (bounded) for the completions of what conn posted. 0, or -1 when
 * it cannot wait. */
static int conn_wait_drain(struct rdma_conn *conn)
{
	struct rdma_engine *e = conn->e;
	struct timeval tv = net_timeval_ms(RDMA_DRAIN_MS);

	if (e->destroyed || !conn->cq || !conn->cq->channel)
		return -1;
	conn->drain_timer = evtimer_new(e->base.base, drain_timeout_cb, conn);
	if (!conn->drain_timer || evtimer_add(conn->drain_timer, &tv))
		return -1;
	return 0;
}

/* See copy_engine_rdma.h. */
void rdma_conn_fail(struct rdma_conn *conn, int status, bool quiet,
		    const char *fmt, ...)
{
	struct rdma_engine *e = conn->e;
	va_list ap;

	if (conn->closing) {
		if (e->destroyed)
			rdma_conn_finish(conn);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(conn->fail_why, sizeof(conn->fail_why), fmt, ap);
	va_end(ap);
	if (!quiet)
		rdma_log(e, "%s", conn->fail_why);
	conn->closing = true;
	conn->fail_status = status;
	if (conn->id && conn->id->qp) {
		if (conn->state == RDMA_CONN_CONNECTED)
			e->ops->disconnect(e->octx, conn->id);
		rdma_conn_drain_closing(conn);
		if (!rdma_conn_quiet(conn) && conn_wait_drain(conn) == 0)
			return;
	}
	rdma_conn_finish(conn);
}

/* host as an IPv4 or IPv6 literal, without the resolver (which blocks). */
static int numeric_addr(const char *host, uint16_t port,
			struct sockaddr_storage *ss, socklen_t *sslen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*sslen = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*sslen = sizeof(*sin6);
		return 0;
	}
	return -1;
}

static struct rdma_conn *conn_open(struct rdma_engine *e, const char *host,
				   uint16_t port, int *rc)
{
	struct sockaddr_storage ss;
	struct rdma_conn *conn;
	socklen_t sslen;

	if (numeric_addr(host, port, &ss, &sslen)) {
		rdma_log(
		    e,
		    "rdma: peer %s is not a numeric address (workers advertise numeric rdma endpoints; names would block the loop)",
		    host);
		*rc = -EINVAL;
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
		if (!conn->inbound && !conn->closing && conn->port == port &&
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

/* The connect request's private data: who the source is. */
#define HELLO_LEN 8

static void hello_pack(const struct rdma_engine *e, uint8_t out[HELLO_LEN])
{
	memcpy(out, "MCRP", 4);
	out[4] = 1; /* version */
	out[5] = 0;
	out[6] = (uint8_t)(e->rdma_port >> 8);
	out[7] = (uint8_t)e->rdma_port;
}

/* The source's rdma_cm port, or 0 when it did not say. */
static uint16_t hello_port(const struct rdma_cm_event *ev)
{
	const uint8_t *p = ev->param.conn.private_data;

	if (!p || ev->param.conn.private_data_len < HELLO_LEN ||
	    memcmp(p, "MCRP", 4) || p[4] != 1)
		return 0;
	return (uint16_t)(p[6] << 8 | p[7]);
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
	uint8_t hello[HELLO_LEN];

	if (conn_make_qp(conn, e->comp_ch, e->cq_depth, e->max_wr)) {
		rdma_conn_fail(conn, -EIO, false, "rdma: queue pair for %s: %s",
			       conn->peer, strerror(errno));
		return;
	}
	conn_param_init(&param);
	hello_pack(e, hello);
	param.private_data = hello;
	param.private_data_len = HELLO_LEN;
	if (e->ops->connect(e->octx, conn->id, &param)) {
		rdma_conn_fail(conn, -EIO, false,
			       "rdma: rdma_connect to %s: %s", conn->peer,
			       strerror(errno));
		return;
	}
	conn->state = RDMA_CONN_CONNECTING;
}

static void peer_ip(struct rdma_cm_id *id, char *out, size_t outlen)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	const void *a =
	    sa->sa_family == AF_INET6
		? (const void *)&((struct sockaddr_in6 *)sa)->sin6_addr
		: (const void *)&((struct sockaddr_in *)sa)->sin_addr;

	if (!inet_ntop(sa->sa_family, a, out, (socklen_t)outlen))
		out[0] = '\0';
}

static void peer_name(struct rdma_cm_id *id, char *out, size_t outlen)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						  : sizeof(struct sockaddr_in);

	net_format_addr(sa, len, out, outlen);
}

/* An older inbound connection from the same source (address and rdma_cm
 * port) is stale: the source crashed or dropped it, and said nothing. */
static void inbound_replace(struct rdma_engine *e, const struct rdma_conn *new)
{
	struct rdma_conn *conn, *next;

	if (!new->src_port)
		return;
	for (conn = TAILQ_FIRST(&e->conns); conn; conn = next) {
		next = TAILQ_NEXT(conn, link);
		if (conn == new || !conn->inbound || conn->closing ||
		    conn->src_port != new->src_port ||
		    strcmp(conn->src_ip, new->src_ip))
			continue;
		rdma_conn_fail(
		    conn, -EIO, false,
		    "rdma: inbound connection from %s replaced by %s (its source reconnected, so it had crashed or dropped it)",
		    conn->peer, new->peer);
	}
}

static void inbound_accept(struct rdma_engine *e,
			   const struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
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
	peer_ip(id, conn->src_ip, sizeof(conn->src_ip));
	conn->src_port = hello_port(ev);
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
	inbound_replace(e, conn);
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
		inbound_accept(e, ev);
		return;
	}
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		rdma_device_dead(e, "removed (RDMA_CM_EVENT_DEVICE_REMOVAL)");
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

/* Each event is acked as soon as it is read (a copy is kept, with its
 * private data), so that tearing a connection down never waits on its
 * rdma_destroy_id. */
static void cm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdma_engine *e = arg;
	struct rdma_cm_event *ev, copy;
	uint8_t pdata[HELLO_LEN];

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
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    ev->param.conn.private_data &&
		    ev->param.conn.private_data_len >= HELLO_LEN) {
			memcpy(pdata, ev->param.conn.private_data, HELLO_LEN);
			copy.param.conn.private_data = pdata;
		} else {
			copy.param.conn.private_data = NULL;
			copy.param.conn.private_data_len = 0;
		}
		e->ops->ack_cm_event(e->octx, ev);
		cm_dispatch(e, &copy);
	}
}
