/* The RDMA copy engine against a fake device (rdma_verbs_ops test double):
 * device choice, registration, splitting, the WR window, signalling,
 * completions, teardown and reconnects; plus the real verbs on this host.
 * Without libibverbs at build time (MCREPL_HAVE_RDMA unset) only the
 * "not built" answer of the stub is checked. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "copy_engine.h"

Suite *make_rdma_suite(void);

#ifndef MCREPL_HAVE_RDMA

START_TEST(test_not_built)
{
	struct copy_engine_config cfg;
	char err[256] = "";

	memset(&cfg, 0, sizeof(cfg));
	ck_assert_ptr_null(
	    copy_engine_rdma_create(NULL, &cfg, err, sizeof(err)));
	ck_assert_str_eq(
	    err,
	    "rdma: engine not built (libibverbs/librdmacm missing at build time)");
}
END_TEST

Suite *make_rdma_suite(void)
{
	Suite *s = suite_create("rdma");
	TCase *tc = tcase_create("stub");

	tcase_add_test(tc, test_not_built);
	suite_add_tcase(s, tc);
	return s;
}

#else /* MCREPL_HAVE_RDMA */

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include "copy_engine_rdma.h"

#define MiB (1024u * 1024u)
#define FAKE_MAX_DEV 4
#define FAKE_MAX_WR 2048
#define FAKE_MAX_LOG 64
#define FAKE_MAX_IDS 64
#define FAKE_MAX_MRS 64
#define FAKE_MAX_EVENTS 64

/* ---- the fake device ---------------------------------------------------- */

enum fake_op {
	OP_ALLOC_PD,
	OP_REG_MR,
	OP_COMP_CH,
	OP_CREATE_CQ,
	OP_REQ_NOTIFY,
	OP_POST_SEND,
	OP_CM_CH,
	OP_CREATE_ID,
	OP_BIND,
	OP_LISTEN,
	OP_RESOLVE_ADDR,
	OP_RESOLVE_ROUTE,
	OP_CREATE_QP,
	OP_CONNECT,
	OP_ACCEPT,
	OP_REJECT,
	OP_DISCONNECT,
	OP_ACK_CQ,
	OP_MAX
};

struct fake_dev {
	struct ibv_device dev;
	struct ibv_context ctx;
	struct ibv_device_attr attr;
	uint8_t nports;
	enum ibv_port_state state[2];
	uint32_t max_msg;
};

struct fake_comp {
	struct ibv_comp_channel ch;
	int wfd;
	struct fake_cq *pending[256];
	int n_pending;
	int cqs;
};

struct fake_cq {
	struct ibv_cq cq;
	struct fake_comp *comp;
	struct ibv_wc *wc;
	int cap, head, count;
	bool armed;
	unsigned int unacked;
	int qps;
};

struct fake_qp {
	struct ibv_qp qp;
	struct fake_cq *cq;
	uint32_t max_send_wr;
	bool error;
};

struct fake_cm {
	struct rdma_event_channel ch;
	int wfd;
	struct rdma_cm_event *q[FAKE_MAX_EVENTS];
	int n;
};

struct fake_wr {
	struct fake_qp *qp;
	uint64_t wr_id;
	uint64_t addr;
	uint32_t len;
	uint32_t lkey;
	uint64_t raddr;
	uint32_t rkey;
	bool sig;
	bool done;
};

struct fake {
	struct fake_dev devs[FAKE_MAX_DEV];
	int ndev;
	bool no_cm;
	bool auto_cm;
	struct ibv_context *route_dev; /* id->verbs after ADDR_RESOLVED */
	int calls[OP_MAX];
	int fail_nth[OP_MAX];
	int alive_pd, alive_mr, alive_cq, alive_qp, alive_id, alive_comp,
	    alive_cm;
	struct ibv_context *pd_ctx;
	struct fake_comp *comp;
	struct fake_cm *cm;
	struct rdma_cm_id *ids[FAKE_MAX_IDS];
	bool id_alive[FAKE_MAX_IDS];
	int n_ids;
	struct rdma_cm_id *listen_id;
	uint16_t bound_port;
	struct sockaddr_storage dst;
	struct fake_wr wr[FAKE_MAX_WR];
	int n_wr;
	size_t mr_len[FAKE_MAX_MRS];
	char *mr_addr[FAKE_MAX_MRS];
	int n_mr;
	uint32_t next_qpn;
	char log[FAKE_MAX_LOG][512];
	int n_log;
	char violation[256];
	struct event_base *base;
};

#define AS(type, p) ((struct type *)(void *)(p))

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

	if (access != (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ))
		violate(f, "reg_mr access flags");
	if (should_fail(f, OP_REG_MR)) {
		errno = ENOMEM;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	mr->pd = pd;
	mr->addr = addr;
	mr->length = len;
	mr->lkey = 0x1000u + (uint32_t)f->n_mr;
	mr->rkey = 0x2000u + (uint32_t)f->n_mr;
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

	free(mr);
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

static void cq_push(struct fake *f, struct fake_cq *cq, uint64_t wr_id,
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
		struct fake_wr *r = &f->wr[f->n_wr++];

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
		if (qp_outstanding(f, qp) > qp->max_send_wr)
			violate(f, "send queue overflow");
	}
	return 0;
}

/* The QP goes to error: every WR not yet complete is flushed. */
static void qp_to_error(struct fake *f, struct fake_qp *qp)
{
	int i;

	qp->error = true;
	for (i = 0; i < f->n_wr; i++) {
		if (f->wr[i].qp != qp || f->wr[i].done)
			continue;
		f->wr[i].done = true;
		cq_push(f, qp->cq, f->wr[i].wr_id, IBV_WC_WR_FLUSH_ERR);
	}
}

