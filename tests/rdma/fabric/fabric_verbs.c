/*
 * A fake RDMA fabric between processes, behind the engine's ops table
 * (runtime/rdma/rdma_verbs.h), for the test build of the worker
 * (mcrepl-worker-fakerdma, mk/worker.mk; never linked into mcrepl-worker).
 * This file: device, PD, MRs, CQs, the work requests and the entry point;
 * fabric_cm.c: rdma_cm.
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
#include <unistd.h>

#include <event2/event.h>

#include "fabric.h"

struct fv fv_state;

void fv_log(struct fv *f, const char *fmt, ...)
{
	va_list ap;

	(void)f;
	fputs("fake-rdma: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void fv_state_dump(struct fv *f)
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

void fv_poke(int wfd)
{
	char b = 1;

	(void)!write(wfd, &b, 1);
}

int fv_make_pipe(int *rfd, int *wfd)
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

static void tick_cb(evutil_socket_t fd, short what, void *arg);
static void removal_cb(evutil_socket_t fd, short what, void *arg);
void fv_kick(struct fv *f);

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
	fv_state_dump(f);
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
	fv_state_dump(f);
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
	fv_state_dump(f);
	return 0;
}

/* ---- completion channel and CQs --------------------------------------- */

static struct ibv_comp_channel *f_create_comp_channel(void *ctx,
						      struct ibv_context *dev)
{
	struct fv_comp *c = calloc(1, sizeof(*c));

	(void)ctx;
	if (!c || fv_make_pipe(&c->ch.fd, &c->wfd)) {
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
		fv_poke(cq->comp->wfd);
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

void fv_kick(struct fv *f)
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
	fv_state_dump(f);
	fv_kick(f);
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
	fv_poke(f->async_wfd);
	for (cm = f->cms; cm; cm = cm->next)
		fv_cm_push(cm, NULL, NULL, RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
	fv_kick(f);
	fv_state_dump(f);
}

static struct rdma_verbs_ops fabric_ops = {
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
	if (fv_make_pipe(&f->ctx.async_fd, &f->async_wfd)) {
		snprintf(err, errlen, "rdma: fake fabric: pipe: %s",
			 strerror(errno));
		f->base = NULL;
		return NULL;
	}
	fv_cm_ops(&fabric_ops);
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
