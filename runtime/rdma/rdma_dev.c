/* RDMA engine: choosing the device, its PD and caps; the MR table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "copy_engine_rdma.h"

#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

/* The first ACTIVE port of dev, or 0. */
static uint8_t first_active_port(struct rdma_engine *e, struct ibv_context *dev,
				 const struct ibv_device_attr *attr,
				 struct ibv_port_attr *port_attr)
{
	uint8_t p;

	for (p = 1; p <= attr->phys_port_cnt && p != 0; p++) {
		if (e->ops->query_port(e->octx, dev, p, port_attr))
			continue;
		if (port_attr->state == IBV_PORT_ACTIVE)
			return p;
	}
	return 0;
}

static const char *dev_name(const struct ibv_context *dev)
{
	return ibv_get_device_name(dev->device);
}

static void list_names(struct ibv_context **devs, int n, char *out,
		       size_t outlen)
{
	size_t used = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < n && used < outlen; i++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%s",
					 i ? ", " : "", dev_name(devs[i]));
}

/* Counts verbs devices; 0 means there is no RDMA hardware at all. */
static int count_verbs_devices(struct rdma_engine *e)
{
	struct ibv_device **list;
	int n = 0;

	list = e->ops->get_device_list(e->octx, &n);
	if (!list)
		return 0;
	e->ops->free_device_list(e->octx, list);
	return n;
}

static int pick_failed(struct rdma_engine *e, int n, const char *want,
		       bool named_found, char *err, size_t errlen)
{
	char names[256];

	if (!want) {
		snprintf(
		    err, errlen,
		    "rdma: no RDMA device has an ACTIVE port (%d checked); use --transport=tcp",
		    n);
	} else if (named_found) {
		snprintf(
		    err, errlen,
		    "rdma: device '%s' has no ACTIVE port; use --transport=tcp",
		    want);
	} else {
		list_names(e->devs, n, names, sizeof(names));
		snprintf(
		    err, errlen,
		    "rdma: device '%s' not found (devices: %s); use --rdma_device=NAME or --transport=tcp",
		    want, names);
	}
	return -1;
}

static void take_caps(struct rdma_engine *e, const struct ibv_device_attr *da,
		      const struct ibv_port_attr *pa)
{
	uint32_t max_qp_wr = da->max_qp_wr > 0 ? (uint32_t)da->max_qp_wr : 1;

	e->max_mr_size = da->max_mr_size;
	e->max_msg = pa->max_msg_sz;
	if (e->max_msg == 0 || e->max_msg > (1u << 31))
		e->max_msg = 1u << 31;
	e->max_wr = max_qp_wr < RDMA_MAX_SEND_WR ? max_qp_wr : RDMA_MAX_SEND_WR;
	e->signal_every = e->max_wr > 1 ? e->max_wr / 2 : 1;
	e->cq_depth = (int)e->max_wr + 1;
	if (da->max_cqe > 0 && e->cq_depth > da->max_cqe)
		e->cq_depth = da->max_cqe;
}

/* Chooses the device (named, else the first with an ACTIVE port). */
static int pick_device(struct rdma_engine *e, int n, const char *want,
		       char *err, size_t errlen)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	bool named_found = false;
	int i;

	for (i = 0; i < n; i++) {
		if (want && strcmp(want, dev_name(e->devs[i])))
			continue;
		named_found = true;
		if (e->ops->query_device(e->octx, e->devs[i], &da))
			continue;
		e->port_num = first_active_port(e, e->devs[i], &da, &pa);
		if (e->port_num == 0)
			continue;
		e->ctx = e->devs[i];
		snprintf(e->dev_name, sizeof(e->dev_name), "%s",
			 dev_name(e->ctx));
		take_caps(e, &da, &pa);
		return 0;
	}
	return pick_failed(e, n, want, named_found, err, errlen);
}

