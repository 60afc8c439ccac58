/* The fake fabric between processes: rdma_cm over unix sockets, and the
 * QPs rdma_cm creates (see fabric_verbs.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "fabric.h"

static void cm_sock_cb(evutil_socket_t fd, short what, void *arg);
static void id_drop(struct fv *f, struct fv_id *fid);

static struct rdma_event_channel *f_create_event_channel(void *ctx)
{
	struct fv *f = ctx;
	struct fv_cm *cm = calloc(1, sizeof(*cm));

	if (!cm || fv_make_pipe(&cm->ch.fd, &cm->wfd)) {
		free(cm);
		errno = ENOMEM;
		return NULL;
	}
	cm->next = f->cms;
	f->cms = cm;
	return &cm->ch;
}

static void f_destroy_event_channel(void *ctx, struct rdma_event_channel *ch)
{
	struct fv *f = ctx;
	struct fv_cm **pp, *cm = (struct fv_cm *)ch;

	for (pp = &f->cms; *pp && *pp != cm; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = cm->next;
	while (cm->n) {
		struct rdma_cm_event *ev = cm->q[--cm->n];

		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			id_drop(f, (struct fv_id *)ev->id);
		free(ev);
	}
	close(cm->ch.fd);
	close(cm->wfd);
	free(cm);
}

void fv_cm_push(struct fv_cm *cm, struct fv_id *fid, struct fv_id *listen,
		enum rdma_cm_event_type type, int status)
{
	struct rdma_cm_event *ev;

	if (cm->n == (int)(sizeof(cm->q) / sizeof(cm->q[0])) ||
	    !(ev = calloc(1, sizeof(*ev))))
		return;
	ev->id = fid ? &fid->id : NULL;
	ev->listen_id = listen ? &listen->id : NULL;
	ev->event = type;
	ev->status = status;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ev->param.conn.private_data = fid->pdata;
		ev->param.conn.private_data_len = fid->pdata_len;
	}
	cm->q[cm->n++] = ev;
	fv_poke(cm->wfd);
}

static void id_event(struct fv_id *fid, enum rdma_cm_event_type type,
		     int status)
{
	fv_cm_push(fid->cm, fid, NULL, type, status);
}

static struct fv_id *id_alloc(struct fv *f, struct rdma_event_channel *ch,
			      void *context)
{
	struct fv_id *fid = calloc(1, sizeof(*fid));

	if (!fid)
		return NULL;
	fid->cm = (struct fv_cm *)ch;
	fid->sock = -1;
	fid->id.channel = ch;
	fid->id.context = context;
	fid->id.ps = RDMA_PS_TCP;
	fid->id.qp_type = IBV_QPT_RC;
	f->ids++;
	return fid;
}

static int f_create_id(void *ctx, struct rdma_event_channel *ch,
		       struct rdma_cm_id **id, void *context)
{
	struct fv_id *fid = id_alloc(ctx, ch, context);

	if (!fid) {
		errno = ENOMEM;
		return -1;
	}
	*id = &fid->id;
	return 0;
}

static void id_close_sock(struct fv_id *fid)
{
	if (fid->sock_ev)
		event_free(fid->sock_ev);
	if (fid->sock >= 0)
		close(fid->sock);
	fid->sock_ev = NULL;
	fid->sock = -1;
}

static void pend_remove(struct fv *f, struct fv_id *fid)
{
	struct fv_id **pp;

	for (pp = &f->pend; *pp && *pp != fid; pp = &(*pp)->next_pending)
		;
	if (*pp)
		*pp = fid->next_pending;
	fid->pending = NULL;
}

/* An inbound id the engine never saw (its request had not come, or was
 * still queued when the channel went). */
static void id_drop(struct fv *f, struct fv_id *fid)
{
	pend_remove(f, fid);
	id_close_sock(fid);
	free(fid);
	f->ids--;
	fv_state_dump(f);
}

static void cm_path(const struct fv *f, uint16_t port, struct sockaddr_un *un)
{
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	snprintf(un->sun_path, sizeof(un->sun_path), "%.90s/cm-%u", f->dir,
		 (unsigned)port);
}