static void cm_push(struct fake *f, struct rdma_cm_id *id,
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

static struct rdma_cm_id *
fake_id_new(struct fake *f, struct rdma_event_channel *ch, void *context)
{
	struct rdma_cm_id *id = calloc(1, sizeof(*id));

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
	free(id);
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
static void fake_cm_event(struct fake *f, struct rdma_cm_id *id,
			  enum rdma_cm_event_type type, int status)
{
	if (type == RDMA_CM_EVENT_ADDR_RESOLVED)
		id->verbs = route_dev(f);
	if (type == RDMA_CM_EVENT_DISCONNECTED && id->qp)
		qp_to_error(f, AS(fake_qp, id->qp));
	cm_push(f, id, NULL, type, status);
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
	qp->cq->qps--;
	free(qp);
	id->qp = NULL;
	f->alive_qp--;
}

static int f_connect(void *ctx, struct rdma_cm_id *id,
		     struct rdma_conn_param *param)
{
	struct fake *f = ctx;

	(void)param;
	if (should_fail(f, OP_CONNECT)) {
		errno = ECONNREFUSED;
		return -1;
	}
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
	if (f->auto_cm)
		fake_cm_event(f, id, RDMA_CM_EVENT_ESTABLISHED, 0);
	return 0;
}

static int f_reject(void *ctx, struct rdma_cm_id *id)
{
	struct fake *f = ctx;

	(void)id;
	f->calls[OP_REJECT]++;
	return 0;
}

static int f_disconnect(void *ctx, struct rdma_cm_id *id)
{
	struct fake *f = ctx;

	f->calls[OP_DISCONNECT]++;
	if (id->qp)
		qp_to_error(f, AS(fake_qp, id->qp));
	cm_push(f, id, NULL, RDMA_CM_EVENT_DISCONNECTED, 0);
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

static const struct rdma_verbs_ops fake_ops = {
    .get_device_list = f_get_device_list,
    .free_device_list = f_free_device_list,
    .get_devices = f_get_devices,
    .free_devices = f_free_devices,
    .query_device = f_query_device,
    .query_port = f_query_port,
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

static void fake_add_dev(struct fake *f, const char *name,
			 enum ibv_port_state p1, enum ibv_port_state p2)
{
	struct fake_dev *d = &f->devs[f->ndev++];

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
static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->base = event_base_new();
	f->auto_cm = true;
	fake_add_dev(f, "fake0", IBV_PORT_ACTIVE, 0);
	return f;
}

static void cfg_init(struct copy_engine_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_inflight = 8;
	cfg->max_inflight_bytes = 256u * MiB;
	cfg->timeout_ms = 30000;
	cfg->rdma_port = 20886;
}

static struct copy_engine *engine_new(struct fake *f,
				      const struct copy_engine_config *cfg)
{
	char err[256] = "";
	struct copy_engine *e;

	e = copy_engine_rdma_create_with(f->base, cfg, &fake_ops, f, err,
					 sizeof(err));
	ck_assert_msg(e != NULL, "create: %s", err);
	return e;
}

static struct copy_engine *engine_default(struct fake *f)
{
	struct copy_engine_config cfg;

	cfg_init(&cfg);
	return engine_new(f, &cfg);
}

static void run(struct fake *f)
{
	int i;

	for (i = 0; i < 8; i++)
		event_base_loop(f->base, EVLOOP_NONBLOCK);
}

/* Every resource released, in an order verbs accept. */
static void fake_free(struct fake *f)
{
	ck_assert_msg(!f->violation[0], "fake: %s", f->violation);
	ck_assert_int_eq(f->alive_pd, 0);
	ck_assert_int_eq(f->alive_mr, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_id, 0);
	ck_assert_int_eq(f->alive_comp, 0);
	ck_assert_int_eq(f->alive_cm, 0);
	event_base_free(f->base);
	free(f);
}

static bool logged(const struct fake *f, const char *part)
{
	int i;

	for (i = 0; i < f->n_log; i++)
		if (strstr(f->log[i], part))
			return true;
	return false;
}

/* Completes the next n signalled WRs (and the unsignalled ones before
 * them on the same QP), in post order. */
static void fake_complete(struct fake *f, int n)
{
	int i, j;

	for (i = 0; i < f->n_wr && n > 0; i++) {
		struct fake_wr *w = &f->wr[i];

		if (w->done || !w->sig || !w->qp)
			continue;
		for (j = 0; j <= i; j++)
			if (f->wr[j].qp == w->qp)
				f->wr[j].done = true;
		cq_push(f, w->qp->cq, w->wr_id, IBV_WC_SUCCESS);
		n--;
	}
	run(f);
}

/* The oldest outstanding WR fails with status; the rest of its QP is
 * flushed, as hardware does. */
static void fake_fail_next(struct fake *f, enum ibv_wc_status status)
{
	int i;

	for (i = 0; i < f->n_wr; i++) {
		struct fake_wr *w = &f->wr[i];

		if (w->done || !w->qp)
			continue;
		w->done = true;
		cq_push(f, w->qp->cq, w->wr_id, status);
		qp_to_error(f, w->qp);
		return;
	}
	ck_abort_msg("no outstanding WR to fail");
}

static int n_signalled(const struct fake *f)
{
	int i, n = 0;

	for (i = 0; i < f->n_wr; i++)
		n += f->wr[i].sig;
	return n;
}

static struct rdma_cm_id *last_live_id(struct fake *f)
{
	int i;

	for (i = f->n_ids - 1; i >= 0; i--)
		if (f->id_alive[i] && f->ids[i] != f->listen_id)
			return f->ids[i];
	ck_abort_msg("no live connection id");
	abort();
}

struct done_rec {
	int calls;
	int status;
	char error[RDMA_ERRLEN];
};

static void on_done(int status, const char *error, void *arg)
{
	struct done_rec *r = arg;

	r->calls++;
	r->status = status;
	snprintf(r->error, sizeof(r->error), "%s", error ? error : "(null)");
}

static struct copy_target target(const char *endpoint, uint64_t addr)
{
	struct copy_target t;

	memset(&t, 0, sizeof(t));
	t.endpoint = endpoint;
	t.remote_addr = addr;
	t.rkey = 0xbeef;
	return t;
}

#define REMOTE 0x7f0000000000ull

/* A registered buffer of len bytes (never touched: the fake moves no
 * bytes). */
static char *reg_buf(struct copy_engine *e, size_t len, uint32_t *rkey)
{
	char *buf = malloc(len);
	uint64_t addr = 0;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(e->ops->register_memory(e, buf, len, &addr, rkey), 0);
	ck_assert_uint_eq(addr, (uintptr_t)buf);
	return buf;
}

/* ---- endpoints ---------------------------------------------------------- */

static const struct {
	const char *endpoint;
	uint16_t default_port;
	int rc;
	const char *host;
	uint16_t port;
} endpoints[] = {
    {"10.0.0.2:7000", 20886, 0, "10.0.0.2", 20886},
    {"10.0.0.2:7000/20001", 20886, 0, "10.0.0.2", 20001},
    {"[fe80::1]:7000", 9, 0, "fe80::1", 9},
    {"[::1]:7000/5", 0, 0, "::1", 5},
    {"host-a:1", 2, 0, "host-a", 2},
    {"10.0.0.2:7000", 0, -1, "", 0},
    {"10.0.0.2", 20886, -1, "", 0},
    {":7000", 20886, -1, "", 0},
    {"10.0.0.2:7000/", 20886, -1, "", 0},
    {"10.0.0.2:7000/0", 20886, -1, "", 0},
    {"10.0.0.2:7000/65536", 20886, -1, "", 0},
    {"10.0.0.2:7000/12x", 20886, -1, "", 0},
    {"a:b:7000", 20886, -1, "", 0},
};
#define N_ENDPOINTS (int)(sizeof(endpoints) / sizeof(endpoints[0]))

START_TEST(test_parse_endpoint)
{
	char host[RDMA_HOSTLEN] = "";
	uint16_t port = 0;
	int rc;

	rc = rdma_parse_endpoint(endpoints[_i].endpoint,
				 endpoints[_i].default_port, host, sizeof(host),
				 &port);
	ck_assert_int_eq(rc, endpoints[_i].rc);
	if (rc == 0) {
		ck_assert_str_eq(host, endpoints[_i].host);
		ck_assert_uint_eq(port, endpoints[_i].port);
	}
}
END_TEST

/* ---- device choice ------------------------------------------------------ */

enum { DOWN = IBV_PORT_DOWN, UP = IBV_PORT_ACTIVE };

static const struct {
	int ndev; /* devices "mlx0", "mlx1" */
	int ports[2][2];
	bool no_cm;
	const char *want;
	const char *result; /* log line prefix on success, else err */
	int pd_dev;
} pick_cases[] = {
    {2,
     {{DOWN, 0}, {UP, 0}},
     false,
     NULL,
     "rdma: device mlx1 port 1: max_mr_size 18446744073709551615, max message "
     "1048576, 128 WRs per QP, rdma_cm port 20886",
     1},
    {2, {{UP, 0}, {UP, 0}}, false, NULL, "rdma: device mlx0 port 1:", 0},
    {2, {{DOWN, UP}, {UP, 0}}, false, "mlx0", "rdma: device mlx0 port 2:", 0},
    {2, {{UP, 0}, {UP, 0}}, false, "mlx1", "rdma: device mlx1 port 1:", 1},
    {2,
     {{UP, 0}, {UP, 0}},
     false,
     "nope",
     "rdma: device 'nope' not found (devices: mlx0, mlx1); use "
     "--rdma_device=NAME or --transport=tcp",
     -1},
    {2,
     {{DOWN, 0}, {DOWN, DOWN}},
     false,
     NULL,
     "rdma: no RDMA device has an ACTIVE port (2 checked); use --transport=tcp",
     -1},
    {2,
     {{DOWN, 0}, {UP, 0}},
     false,
     "mlx0",
     "rdma: device 'mlx0' has no ACTIVE port; use --transport=tcp",
     -1},
    {0,
     {{0, 0}, {0, 0}},
     false,
     NULL,
     "rdma: no RDMA device found (ibv_get_device_list returned none); use "
     "--transport=tcp",
     -1},
    {2,
     {{UP, 0}, {UP, 0}},
     true,
     NULL,
     "rdma: 2 RDMA device(s) but rdma_cm opened none (No such device; is "
     "rdma_ucm loaded?); use --transport=tcp",
     -1},
};
#define N_PICK (int)(sizeof(pick_cases) / sizeof(pick_cases[0]))

START_TEST(test_device_select)
{
	struct fake *f = fake_new();
	struct copy_engine_config cfg;
	struct copy_engine *e;
	char err[256] = "";
	int d;

	f->ndev = 0;
	for (d = 0; d < pick_cases[_i].ndev; d++) {
		char name[16];

		snprintf(name, sizeof(name), "mlx%d", d);
		fake_add_dev(f, name, pick_cases[_i].ports[d][0],
			     pick_cases[_i].ports[d][1]);
	}
	f->no_cm = pick_cases[_i].no_cm;
	cfg_init(&cfg);
	cfg.rdma_device = pick_cases[_i].want;
	e = copy_engine_rdma_create_with(f->base, &cfg, &fake_ops, f, err,
					 sizeof(err));
	if (pick_cases[_i].pd_dev < 0) {
		ck_assert_ptr_null(e);
		ck_assert_str_eq(err, pick_cases[_i].result);
		ck_assert_int_eq(f->n_log, 0);
	} else {
		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(f->n_log, 1);
		ck_assert_msg(!strncmp(f->log[0], pick_cases[_i].result,
				       strlen(pick_cases[_i].result)),
			      "log: %s", f->log[0]);
		ck_assert_ptr_eq(f->pd_ctx,
				 &f->devs[pick_cases[_i].pd_dev].ctx);
		ck_assert_str_eq(e->ops->name, "rdma");
		copy_engine_destroy(e);
	}
	fake_free(f);
}
END_TEST

/* With the real libibverbs: on a host without RDMA hardware (CI, this
 * machine) the engine refuses with the one-line reason. */
START_TEST(test_real_no_device)
{
	struct event_base *base = event_base_new();
	struct copy_engine_config cfg;
	struct copy_engine *e;
	struct ibv_device **list;
	char err[256] = "";
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	cfg_init(&cfg);
	cfg.rdma_port = 0;
	e = copy_engine_rdma_create(base, &cfg, err, sizeof(err));
	if (n == 0) {
		ck_assert_ptr_null(e);
		ck_assert_str_eq(
		    err, "rdma: no RDMA device found (ibv_get_device_list "
			 "returned none); use --transport=tcp");
	} else {
		ck_assert_msg(e || err[0], "NULL without a reason");
		copy_engine_destroy(e);
	}
	event_base_free(base);
}
END_TEST

/* Each setup step failing: NULL, the reason, nothing left behind. */
static const struct {
	enum fake_op op;
	const char *err;
} create_fails[] = {
    {OP_ALLOC_PD, "rdma: ibv_alloc_pd on fake0: Cannot allocate memory"},
    {OP_COMP_CH, "rdma: ibv_create_comp_channel on fake0: Too many open files"},
    {OP_CM_CH, "rdma: rdma_create_event_channel: No such device"},
    {OP_CREATE_ID, "rdma: rdma_create_id: Cannot allocate memory"},
    {OP_BIND,
     "rdma: cannot listen on rdma_cm port 20886: Address already in use"},
    {OP_LISTEN,
     "rdma: cannot listen on rdma_cm port 20886: Address already in use"},
};
#define N_CREATE_FAILS (int)(sizeof(create_fails) / sizeof(create_fails[0]))

START_TEST(test_create_fails)
{
	struct fake *f = fake_new();
	struct copy_engine_config cfg;
	char err[256] = "";

	cfg_init(&cfg);
	f->fail_nth[create_fails[_i].op] = 1;
	ck_assert_ptr_null(copy_engine_rdma_create_with(
	    f->base, &cfg, &fake_ops, f, err, sizeof(err)));
	ck_assert_str_eq(err, create_fails[_i].err);
	fake_free(f);
}
END_TEST

START_TEST(test_listener)
{
	struct fake *f = fake_new();
	struct copy_engine_config cfg;
	struct copy_engine *e;

	cfg_init(&cfg);
	cfg.rdma_port = 7001;
	e = engine_new(f, &cfg);
	ck_assert_ptr_nonnull(f->listen_id);
	ck_assert_uint_eq(f->bound_port, 7001);
	ck_assert_int_eq(f->alive_id, 1);
	copy_engine_destroy(e);
	fake_free(f);

	/* rdma_port 0: the cluster-wide default. */
	f = fake_new();
	cfg.rdma_port = 0;
	e = engine_new(f, &cfg);
	ck_assert_uint_eq(f->bound_port, RDMA_DEFAULT_PORT);
	ck_assert_int_eq(f->alive_id, 1);
	copy_engine_destroy(e);
	fake_free(f);
}
END_TEST

/* ---- registration ------------------------------------------------------- */

START_TEST(test_register_once)
{
	struct fake *f = fake_new();
	struct copy_engine *e = engine_default(f);
	uint64_t addr = 0;
	uint32_t rkey = 0, rkey2 = 0;
	char *buf = reg_buf(e, 4 * MiB, &rkey);

	ck_assert_int_eq(f->n_mr, 1);
	ck_assert_uint_eq(f->mr_len[0], 4 * MiB);
	ck_assert_uint_eq(rkey, 0x2000);
	/* The same range, or a part of it: nothing new is registered. */
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf, 4 * MiB, &addr, &rkey2), 0);
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf + MiB, MiB, &addr, &rkey2), 0);
	ck_assert_uint_eq(addr, (uintptr_t)(buf + MiB));
	ck_assert_uint_eq(rkey2, rkey);
	ck_assert_int_eq(e->ops->register_memory(e, buf, MiB, NULL, NULL), 0);
	ck_assert_int_eq(f->n_mr, 1);
	ck_assert_int_eq(e->ops->register_memory(e, NULL, 1, &addr, &rkey2),
			 -EINVAL);
	ck_assert_int_eq(e->ops->register_memory(e, buf, 0, &addr, &rkey2),
			 -EINVAL);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

START_TEST(test_register_split)
{
	struct fake *f = fake_new();
	struct copy_engine *e;
	uint32_t rkey = 0;
	char *buf;

	f->devs[0].attr.max_mr_size = 4 * MiB;
	e = engine_default(f);
	buf = reg_buf(e, 10 * MiB, &rkey);
	ck_assert_int_eq(f->n_mr, 3);
	ck_assert_ptr_eq(f->mr_addr[0], buf);
	ck_assert_ptr_eq(f->mr_addr[1], buf + 4 * MiB);
	ck_assert_ptr_eq(f->mr_addr[2], buf + 8 * MiB);
	ck_assert_uint_eq(f->mr_len[0], 4 * MiB);
	ck_assert_uint_eq(f->mr_len[1], 4 * MiB);
	ck_assert_uint_eq(f->mr_len[2], 2 * MiB);
	ck_assert_uint_eq(rkey, 0x2000); /* the first MR's */
	ck_assert(logged(f, "registered as 3 MRs (max_mr_size 4194304); remote "
			    "writes reach only the first 4194304 bytes"));
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* The second chunk fails: the first is deregistered, nothing is kept. */
START_TEST(test_register_split_fails)
{
	struct fake *f = fake_new();
	struct copy_engine *e;
	uint64_t addr = 0;
	uint32_t rkey = 0;
	char *buf = malloc(10 * MiB);

	f->devs[0].attr.max_mr_size = 4 * MiB;
	f->fail_nth[OP_REG_MR] = 2;
	e = engine_default(f);
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf, 10 * MiB, &addr, &rkey), -ENOMEM);
	ck_assert_int_eq(f->alive_mr, 0);
	/* Now it works, from scratch. */
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf, 10 * MiB, &addr, &rkey), 0);
	ck_assert_int_eq(f->alive_mr, 3);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* ---- splitting and signalling ------------------------------------------- */