/* See copy_engine_rdma.h: device, then PD; the caps come with the device. */
int rdma_dev_open(struct rdma_engine *e, const char *want, char *err,
		  size_t errlen)
{
	int n_verbs, n = 0;

	n_verbs = count_verbs_devices(e);
	if (n_verbs <= 0) {
		snprintf(
		    err, errlen,
		    "rdma: no RDMA device found (ibv_get_device_list returned none); use --transport=tcp");
		return -1;
	}
	e->devs = e->ops->get_devices(e->octx, &n);
	if (!e->devs || n <= 0) {
		snprintf(
		    err, errlen,
		    "rdma: %d RDMA device(s) but rdma_cm opened none (%s; is rdma_ucm loaded?); use --transport=tcp",
		    n_verbs, strerror(errno));
		goto out_free_devs;
	}
	if (pick_device(e, n, want, err, errlen))
		goto out_free_devs;
	e->pd = e->ops->alloc_pd(e->octx, e->ctx);
	if (!e->pd) {
		snprintf(err, errlen, "rdma: ibv_alloc_pd on %s: %s",
			 e->dev_name, strerror(errno));
		goto out_free_devs;
	}
	return 0;

out_free_devs:
	if (e->devs)
		e->ops->free_devices(e->octx, e->devs);
	e->devs = NULL;
	return -1;
}

/* MRs must be gone (rdma_mr_release_all) before the PD. */
void rdma_dev_close(struct rdma_engine *e)
{
	int rc;

	if (e->pd) {
		rc = e->ops->dealloc_pd(e->octx, e->pd);
		if (rc)
			rdma_log(e, "rdma: ibv_dealloc_pd: %s", strerror(rc));
	}
	if (e->devs)
		e->ops->free_devices(e->octx, e->devs);
	e->pd = NULL;
	e->devs = NULL;
}

/* ---- memory registration -------------------------------------------- */

const struct rdma_mr_entry *rdma_mr_find(const struct rdma_engine *e,
					 const char *p)
{
	size_t i;

	for (i = 0; i < e->n_mrs; i++) {
		const struct rdma_mr_entry *m = &e->mrs[i];

		if (p >= m->base && (size_t)(p - m->base) < m->len)
			return m;
	}
	return NULL;
}

bool rdma_mr_covers(const struct rdma_engine *e, const char *p, uint64_t len)
{
	while (len) {
		const struct rdma_mr_entry *m = rdma_mr_find(e, p);
		uint64_t step;

		if (!m)
			return false;
		step = m->len - (size_t)(p - m->base);
		if (step >= len)
			return true;
		p += step;
		len -= step;
	}
	return true;
}

/* The registration answering [base, +len): the newest one of exactly
 * that range, else an MR that covers it. Index of its first MR (where
 * refs live) or -1; *hit is the MR whose rkey peers get. */
static long mr_lookup(const struct rdma_engine *e, const char *base, size_t len,
		      size_t *hit)
{
	long found = -1;
	size_t i;

	for (i = 0; i < e->n_mrs; i++) {
		const struct rdma_mr_entry *m = &e->mrs[i];

		if (m->reg_base == base && m->reg_len == len &&
		    m->base == base) {
			found = (long)i;
			*hit = i;
		}
	}
	for (i = 0; found < 0 && i < e->n_mrs; i++) {
		const struct rdma_mr_entry *m = &e->mrs[i];

		if (base >= m->base && len <= m->len &&
		    (size_t)(base - m->base) <= m->len - len) {
			*hit = i;
			found = (long)i;
			while (found > 0 && e->mrs[found - 1].gen == m->gen)
				found--;
		}
	}
	return found;
}

/* ENOMEM/EPERM from ibv_reg_mr is almost always RLIMIT_MEMLOCK. */
static void log_memlock(const struct rdma_engine *e, size_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return;
	rdma_log(
	    e,
	    "rdma: the locked-memory limit is %llu bytes and registering pins %zu more: raise it (ulimit -l unlimited, LimitMEMLOCK=infinity for systemd, memlock in /etc/security/limits.conf)",
	    (unsigned long long)rl.rlim_cur, n);
}

static void log_reg_failure(const struct rdma_engine *e, size_t n, int rc)
{
	rdma_log(e, "rdma: ibv_reg_mr(%zu bytes) on %s: %s", n, e->dev_name,
		 strerror(-rc));
	if (rc == -ENOMEM || rc == -EPERM)
		log_memlock(e, n);
}

