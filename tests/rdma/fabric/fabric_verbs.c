/*
 * A fake RDMA fabric between processes, behind the engine's ops table
 * (daemons/rdma/rdma_verbs.h), for the test build of the worker
 * (mcrepl-worker-fakerdma, mk/rdma.mk; never linked into mcrepl-worker).
 * It defines copy_engine_rdma_create, so that worker runs the real engine
 * (device choice, MR table, rdma_cm state machine, splitting, signalling,
 * teardown) over:
 *
 * Memory. reg_mr turns the registered pages into a shared file: it writes
 * their bytes to DIR/mr-<pid>-<key> (a 4 KiB header, then the bytes) and
 * maps the file over them (MAP_FIXED, same address), so the process keeps
 * its memory and peers can reach it. The header says which process and PD
 * own the MR, its address, length and access flags, and whether it is
 * still registered (dereg_mr clears that and unlinks the file). Addresses
 * and lengths must be page-aligned (the worker's segments are mappings).
 *
 * rdma_cm. A listener is a unix SEQPACKET socket DIR/cm-<port> (the port
 * the engine binds; one host: addresses are not routed). connect sends a
 * request with the private data; the listener's channel gets
 * CONNECT_REQUEST; accept answers and both ends get ESTABLISHED; reject
 * gives the source REJECTED. A connection to a port nobody listens on is
 * REJECTED. disconnect, or the peer's socket closing (its process died),
 * gives DISCONNECTED and puts the QP in error. Every event is queued on
 * the event channel's pipe and read from the loop.
 *
 * One-sided work requests. post_send queues WRITEs (and READs); a timer on
 * the worker's loop executes them in post order, never inside a verbs
 * call: the local SGE must lie in an MR of the QP's PD with that lkey
 * (LOC_PROT_ERR), the remote range in a registered MR of the peer's
 * process and PD with that rkey, REMOTE_WRITE (REMOTE_READ) and no wrap
 * (REM_ACCESS_ERR). Then the bytes are copied with memcpy into (out of)
 * the peer's file mapping. An error puts the QP in error; WRs behind it,
 * or posted on a QP in error, complete with WR_FLUSH_ERR. Signalled WRs
 * and errors complete into the CQ; an armed CQ is reported on its
 * completion channel's pipe (get_cq_event), as the engine expects.
 *
 * Environment (read when the engine is created):
 *   MCREPL_FAKE_RDMA_DIR          the fabric directory (required; on
 *                                 tmpfs, e.g. under /dev/shm)
 *   MCREPL_FAKE_RDMA_WR_DELAY_MS  each WR takes this long (slow copies,
 *                                 to kill a process mid-copy)
 *   MCREPL_FAKE_RDMA_BAD_RKEY=1   MRs are handed out with a wrong rkey
 *   MCREPL_FAKE_RDMA_SILENT=1     a peer's death is not reported (a host
 *                                 that crashed: no DISCONNECTED ever)
 *   MCREPL_FAKE_RDMA_MR_LIMIT=N   peers may reach only the first N bytes
 *                                 of each MR (remote bounds checks)
 * SIGUSR2 removes the device: IBV_EVENT_DEVICE_FATAL on the async fd and
 * RDMA_CM_EVENT_DEVICE_REMOVAL on every event channel; QPs go to error.
 *
 * DIR/state-<pid> is rewritten after every change, one line the tests
 * read: "ids=N qps=N inbound_qps=N mrs=N writes=N bytes=N
 * access_errors=N flushed=N dead=N".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>

#include "copy_engine_rdma.h"

#define FV_HDR 4096u
#define FV_MAGIC 0x4d435246u /* "MCRF" */
#define FV_MAX_MSG (256u << 10)
#define FV_MAX_QP_WR 8
#define FV_PDATA 56

/* The header page of an MR file, shared with every peer that maps it. */
struct fv_hdr {
	uint32_t magic;
	volatile uint32_t valid;
	uint32_t node, pd;
	uint64_t addr, len;
	uint32_t access, rkey;
};

struct fv_mr {
	struct ibv_mr mr;
	int access;
	int fd;
	struct fv_hdr *hdr;
	char path[300];
	struct fv_mr *next;
};

