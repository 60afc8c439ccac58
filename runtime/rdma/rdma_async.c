/* RDMA engine: the device's asynchronous events (ibv_get_async_event on
 * the context's async_fd, watched by the loop) and device removal. A
 * queue pair or CQ error fails that connection at once, a port error or a
 * fatal device error fails them all; a dead device refuses new copies.
 * Without this, such failures surfaced only at the copy timeout. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "copy_engine_rdma.h"
#include "netutil.h"

static struct rdma_conn *conn_of_qp(struct rdma_engine *e,
				    const struct ibv_qp *qp)
{
	struct rdma_conn *conn;

	TAILQ_FOREACH(conn, &e->conns, link)
	if (conn->id && conn->id->qp == qp)
		return conn;
	return NULL;
}

static struct rdma_conn *conn_of_cq(struct rdma_engine *e,
				    const struct ibv_cq *cq)
{
	struct rdma_conn *conn;

	TAILQ_FOREACH(conn, &e->conns, link)
	if (conn->cq == cq)
		return conn;
	return NULL;
}

/* Fails every connection with why (logged once). */
static void rdma_fail_all(struct rdma_engine *e, const char *why)
{
	struct rdma_conn *conn, *next;

	rdma_log(e, "%s", why);
	for (conn = TAILQ_FIRST(&e->conns); conn; conn = next) {
		next = TAILQ_NEXT(conn, link);
		if (!conn->closing)
			rdma_conn_fail(conn, -EIO, true, "%s", why);
	}
}

/* See copy_engine_rdma.h. */
void rdma_device_dead(struct rdma_engine *e, const char *what)
{
	char why[RDMA_ERRLEN];

	snprintf(
	    why, sizeof(why),
	    "rdma: device %s: %s; copies fail until the worker restarts (or runs with --transport=tcp)",
	    e->dev_name, what);
	e->dead = true;
	rdma_fail_all(e, why);
}

static void on_conn_event(struct rdma_engine *e, struct rdma_conn *conn,
			  enum ibv_event_type type)
{
	if (!conn || conn->closing) {
		rdma_log(e, "rdma: %s (%s) on a released resource",
			 ibv_event_type_str(type), e->dev_name);
		return;
	}
	conn->flushed = true; /* a queue in error completes nothing more */
	rdma_conn_fail(conn, -EIO, false, "rdma: connection to %s: %s",
		       conn->peer, ibv_event_type_str(type));
}

static void async_dispatch(struct rdma_engine *e,
			   const struct ibv_async_event *ev)
{
	char why[RDMA_ERRLEN];

	switch (ev->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_PATH_MIG_ERR:
		on_conn_event(e, conn_of_qp(e, ev->element.qp), ev->event_type);
		break;
	case IBV_EVENT_CQ_ERR:
		on_conn_event(e, conn_of_cq(e, ev->element.cq), ev->event_type);
		break;
	case IBV_EVENT_PORT_ERR:
		if (ev->element.port_num != e->port_num)
			break;
		snprintf(why, sizeof(why), "rdma: port %d of %s went down: %s",
			 ev->element.port_num, e->dev_name,
			 ibv_event_type_str(ev->event_type));
		rdma_fail_all(e, why);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		rdma_device_dead(e, ibv_event_type_str(ev->event_type));
		break;
	default:
		rdma_log(e, "rdma: %s: %s", e->dev_name,
			 ibv_event_type_str(ev->event_type));
		break;
	}
}

/* Each event is acked as soon as it is copied: destroying a QP or CQ
 * waits for its events to be acked. */
static void async_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdma_engine *e = arg;
	struct ibv_async_event ev, copy;

	(void)fd;
	(void)what;
	for (;;) {
		if (e->ops->get_async_event(e->octx, e->ctx, &ev)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				rdma_log(e, "rdma: ibv_get_async_event: %s",
					 strerror(errno));
			return;
		}
		copy = ev;
		e->ops->ack_async_event(e->octx, &ev);
		async_dispatch(e, &copy);
	}
}

/* See copy_engine_rdma.h. */
int rdma_async_open(struct rdma_engine *e, char *err, size_t errlen)
{
	if (net_set_nonblock(e->ctx->async_fd, 1)) {
		snprintf(err, errlen, "rdma: async event fd of %s: %s",
			 e->dev_name, strerror(errno));
		return -1;
	}
	e->async_ev = event_new(e->base.base, e->ctx->async_fd,
				EV_READ | EV_PERSIST, async_cb, e);
	if (!e->async_ev || event_add(e->async_ev, NULL)) {
		snprintf(err, errlen, "rdma: cannot watch the async event fd");
		if (e->async_ev)
			event_free(e->async_ev);
		e->async_ev = NULL;
		return -1;
	}
	return 0;
}

void rdma_async_close(struct rdma_engine *e)
{
	if (e->async_ev)
		event_free(e->async_ev);
	e->async_ev = NULL;
}