static int mr_reserve(struct rdma_engine *e, size_t more)
{
	struct rdma_mr_entry *grown;
	size_t cap = e->cap_mrs ? e->cap_mrs : 4;

	while (cap < e->n_mrs + more)
		cap *= 2;
	if (cap == e->cap_mrs)
		return 0;
	grown = realloc(e->mrs, cap * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	e->mrs = grown;
	e->cap_mrs = cap;
	return 0;
}

/* Deregisters the MRs from index from on, newest first. */
static void mr_release_from(struct rdma_engine *e, size_t from)
{
	int rc;

	while (e->n_mrs > from) {
		struct rdma_mr_entry *m = &e->mrs[--e->n_mrs];

		rc = e->ops->dereg_mr(e->octx, m->mr);
		if (rc)
			rdma_log(e, "rdma: ibv_dereg_mr: %s", strerror(rc));
	}
}

void rdma_mr_release_all(struct rdma_engine *e)
{
	mr_release_from(e, 0);
	free(e->mrs);
	e->mrs = NULL;
	e->cap_mrs = 0;
}

static int mr_add_chunks(struct rdma_engine *e, char *base, size_t len,
			 size_t chunks)
{
	size_t first = e->n_mrs, i;
	uint64_t gen = ++e->mr_gen;

	for (i = 0; i < chunks; i++) {
		size_t off = i * e->max_mr_size;
		size_t n =
		    len - off < e->max_mr_size ? len - off : e->max_mr_size;
		struct ibv_mr *mr;

		mr = e->ops->reg_mr(e->octx, e->pd, base + off, n, MR_ACCESS);
		if (!mr) {
			int rc = errno ? -errno : -EIO;

			log_reg_failure(e, n, rc);
			mr_release_from(e, first);
			return rc;
		}
		e->mrs[e->n_mrs++] = (struct rdma_mr_entry){.base = base + off,
							    .len = n,
							    .mr = mr,
							    .reg_base = base,
							    .reg_len = len,
							    .gen = gen};
	}
	return 0;
}

/* A copy still queued or in flight reads from first's registration. */
static bool mr_in_use(const struct rdma_engine *e,
		      const struct rdma_mr_entry *first)
{
	const struct rdma_conn *conn;
	const struct rdma_copy *c;
	const char *end = first->reg_base + first->reg_len;

	TAILQ_FOREACH(conn, &e->conns, link)
	{
		TAILQ_FOREACH(c, &conn->queue, link)
		if (c->src < end && c->src + c->len > first->reg_base)
			return true;
		TAILQ_FOREACH(c, &conn->inflight, link)
		if (c->src < end && c->src + c->len > first->reg_base)
			return true;
	}
	return false;
}

/* See copy_engine_rdma.h, "Memory". */
int rdma_unregister_memory(struct copy_engine *ce, void *base, size_t len)
{
	struct rdma_engine *e = (struct rdma_engine *)ce;
	size_t hit, i, j = 0;
	uint64_t gen;
	long first = mr_lookup(e, base, len, &hit);
	int rc;

	if (first < 0)
		return -ENOENT;
	if (e->mrs[first].refs > 1) {
		e->mrs[first].refs--;
		return 0;
	}
	if (mr_in_use(e, &e->mrs[first]))
		return -EBUSY;
	gen = e->mrs[first].gen;
	for (i = 0; i < e->n_mrs; i++) {
		if (e->mrs[i].gen != gen) {
			e->mrs[j++] = e->mrs[i];
			continue;
		}
		rc = e->ops->dereg_mr(e->octx, e->mrs[i].mr);
		if (rc)
			rdma_log(e, "rdma: ibv_dereg_mr: %s", strerror(rc));
	}
	e->n_mrs = j;
	return 0;
}

/* See copy_engine_rdma.h, "Memory". */
int rdma_register_memory(struct copy_engine *ce, void *base, size_t len,
			 uint64_t *addr_out, uint32_t *rkey_out)
{
	struct rdma_engine *e = (struct rdma_engine *)ce;
	size_t chunks, hit;
	long first;
	int rc;

	if (!base || !len || !e->max_mr_size)
		return -EINVAL;
	if (mr_lookup(e, base, len, &hit) < 0) {
		chunks = (len - 1) / e->max_mr_size + 1;
		rc = mr_reserve(e, chunks);
		if (!rc)
			rc = mr_add_chunks(e, base, len, chunks);
		if (rc)
			return rc;
		if (chunks > 1)
			rdma_log(
			    e,
			    "rdma: %zu bytes at %p registered as %zu MRs (max_mr_size %llu); remote writes reach only the first %llu bytes",
			    len, base, chunks,
			    (unsigned long long)e->max_mr_size,
			    (unsigned long long)e->max_mr_size);
	}
	first = mr_lookup(e, base, len, &hit);
	if (first < 0)
		return -EIO;
	e->mrs[first].refs++;
	if (addr_out)
		*addr_out = (uint64_t)(uintptr_t)base;
	if (rkey_out)
		*rkey_out = e->mrs[hit].mr->rkey;
	return 0;
}