static const struct {
	uint64_t len;
	uint32_t max_msg;
	int max_qp_wr; /* WR window = min(max_qp_wr, 128) */
	int n_wr;
	uint32_t last_len;
	const char *signalled; /* per WR, in post order */
} split_cases[] = {
    {10 * MiB, MiB, 16384, 10, MiB, "0000000001"},
    {10 * MiB + 123, MiB, 16384, 11, 123, "00000000001"},
    {10 * MiB - 1, MiB, 16384, 10, MiB - 1, "0000000001"},
    {MiB, MiB, 16384, 1, MiB, "1"},
    {1, MiB, 16384, 1, 1, "1"},
    {10 * MiB, 3 * MiB, 16384, 4, MiB, "0001"},
    /* window 4: every 2nd WR signalled, so the queue keeps draining */
    {10 * MiB, MiB, 4, 10, MiB, "0101010101"},
    {5 * MiB, MiB, 4, 5, MiB, "01011"},
    /* window 1: every WR signalled */
    {3 * MiB, MiB, 1, 3, MiB, "111"},
    /* window 128: signal_every 64 */
    {130 * 4096, 4096, 16384, 130, 4096, NULL},
};
#define N_SPLIT (int)(sizeof(split_cases) / sizeof(split_cases[0]))

START_TEST(test_split)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct copy_engine *e;
	uint64_t off = 0;
	uint32_t rkey;
	char *buf;
	int i, rounds = 0;

	f->devs[0].max_msg = split_cases[_i].max_msg;
	f->devs[0].attr.max_qp_wr = split_cases[_i].max_qp_wr;
	e = engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(
	    e->ops->post_write(e, buf, split_cases[_i].len, &t, on_done, &r),
	    0);
	run(f);
	/* Complete until everything is posted and done. */
	while (r.calls == 0 && rounds++ < 200)
		fake_complete(f, 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.error, "(null)");
	ck_assert_int_eq(f->n_wr, split_cases[_i].n_wr);
	for (i = 0; i < f->n_wr; i++) {
		uint32_t want = i + 1 == f->n_wr ? split_cases[_i].last_len
						 : split_cases[_i].max_msg;

		ck_assert_uint_eq(f->wr[i].addr, (uintptr_t)(buf + off));
		ck_assert_uint_eq(f->wr[i].raddr, REMOTE + off);
		ck_assert_uint_eq(f->wr[i].len, want);
		ck_assert_uint_eq(f->wr[i].rkey, 0xbeef);
		ck_assert_uint_eq(f->wr[i].lkey, 0x1000);
		ck_assert_uint_eq(f->wr[i].wr_id, f->wr[0].wr_id);
		if (split_cases[_i].signalled)
			ck_assert_int_eq(f->wr[i].sig,
					 split_cases[_i].signalled[i] == '1');
		off += want;
	}
	ck_assert_uint_eq(off, split_cases[_i].len);
	if (!split_cases[_i].signalled) {
		ck_assert_int_eq(n_signalled(f), 3); /* 63, 127, 129 */
		ck_assert(f->wr[63].sig && f->wr[127].sig && f->wr[129].sig);
	}
	run(f);
	ck_assert_int_eq(r.calls, 1);
	copy_engine_destroy(e);
	ck_assert_int_eq(r.calls, 1);
	free(buf);
	fake_free(f);
}
END_TEST