static int f_destroy_id(void *ctx, struct rdma_cm_id *id)
{
	struct fv *f = ctx;
	struct fv_id *fid = (struct fv_id *)id;
	struct fv_cm *cm;
	struct sockaddr_un un;

	if (id->qp) {
		fv_log(f, "rdma_destroy_id with its QP alive");
		errno = EBUSY;
		return -1;
	}
	if (fid->listener) {
		struct fv_id *p, *next;

		for (p = f->pend; p; p = next) {
			next = p->next_pending;
			if (p->pending == fid)
				id_drop(f, p);
		}
		cm_path(f,
			ntohs(((struct sockaddr_in *)&id->route.addr.src_addr)
				  ->sin_port),
			&un);
		unlink(un.sun_path);
	}
	id_close_sock(fid);
	/* events still queued for it are dropped, as rdma_destroy_id waits
	 * for them to be acked */
	for (cm = f->cms; cm; cm = cm->next) {
		int i, k = 0;

		for (i = 0; i < cm->n; i++) {
			if (cm->q[i]->id == id || cm->q[i]->listen_id == id)
				free(cm->q[i]);
			else
				cm->q[k++] = cm->q[i];
		}
		cm->n = k;
	}
	free(fid);
	f->ids--;
	fv_state_dump(f);
	return 0;
}

static int f_bind_addr(void *ctx, struct rdma_cm_id *id, struct sockaddr *sa)
{
	struct fv *f = ctx;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	memcpy(&id->route.addr.src_addr, sa,
	       sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
					: sizeof(struct sockaddr_in6));
	id->verbs = &f->ctx;
	return 0;
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6
			 ? ((const struct sockaddr_in6 *)sa)->sin6_port
			 : ((const struct sockaddr_in *)sa)->sin_port);
}

/* Binds s to un; a socket file left by a process that died (nobody
 * accepts on it) is taken over, as the kernel frees a dead process's
 * rdma_cm port; a live listener's gives EADDRINUSE. */
static int bind_listener(int s, const struct sockaddr_un *un)
{
	int probe;

	if (bind(s, (const struct sockaddr *)un, sizeof(*un)) == 0)
		return 0;
	if (errno != EADDRINUSE)
		return -1;
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -1;
	if (connect(probe, (const struct sockaddr *)un, sizeof(*un)) == 0 ||
	    errno != ECONNREFUSED) {
		close(probe);
		errno = EADDRINUSE;
		return -1;
	}
	close(probe);
	unlink(un->sun_path);
	return bind(s, (const struct sockaddr *)un, sizeof(*un));
}

