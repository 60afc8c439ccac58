/* Dynamic replication in the master: the admission worker's batch, the
 * proposal path, the fenced copy RPCs and the lease sweep. Every decision
 * is libmcrepl's; this file only builds its inputs and applies its output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "store.h"

static uint32_t readable_count(const struct object *o)
{
	uint32_t n = 0;

	for (size_t i = 0; i < o->n_replicas; i++)
		n += o->replicas[i].status == REPLICA_COMPLETE;
	return n;
}

static void replica_views(struct store *s, const struct object *o,
			  mcrepl_replica_view *v)
{
	for (size_t i = 0; i < o->n_replicas; i++) {
		const struct replica *r = &o->replicas[i];
		struct segment *seg = store_segment(s, r->segment_id);

		memset(&v[i], 0, sizeof(v[i]));
		v[i].segment.v = r->segment_id;
		v[i].readable = seg && r->status == REPLICA_COMPLETE;
		v[i].memory = true;
		v[i].dynamic = r->dynamic;
		if (!seg)
			continue;
		v[i].client.v = seg->client_id;
		v[i].host = seg->host;
		v[i].domain = seg->domain;
		v[i].can_copy = seg->dynamic_copy;
		v[i].inflight = seg->inflight;
	}
}

static void segment_views(struct store *s, mcrepl_segment_view *v)
{
	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];

		/* count granted copies before they reserve at CopyStart, so
		 * one batch of admissions does not pile onto one target */
		v[i] = (mcrepl_segment_view){
		    {seg->id},	   {seg->client_id},
		    seg->host,	   seg->domain,
		    seg->capacity, store_used(seg) + seg->incoming,
		    true,	   seg->reads_recent};
	}
}

static void lease_live(struct store *s, const mcrepl_lease *l, int delta)
{
	struct segment *src = store_segment(s, l->source.v);
	struct segment *dst = store_segment(s, l->target.v);

	mcrepl_stats_add(s->stats, MCREPL_STAT_INFLIGHT, delta);
	if (src)
		src->inflight += (uint32_t)delta;
	if (dst && delta > 0)
		dst->incoming += l->size;
	else if (dst)
		dst->incoming -=
		    l->size < dst->incoming ? l->size : dst->incoming;
}

static struct task *queue_copy_task(struct store *s, const struct object *o,
				    const mcrepl_lease *l, uint64_t now_ms)
{
	McreplRpc__Task t;

	mcrepl_rpc__task__init(&t);
	t.type = MCREPL_RPC__TASK_TYPE__REPLICA_COPY;
	t.tenant = o->tenant;
	t.key = o->key;
	t.version = l->version;
	t.size = l->size;
	t.source_segment_id = l->source.v;
	t.target_segment_id = l->target.v;
	t.dynamic = true;
	t.lease_id = l->id.v;
	return store_add_task(s, l->source_client.v, &t, now_ms,
			      l->expires_at_ms);
}

/* Read-load-aware placement reads the reads the master routed to each
 * segment; a granted copy will take its share of the key's reads, so add
 * that share to the target now, before the next batch is placed. */
static void project_load(struct store *s, const struct object *o,
			 const mcrepl_lease *l, uint64_t now_ms)
{
	struct segment *dst = store_segment(s, l->target.v);
	uint32_t heat = mcrepl_heat_cell_count(&o->heat, &s->heat, now_ms);

	if (dst)
		dst->routed_now += heat / (readable_count(o) + 1u);
}