/* WRs never cross a local MR: 3 MiB messages over 4 MiB MRs. */
START_TEST(test_split_at_mr_boundary)
{
	static const uint32_t lens[] = {3, 1, 3, 1, 2};
	static const uint32_t lkeys[] = {0x1000, 0x1000, 0x1001, 0x1001,
					 0x1002};
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct copy_engine *e;
	uint64_t off = 0;
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_mr_size = 4 * MiB;
	f->devs[0].max_msg = 3 * MiB;
	e = engine_default(f);
	buf = reg_buf(e, 10 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 10 * MiB, &t, on_done, &r),
			 0);
	run(f);
	ck_assert_int_eq(f->n_wr, 5);
	for (i = 0; i < 5; i++) {
		ck_assert_uint_eq(f->wr[i].len, lens[i] * MiB);
		ck_assert_uint_eq(f->wr[i].lkey, lkeys[i]);
		ck_assert_uint_eq(f->wr[i].addr, (uintptr_t)(buf + off));
		ck_assert_uint_eq(f->wr[i].raddr, REMOTE + off);
		off += lens[i] * MiB;
	}
	fake_complete(f, 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* Window of 4: 4 WRs out, the rest posted as completions free room. */
START_TEST(test_wr_window)
{
	static const int posted_after[] = {4, 6, 8, 10, 10};
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct copy_engine *e;
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_qp_wr = 4;
	e = engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 10 * MiB, &t, on_done, &r),
			 0);
	run(f);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(f->n_wr, posted_after[i]);
		ck_assert_int_eq(r.calls, 0);
		fake_complete(f, 1);
	}
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* Copies share one QP and its window, FIFO; callbacks in order. */
static int order[4], n_order;