static int f_listen(void *ctx, struct rdma_cm_id *id, int backlog)
{
	struct fv *f = ctx;
	struct fv_id *fid = (struct fv_id *)id;
	struct sockaddr_un un;
	int s;

	cm_path(f, sa_port(&id->route.addr.src_addr), &un);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (bind_listener(s, &un) || listen(s, backlog)) {
		int rc = errno;

		close(s);
		errno = rc;
		return -1;
	}
	fid->sock = s;
	fid->listener = true;
	/* the socket's owner in the loop's eyes is the listener id */
	fid->sock_ev =
	    event_new(f->base, s, EV_READ | EV_PERSIST, cm_sock_cb, fid);
	if (!fid->sock_ev || event_add(fid->sock_ev, NULL)) {
		id_close_sock(fid);
		unlink(un.sun_path);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static int f_resolve_addr(void *ctx, struct rdma_cm_id *id,
			  struct sockaddr *dst, int timeout_ms)
{
	struct fv *f = ctx;
	struct sockaddr_in *src =
	    (struct sockaddr_in *)&id->route.addr.src_addr;

	(void)timeout_ms;
	memcpy(&id->route.addr.dst_addr, dst,
	       dst->sa_family == AF_INET ? sizeof(struct sockaddr_in)
					 : sizeof(struct sockaddr_in6));
	memset(src, 0, sizeof(*src));
	src->sin_family = AF_INET;
	src->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	src->sin_port = htons(f->next_src_port++);
	id->verbs = &f->ctx;
	id_event((struct fv_id *)id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

static int f_resolve_route(void *ctx, struct rdma_cm_id *id, int timeout_ms)
{
	(void)ctx;
	(void)timeout_ms;
	id_event((struct fv_id *)id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

static int f_create_qp(void *ctx, struct rdma_cm_id *id, struct ibv_pd *pd,
		       struct ibv_qp_init_attr *attr)
{
	struct fv *f = ctx;
	struct fv_qp *qp;

	if (!attr->send_cq || attr->qp_type != IBV_QPT_RC ||
	    attr->cap.max_send_wr > FV_MAX_QP_WR) {
		errno = EINVAL;
		return -1;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return -1;
	}
	qp->qp.context = pd->context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.qp_num = ++f->next_key;
	qp->qp.qp_type = IBV_QPT_RC;
	qp->cq = (struct fv_cq *)attr->send_cq;
	qp->fid = (struct fv_id *)id;
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->next = f->qps;
	f->qps = qp;
	id->qp = &qp->qp;
	fv_state_dump(f);
	return 0;
}

/* WRs of a destroyed QP vanish (no completion), as on hardware. */
static void f_destroy_qp(void *ctx, struct rdma_cm_id *id)
{
	struct fv *f = ctx;
	struct fv_qp *qp = (struct fv_qp *)id->qp, **pp;
	struct fv_job **jp, *j;

	if (!qp)
		return;
	for (jp = &f->jobs; (j = *jp);) {
		if (j->qp == qp) {
			*jp = j->next;
			free(j);
		} else {
			jp = &j->next;
		}
	}
	for (f->jobs_tail = &f->jobs; *f->jobs_tail;
	     f->jobs_tail = &(*f->jobs_tail)->next)
		;
	for (pp = &f->qps; *pp && *pp != qp; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = qp->next;
	free(qp);
	id->qp = NULL;
	fv_state_dump(f);
}

static int sock_send(struct fv_id *fid, const struct fv_msg *m)
{
	return send(fid->sock, m, sizeof(*m), MSG_NOSIGNAL) ==
		       (ssize_t)sizeof(*m)
		   ? 0
		   : -1;
}

static void msg_init(struct fv *f, struct fv_msg *m, uint32_t type,
		     const struct rdma_cm_id *id)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->node = f->node;
	m->pd = id->qp ? id->qp->pd->handle : 0;
	m->qpn = id->qp ? id->qp->qp_num : 0;
	m->src_port = sa_port(&id->route.addr.src_addr);
}

static int watch_sock(struct fv *f, struct fv_id *fid)
{
	fid->sock_ev = event_new(f->base, fid->sock, EV_READ | EV_PERSIST,
				 cm_sock_cb, fid);
	return fid->sock_ev && event_add(fid->sock_ev, NULL) == 0 ? 0 : -1;
}

static int f_connect(void *ctx, struct rdma_cm_id *id,
		     struct rdma_conn_param *param)
{
	struct fv *f = ctx;
	struct fv_id *fid = (struct fv_id *)id;
	struct sockaddr_un un;
	struct fv_msg m;

	if (!id->qp || fid->sock >= 0 || param->private_data_len > FV_PDATA) {
		errno = EINVAL;
		return -1;
	}
	cm_path(f, sa_port(&id->route.addr.dst_addr), &un);
	fid->sock =
	    socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fid->sock < 0)
		return -1;
	msg_init(f, &m, MSG_REQ, id);
	m.pdata_len = param->private_data_len;
	if (param->private_data_len)
		memcpy(m.pdata, param->private_data, param->private_data_len);
	if (connect(fid->sock, (struct sockaddr *)&un, sizeof(un)) ||
	    sock_send(fid, &m)) {
		/* nobody listens there: the peer's CM rejects
		 * (IB_CM_REJ_INVALID_SERVICE_ID), later, on the channel */
		id_close_sock(fid);
		id_event(fid, RDMA_CM_EVENT_REJECTED, 28);
		return 0;
	}
	if (watch_sock(f, fid)) {
		id_close_sock(fid);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static int f_accept(void *ctx, struct rdma_cm_id *id,
		    struct rdma_conn_param *param)
{
	struct fv *f = ctx;
	struct fv_id *fid = (struct fv_id *)id;
	struct fv_msg m;

	(void)param;
	if (!id->qp || !fid->inbound || fid->sock < 0) {
		errno = EINVAL;
		return -1;
	}
	msg_init(f, &m, MSG_REP, id);
	if (sock_send(fid, &m))
		return -1;
	fid->connected = true;
	id_event(fid, RDMA_CM_EVENT_ESTABLISHED, 0);
	return 0;
}

static int f_reject(void *ctx, struct rdma_cm_id *id)
{
	struct fv *f = ctx;
	struct fv_id *fid = (struct fv_id *)id;
	struct fv_msg m;

	if (fid->sock < 0) {
		errno = EINVAL;
		return -1;
	}
	msg_init(f, &m, MSG_REJ, id);
	(void)sock_send(fid, &m);
	id_close_sock(fid);
	return 0;
}

/* Both ends get DISCONNECTED; the QP goes to error and what it still
 * holds is flushed from the next tick, never inside this call. */
static void id_disconnected(struct fv *f, struct fv_id *fid)
{
	fid->connected = false;
	if (fid->id.qp) {
		((struct fv_qp *)fid->id.qp)->error = true;
		fv_kick(f);
	}
	id_close_sock(fid);
	id_event(fid, RDMA_CM_EVENT_DISCONNECTED, 0);
}

static int f_disconnect(void *ctx, struct rdma_cm_id *id)
{
	struct fv *f = ctx;
	struct fv_id *fid = (struct fv_id *)id;
	struct fv_msg m;

	if (!fid->connected) {
		errno = EINVAL;
		return -1;
	}
	msg_init(f, &m, MSG_DREQ, id);
	(void)sock_send(fid, &m);
	id_disconnected(f, fid);
	return 0;
}

/* A connection request on a listener's socket: a new id for it. */
static void listener_accept(struct fv *f, struct fv_id *l)
{
	struct fv_id *fid;
	int s = accept(l->sock, NULL, NULL);

	if (s < 0)
		return;
	fcntl(s, F_SETFL, O_NONBLOCK);
	fcntl(s, F_SETFD, FD_CLOEXEC);
	fid = id_alloc(f, &l->cm->ch, NULL);
	if (!fid) {
		close(s);
		return;
	}
	fid->sock = s;
	fid->inbound = true;
	fid->id.verbs = &f->ctx;
	fid->id.route.addr.src_addr = l->id.route.addr.src_addr;
	/* the request itself comes as the first message on the socket */
	fid->pending = l;
	fid->next_pending = f->pend;
	f->pend = fid;
	if (watch_sock(f, fid))
		id_drop(f, fid);
}

static void on_msg(struct fv *f, struct fv_id *fid, const struct fv_msg *m)
{
	struct sockaddr_in *dst =
	    (struct sockaddr_in *)&fid->id.route.addr.dst_addr;

	switch (m->type) {
	case MSG_REQ: {
		struct fv_id *l = fid->pending;

		if (!fid->inbound || !l || m->pdata_len > FV_PDATA)
			break;
		pend_remove(f, fid);
		fid->peer_node = m->node;
		fid->peer_pd = m->pd;
		memset(dst, 0, sizeof(*dst));
		dst->sin_family = AF_INET;
		dst->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		dst->sin_port = htons(m->src_port);
		fid->pdata_len = m->pdata_len;
		memcpy(fid->pdata, m->pdata, m->pdata_len);
		fv_cm_push(l->cm, fid, l, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
		break;
	}
	case MSG_REP:
		fid->peer_node = m->node;
		fid->peer_pd = m->pd;
		fid->connected = true;
		id_event(fid, RDMA_CM_EVENT_ESTABLISHED, 0);
		break;
	case MSG_REJ:
		id_close_sock(fid);
		id_event(fid, RDMA_CM_EVENT_REJECTED, 28);
		break;
	case MSG_DREQ:
		if (fid->connected)
			id_disconnected(f, fid);
		break;
	default:
		break;
	}
}

/* The peer's socket closed: its process died (or dropped the id). */
static void on_eof(struct fv *f, struct fv_id *fid)
{
	if (fid->pending) {
		/* died before its request arrived: nothing to tell */
		id_drop(f, fid);
	} else if (f->silent) {
		/* a crashed host: nothing reaches this side */
		id_close_sock(fid);
	} else if (fid->connected) {
		id_disconnected(f, fid);
	} else {
		id_close_sock(fid);
		id_event(fid, RDMA_CM_EVENT_UNREACHABLE, -ECONNRESET);
	}
}

static void cm_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fv_id *fid = arg;
	struct fv *f = &fv_state;
	struct fv_msg m;
	ssize_t n;

	(void)fd;
	(void)what;
	if (fid->listener) {
		listener_accept(f, fid);
		return;
	}
	while (fid->sock >= 0) {
		n = recv(fid->sock, &m, sizeof(m), 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			on_eof(f, fid);
			return;
		}
		if (n == (ssize_t)sizeof(m))
			on_msg(f, fid, &m);
	}
}

static int f_get_cm_event(void *ctx, struct rdma_event_channel *ch,
			  struct rdma_cm_event **ev)
{
	struct fv_cm *cm = (struct fv_cm *)ch;
	char b;

	(void)ctx;
	if (!cm->n) {
		errno = EAGAIN;
		return -1;
	}
	(void)!read(cm->ch.fd, &b, 1);
	*ev = cm->q[0];
	memmove(cm->q, cm->q + 1, (size_t)--cm->n * sizeof(cm->q[0]));
	return 0;
}

static int f_ack_cm_event(void *ctx, struct rdma_cm_event *ev)
{
	(void)ctx;
	free(ev);
	return 0;
}

void fv_cm_ops(struct rdma_verbs_ops *ops)
{
	ops->create_event_channel = f_create_event_channel;
	ops->destroy_event_channel = f_destroy_event_channel;
	ops->create_id = f_create_id;
	ops->destroy_id = f_destroy_id;
	ops->bind_addr = f_bind_addr;
	ops->listen = f_listen;
	ops->resolve_addr = f_resolve_addr;
	ops->resolve_route = f_resolve_route;
	ops->create_qp = f_create_qp;
	ops->destroy_qp = f_destroy_qp;
	ops->connect = f_connect;
	ops->accept = f_accept;
	ops->reject = f_reject;
	ops->disconnect = f_disconnect;
	ops->get_cm_event = f_get_cm_event;
	ops->ack_cm_event = f_ack_cm_event;
}