/* Install the task of a fresh lease, or roll the lease back. */
static mcrepl_status publish(struct store *s, const struct object *o,
			     const mcrepl_proposal *p,
			     mcrepl_propose_result *res, uint64_t now_ms)
{
	struct task *t = queue_copy_task(s, o, &res->lease, now_ms);

	if (!t) {
		mcrepl_leases_abort(s->leases, res->lease.id);
		res->reason = MCREPL_REASON_NO_CAPABLE_SOURCE;
		mcrepl_stats_reject(s->stats, res->reason);
		return MCREPL_EREJECTED;
	}
	t->warmup = p->kind == MCREPL_PROPOSAL_WARMUP;
	mcrepl_leases_bind_task(s->leases, res->lease.id,
				(mcrepl_task_id){t->msg.task_id});
	res->lease.task.v = t->msg.task_id;
	mcrepl_stats_add(s->stats, MCREPL_STAT_ACCEPTED, 1);
	mcrepl_stats_add(s->stats, MCREPL_STAT_TASKS_CREATED, 1);
	if (s->opts.cfg.domain_aware)
		mcrepl_stats_domain_proposal(s->stats, p->requester_domain,
					     res->lease.target_domain);
	lease_live(s, &res->lease, 1);
	project_load(s, o, &res->lease, now_ms);
	return MCREPL_OK;
}

mcrepl_status dyn_propose(struct store *s, const mcrepl_proposal *p,
			  uint64_t now_ms, mcrepl_propose_result *res)
{
	struct object *o =
	    p->key ? store_find(s, p->tenant ? p->tenant : "", p->key) : NULL;
	mcrepl_replica_view rv[MASTER_MAX_REPLICAS];
	mcrepl_segment_view *sv = calloc(s->n_segs + 1, sizeof(*sv));
	mcrepl_object_view ov = {0};
	mcrepl_propose_input in = {p, &ov, 0, rv, 0, sv, s->n_segs, now_ms};
	mcrepl_status st;

	memset(res, 0, sizeof(*res));
	if (!sv)
		return MCREPL_ENOMEM;
	if (o && o->complete) {
		ov = (mcrepl_object_view){true, o->version, o->size,
					  readable_count(o),
					  o->copy_target != 0};
		mcrepl_heat_cell *cell =
		    store_heat_cell(s, o, p->requester_domain, false);

		in.heat_count =
		    cell ? mcrepl_heat_cell_count(cell, &s->heat, now_ms) : 0;
		replica_views(s, o, rv);
		in.n_replicas = o->n_replicas;
	}
	segment_views(s, sv);
	st = mcrepl_leases_propose(s->leases, &in, res);
	free(sv);
	if (st == MCREPL_OK && !res->repeated)
		return publish(s, o, p, res, now_ms);
	if (st != MCREPL_OK)
		mcrepl_stats_reject(s->stats, res->reason);
	return st;
}

/* One trigger: an internal proposal judged from the master's own view. */
static void admit_trigger(struct store *s, const mcrepl_trigger *t,
			  uint64_t now_ms)
{
	struct object *o = store_find(s, t->tenant, t->key);
	mcrepl_propose_result res;
	mcrepl_proposal p;
	char id[48];

	if (!o) {
		mcrepl_stats_reject(s->stats, MCREPL_REASON_UNKNOWN_OBJECT);
		return;
	}
	snprintf(id, sizeof(id), "auto-%llu",
		 (unsigned long long)++s->next_proposal);
	p = (mcrepl_proposal){MCREPL_ACTION_ADD,
			      id,
			      o->tenant,
			      o->key,
			      t->domain,
			      t->domain,
			      o->version,
			      o->size,
			      {0},
			      now_ms + s->opts.cfg.lease_ttl_ms};
	if (!s->opts.cfg.domain_aware)
		p.requester_domain = p.target_domain = NULL;
	dyn_propose(s, &p, now_ms, &res);
}

size_t dyn_admit_batch(struct store *s, size_t max, uint64_t now_ms)
{
	mcrepl_trigger batch[64];
	size_t n, done = 0;

	while (done < max) {
		n = mcrepl_triggers_pop(s->triggers, batch,
					max - done < 64 ? max - done : 64);
		if (n == 0)
			break;
		store_lock(s);
		for (size_t i = 0; i < n; i++)
			admit_trigger(s, &batch[i], now_ms);
		store_unlock(s);
		for (size_t i = 0; i < n; i++)
			mcrepl_trigger_release(&batch[i]);
		done += n;
	}
	return done;
}