static void on_done_order(int status, const char *error, void *arg)
{
	(void)error;
	ck_assert_int_eq(status, 0);
	order[n_order++] = (int)(intptr_t)arg;
}

START_TEST(test_copies_share_connection)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_target t2 = target("10.0.0.2:7001", REMOTE + 64 * MiB);
	struct copy_engine *e;
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_qp_wr = 4;
	e = engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	n_order = 0;
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(e->ops->post_write(e, buf + i * 3 * MiB,
						    3 * MiB, i == 1 ? &t2 : &t,
						    on_done_order,
						    (void *)(intptr_t)i),
				 0);
	run(f);
	/* One connection (same host, same rdma port): 1 id + listener. */
	ck_assert_int_eq(f->calls[OP_CREATE_ID], 2);
	ck_assert_int_eq(f->n_wr, 4);
	ck_assert_uint_eq(f->wr[3].raddr, REMOTE + 64 * MiB);
	for (i = 0; i < 10 && n_order < 3; i++)
		fake_complete(f, 1);
	ck_assert_int_eq(n_order, 3);
	ck_assert_int_eq(order[0], 0);
	ck_assert_int_eq(order[1], 1);
	ck_assert_int_eq(order[2], 2);
	ck_assert_int_eq(f->n_wr, 9);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* ---- completions and failures ------------------------------------------- */

/* The callback never runs inside post_write, even when it fails at once. */
START_TEST(test_callback_deferred)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0}, r2 = {0};
	struct copy_engine *e = engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 4 * MiB, &rkey);

	run(f);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	run(f); /* connected; the WR is out */
	f->fail_nth[OP_POST_SEND] = f->calls[OP_POST_SEND] + 1;
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_int_eq(r2.calls, 0);
	run(f);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(
	    r2.error,
	    "rdma: ibv_post_send to 10.0.0.2:20886: Cannot allocate memory");
	ck_assert_int_eq(f->alive_qp, 0);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

