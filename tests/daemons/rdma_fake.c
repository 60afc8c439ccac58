/* The fake RDMA device: see rdma_fake.h. */
#ifdef MCREPL_HAVE_RDMA

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "rdma_fake.h"

static void fab_post(struct fake *f, struct fake_qp *qp,
		     const struct fake_wr *w);
static void fab_qp_error(struct fake_qp *qp);
static int fab_connect(struct fake *f, struct fake_id *fid,
		       const struct rdma_conn_param *param);
static void fab_established(struct fake_id *fid);
static void fab_reject(struct fake_id *fid);
static void fab_disconnect(struct fake *f, struct fake_id *fid);
static void fab_forget_qp(struct fake_qp *qp);

static void violate(struct fake *f, const char *what)
{
	if (!f->violation[0])
		snprintf(f->violation, sizeof(f->violation), "%s", what);
}

static bool should_fail(struct fake *f, enum fake_op op)
{
	return ++f->calls[op] == f->fail_nth[op];
}

static void poke(int wfd)
{
	char b = 1;

	ck_assert_int_eq(write(wfd, &b, 1), 1);
}

static void drain_fd(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static int make_pipe(int *rfd, int *wfd)
{
	int fds[2];

	if (pipe(fds))
		return -1;
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	*rfd = fds[0];
	*wfd = fds[1];
	return 0;
}

static struct fake_dev *dev_of(struct ibv_context *ctx)
{
	return (struct fake_dev *)(void *)((char *)ctx -
					   offsetof(struct fake_dev, ctx));
}

static struct ibv_device **f_get_device_list(void *ctx, int *num)
{
	struct fake *f = ctx;
	struct ibv_device **list;
	int i;

	*num = 0;
	if (f->ndev == 0) {
		errno = ENOSYS;
		return NULL;
	}
	list = calloc((size_t)f->ndev + 1, sizeof(*list));
	for (i = 0; i < f->ndev; i++)
		list[i] = &f->devs[i].dev;
	*num = f->ndev;
	return list;
}

static void f_free_device_list(void *ctx, struct ibv_device **list)
{
	(void)ctx;
	free(list);
}

static struct ibv_context **f_get_devices(void *ctx, int *num)
{
	struct fake *f = ctx;
	struct ibv_context **list;
	int i;

	*num = 0;
	if (f->no_cm || f->ndev == 0) {
		errno = ENODEV;
		return NULL;
	}
	list = calloc((size_t)f->ndev + 1, sizeof(*list));
	for (i = 0; i < f->ndev; i++)
		list[i] = &f->devs[i].ctx;
	*num = f->ndev;
	return list;
}

static void f_free_devices(void *ctx, struct ibv_context **list)
{
	(void)ctx;
	free(list);
}

static int f_query_device(void *ctx, struct ibv_context *dev,
			  struct ibv_device_attr *attr)
{
	(void)ctx;
	*attr = dev_of(dev)->attr;
	attr->phys_port_cnt = dev_of(dev)->nports;
	return 0;
}

static int f_query_port(void *ctx, struct ibv_context *dev, uint8_t port,
			struct ibv_port_attr *attr)
{
	struct fake_dev *d = dev_of(dev);

	(void)ctx;
	if (port < 1 || port > d->nports)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->state = d->state[port - 1];
	attr->max_msg_sz = d->max_msg;
	return 0;
}

static int f_get_async_event(void *ctx, struct ibv_context *dev,
			     struct ibv_async_event *ev)
{
	struct fake_dev *d = dev_of(dev);
	char b;

	(void)ctx;
	if (!d->n_async) {
		drain_fd(dev->async_fd);
		errno = EAGAIN;
		return -1;
	}
	*ev = d->async_q[0];
	memmove(d->async_q, d->async_q + 1,
		(size_t)--d->n_async * sizeof(d->async_q[0]));
	(void)!read(dev->async_fd, &b, 1);
	return 0;
}

static void f_ack_async_event(void *ctx, struct ibv_async_event *ev)
{
	(void)ctx;
	(void)ev;
}

void fake_async_event(struct fake *f, int d, enum ibv_event_type type,
		      void *element, int port)
{
	struct fake_dev *dev = &f->devs[d];
	struct ibv_async_event *ev = &dev->async_q[dev->n_async++];

	ck_assert_int_le(dev->n_async, 16);
	memset(ev, 0, sizeof(*ev));
	ev->event_type = type;
	if (type == IBV_EVENT_CQ_ERR)
		ev->element.cq = element;
	else if (type == IBV_EVENT_PORT_ERR || type == IBV_EVENT_PORT_ACTIVE)
		ev->element.port_num = port;
	else
		ev->element.qp = element;
	poke(dev->async_wfd);
}

static struct ibv_pd *f_alloc_pd(void *ctx, struct ibv_context *dev)
{
	struct fake *f = ctx;
	struct ibv_pd *pd;

	if (should_fail(f, OP_ALLOC_PD)) {
		errno = ENOMEM;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	pd->context = dev;
	f->pd_ctx = dev;
	f->alive_pd++;
	return pd;
}

static int f_dealloc_pd(void *ctx, struct ibv_pd *pd)
{
	struct fake *f = ctx;

	if (f->alive_mr || f->alive_qp) {
		violate(f, "dealloc_pd with MRs or QPs left");
		return EBUSY;
	}
	free(pd);
	f->alive_pd--;
	return 0;
}

static struct ibv_mr *f_reg_mr(void *ctx, struct ibv_pd *pd, void *addr,
			       size_t len, int access)
{
	struct fake *f = ctx;
	struct ibv_mr *mr;

	struct fake_mr *fm;

	/* Only WRITEs travel: REMOTE_READ would expose more than needed. */
	if (access != (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
		violate(f, "reg_mr access flags");
	if (should_fail(f, OP_REG_MR)) {
		errno = ENOMEM;
		return NULL;
	}
	fm = calloc(1, sizeof(*fm));
	fm->access = access;
	fm->next = f->mrs;
	f->mrs = fm;
	mr = &fm->mr;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = len;
	mr->lkey = f->mr_key_base + 0x1000u + (uint32_t)f->n_mr;
	mr->rkey = f->mr_key_base + 0x2000u + (uint32_t)f->n_mr;
	if (f->n_mr < FAKE_MAX_MRS) {
		f->mr_len[f->n_mr] = len;
		f->mr_addr[f->n_mr] = addr;
	}
	f->n_mr++;
	f->alive_mr++;
	return mr;
}

static int f_dereg_mr(void *ctx, struct ibv_mr *mr)
{
	struct fake *f = ctx;
	struct fake_mr **pp = &f->mrs;

	while (*pp && &(*pp)->mr != mr)
		pp = &(*pp)->next;
	if (!*pp) {
		violate(f, "dereg_mr of an unknown MR");
		return EINVAL;
	}
	*pp = (*pp)->next;
	free(AS(fake_mr, mr));
	f->alive_mr--;
	return 0;
}

static struct ibv_comp_channel *f_create_comp_channel(void *ctx,
						      struct ibv_context *dev)
{
	struct fake *f = ctx;
	struct fake_comp *c;

	if (should_fail(f, OP_COMP_CH)) {
		errno = EMFILE;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	ck_assert_int_eq(make_pipe(&c->ch.fd, &c->wfd), 0);
	c->ch.context = dev;
	f->comp = c;
	f->alive_comp++;
	return &c->ch;
}

static int f_destroy_comp_channel(void *ctx, struct ibv_comp_channel *ch)
{
	struct fake *f = ctx;
	struct fake_comp *c = AS(fake_comp, ch);

	if (c->cqs) {
		violate(f, "destroy_comp_channel with CQs left");
		return EBUSY;
	}
	close(c->ch.fd);
	close(c->wfd);
	free(c);
	f->comp = NULL;
	f->alive_comp--;
	return 0;
}

static struct ibv_cq *f_create_cq(void *ctx, struct ibv_context *dev, int cqe,
				  void *cq_context, struct ibv_comp_channel *ch)
{
	struct fake *f = ctx;
	struct fake_cq *cq;

	if (should_fail(f, OP_CREATE_CQ)) {
		errno = ENOMEM;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	cq->cap = cqe;
	cq->wc = calloc((size_t)cqe, sizeof(*cq->wc));
	cq->cq.context = dev;
	cq->cq.cq_context = cq_context;
	cq->cq.channel = ch;
	cq->cq.cqe = cqe;
	cq->comp = ch ? AS(fake_comp, ch) : NULL;
	if (cq->comp)
		cq->comp->cqs++;
	f->alive_cq++;
	return &cq->cq;
}

static int f_destroy_cq(void *ctx, struct ibv_cq *ibcq)
{
	struct fake *f = ctx;
	struct fake_cq *cq = AS(fake_cq, ibcq);
	struct fake_comp *c = cq->comp;
	int i, j = 0;

	if (cq->qps) {
		violate(f, "destroy_cq with a QP on it");
		return EBUSY;
	}
	if (cq->unacked)
		violate(f, "destroy_cq with unacked events");
	if (c) {
		for (i = 0; i < c->n_pending; i++)
			if (c->pending[i] != cq)
				c->pending[j++] = c->pending[i];
		c->n_pending = j;
		c->cqs--;
	}
	free(cq->wc);
	free(cq);
	f->alive_cq--;
	return 0;
}

static int f_req_notify_cq(void *ctx, struct ibv_cq *ibcq)
{
	struct fake *f = ctx;

	if (should_fail(f, OP_REQ_NOTIFY))
		return EIO;
	AS(fake_cq, ibcq)->armed = true;
	return 0;
}

static int f_get_cq_event(void *ctx, struct ibv_comp_channel *ch,
			  struct ibv_cq **out, void **cq_context)
{
	struct fake_comp *c = AS(fake_comp, ch);
	struct fake_cq *cq;
	char b;

	(void)ctx;
	if (!c->n_pending) {
		drain_fd(c->ch.fd);
		errno = EAGAIN;
		return -1;
	}
	cq = c->pending[0];
	memmove(c->pending, c->pending + 1,
		(size_t)--c->n_pending * sizeof(c->pending[0]));
	(void)!read(c->ch.fd, &b, 1);
	cq->unacked++;
	*out = &cq->cq;
	*cq_context = cq->cq.cq_context;
	return 0;
}

static void f_ack_cq_events(void *ctx, struct ibv_cq *ibcq, unsigned int n)
{
	struct fake *f = ctx;
	struct fake_cq *cq = AS(fake_cq, ibcq);

	f->calls[OP_ACK_CQ]++;
	if (n > cq->unacked)
		violate(f, "acked more CQ events than were read");
	cq->unacked -= n;
}

static int f_poll_cq(void *ctx, struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct fake_cq *cq = AS(fake_cq, ibcq);
	int got = 0;

	(void)ctx;
	while (got < n && cq->count) {
		wc[got++] = cq->wc[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	return got;
}

void fake_cq_push(struct fake *f, struct fake_cq *cq, uint64_t wr_id,
		  enum ibv_wc_status status)
{
	struct ibv_wc *wc;

	if (cq->count == cq->cap) {
		violate(f, "CQ overflow");
		return;
	}
	wc = &cq->wc[(cq->head + cq->count++) % cq->cap];
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = status;
	wc->opcode = IBV_WC_RDMA_WRITE;
	if (cq->armed && cq->comp) {
		cq->armed = false;
		cq->comp->pending[cq->comp->n_pending++] = cq;
		poke(cq->comp->wfd);
	}
}

static uint32_t qp_outstanding(struct fake *f, struct fake_qp *qp)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < f->n_wr; i++)
		n += f->wr[i].qp == qp && !f->wr[i].done;
	return n;
}

static int f_post_send(void *ctx, struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad)
{
	struct fake *f = ctx;
	struct fake_qp *qp = AS(fake_qp, ibqp);

	if (should_fail(f, OP_POST_SEND)) {
		*bad = wr;
		return ENOMEM;
	}
	for (; wr; wr = wr->next) {
		struct fake_wr *r =
		    &f->wr[f->fabric ? FAKE_MAX_WR - 1 : f->n_wr++];

		if (wr->opcode != IBV_WR_RDMA_WRITE || wr->num_sge != 1)
			violate(f, "not a one-SGE RDMA WRITE");
		*r = (struct fake_wr){qp,
				      wr->wr_id,
				      wr->sg_list[0].addr,
				      wr->sg_list[0].length,
				      wr->sg_list[0].lkey,
				      wr->wr.rdma.remote_addr,
				      wr->wr.rdma.rkey,
				      (wr->send_flags & IBV_SEND_SIGNALED) != 0,
				      false};
		if (f->fabric)
			fab_post(f, qp, r);
		else if (qp_outstanding(f, qp) > qp->max_send_wr)
			violate(f, "send queue overflow");
	}
	return 0;
}

/* The QP goes to error: every WR not yet complete is flushed. */
static void qp_to_error(struct fake *f, struct fake_qp *qp)
{
	int i;

	if (f->fabric) {
		fab_qp_error(qp);
		return;
	}
	qp->error = true;
	for (i = 0; i < f->n_wr; i++) {
		if (f->wr[i].qp != qp || f->wr[i].done)
			continue;
		f->wr[i].done = true;
		fake_cq_push(f, qp->cq, f->wr[i].wr_id, IBV_WC_WR_FLUSH_ERR);
	}
}

void fake_cm_push(struct fake *f, struct rdma_cm_id *id,
		  struct rdma_cm_id *listen_id, enum rdma_cm_event_type type,
		  int status)
{
	struct rdma_cm_event *ev = calloc(1, sizeof(*ev));

	ev->id = id;
	ev->listen_id = listen_id;
	ev->event = type;
	ev->status = status;
	ck_assert_int_lt(f->cm->n, FAKE_MAX_EVENTS);
	f->cm->q[f->cm->n++] = ev;
	poke(f->cm->wfd);
}

static struct rdma_event_channel *f_create_event_channel(void *ctx)
{
	struct fake *f = ctx;
	struct fake_cm *c;

	if (should_fail(f, OP_CM_CH)) {
		errno = ENODEV;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	ck_assert_int_eq(make_pipe(&c->ch.fd, &c->wfd), 0);
	f->cm = c;
	f->alive_cm++;
	return &c->ch;
}

static void f_destroy_event_channel(void *ctx, struct rdma_event_channel *ch)
{
	struct fake *f = ctx;
	struct fake_cm *c = AS(fake_cm, ch);

	if (f->alive_id)
		violate(f, "destroy_event_channel with ids left");
	while (c->n)
		free(c->q[--c->n]);
	close(c->ch.fd);
	close(c->wfd);
	free(c);
	f->cm = NULL;
	f->alive_cm--;
}

struct rdma_cm_id *fake_id_new(struct fake *f, struct rdma_event_channel *ch,
			       void *context)
{
	struct fake_id *fid = calloc(1, sizeof(*fid));
	struct rdma_cm_id *id = &fid->id;

	fid->owner = f;
	id->channel = ch;
	id->context = context;
	id->ps = RDMA_PS_TCP;
	ck_assert_int_lt(f->n_ids, FAKE_MAX_IDS);
	f->id_alive[f->n_ids] = true;
	f->ids[f->n_ids++] = id;
	f->alive_id++;
	return id;
}

static int f_create_id(void *ctx, struct rdma_event_channel *ch,
		       struct rdma_cm_id **id, void *context)
{
	struct fake *f = ctx;

	if (should_fail(f, OP_CREATE_ID)) {
		errno = ENOMEM;
		return -1;
	}
	*id = fake_id_new(f, ch, context);
	return 0;
}

static int f_destroy_id(void *ctx, struct rdma_cm_id *id)
{
	struct fake *f = ctx;
	struct fake_cm *c = f->cm;
	int i, j = 0;

	if (id->qp)
		violate(f, "destroy_id with a QP");
	for (i = 0; i < c->n; i++) {
		if (c->q[i]->id == id)
			free(c->q[i]);
		else
			c->q[j++] = c->q[i];
	}
	c->n = j;
	for (i = 0; i < f->n_ids; i++)
		if (f->ids[i] == id)
			f->id_alive[i] = false;
	if (AS(fake_id, id)->peer)
		AS(fake_id, id)->peer->peer = NULL;
	if (id == f->listen_id)
		f->listen_id = NULL;
	free(AS(fake_id, id));
	f->alive_id--;
	return 0;
}

static int f_bind_addr(void *ctx, struct rdma_cm_id *id, struct sockaddr *sa)
{
	struct fake *f = ctx;

	if (should_fail(f, OP_BIND)) {
		errno = EADDRINUSE;
		return -1;
	}
	f->listen_id = id;
	memcpy(&id->route.addr.src_addr, sa,
	       sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in));
	if (sa->sa_family == AF_INET)
		f->bound_port = ntohs(AS(sockaddr_in, sa)->sin_port);
	else
		f->bound_port = ntohs(AS(sockaddr_in6, sa)->sin6_port);
	return 0;
}

static int f_listen(void *ctx, struct rdma_cm_id *id, int backlog)
{
	struct fake *f = ctx;

	(void)id;
	(void)backlog;
	if (should_fail(f, OP_LISTEN)) {
		errno = EADDRINUSE;
		return -1;
	}
	return 0;
}

static struct ibv_context *route_dev(struct fake *f)
{
	return f->route_dev ? f->route_dev : f->pd_ctx;
}

/* A CM event as the kernel would queue it; ADDR_RESOLVED binds the id to
 * a device, DISCONNECTED means the peer went: the QP flushes. */
void fake_cm_event(struct fake *f, struct rdma_cm_id *id,
		   enum rdma_cm_event_type type, int status)
{
	if (type == RDMA_CM_EVENT_ADDR_RESOLVED)
		id->verbs = route_dev(f);
	if (type == RDMA_CM_EVENT_DISCONNECTED && id->qp)
		qp_to_error(f, AS(fake_qp, id->qp));
	fake_cm_push(f, id, NULL, type, status);
}

static int f_resolve_addr(void *ctx, struct rdma_cm_id *id,
			  struct sockaddr *dst, int timeout_ms)
{
	struct fake *f = ctx;

	(void)timeout_ms;
	if (should_fail(f, OP_RESOLVE_ADDR)) {
		errno = EHOSTUNREACH;
		return -1;
	}
	memcpy(&f->dst, dst,
	       dst->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					  : sizeof(struct sockaddr_in));
	if (dst->sa_family == AF_INET) {
		AS(fake_id, id)->dst_ip =
		    ntohl(AS(sockaddr_in, dst)->sin_addr.s_addr);
		AS(fake_id, id)->dst_port =
		    ntohs(AS(sockaddr_in, dst)->sin_port);
	}
	if (f->auto_cm)
		fake_cm_event(f, id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

static int f_resolve_route(void *ctx, struct rdma_cm_id *id, int timeout_ms)
{
	struct fake *f = ctx;

	(void)timeout_ms;
	if (should_fail(f, OP_RESOLVE_ROUTE)) {
		errno = ENETUNREACH;
		return -1;
	}
	if (f->auto_cm)
		fake_cm_event(f, id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

static int f_create_qp(void *ctx, struct rdma_cm_id *id, struct ibv_pd *pd,
		       struct ibv_qp_init_attr *attr)
{
	struct fake *f = ctx;
	struct fake_qp *qp;

	if (should_fail(f, OP_CREATE_QP)) {
		errno = ENOMEM;
		return -1;
	}
	if (pd->context != id->verbs || attr->qp_type != IBV_QPT_RC ||
	    attr->send_cq != attr->recv_cq || attr->sq_sig_all) {
		violate(f, "create_qp arguments");
		errno = EINVAL;
		return -1;
	}
	qp = calloc(1, sizeof(*qp));
	qp->qp.context = id->verbs;
	qp->qp.pd = pd;
	qp->qp.qp_num = ++f->next_qpn;
	qp->qp.send_cq = attr->send_cq;
	qp->cq = AS(fake_cq, attr->send_cq);
	qp->cq->qps++;
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->fid = AS(fake_id, id);
	id->qp = &qp->qp;
	f->alive_qp++;
	return 0;
}

static void f_destroy_qp(void *ctx, struct rdma_cm_id *id)
{
	struct fake *f = ctx;
	struct fake_qp *qp = AS(fake_qp, id->qp);
	int i;

	for (i = 0; i < f->n_wr; i++)
		if (f->wr[i].qp == qp) {
			f->wr[i].qp = NULL;
			f->wr[i].done = true;
		}
	if (f->fabric)
		fab_forget_qp(qp);
	qp->cq->qps--;
	free(qp);
	id->qp = NULL;
	f->alive_qp--;
}

static int f_connect(void *ctx, struct rdma_cm_id *id,
		     struct rdma_conn_param *param)
{
	struct fake *f = ctx;

	if (should_fail(f, OP_CONNECT)) {
		errno = ECONNREFUSED;
		return -1;
	}
	if (f->fabric)
		return fab_connect(f, AS(fake_id, id), param);
	if (f->auto_cm)
		fake_cm_event(f, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	return 0;
}

static int f_accept(void *ctx, struct rdma_cm_id *id,
		    struct rdma_conn_param *param)
{
	struct fake *f = ctx;

	(void)param;
	if (should_fail(f, OP_ACCEPT)) {
		errno = EINVAL;
		return -1;
	}
	if (f->fabric) {
		fab_established(AS(fake_id, id));
		return 0;
	}
	if (f->auto_cm)
		fake_cm_event(f, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	return 0;
}

static int f_reject(void *ctx, struct rdma_cm_id *id)
{
	struct fake *f = ctx;

	f->calls[OP_REJECT]++;
	if (f->fabric)
		fab_reject(AS(fake_id, id));
	return 0;
}

static int f_disconnect(void *ctx, struct rdma_cm_id *id)
{
	struct fake *f = ctx;

	f->calls[OP_DISCONNECT]++;
	if (f->fabric) {
		fab_disconnect(f, AS(fake_id, id));
		return 0;
	}
	if (id->qp)
		qp_to_error(f, AS(fake_qp, id->qp));
	fake_cm_push(f, id, NULL, RDMA_CM_EVENT_DISCONNECTED, 0);
	return 0;
}

static int f_get_cm_event(void *ctx, struct rdma_event_channel *ch,
			  struct rdma_cm_event **ev)
{
	struct fake_cm *c = AS(fake_cm, ch);
	char b;

	(void)ctx;
	if (!c->n) {
		drain_fd(c->ch.fd);
		errno = EAGAIN;
		return -1;
	}
	*ev = c->q[0];
	memmove(c->q, c->q + 1, (size_t)--c->n * sizeof(c->q[0]));
	(void)!read(c->ch.fd, &b, 1);
	return 0;
}

static int f_ack_cm_event(void *ctx, struct rdma_cm_event *ev)
{
	(void)ctx;
	free(ev);
	return 0;
}

static void f_log(void *ctx, const char *line)
{
	struct fake *f = ctx;

	if (f->n_log < FAKE_MAX_LOG)
		snprintf(f->log[f->n_log++], sizeof(f->log[0]), "%s", line);
}

const struct rdma_verbs_ops fake_ops = {
    .get_device_list = f_get_device_list,
    .free_device_list = f_free_device_list,
    .get_devices = f_get_devices,
    .free_devices = f_free_devices,
    .query_device = f_query_device,
    .query_port = f_query_port,
    .get_async_event = f_get_async_event,
    .ack_async_event = f_ack_async_event,
    .alloc_pd = f_alloc_pd,
    .dealloc_pd = f_dealloc_pd,
    .reg_mr = f_reg_mr,
    .dereg_mr = f_dereg_mr,
    .create_comp_channel = f_create_comp_channel,
    .destroy_comp_channel = f_destroy_comp_channel,
    .create_cq = f_create_cq,
    .destroy_cq = f_destroy_cq,
    .req_notify_cq = f_req_notify_cq,
    .get_cq_event = f_get_cq_event,
    .ack_cq_events = f_ack_cq_events,
    .poll_cq = f_poll_cq,
    .post_send = f_post_send,
    .create_event_channel = f_create_event_channel,
    .destroy_event_channel = f_destroy_event_channel,
    .create_id = f_create_id,
    .destroy_id = f_destroy_id,
    .bind_addr = f_bind_addr,
    .listen = f_listen,
    .resolve_addr = f_resolve_addr,
    .resolve_route = f_resolve_route,
    .create_qp = f_create_qp,
    .destroy_qp = f_destroy_qp,
    .connect = f_connect,
    .accept = f_accept,
    .reject = f_reject,
    .disconnect = f_disconnect,
    .get_cm_event = f_get_cm_event,
    .ack_cm_event = f_ack_cm_event,
    .log = f_log,
};

/* ---- test helpers ------------------------------------------------------- */

static void close_async(struct fake_dev *d)
{
	if (d->ctx.async_fd <= 0)
		return;
	close(d->ctx.async_fd);
	close(d->async_wfd);
	d->ctx.async_fd = 0;
}

void fake_add_dev(struct fake *f, const char *name, enum ibv_port_state p1,
		  enum ibv_port_state p2)
{
	struct fake_dev *d = &f->devs[f->ndev++];

	close_async(d);
	ck_assert_int_eq(make_pipe(&d->ctx.async_fd, &d->async_wfd), 0);
	d->n_async = 0;
	snprintf(d->dev.name, sizeof(d->dev.name), "%s", name);
	d->ctx.device = &d->dev;
	d->nports = p2 ? 2 : 1;
	d->state[0] = p1;
	d->state[1] = p2;
	d->max_msg = MiB;
	d->attr.max_mr_size = UINT64_MAX;
	d->attr.max_qp_wr = 16384;
	d->attr.max_cqe = 4194303;
}

/* One device "fake0" with an ACTIVE port; CM answers by itself. */
struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->base = event_base_new();
	f->auto_cm = true;
	fake_add_dev(f, "fake0", IBV_PORT_ACTIVE, 0);
	return f;
}

void fake_cfg_init(struct copy_engine_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_inflight = 8;
	cfg->max_inflight_bytes = 256u * MiB;
	cfg->timeout_ms = 30000;
	cfg->rdma_port = 20886;
}

struct copy_engine *fake_engine_new(struct fake *f,
				    const struct copy_engine_config *cfg)
{
	char err[256] = "";
	struct copy_engine *e;

	e = copy_engine_rdma_create_with(f->base, cfg, &fake_ops, f, err,
					 sizeof(err));
	ck_assert_msg(e != NULL, "create: %s", err);
	return e;
}

struct copy_engine *fake_engine_default(struct fake *f)
{
	struct copy_engine_config cfg;

	fake_cfg_init(&cfg);
	return fake_engine_new(f, &cfg);
}

void fake_run(struct fake *f)
{
	int i;

	for (i = 0; i < 8; i++)
		event_base_loop(f->base, EVLOOP_NONBLOCK);
}

/* Every resource released, in an order verbs accept. */
void fake_free(struct fake *f)
{
	ck_assert_msg(!f->violation[0], "fake: %s", f->violation);
	ck_assert_int_eq(f->alive_pd, 0);
	ck_assert_int_eq(f->alive_mr, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_id, 0);
	ck_assert_int_eq(f->alive_comp, 0);
	ck_assert_int_eq(f->alive_cm, 0);
	for (int d = 0; d < FAKE_MAX_DEV; d++)
		close_async(&f->devs[d]);
	if (!f->fabric)
		event_base_free(f->base);
	free(f);
}

bool fake_logged(const struct fake *f, const char *part)
{
	int i;

	for (i = 0; i < f->n_log; i++)
		if (strstr(f->log[i], part))
			return true;
	return false;
}

/* Completes the next n signalled WRs (and the unsignalled ones before
 * them on the same QP), in post order. */
void fake_complete(struct fake *f, int n)
{
	int i, j;

	for (i = 0; i < f->n_wr && n > 0; i++) {
		struct fake_wr *w = &f->wr[i];

		if (w->done || !w->sig || !w->qp)
			continue;
		for (j = 0; j <= i; j++)
			if (f->wr[j].qp == w->qp)
				f->wr[j].done = true;
		fake_cq_push(f, w->qp->cq, w->wr_id, IBV_WC_SUCCESS);
		n--;
	}
	fake_run(f);
}

/* The oldest outstanding WR fails with status; the rest of its QP is
 * flushed, as hardware does. */
void fake_fail_next(struct fake *f, enum ibv_wc_status status)
{
	int i;

	for (i = 0; i < f->n_wr; i++) {
		struct fake_wr *w = &f->wr[i];

		if (w->done || !w->qp)
			continue;
		w->done = true;
		fake_cq_push(f, w->qp->cq, w->wr_id, status);
		qp_to_error(f, w->qp);
		return;
	}
	ck_abort_msg("no outstanding WR to fail");
}

int fake_n_signalled(const struct fake *f)
{
	int i, n = 0;

	for (i = 0; i < f->n_wr; i++)
		n += f->wr[i].sig;
	return n;
}

struct rdma_cm_id *fake_last_live_id(struct fake *f)
{
	int i;

	for (i = f->n_ids - 1; i >= 0; i--)
		if (f->id_alive[i] && f->ids[i] != f->listen_id)
			return f->ids[i];
	ck_abort_msg("no live connection id");
	abort();
}

/* ---- the fabric --------------------------------------------------------- */

static struct fake_fabric *fab_of(const struct fake *f)
{
	return f->fabric;
}

/* The tick runs on the next loop turn (a zero timeout, not an active
 * event, which would run within this one). */
static void fab_kick(struct fake_fabric *fab)
{
	struct timeval now = {0, 0};

	evtimer_add(fab->tick, &now);
}

static void fab_queue(struct fake_job ***tail, struct fake_job *j)
{
	j->next = NULL;
	**tail = j;
	*tail = &j->next;
}

static void fab_post(struct fake *f, struct fake_qp *qp,
		     const struct fake_wr *w)
{
	struct fake_job *j = calloc(1, sizeof(*j));

	j->f = f;
	j->qp = qp;
	j->wr = *w;
	if (++qp->outstanding > qp->max_send_wr)
		violate(f, "send queue overflow");
	fab_queue(&fab_of(f)->jobs_tail, j);
	fab_kick(fab_of(f));
}

/* WRs still queued on qp flush at the next tick, not now. */
static void fab_qp_error(struct fake_qp *qp)
{
	qp->error = true;
	fab_kick(fab_of(qp->fid->owner));
}

static void fab_drop(struct fake_job **head, struct fake_job ***tail,
		     const struct fake_qp *qp)
{
	struct fake_job **pp = head, *j;

	while ((j = *pp)) {
		if (j->qp == qp) {
			*pp = j->next;
			free(j);
		} else {
			pp = &j->next;
		}
	}
	*tail = pp;
}

static void fab_forget_qp(struct fake_qp *qp)
{
	struct fake_fabric *fab = fab_of(qp->fid->owner);

	fab_drop(&fab->jobs, &fab->jobs_tail, qp);
	fab_drop(&fab->held, &fab->held_tail, qp);
}

static struct fake *fab_node(struct fake_fabric *fab, uint32_t ip,
			     uint16_t port)
{
	int i;

	for (i = 0; i < fab->n_nodes; i++) {
		struct fake *n = fab->nodes[i];

		if (n->ip == ip && n->listen_id && n->bound_port == port)
			return n;
	}
	return NULL;
}

static void set_sin(struct sockaddr *sa, uint32_t ip, uint16_t port)
{
	struct sockaddr_in *sin = AS(sockaddr_in, sa);

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(ip);
	sin->sin_port = htons(port);
}

/* rdma_connect: a CONNECT_REQUEST at the listener of dst, or REJECTED. */
static int fab_connect(struct fake *f, struct fake_id *fid,
		       const struct rdma_conn_param *param)
{
	struct fake_fabric *fab = fab_of(f);
	struct fake *peer = fab_node(fab, fid->dst_ip, fid->dst_port);
	struct fake_id *pid;
	struct rdma_cm_event *ev;

	if (!peer) {
		fake_cm_push(f, &fid->id, NULL, RDMA_CM_EVENT_REJECTED, 8);
		return 0;
	}
	pid = AS(fake_id, fake_id_new(peer, &peer->cm->ch, NULL));
	pid->id.verbs = peer->pd_ctx;
	set_sin(&pid->id.route.addr.dst_addr, f->ip, fab->next_src_port++);
	set_sin(&pid->id.route.addr.src_addr, peer->ip, peer->bound_port);
	if (param && param->private_data_len) {
		pid->private_len =
		    param->private_data_len < sizeof(pid->private_data)
			? param->private_data_len
			: sizeof(pid->private_data);
		memcpy(pid->private_data, param->private_data,
		       pid->private_len);
	}
	pid->peer = fid;
	fid->peer = pid;
	fake_cm_push(peer, &pid->id, peer->listen_id,
		     RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	ev = peer->cm->q[peer->cm->n - 1];
	ev->param.conn.private_data = pid->private_data;
	ev->param.conn.private_data_len = pid->private_len;
	return 0;
}

/* rdma_accept: both ends established. */
static void fab_established(struct fake_id *fid)
{
	fake_cm_push(fid->owner, &fid->id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (fid->peer)
		fake_cm_push(fid->peer->owner, &fid->peer->id, NULL,
			     RDMA_CM_EVENT_ESTABLISHED, 0);
}

static void fab_reject(struct fake_id *fid)
{
	struct fake_id *peer = fid->peer;

	if (!peer)
		return;
	peer->peer = NULL;
	fid->peer = NULL;
	fake_cm_push(peer->owner, &peer->id, NULL, RDMA_CM_EVENT_REJECTED, 28);
}

/* Both QPs go to error (their WRs flush at the next tick) and both ends
 * get DISCONNECTED. */
static void fab_disconnect(struct fake *f, struct fake_id *fid)
{
	struct fake_id *peer = fid->peer;

	if (fid->id.qp)
		fab_qp_error(AS(fake_qp, fid->id.qp));
	fake_cm_push(f, &fid->id, NULL, RDMA_CM_EVENT_DISCONNECTED, 0);
	if (!peer)
		return;
	peer->peer = NULL;
	fid->peer = NULL;
	if (fab_of(f)->silent)
		return;
	if (peer->id.qp)
		fab_qp_error(AS(fake_qp, peer->id.qp));
	fake_cm_push(peer->owner, &peer->id, NULL, RDMA_CM_EVENT_DISCONNECTED,
		     0);
}

/* The MR of f with key (lkey or rkey) in pd that holds [addr, +len). */
static const struct fake_mr *fab_mr(const struct fake *f,
				    const struct ibv_pd *pd, uint32_t key,
				    bool remote, uint64_t addr, uint64_t len)
{
	const struct fake_mr *m;

	for (m = f->mrs; m; m = m->next) {
		uint64_t start = (uintptr_t)m->mr.addr;

		if ((remote ? m->mr.rkey : m->mr.lkey) != key || m->mr.pd != pd)
			continue;
		if (remote && !(m->access & IBV_ACCESS_REMOTE_WRITE))
			return NULL;
		if (addr < start || addr + len < addr ||
		    addr + len > start + m->mr.length)
			return NULL;
		return m;
	}
	return NULL;
}

static void fab_complete(struct fake_fabric *fab, struct fake_job *j,
			 enum ibv_wc_status status)
{
	j->qp->outstanding--;
	if (status == IBV_WC_SUCCESS && !j->wr.sig) {
		free(j);
		return;
	}
	if (status == IBV_WC_SUCCESS && fab->hold_completions) {
		j->status = status;
		fab_queue(&fab->held_tail, j);
		return;
	}
	fake_cq_push(j->f, j->qp->cq, j->wr.wr_id, status);
	free(j);
}

/* One WRITE: checks as a responder would, then the bytes move. */
static enum ibv_wc_status fab_write(struct fake_fabric *fab, struct fake_job *j)
{
	struct fake_id *peer = j->qp->fid->peer;
	struct fake_qp *pqp;

	if (!fab_mr(j->f, j->qp->qp.pd, j->wr.lkey, false, j->wr.addr,
		    j->wr.len))
		return IBV_WC_LOC_PROT_ERR;
	if (!peer || !peer->id.qp)
		return IBV_WC_RETRY_EXC_ERR;
	pqp = AS(fake_qp, peer->id.qp);
	if (pqp->error)
		return IBV_WC_RETRY_EXC_ERR;
	if (!fab_mr(peer->owner, pqp->qp.pd, j->wr.rkey, true, j->wr.raddr,
		    j->wr.len)) {
		fab->access_errors++;
		return IBV_WC_REM_ACCESS_ERR;
	}
	memcpy((void *)(uintptr_t)j->wr.raddr, (void *)(uintptr_t)j->wr.addr,
	       j->wr.len);
	fab->bytes_written += j->wr.len;
	fab->writes++;
	return IBV_WC_SUCCESS;
}

/* Executes the WRs queued before this tick, in post order. */
static void fab_tick(evutil_socket_t fd, short what, void *arg)
{
	struct fake_fabric *fab = arg;
	struct fake_job *j = fab->jobs, *next;
	enum ibv_wc_status st;
	uint32_t budget = fab->tick_budget;

	(void)fd;
	(void)what;
	fab->jobs = NULL;
	fab->jobs_tail = &fab->jobs;
	for (; j; j = next) {
		next = j->next;
		if (fab->tick_budget && !budget--) {
			/* The rest waits for the next tick, in order. */
			*fab->jobs_tail = fab->jobs;
			fab->jobs = j;
			while (*fab->jobs_tail)
				fab->jobs_tail = &(*fab->jobs_tail)->next;
			fab_kick(fab);
			/* A non-blocking turn runs until idle: end it here. */
			event_base_loopbreak(fab->base);
			break;
		}
		if (j->qp->error) {
			fab_complete(fab, j, IBV_WC_WR_FLUSH_ERR);
			continue;
		}
		st = fab_write(fab, j);
		if (st != IBV_WC_SUCCESS)
			j->qp->error = true;
		fab_complete(fab, j, st);
	}
}

struct fake_fabric *fabric_new(void)
{
	struct fake_fabric *fab = calloc(1, sizeof(*fab));

	fab->base = event_base_new();
	fab->tick = event_new(fab->base, -1, 0, fab_tick, fab);
	fab->jobs_tail = &fab->jobs;
	fab->held_tail = &fab->held;
	fab->next_src_port = 40000;
	return fab;
}

struct fake *fabric_add_node(struct fake_fabric *fab, const char *ip)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct in_addr a;

	ck_assert_int_lt(fab->n_nodes, FAKE_MAX_NODES);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &a), 1);
	f->fabric = fab;
	f->ip = ntohl(a.s_addr);
	f->base = fab->base;
	f->auto_cm = true;
	f->mr_key_base = (uint32_t)(fab->n_nodes + 1) << 16;
	fake_add_dev(f, "fake0", IBV_PORT_ACTIVE, 0);
	fab->nodes[fab->n_nodes++] = f;
	return f;
}

void fabric_run(struct fake_fabric *fab, int turns)
{
	while (turns-- > 0)
		event_base_loop(fab->base, EVLOOP_NONBLOCK);
}

void fabric_cut(struct fake *f)
{
	int i;

	for (i = 0; i < f->n_ids; i++)
		if (f->id_alive[i] && AS(fake_id, f->ids[i])->peer)
			fab_disconnect(f, AS(fake_id, f->ids[i]));
}

void fabric_release(struct fake_fabric *fab)
{
	struct fake_job *j = fab->held, *next;

	fab->held = NULL;
	fab->held_tail = &fab->held;
	for (; j; j = next) {
		next = j->next;
		fake_cq_push(j->f, j->qp->cq, j->wr.wr_id, j->status);
		free(j);
	}
}

void fabric_free(struct fake_fabric *fab)
{
	int i;

	ck_assert_ptr_null(fab->jobs);
	ck_assert_ptr_null(fab->held);
	for (i = 0; i < fab->n_nodes; i++)
		fake_free(fab->nodes[i]);
	event_free(fab->tick);
	event_base_free(fab->base);
	free(fab);
}

#else

/* Without libibverbs there is no engine to fake (ISO C wants a
 * declaration in every translation unit). */
typedef int rdma_fake_not_built;

#endif /* MCREPL_HAVE_RDMA */