/* ---- the fenced copy RPCs ---------------------------------------------- */

static McreplRpc__Code reason_code(mcrepl_reason r)
{
	switch (r) {
	case MCREPL_REASON_NOT_SOURCE:
		return MCREPL_RPC__CODE__PERMISSION_DENIED;
	case MCREPL_REASON_LEASE_EXPIRED:
		return MCREPL_RPC__CODE__EXPIRED;
	default:
		return MCREPL_RPC__CODE__STALE;
	}
}

static size_t find_target(const struct object *o, uint64_t seg_id)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id &&
		    o->replicas[i].dynamic &&
		    o->replicas[i].status == REPLICA_PROCESSING)
			return i;
	return SIZE_MAX;
}

/* A started lease ended without success: free its PROCESSING target. */
static void unpin_target(struct store *s, const mcrepl_lease *l,
			 const char *tenant, const char *key, uint64_t now_ms)
{
	struct object *o = store_find(s, tenant, key);
	size_t i;

	if (!o || o->version != l->version)
		return;
	i = find_target(o, l->target.v);
	if (i != SIZE_MAX)
		store_drop_replica_quarantined(s, o, i, now_ms);
	if (o->copies > 0)
		o->copies--;
	if (o->n_replicas == 0 && o->copies == 0)
		store_delete_object(s, o);
}

/* The lease's copy is over (ok: its replica became readable). */
static void finish_lease_task(struct store *s, const mcrepl_lease *l, bool ok)
{
	struct task *t = l->task.v ? store_task(s, l->task.v) : NULL;

	if (t && t->warmup) { /* warmup progress, counted once */
		t->warmup = false;
		if (ok)
			s->warmup_done++;
		else
			s->warmup_failed++;
	}
	if (t)
		store_finish_task(s, t);
	lease_live(s, l, -1);
}

void store_fail_lease_task(struct store *s, const mcrepl_lease *l)
{
	mcrepl_stats_add(s->stats, MCREPL_STAT_TASKS_FAILED, 1);
	finish_lease_task(s, l, false);
}

/* The lease is gone after a refused call (expired, dead version): clean
 * what the master holds for it. */
static void retire_if_gone(struct store *s, const mcrepl_lease *known,
			   const char *tenant, const char *key, uint64_t now_ms)
{
	mcrepl_lease now_l;

	if (!known->id.v ||
	    mcrepl_leases_get(s->leases, known->id, &now_l) == MCREPL_OK)
		return;
	if (known->started)
		unpin_target(s, known, tenant, key, now_ms);
	store_fail_lease_task(s, known);
}

static McreplRpc__Code reserve_target(struct store *s, struct object *o,
				   const mcrepl_lease *l,
				   struct replica *src_out,
				   struct replica *dst_out)
{
	struct segment *dst = store_segment(s, l->target.v);
	struct replica *r;
	size_t i;