START_TEST(test_post_invalid)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_target bad = target("10.0.0.2", REMOTE);
	struct copy_target small = target("10.0.0.2:7000", REMOTE);
	struct copy_engine *e = engine_default(f);
	struct done_rec r = {0};
	uint32_t rkey;
	char *buf, other[16];

	buf = reg_buf(e, 4 * MiB, &rkey);
	small.length = MiB;
	ck_assert_int_eq(e->ops->post_write(e, buf, 0, &t, on_done, &r),
			 -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, NULL, 1, &t, on_done, &r),
			 -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, NULL, on_done, &r),
			 -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, &t, NULL, &r), -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, &bad, on_done, &r),
			 -EINVAL);
	/* beyond the registered range, or unregistered */
	ck_assert_int_eq(
	    e->ops->post_write(e, buf + 1, 4 * MiB, &t, on_done, &r), -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, other, 1, &t, on_done, &r),
			 -EINVAL);
	/* longer than the granted region */
	ck_assert_int_eq(
	    e->ops->post_write(e, buf, MiB + 1, &small, on_done, &r), -EINVAL);
	/* resolve_addr refuses: the error comes back, no callback */
	f->fail_nth[OP_RESOLVE_ADDR] = 1;
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, &t, on_done, &r),
			 -EHOSTUNREACH);
	run(f);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_int_eq(f->n_wr, 0);
	ck_assert_int_eq(f->alive_id, 1); /* the listener */
	copy_engine_destroy(e);
	ck_assert_int_eq(r.calls, 0);
	free(buf);
	fake_free(f);
}
END_TEST

/* An error completion: -EIO for every copy on the connection, once; the
 * flushed WRs that follow are neither logged nor reported again. */
START_TEST(test_error_completion)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r1 = {0}, r2 = {0};
	struct copy_engine *e;
	uint32_t rkey;
	char *buf;
	int logs;

	f->devs[0].attr.max_qp_wr = 4;
	e = engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 3 * MiB, &t, on_done, &r1),
			 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, 3 * MiB, &t, on_done, &r2),
			 0);
	run(f);
	ck_assert_int_eq(f->n_wr, 4);
	logs = f->n_log;
	fake_fail_next(f, IBV_WC_REM_ACCESS_ERR);
	run(f);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r1.status, -EIO);
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(r1.error,
			 "rdma: write to 10.0.0.2:20886 failed: remote "
			 "access error (wc status 10, vendor error 0x0)");
	ck_assert_str_eq(r2.error, r1.error);
	ck_assert_int_eq(f->n_log, logs + 1);
	ck_assert_str_eq(f->log[logs], r1.error);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	ck_assert_int_eq(f->alive_id, 1); /* the listener */
	run(f);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	copy_engine_destroy(e);
	ck_assert_int_eq(r1.calls, 1);
	free(buf);
	fake_free(f);
}
END_TEST

/* Peer disconnects (flushes land in the CQ too): -EIO once; the next copy
 * to that peer makes a new connection. */
START_TEST(test_disconnect_reconnect)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r1 = {0}, r2 = {0};
	struct copy_engine *e = engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 16 * MiB, &rkey);

	ck_assert_int_eq(e->ops->post_write(e, buf, 3 * MiB, &t, on_done, &r1),
			 0);
	run(f);
	ck_assert_int_eq(f->n_wr, 3);
	fake_cm_event(f, last_live_id(f), RDMA_CM_EVENT_DISCONNECTED, 0);
	run(f);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r1.status, -EIO);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	/* Exactly one line for the loss, whichever event came first. */
	ck_assert(logged(f, "rdma: connection to 10.0.0.2:20886"));
	ck_assert_int_eq(f->n_log, 2);

	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	run(f);
	ck_assert_int_eq(f->calls[OP_CREATE_ID], 3);
	ck_assert_int_eq(f->calls[OP_CREATE_QP], 2);
	ck_assert_int_eq(f->n_wr, 4);
	fake_complete(f, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, 0);
	ck_assert_int_eq(r1.calls, 1);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* Completions that made it before the disconnect still count. */
START_TEST(test_disconnect_keeps_successes)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r1 = {0}, r2 = {0};
	struct copy_engine *e = engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 16 * MiB, &rkey);
	int i;

	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r1), 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	run(f);
	/* r1's completion is in the CQ, but the CM event is handled first. */
	f->wr[0].done = true;
	cq_push(f, f->wr[0].qp->cq, f->wr[0].wr_id, IBV_WC_SUCCESS);
	f->comp->n_pending = 0;
	fake_cm_event(f, last_live_id(f), RDMA_CM_EVENT_DISCONNECTED, 0);
	for (i = 0; i < 8; i++)
		event_base_loop(f->base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r1.status, 0);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(r2.error, "rdma: connection to 10.0.0.2:20886: "
				   "RDMA_CM_EVENT_DISCONNECTED (status 0)");
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