/* A peer's MR file, mapped (cached until the engine closes). */
struct fv_rmap {
	uint32_t node, rkey;
	struct fv_hdr *hdr;
	size_t maplen;
	struct fv_rmap *next;
};

struct fv_cq;

struct fv_comp {
	struct ibv_comp_channel ch;
	int wfd;
	struct fv_cq *pending[256];
	int n_pending;
};

struct fv_cq {
	struct ibv_cq cq;
	struct fv_comp *comp;
	struct ibv_wc *wc;
	int cap, head, count;
	bool armed;
};

struct fv_id;

struct fv_qp {
	struct ibv_qp qp;
	struct fv_cq *cq;
	struct fv_id *fid;
	uint32_t max_send_wr;
	bool error;
	struct fv_qp *next;
};

struct fv_cm {
	struct rdma_event_channel ch;
	int wfd;
	struct rdma_cm_event *q[64];
	int n;
	struct fv_cm *next;
};

struct fv_id {
	struct rdma_cm_id id;
	struct fv_cm *cm;
	int sock;
	struct event *sock_ev;
	bool listener, inbound, connected;
	uint32_t peer_node, peer_pd;
	uint8_t pdata[FV_PDATA];
	uint8_t pdata_len;
	struct fv_id *pending; /* inbound: its listener, until the request */
	struct fv_id *next_pending;
};

enum { MSG_REQ = 1, MSG_REP, MSG_REJ, MSG_DREQ };

struct fv_msg {
	uint32_t type;
	uint32_t node, pd, qpn;
	uint16_t src_port;
	uint8_t pdata_len;
	uint8_t pdata[FV_PDATA];
};

struct fv_job {
	struct fv_job *next;
	struct fv_qp *qp;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
};

struct fv {
	struct event_base *base;
	char dir[96];
	uint32_t node;
	uint32_t next_key;
	uint16_t next_src_port;
	unsigned wr_delay_ms;
	uint64_t mr_limit;
	bool bad_rkey, silent, dead;
	struct ibv_device dev;
	struct ibv_context ctx;
	struct ibv_context *ctx_list[2];
	struct ibv_device *dev_list[2];
	int async_wfd;
	struct ibv_async_event async_q[8];
	int n_async;
	struct fv_mr *mrs;
	struct fv_rmap *rmaps;
	struct fv_qp *qps;
	struct fv_cm *cms;
	struct fv_id *pend; /* accepted sockets whose request has not come */
	struct fv_job *jobs, **jobs_tail;
	struct event *tick;
	struct event *sig_ev;
	int ids;
	uint64_t writes, bytes;
	uint32_t access_errors, flushed;
};

static struct fv fv_state;