	for (i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == l->source.v &&
		    o->replicas[i].status == REPLICA_COMPLETE)
			break;
	if (!dst || i == o->n_replicas || !store_reserve_replica(o))
		return MCREPL_RPC__CODE__NOT_FOUND;
	*src_out = o->replicas[i];
	r = &o->replicas[o->n_replicas];
	if (seg_alloc_alloc(dst->alloc, o->size, &r->offset) != 0)
		return MCREPL_RPC__CODE__NO_SPACE;
	r->segment_id = dst->id;
	r->size = o->size;
	r->status = REPLICA_PROCESSING;
	r->dynamic = true;
	o->n_replicas++;
	o->copies++;
	*dst_out = *r;
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code dyn_copy_start(struct store *s, const mcrepl_fence *fin,
			    const char *tenant, const char *key,
			    uint64_t task_id, uint64_t now_ms,
			    struct replica *src_out, struct replica *dst_out,
			    const char **reason)
{
	struct object *o = store_find(s, tenant, key);
	struct task *t = store_task(s, task_id);
	mcrepl_fence f = *fin;
	mcrepl_reason why = MCREPL_REASON_NONE;
	mcrepl_lease l = {0};
	McreplRpc__Code code;

	mcrepl_leases_get(s->leases, f.lease, &l);
	f.object_version = o ? o->version : 0;
	if (mcrepl_leases_copy_start(s->leases, &f, now_ms, &l, &why) !=
	    MCREPL_OK) {
		*reason = mcrepl_reason_name(why);
		retire_if_gone(s, &l, tenant, key, now_ms);
		return reason_code(why);
	}
	code = t && t->msg.lease_id == f.lease.v && o
		   ? reserve_target(s, o, &l, src_out, dst_out)
		   : MCREPL_RPC__CODE__NOT_FOUND;
	if (code != MCREPL_RPC__CODE__OK) {
		*reason = code == MCREPL_RPC__CODE__NO_SPACE ? "no_space"
							 : "wrong_target";
		mcrepl_leases_copy_start_failed(s->leases, l.id, now_ms);
		store_fail_lease_task(s, &l);
	}
	return code;
}

static void count_completion(struct store *s, const mcrepl_lease *l)
{
	struct segment *src = store_segment(s, l->source.v);
	struct segment *dst = store_segment(s, l->target.v);
	bool same = src && dst && mcrepl_domain_equal(src->domain, dst->domain);

	mcrepl_stats_add(s->stats, MCREPL_STAT_TASKS_COMPLETED, 1);
	mcrepl_stats_add(s->stats, MCREPL_STAT_REPLICAS, 1);
	mcrepl_stats_add(s->stats,
			 same ? MCREPL_STAT_SAME_DOMAIN_COPIES
			      : MCREPL_STAT_CROSS_DOMAIN_COPIES,
			 1);
	mcrepl_stats_add(s->stats,
			 same ? MCREPL_STAT_SAME_DOMAIN_BYTES
			      : MCREPL_STAT_CROSS_DOMAIN_BYTES,
			 (int64_t)l->size);
}

typedef mcrepl_status (*fence_fn)(mcrepl_leases *, const mcrepl_fence *,
				  uint64_t, mcrepl_lease *, mcrepl_reason *);

/* End or revoke: the fence decides; the master applies the outcome. */
static McreplRpc__Code finish_copy(struct store *s, const mcrepl_fence *fin,
				const char *tenant, const char *key,
				uint64_t now_ms, bool success,
				const char **reason)
{
	struct object *o = store_find(s, tenant, key);
	mcrepl_fence f = *fin;
	mcrepl_reason why = MCREPL_REASON_NONE;
	mcrepl_lease l = {0};
	fence_fn fn =
	    success ? mcrepl_leases_copy_end : mcrepl_leases_copy_revoke;
	size_t i;

	mcrepl_leases_get(s->leases, f.lease, &l);
	f.object_version = o ? o->version : 0;
	if (fn(s->leases, &f, now_ms, &l, &why) != MCREPL_OK) {
		*reason = mcrepl_reason_name(why);
		retire_if_gone(s, &l, tenant, key, now_ms);
		return reason_code(why);
	}
	i = o ? find_target(o, l.target.v) : SIZE_MAX;
	if (!success || i == SIZE_MAX) {
		unpin_target(s, &l, tenant, key, now_ms);
		mcrepl_stats_add(s->stats,
				 success ? MCREPL_STAT_TASKS_FAILED
					 : MCREPL_STAT_TASKS_REVOKED,
				 1);
		finish_lease_task(s, &l, false);
		return success ? MCREPL_RPC__CODE__NOT_FOUND : MCREPL_RPC__CODE__OK;
	}
	o->replicas[i].status = REPLICA_COMPLETE;
	s->dyn_replica_bytes += o->replicas[i].size;
	o->copies--;
	count_completion(s, &l);
	finish_lease_task(s, &l, true);
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code dyn_copy_end(struct store *s, const mcrepl_fence *f,
			  const char *tenant, const char *key, uint64_t now_ms,
			  const char **reason)
{
	return finish_copy(s, f, tenant, key, now_ms, true, reason);
}

McreplRpc__Code dyn_copy_revoke(struct store *s, const mcrepl_fence *f,
			     const char *tenant, const char *key,
			     uint64_t now_ms, const char **reason)
{
	return finish_copy(s, f, tenant, key, now_ms, false, reason);
}

size_t dyn_sweep(struct store *s, uint64_t now_ms)
{
	mcrepl_lease out[32];
	size_t n, total = 0;

	do {
		n = mcrepl_leases_sweep(s->leases, now_ms, out, 32);
		for (size_t i = 0; i < n; i++) {
			struct task *t = store_task(s, out[i].task.v);

			if (out[i].started && t)
				unpin_target(s, &out[i], t->msg.tenant,
					     t->msg.key, now_ms);
			store_fail_lease_task(s, &out[i]);
		}
		total += n;
	} while (n == 32 && total < 4096);
	return total;
}

/* ---- warmup ----------------------------------------------------------------- */

static bool held_in_domain(struct store *s, const struct object *o,
			   const char *domain)
{
	for (size_t i = 0; i < o->n_replicas; i++) {
		struct segment *seg =
		    store_segment(s, o->replicas[i].segment_id);

		if (seg && o->replicas[i].status == REPLICA_COMPLETE &&
		    mcrepl_domain_equal(seg->domain, domain))
			return true;
	}
	return false;
}

static void warm_one(struct store *s, struct object *o, const char *domain,
		     uint64_t now_ms, uint32_t *queued)
{
	mcrepl_propose_result res;
	mcrepl_proposal p;
	char id[48];

	snprintf(id, sizeof(id), "warmup-%llu",
		 (unsigned long long)++s->next_proposal);
	p = (mcrepl_proposal){MCREPL_ACTION_ADD,
			      id,
			      o->tenant,
			      o->key,
			      domain,
			      domain,
			      o->version,
			      o->size,
			      {0},
			      now_ms + s->opts.cfg.lease_ttl_ms,
			      MCREPL_PROPOSAL_WARMUP};
	if (dyn_propose(s, &p, now_ms, &res) == MCREPL_OK)
		(*queued)++;
}

uint32_t dyn_warmup(struct store *s, const char *domain, uint32_t max_copies,
		    uint64_t max_bytes, uint64_t now_ms)
{
	size_t n = mcu_map_size(&s->objects), i = 0, chosen;
	mcrepl_warmup_candidate *c = calloc(n + 1, sizeof(*c));
	struct object **objs = calloc(n + 1, sizeof(*objs));
	size_t *pick = calloc((size_t)max_copies + 1, sizeof(*pick));
	uint32_t queued = 0;

	if (!c || !objs || !pick || !s->opts.cfg.domain_aware)
		goto out;
	for (struct object *o = s->lru_head; o && i < n; o = o->lru_next) {
		if (!o->complete)
			continue;
		objs[i] = o;
		c[i].heat = mcrepl_heat_cell_count(&o->heat, &s->heat, now_ms);
		c[i].size = o->size;
		c[i].in_domain = held_in_domain(s, o, domain);
		i++;
	}
	chosen = mcrepl_warmup_select(c, i, max_copies, max_bytes, pick);
	for (size_t j = 0; j < chosen; j++)
		warm_one(s, objs[pick[j]], domain, now_ms, &queued);
	s->warmup_runs++;
	s->warmup_queued += queued;
out:
	free(c);
	free(objs);
	free(pick);
	return queued;
}