static const struct {
	enum rdma_cm_event_type at; /* fails instead of this step */
	enum rdma_cm_event_type ev;
	int status;
	const char *error;
} connect_fails[] = {
    {RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ADDR_ERROR, -110,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_ADDR_ERROR (status "
     "-110)"},
    {RDMA_CM_EVENT_ROUTE_RESOLVED, RDMA_CM_EVENT_ROUTE_ERROR, -110,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_ROUTE_ERROR (status "
     "-110)"},
    {RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_REJECTED, 28,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_REJECTED (status 28)"},
    {RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_UNREACHABLE, -110,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_UNREACHABLE (status "
     "-110)"},
    {RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_CONNECT_ERROR, -5,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_CONNECT_ERROR (status "
     "-5)"},
};
#define N_CONNECT_FAILS (int)(sizeof(connect_fails) / sizeof(connect_fails[0]))

/* Connection setup driven by hand, failing at one step. */
START_TEST(test_connect_fails)
{
	static const enum rdma_cm_event_type steps[] = {
	    RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ROUTE_RESOLVED,
	    RDMA_CM_EVENT_ESTABLISHED};
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct copy_engine *e;
	struct rdma_cm_id *id;
	uint32_t rkey;
	char *buf;
	int s;

	f->auto_cm = false;
	e = engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	id = last_live_id(f);
	for (s = 0; steps[s] != connect_fails[_i].at; s++) {
		fake_cm_event(f, id, steps[s], 0);
		run(f);
	}
	fake_cm_event(f, id, connect_fails[_i].ev, connect_fails[_i].status);
	run(f);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(r.error, connect_fails[_i].error);
	ck_assert_int_eq(f->n_wr, 0);
	ck_assert_int_eq(f->alive_id, 1);
	ck_assert_int_eq(f->calls[OP_DISCONNECT], 0);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* Setup calls failing: the copy fails with the reason, nothing leaks. */
static const struct {
	enum fake_op op;
	const char *error;
} setup_fails[] = {
    {OP_RESOLVE_ROUTE,
     "rdma: resolve route to 10.0.0.2:20886: Network is unreachable"},
    {OP_CREATE_CQ,
     "rdma: queue pair for 10.0.0.2:20886: Cannot allocate memory"},
    {OP_REQ_NOTIFY, "rdma: queue pair for 10.0.0.2:20886: Input/output error"},
    {OP_CREATE_QP,
     "rdma: queue pair for 10.0.0.2:20886: Cannot allocate memory"},
    {OP_CONNECT, "rdma: rdma_connect to 10.0.0.2:20886: Connection refused"},
};
#define N_SETUP_FAILS (int)(sizeof(setup_fails) / sizeof(setup_fails[0]))

START_TEST(test_setup_fails)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct copy_engine *e = engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 4 * MiB, &rkey);

	f->fail_nth[setup_fails[_i].op] = 1;
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	run(f);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(r.error, setup_fails[_i].error);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	ck_assert_int_eq(f->alive_id, 1);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* The route goes out through another device than the engine's PD. */
START_TEST(test_route_other_device)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct copy_engine *e;
	uint32_t rkey;
	char *buf;

	fake_add_dev(f, "fake1", IBV_PORT_ACTIVE, 0);
	f->route_dev = &f->devs[1].ctx;
	e = engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	run(f);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(
	    r.error,
	    "rdma: route to 10.0.0.2:20886 goes through device fake1, not fake0");
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* Many completion events: acked in batches, all acked before the CQ goes
 * (the fake flags destroy_cq with unacked events). */
START_TEST(test_cq_event_acks)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct copy_engine *e = engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 4 * MiB, &rkey);
	int i;

	for (i = 0; i < 40; i++) {
		ck_assert_int_eq(
		    e->ops->post_write(e, buf, 4096, &t, on_done, &r), 0);
		run(f);
		fake_complete(f, 1);
		ck_assert_int_eq(r.calls, i + 1);
		ck_assert_int_eq(r.status, 0);
	}
	ck_assert_int_eq(f->calls[OP_ACK_CQ], 40 / RDMA_CQ_ACK_BATCH);
	copy_engine_destroy(e);
	ck_assert_int_eq(f->calls[OP_ACK_CQ], 40 / RDMA_CQ_ACK_BATCH + 1);
	free(buf);
	fake_free(f);
}
END_TEST

/* ---- timeouts ----------------------------------------------------------- */

static void run_until(struct fake *f, const int *calls, int want)
{
	int i;

	for (i = 0; i < 400; i++) {
		struct timeval tv = {0, 5000};

		event_base_loopexit(f->base, &tv);
		event_base_dispatch(f->base);
		if (*calls >= want)
			break;
	}
}

static void run_for(struct fake *f, int ms)
{
	struct timeval tv = {0, ms * 1000};

	event_base_loopexit(f->base, &tv);
	event_base_dispatch(f->base);
}

/* Never connected: the copy times out alone; the connection stays. */
START_TEST(test_timeout_queued)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_engine_config cfg;
	struct done_rec r = {0};
	struct copy_engine *e;
	uint32_t rkey;
	char *buf;

	f->auto_cm = false;
	cfg_init(&cfg);
	cfg.timeout_ms = 20;
	e = engine_new(f, &cfg);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	run_until(f, &r.calls, 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	ck_assert_str_eq(
	    r.error,
	    "rdma: copy of 1048576 bytes to 10.0.0.2:20886 timed out after 20 ms");
	ck_assert_int_eq(f->alive_id, 2);
	copy_engine_destroy(e);
	ck_assert_int_eq(r.calls, 1);
	free(buf);
	fake_free(f);
}
END_TEST

/* In flight: its WRs cannot be withdrawn, so the connection goes. */
START_TEST(test_timeout_inflight)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_engine_config cfg;
	struct done_rec r1 = {0}, r2 = {0};
	struct copy_engine *e;
	uint32_t rkey;
	char *buf;

	cfg_init(&cfg);
	cfg.timeout_ms = 20;
	e = engine_new(f, &cfg);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r1), 0);
	run_for(f, 5); /* connected, r1 in flight */
	ck_assert_int_eq(r1.calls, 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	run_until(f, &r2.calls, 1);
	ck_assert_int_eq(r1.status, -ETIMEDOUT);
	ck_assert_str_eq(
	    r1.error,
	    "rdma: copy of 1048576 bytes to 10.0.0.2:20886 timed out after 20 ms");
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(
	    r2.error,
	    "rdma: connection to 10.0.0.2:20886 reset: a copy timed out after 20 ms");
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->calls[OP_DISCONNECT], 1);
	copy_engine_destroy(e);
	free(buf);
	fake_free(f);
}
END_TEST

/* ---- destroy ------------------------------------------------------------ */

START_TEST(test_destroy_cancels)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_target t2 = target("10.0.0.3:7000", REMOTE + 64 * MiB);
	struct done_rec r1 = {0}, r2 = {0}, r3 = {0};
	struct copy_engine *e;
	struct fake_wr *w;
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_qp_wr = 2;
	e = engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 4 * MiB, &t, on_done, &r1),
			 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t2, on_done, &r2), 0);
	run(f);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t2, on_done, &r3), 0);
	run(f);
	ck_assert_int_eq(f->n_wr, 4);
	/* r2 (the first WR to 10.0.0.3) completed, its callback not run */
	for (i = 0; f->wr[i].raddr != REMOTE + 64 * MiB; i++)
		;
	w = &f->wr[i];
	w->done = true;
	cq_push(f, w->qp->cq, w->wr_id, IBV_WC_SUCCESS);
	f->comp->n_pending = 0;
	copy_engine_destroy(e);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r1.status, -ECANCELED);
	ck_assert_str_eq(r1.error, "rdma: copy engine destroyed");
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, 0);
	ck_assert_int_eq(r3.calls, 1);
	ck_assert_int_eq(r3.status, -ECANCELED);
	ck_assert_int_eq(f->calls[OP_DISCONNECT], 2);
	ck_assert_int_eq(f->n_log, 1); /* only the device line */
	free(buf);
	fake_free(f);
}
END_TEST