static void fv_log(struct fv *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fv_log(struct fv *f, const char *fmt, ...)
{
	va_list ap;

	(void)f;
	fputs("fake-rdma: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void state_dump(struct fv *f)
{
	char path[300], tmp[310], line[256];
	struct fv_qp *qp;
	struct fv_mr *m;
	int qps = 0, inbound = 0, mrs = 0, fd, n;

	for (qp = f->qps; qp; qp = qp->next) {
		qps++;
		inbound += qp->fid && qp->fid->inbound;
	}
	for (m = f->mrs; m; m = m->next)
		mrs++;
	n = snprintf(
	    line, sizeof(line),
	    "ids=%d qps=%d inbound_qps=%d mrs=%d writes=%llu bytes=%llu access_errors=%u flushed=%u dead=%d\n",
	    f->ids, qps, inbound, mrs, (unsigned long long)f->writes,
	    (unsigned long long)f->bytes, f->access_errors, f->flushed,
	    f->dead);
	snprintf(path, sizeof(path), "%s/state-%u", f->dir, f->node);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) == n)
		(void)!rename(tmp, path);
	close(fd);
}

static void poke(int wfd)
{
	char b = 1;

	(void)!write(wfd, &b, 1);
}

static int make_pipe(int *rfd, int *wfd)
{
	int fds[2];

	if (pipe(fds))
		return -1;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	*rfd = fds[0];
	*wfd = fds[1];
	return 0;
}

static void cm_sock_cb(evutil_socket_t fd, short what, void *arg);
static void tick_cb(evutil_socket_t fd, short what, void *arg);
static void removal_cb(evutil_socket_t fd, short what, void *arg);
static void fv_kick(struct fv *f);
static void id_drop(struct fv *f, struct fv_id *fid);

/* ---- device ---------------------------------------------------------- */

static struct ibv_device **f_get_device_list(void *ctx, int *num)
{
	struct fv *f = ctx;
	struct ibv_device **list = calloc(2, sizeof(*list));

	if (!list) {
		*num = 0;
		return NULL;
	}
	list[0] = &f->dev;
	*num = 1;
	return list;
}

static void f_free_device_list(void *ctx, struct ibv_device **list)
{
	(void)ctx;
	free(list);
}

/* The loop's events live as long as the engine has the device open. */
static struct ibv_context **f_get_devices(void *ctx, int *num)
{
	struct fv *f = ctx;

	f->tick = evtimer_new(f->base, tick_cb, f);
	f->sig_ev = evsignal_new(f->base, SIGUSR2, removal_cb, f);
	if (!f->tick || !f->sig_ev || event_add(f->sig_ev, NULL)) {
		errno = ENOMEM;
		*num = 0;
		return NULL;
	}
	f->ctx_list[0] = &f->ctx;
	*num = 1;
	state_dump(f);
	return f->ctx_list;
}

static void f_free_devices(void *ctx, struct ibv_context **list)
{
	struct fv *f = ctx;
	struct fv_rmap *r;
	struct fv_job *j;

	(void)list;
	while ((j = f->jobs)) {
		f->jobs = j->next;
		free(j);
	}
	f->jobs_tail = &f->jobs;
	while ((r = f->rmaps)) {
		f->rmaps = r->next;
		munmap(r->hdr, r->maplen);
		free(r);
	}
	if (f->tick)
		event_free(f->tick);
	if (f->sig_ev)
		event_free(f->sig_ev);
	f->tick = f->sig_ev = NULL;
	close(f->ctx.async_fd);
	close(f->async_wfd);
	f->ctx.async_fd = f->async_wfd = -1;
}

static int f_query_device(void *ctx, struct ibv_context *dev,
			  struct ibv_device_attr *attr)
{
	(void)ctx;
	(void)dev;
	memset(attr, 0, sizeof(*attr));
	attr->max_mr_size = 1ull << 40;
	attr->max_qp_wr = FV_MAX_QP_WR;
	attr->max_cqe = 4096;
	attr->phys_port_cnt = 1;
	return 0;
}

static int f_query_port(void *ctx, struct ibv_context *dev, uint8_t port,
			struct ibv_port_attr *attr)
{
	struct fv *f = ctx;

	(void)dev;
	if (port != 1)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->state = f->dead ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	attr->max_msg_sz = FV_MAX_MSG;
	return 0;
}

static int f_get_async_event(void *ctx, struct ibv_context *dev,
			     struct ibv_async_event *ev)
{
	struct fv *f = ctx;
	char b;

	(void)dev;
	(void)!read(f->ctx.async_fd, &b, 1);
	if (!f->n_async) {
		errno = EAGAIN;
		return -1;
	}
	*ev = f->async_q[0];
	memmove(f->async_q, f->async_q + 1,
		(size_t)--f->n_async * sizeof(f->async_q[0]));
	return 0;
}

static void f_ack_async_event(void *ctx, struct ibv_async_event *ev)
{
	(void)ctx;
	(void)ev;
}

/* ---- PD and MRs -------------------------------------------------------- */

static struct ibv_pd *f_alloc_pd(void *ctx, struct ibv_context *dev)
{
	struct fv *f = ctx;
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = dev;
	pd->handle = ++f->next_key;
	return pd;
}

static int f_dealloc_pd(void *ctx, struct ibv_pd *pd)
{
	struct fv *f = ctx;
	struct fv_mr *m;

	for (m = f->mrs; m; m = m->next)
		if (m->mr.pd == pd)
			return EBUSY;
	free(pd);
	return 0;
}

/* The pages' bytes into the file, then the file over the pages. */
static int mr_share(struct fv_mr *m, void *addr, size_t len)
{
	size_t off = 0;

	if (ftruncate(m->fd, (off_t)(FV_HDR + len)))
		return -1;
	while (off < len) {
		ssize_t n = pwrite(m->fd, (char *)addr + off, len - off,
				   (off_t)(FV_HDR + off));

		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	if (mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 m->fd, FV_HDR) == MAP_FAILED)
		return -1;
	m->hdr =
	    mmap(NULL, FV_HDR, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	return m->hdr == MAP_FAILED ? (m->hdr = NULL, -1) : 0;
}

static struct ibv_mr *f_reg_mr(void *ctx, struct ibv_pd *pd, void *addr,
			       size_t len, int access)
{
	struct fv *f = ctx;
	long page = sysconf(_SC_PAGESIZE);
	struct fv_mr *m;
	uint32_t key;

	if (!len || (uintptr_t)addr % (uintptr_t)page || len % (size_t)page) {
		fv_log(f, "reg_mr %p+%zu: not page-aligned", addr, len);
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	key = ++f->next_key;
	snprintf(m->path, sizeof(m->path), "%s/mr-%u-%u", f->dir, f->node, key);
	m->fd = open(m->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (m->fd < 0 || mr_share(m, addr, len)) {
		int rc = errno;

		fv_log(f, "reg_mr %s: %s", m->path, strerror(rc));
		if (m->fd >= 0) {
			close(m->fd);
			unlink(m->path);
		}
		free(m);
		errno = rc;
		return NULL;
	}
	*m->hdr = (struct fv_hdr){
	    .magic = FV_MAGIC,
	    .valid = 1,
	    .node = f->node,
	    .pd = pd->handle,
	    .addr = (uintptr_t)addr,
	    .len = f->mr_limit && f->mr_limit < len ? f->mr_limit : len,
	    .access = (uint32_t)access,
	    .rkey = key};
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.lkey = key;
	m->mr.rkey = f->bad_rkey ? key + 0x10000u : key;
	m->access = access;
	m->next = f->mrs;
	f->mrs = m;
	if (f->bad_rkey)
		fv_log(f, "MR %u handed out with the wrong rkey %u (test)", key,
		       m->mr.rkey);
	state_dump(f);
	return &m->mr;
}

static int f_dereg_mr(void *ctx, struct ibv_mr *mr)
{
	struct fv *f = ctx;
	struct fv_mr **pp, *m;

	for (pp = &f->mrs; *pp && &(*pp)->mr != mr; pp = &(*pp)->next)
		;
	if (!*pp)
		return EINVAL;
	m = *pp;
	*pp = m->next;
	m->hdr->valid = 0;
	munmap(m->hdr, FV_HDR);
	close(m->fd);
	unlink(m->path);
	free(m);
	state_dump(f);
	return 0;
}

/* ---- completion channel and CQs --------------------------------------- */

static struct ibv_comp_channel *f_create_comp_channel(void *ctx,
						      struct ibv_context *dev)
{
	struct fv_comp *c = calloc(1, sizeof(*c));

	(void)ctx;
	if (!c || make_pipe(&c->ch.fd, &c->wfd)) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->ch.context = dev;
	return &c->ch;
}

static int f_destroy_comp_channel(void *ctx, struct ibv_comp_channel *ch)
{
	struct fv_comp *c = (struct fv_comp *)ch;

	(void)ctx;
	close(c->ch.fd);
	close(c->wfd);
	free(c);
	return 0;
}

static struct ibv_cq *f_create_cq(void *ctx, struct ibv_context *dev, int cqe,
				  void *cq_context, struct ibv_comp_channel *ch)
{
	struct fv_cq *cq = calloc(1, sizeof(*cq));

	(void)ctx;
	if (!cq || cqe <= 0 ||
	    !(cq->wc = calloc((size_t)cqe, sizeof(*cq->wc)))) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->cap = cqe;
	cq->comp = (struct fv_comp *)ch;
	cq->cq.context = dev;
	cq->cq.cq_context = cq_context;
	cq->cq.channel = ch;
	cq->cq.cqe = cqe;
	return &cq->cq;
}

static int f_destroy_cq(void *ctx, struct ibv_cq *ibcq)
{
	struct fv_cq *cq = (struct fv_cq *)ibcq;
	struct fv_comp *c = cq->comp;
	int i, k = 0;

	(void)ctx;
	for (i = 0; c && i < c->n_pending; i++)
		if (c->pending[i] != cq)
			c->pending[k++] = c->pending[i];
	if (c)
		c->n_pending = k;
	free(cq->wc);
	free(cq);
	return 0;
}

static int f_req_notify_cq(void *ctx, struct ibv_cq *ibcq)
{
	(void)ctx;
	((struct fv_cq *)ibcq)->armed = true;
	return 0;
}

static int f_get_cq_event(void *ctx, struct ibv_comp_channel *ch,
			  struct ibv_cq **cq, void **cq_context)
{
	struct fv_comp *c = (struct fv_comp *)ch;
	char b;

	(void)ctx;
	if (!c->n_pending) {
		errno = EAGAIN;
		return -1;
	}
	(void)!read(c->ch.fd, &b, 1);
	*cq = &c->pending[0]->cq;
	*cq_context = (*cq)->cq_context;
	memmove(c->pending, c->pending + 1,
		(size_t)--c->n_pending * sizeof(c->pending[0]));
	return 0;
}

static void f_ack_cq_events(void *ctx, struct ibv_cq *cq, unsigned int n)
{
	(void)ctx;
	(void)cq;
	(void)n;
}

static int f_poll_cq(void *ctx, struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct fv_cq *cq = (struct fv_cq *)ibcq;
	int i;

	(void)ctx;
	for (i = 0; i < n && cq->count; i++) {
		wc[i] = cq->wc[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	return i;
}

static void cq_push(struct fv *f, struct fv_qp *qp, const struct fv_job *j,
		    enum ibv_wc_status status)
{
	struct fv_cq *cq = qp->cq;
	struct ibv_wc *wc;

	if (cq->count == cq->cap) {
		fv_log(f, "CQ overrun (%d entries)", cq->cap);
		return;
	}
	wc = &cq->wc[(cq->head + cq->count++) % cq->cap];
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = j->wr.wr_id;
	wc->status = status;
	wc->opcode = j->wr.opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
						      : IBV_WC_RDMA_WRITE;
	wc->qp_num = qp->qp.qp_num;
	wc->byte_len = status == IBV_WC_SUCCESS ? j->sge.length : 0;
	if (cq->armed && cq->comp &&
	    cq->comp->n_pending < (int)(sizeof(cq->comp->pending) /
					sizeof(cq->comp->pending[0]))) {
		cq->armed = false;
		cq->comp->pending[cq->comp->n_pending++] = cq;
		poke(cq->comp->wfd);
	}
}

/* ---- one-sided work requests ----------------------------------------- */

static int f_post_send(void *ctx, struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad_wr)
{
	struct fv *f = ctx;
	struct fv_qp *qp = (struct fv_qp *)ibqp;
	uint32_t queued = 0;
	struct fv_job *j;

	for (j = f->jobs; j; j = j->next)
		queued += j->qp == qp;
	for (; wr; wr = wr->next) {
		if ((wr->opcode != IBV_WR_RDMA_WRITE &&
		     wr->opcode != IBV_WR_RDMA_READ) ||
		    wr->num_sge != 1 || queued >= qp->max_send_wr) {
			*bad_wr = wr;
			return wr->num_sge != 1 ? EINVAL : ENOMEM;
		}
		j = calloc(1, sizeof(*j));
		if (!j) {
			*bad_wr = wr;
			return ENOMEM;
		}
		j->qp = qp;
		j->wr = *wr;
		j->sge = wr->sg_list[0];
		j->wr.sg_list = &j->sge;
		j->wr.next = NULL;
		*f->jobs_tail = j;
		f->jobs_tail = &j->next;
		queued++;
	}
	fv_kick(f);
	return 0;
}

static const struct fv_mr *local_mr(const struct fv *f, const struct fv_qp *qp,
				    const struct ibv_sge *s)
{
	const struct fv_mr *m;

	for (m = f->mrs; m; m = m->next) {
		uintptr_t b = (uintptr_t)m->mr.addr;

		if (m->mr.lkey == s->lkey && m->mr.pd == qp->qp.pd &&
		    s->addr >= b && s->length <= m->mr.length &&
		    s->addr - b <= m->mr.length - s->length)
			return m;
	}
	return NULL;
}

/* The peer's MR file for rkey, mapped; NULL when there is none. */
static struct fv_hdr *remote_mr(struct fv *f, uint32_t node, uint32_t rkey)
{
	struct fv_rmap *r;
	struct fv_hdr h;
	char path[300];
	int fd;

	for (r = f->rmaps; r; r = r->next)
		if (r->node == node && r->rkey == rkey)
			return r->hdr;
	snprintf(path, sizeof(path), "%s/mr-%u-%u", f->dir, node, rkey);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != FV_MAGIC) {
		free(r);
		close(fd);
		return NULL;
	}
	r->maplen = FV_HDR + h.len;
	r->hdr =
	    mmap(NULL, r->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r->hdr == MAP_FAILED) {
		free(r);
		return NULL;
	}
	r->node = node;
	r->rkey = rkey;
	r->next = f->rmaps;
	f->rmaps = r;
	return r->hdr;
}

/* What the responder's NIC checks: the rkey names a registered MR of the
 * connected peer's PD that allows the access, and the range lies in it. */
static enum ibv_wc_status run_job(struct fv *f, struct fv_job *j)
{
	struct fv_qp *qp = j->qp;
	struct fv_id *fid = qp->fid;
	bool read = j->wr.opcode == IBV_WR_RDMA_READ;
	uint32_t want = read ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
	uint64_t raddr = j->wr.wr.rdma.remote_addr, len = j->sge.length;
	const struct fv_mr *lm;
	struct fv_hdr *h;
	char *remote;

	if (qp->error || f->dead || !fid || !fid->connected)
		return IBV_WC_WR_FLUSH_ERR;
	lm = local_mr(f, qp, &j->sge);
	if (!lm || (read && !(lm->access & IBV_ACCESS_LOCAL_WRITE)))
		return IBV_WC_LOC_PROT_ERR;
	h = remote_mr(f, fid->peer_node, j->wr.wr.rdma.rkey);
	if (!h || !h->valid || h->node != fid->peer_node ||
	    h->pd != fid->peer_pd || !(h->access & want) || raddr < h->addr ||
	    len > h->len || raddr - h->addr > h->len - len)
		return IBV_WC_REM_ACCESS_ERR;
	remote = (char *)h + FV_HDR + (raddr - h->addr);
	if (read)
		memcpy((void *)(uintptr_t)j->sge.addr, remote, len);
	else
		memcpy(remote, (const void *)(uintptr_t)j->sge.addr, len);
	f->writes++;
	f->bytes += len;
	return IBV_WC_SUCCESS;
}

static void fv_kick(struct fv *f)
{
	struct timeval tv = {(time_t)(f->wr_delay_ms / 1000),
			     (suseconds_t)(f->wr_delay_ms % 1000) * 1000};

	if (f->jobs && f->tick && !evtimer_pending(f->tick, NULL))
		evtimer_add(f->tick, &tv);
}

/* Executes the queued WRs in post order (one per turn when slowed). */
static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fv *f = arg;
	struct fv_job *j, *end = NULL;
	bool last;

	(void)fd;
	(void)what;
	if (!f->wr_delay_ms)
		for (end = f->jobs; end && end->next; end = end->next)
			;
	while ((j = f->jobs)) {
		enum ibv_wc_status st = run_job(f, j);

		f->jobs = j->next;
		if (!f->jobs)
			f->jobs_tail = &f->jobs;
		if (st != IBV_WC_SUCCESS) {
			if (st == IBV_WC_REM_ACCESS_ERR) {
				f->access_errors++;
				fv_log(
				    f,
				    "WR on QP %u: remote access error (rkey %u, addr 0x%llx, %u bytes)",
				    j->qp->qp.qp_num, j->wr.wr.rdma.rkey,
				    (unsigned long long)
					j->wr.wr.rdma.remote_addr,
				    j->sge.length);
			} else if (st == IBV_WC_WR_FLUSH_ERR) {
				f->flushed++;
			}
			j->qp->error = true;
			cq_push(f, j->qp, j, st);
		} else if (j->wr.send_flags & IBV_SEND_SIGNALED) {
			cq_push(f, j->qp, j, st);
		}
		last = j == end || f->wr_delay_ms;
		free(j);
		if (last)
			break;
	}
	state_dump(f);
	fv_kick(f);
}

/* ---- rdma_cm over unix sockets ----------------------------------------- */

static struct rdma_event_channel *f_create_event_channel(void *ctx)
{
	struct fv *f = ctx;
	struct fv_cm *cm = calloc(1, sizeof(*cm));

	if (!cm || make_pipe(&cm->ch.fd, &cm->wfd)) {
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

static void cm_push(struct fv_cm *cm, struct fv_id *fid, struct fv_id *listen,
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
	poke(cm->wfd);
}

static void id_event(struct fv_id *fid, enum rdma_cm_event_type type,
		     int status)
{
	cm_push(fid->cm, fid, NULL, type, status);
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
	state_dump(f);
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
	state_dump(f);
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
	state_dump(f);
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
	state_dump(f);
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

	if (!id->qp || fid->sock >= 0) {
		errno = EINVAL;
		return -1;
	}
	cm_path(f, sa_port(&id->route.addr.dst_addr), &un);
	fid->sock =
	    socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fid->sock < 0)
		return -1;
	msg_init(f, &m, MSG_REQ, id);
	if (param->private_data_len > FV_PDATA) {
		errno = EINVAL;
		return -1;
	}
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
		cm_push(l->cm, fid, l, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
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

static void f_log(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "%s\n", line);
}

/* SIGUSR2: the device goes away. */
static void removal_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fv *f = arg;
	struct ibv_async_event *ev;
	struct fv_qp *qp;
	struct fv_cm *cm;

	(void)fd;
	(void)what;
	if (f->dead)
		return;
	fv_log(f, "device %s removed (SIGUSR2)", f->dev.name);
	f->dead = true;
	for (qp = f->qps; qp; qp = qp->next)
		qp->error = true;
	ev = &f->async_q[f->n_async++];
	memset(ev, 0, sizeof(*ev));
	ev->event_type = IBV_EVENT_DEVICE_FATAL;
	poke(f->async_wfd);
	for (cm = f->cms; cm; cm = cm->next)
		cm_push(cm, NULL, NULL, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
	fv_kick(f);
	state_dump(f);
}

static const struct rdma_verbs_ops fabric_ops = {
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

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] && strcmp(v, "0") != 0;
}

/* The engine over the fabric in MCREPL_FAKE_RDMA_DIR (one per process). */
struct copy_engine *
copy_engine_rdma_create(struct event_base *base,
			const struct copy_engine_config *cfg, char *err,
			size_t errlen)
{
	struct fv *f = &fv_state;
	const char *dir = getenv("MCREPL_FAKE_RDMA_DIR");
	const char *delay = getenv("MCREPL_FAKE_RDMA_WR_DELAY_MS");
	struct copy_engine *e;

	if (!dir || !dir[0] || strlen(dir) > 90) {
		snprintf(
		    err, errlen,
		    "rdma: fake fabric: set MCREPL_FAKE_RDMA_DIR to a directory (at most 90 bytes: unix socket paths)");
		return NULL;
	}
	if (f->base) {
		snprintf(err, errlen,
			 "rdma: fake fabric: one engine per process");
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	f->base = base;
	snprintf(f->dir, sizeof(f->dir), "%s", dir);
	f->node = (uint32_t)getpid();
	f->next_key = (f->node & 0xffff) << 12;
	f->next_src_port = (uint16_t)(40000 + f->node % 20000);
	f->wr_delay_ms = delay ? (unsigned)strtoul(delay, NULL, 10) : 0;
	f->bad_rkey = env_on("MCREPL_FAKE_RDMA_BAD_RKEY");
	if (getenv("MCREPL_FAKE_RDMA_MR_LIMIT"))
		f->mr_limit =
		    strtoull(getenv("MCREPL_FAKE_RDMA_MR_LIMIT"), NULL, 10);
	f->silent = env_on("MCREPL_FAKE_RDMA_SILENT");
	f->jobs_tail = &f->jobs;
	snprintf(f->dev.name, sizeof(f->dev.name), "fakefab0");
	snprintf(f->dev.dev_name, sizeof(f->dev.dev_name), "fakefab0");
	f->ctx.device = &f->dev;
	if (make_pipe(&f->ctx.async_fd, &f->async_wfd)) {
		snprintf(err, errlen, "rdma: fake fabric: pipe: %s",
			 strerror(errno));
		f->base = NULL;
		return NULL;
	}
	e = copy_engine_rdma_create_with(base, cfg, &fabric_ops, f, err,
					 errlen);
	if (!e) {
		if (f->async_wfd >= 0) {
			close(f->ctx.async_fd);
			close(f->async_wfd);
		}
		f->base = NULL;
	}
	return e;
}