static struct copy_engine *destroy_me;
static int destroy_calls;

static void on_done_destroy(int status, const char *error, void *arg)
{
	(void)error;
	(void)arg;
	destroy_calls++;
	if (destroy_calls == 1) {
		ck_assert_int_eq(status, 0);
		copy_engine_destroy(destroy_me);
	} else {
		ck_assert_int_eq(status, -ECANCELED);
	}
}

/* Destroying the engine from a callback: the rest still get theirs. */
START_TEST(test_destroy_in_callback)
{
	struct fake *f = fake_new();
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	uint32_t rkey;
	char *buf;
	int i;

	destroy_me = engine_default(f);
	destroy_calls = 0;
	buf = reg_buf(destroy_me, 4 * MiB, &rkey);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(
		    destroy_me->ops->post_write(destroy_me, buf, MiB, &t,
						on_done_destroy, NULL),
		    0);
	run(f);
	fake_complete(f, 1);
	ck_assert_int_eq(destroy_calls, 3);
	free(buf);
	fake_free(f);
}
END_TEST

/* ---- inbound ------------------------------------------------------------ */

static struct rdma_cm_id *connect_request(struct fake *f,
					  struct ibv_context *dev)
{
	struct rdma_cm_id *id = fake_id_new(f, &f->cm->ch, NULL);
	struct sockaddr_in *sin = AS(sockaddr_in, &id->route.addr.dst_addr);

	id->verbs = dev;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(40000);
	sin->sin_addr.s_addr = htonl(0x0a000009);
	cm_push(f, id, f->listen_id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	return id;
}

START_TEST(test_inbound)
{
	struct fake *f = fake_new();
	struct copy_engine *e;
	struct rdma_cm_id *id;

	fake_add_dev(f, "fake1", IBV_PORT_ACTIVE, 0);
	e = engine_default(f);
	id = connect_request(f, &f->devs[0].ctx);
	run(f);
	ck_assert_ptr_nonnull(id->qp);
	ck_assert_ptr_eq(id->qp->pd->context, &f->devs[0].ctx);
	ck_assert_int_eq(f->calls[OP_REJECT], 0);
	ck_assert_int_eq(f->alive_qp, 1);
	/* The peer goes away: a normal event, torn down quietly. */
	fake_cm_event(f, id, RDMA_CM_EVENT_DISCONNECTED, 0);
	run(f);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_id, 1);
	ck_assert_int_eq(f->n_log, 1);

	/* Through another device: refused. */
	connect_request(f, &f->devs[1].ctx);
	run(f);
	ck_assert_int_eq(f->calls[OP_REJECT], 1);
	ck_assert_int_eq(f->alive_id, 1);
	ck_assert(logged(
	    f,
	    "rdma: refused 10.0.0.9:40000: it came through device fake1, not fake0"));

	/* Accept fails: rejected, nothing left. */
	f->fail_nth[OP_ACCEPT] = f->calls[OP_ACCEPT] + 1;
	connect_request(f, &f->devs[0].ctx);
	run(f);
	ck_assert_int_eq(f->calls[OP_REJECT], 2);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_id, 1);

	/* One still connected at destroy. */
	connect_request(f, &f->devs[0].ctx);
	run(f);
	ck_assert_int_eq(f->alive_qp, 1);
	copy_engine_destroy(e);
	fake_free(f);
}
END_TEST

Suite *make_rdma_suite(void)
{
	Suite *s = suite_create("rdma");
	TCase *dev = tcase_create("device");
	TCase *reg = tcase_create("register");
	TCase *wr = tcase_create("writes");
	TCase *fail = tcase_create("failures");
	TCase *life = tcase_create("lifecycle");

	tcase_add_loop_test(dev, test_parse_endpoint, 0, N_ENDPOINTS);
	tcase_add_loop_test(dev, test_device_select, 0, N_PICK);
	tcase_add_test(dev, test_real_no_device);
	tcase_add_loop_test(dev, test_create_fails, 0, N_CREATE_FAILS);
	tcase_add_test(dev, test_listener);
	tcase_add_test(reg, test_register_once);
	tcase_add_test(reg, test_register_split);
	tcase_add_test(reg, test_register_split_fails);
	tcase_add_loop_test(wr, test_split, 0, N_SPLIT);
	tcase_add_test(wr, test_split_at_mr_boundary);
	tcase_add_test(wr, test_wr_window);
	tcase_add_test(wr, test_copies_share_connection);
	tcase_add_test(wr, test_cq_event_acks);
	tcase_add_test(fail, test_callback_deferred);
	tcase_add_test(fail, test_post_invalid);
	tcase_add_test(fail, test_error_completion);
	tcase_add_test(fail, test_disconnect_reconnect);
	tcase_add_test(fail, test_disconnect_keeps_successes);
	tcase_add_loop_test(fail, test_connect_fails, 0, N_CONNECT_FAILS);
	tcase_add_loop_test(fail, test_setup_fails, 0, N_SETUP_FAILS);
	tcase_add_test(fail, test_route_other_device);
	tcase_add_test(fail, test_timeout_queued);
	tcase_add_test(fail, test_timeout_inflight);
	tcase_add_test(life, test_destroy_cancels);
	tcase_add_test(life, test_destroy_in_callback);
	tcase_add_test(life, test_inbound);
	suite_add_tcase(s, dev);
	suite_add_tcase(s, reg);
	suite_add_tcase(s, wr);
	suite_add_tcase(s, fail);
	suite_add_tcase(s, life);
	return s;
}

#endif /* MCREPL_HAVE_RDMA */
