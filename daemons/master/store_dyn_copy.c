/* The fenced dynamic copy RPCs (DynamicReplicaCopyStart/End/Revoke) and
 * the lease sweep: libmcrepl's fence decides, the master applies the
 * outcome to the object, its target region and the lease's task. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "log.h"
#include "ratelog.h"
#include "store_dyn.h"

/* A live copy across domains (R-OBS-9), noted by its lease id at its
 * grant: its end takes it off the gauge even when a segment is gone by
 * then. */
struct cross_copy {
	struct mcu_map_node node; /* first: by lease id, in store.cross */
	uint64_t lease_id;
};

static bool cross_eq(const struct mcu_map_node *n, const void *id)
{
	return ((const struct cross_copy *)(const void *)n)->lease_id ==
	       *(const uint64_t *)id;
}

static void cross_node_free(struct mcu_map_node *n, void *unused)
{
	(void)unused;
	free(n);
}

void store__cross_free(struct store *s)
{
	mcu_map_drain(&s->cross, cross_node_free, NULL);
	mcu_map_fini(&s->cross);
}

/* The gauge at a lease's grant (src, dst: its segments) or end. Without
 * memory for the note a copy is not counted (at its end neither). */
static void cross_live(struct store *s, const mcrepl_lease *l,
		       const struct segment *src, const struct segment *dst,
		       int delta)
{
	uint64_t id = l->id.v, h = mcu_mix64(id);
	struct cross_copy *c;
	struct mcu_map_node *n;

	if (delta > 0) {
		if (!src || !dst ||
		    mcrepl_domain_equal(src->domain, dst->domain) ||
		    (!s->cross.tab[0] && mcu_map_init(&s->cross, 16)) ||
		    !(c = calloc(1, sizeof(*c))))
			return;
		c->lease_id = id;
		mcu_map_insert(&s->cross, &c->node, h);
		mcrepl_stats_add(s->stats, MCREPL_STAT_CROSS_DOMAIN_INFLIGHT,
				 1);
		return;
	}
	n = s->cross.n ? mcu_map_find(&s->cross, h, cross_eq, &id) : NULL;
	if (!n)
		return;
	mcu_map_remove(&s->cross, n);
	free(n);
	mcrepl_stats_add(s->stats, MCREPL_STAT_CROSS_DOMAIN_INFLIGHT, -1);
}

void dyn__lease_live(struct store *s, const mcrepl_lease *l, int delta)
{
	struct segment *src = store_segment(s, l->source.v);
	struct segment *dst = store_segment(s, l->target.v);

	cross_live(s, l, src, dst, delta);
	if (src)
		src->inflight += (uint32_t)delta;
	if (dst && delta > 0)
		dst->incoming += l->size;
	else if (dst)
		dst->incoming -=
		    l->size < dst->incoming ? l->size : dst->incoming;
}

/* A fence's refusal as the RPC's code, by the reason's class. */
static McreplRpc__Code reason_code(mcrepl_reason r)
{
	switch (mcrepl_reason_outcome(r, true)) {
	case MCREPL_OUTCOME_DENIED:
		return MCREPL_RPC__CODE__PERMISSION_DENIED;
	case MCREPL_OUTCOME_EXPIRED:
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
			s->ctr.warmup_done++;
		else
			s->ctr.warmup_failed++;
	}
	if (t)
		store_finish_task(s, t);
	dyn__lease_live(s, l, -1);
}

/* Copy outcomes in the log, at most a line a second each (under the
 * store lock, which owns these). */
static struct ratelog log_done, log_failed;

void dyn__fail_lease_task(struct store *s, const mcrepl_lease *l)
{
	ratelog(&log_failed, LOG_INFO,
		"dynamic copy of version %llu "
		"from segment %llu to %llu failed (lease %llu)",
		(unsigned long long)l->version, (unsigned long long)l->source.v,
		(unsigned long long)l->target.v, (unsigned long long)l->id.v);
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
	dyn__fail_lease_task(s, known);
}

/* The call names the lease's own key: the lease's task carries the tenant
 * and key it was granted for. An unknown lease passes (the fence refuses
 * it). */
static bool names_lease_key(struct store *s, const mcrepl_fence *f,
			    const char *tenant, const char *key)
{
	mcrepl_lease l;
	struct task *t;

	if (mcrepl_leases_get(s->leases, f->lease, &l) != MCREPL_OK)
		return true;
	t = l.task.v ? store_task(s, l.task.v) : NULL;
	return t && tenant && key && strcmp(t->msg.tenant, tenant) == 0 &&
	       strcmp(t->msg.key, key) == 0;
}

/* The dynamic copy's reservation at CopyStart: a PROCESSING dynamic
 * replica on the lease's target, pinning o. */
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
		    store__serving(s, &o->replicas[i]))
			break;
	if (!dst || i == o->n_replicas || !store_reserve_replica(o))
		return MCREPL_RPC__CODE__NOT_FOUND;
	*src_out = o->replicas[i];
	r = store__place_replica(s, o, dst, REPLICA_PROCESSING, true);
	if (!r)
		return MCREPL_RPC__CODE__NO_SPACE;
	r->grant_until_ms = l->expires_at_ms; /* the WRITE grant: the lease */
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

	if (!names_lease_key(s, &f, tenant, key)) {
		*reason = "wrong_key"; /* nothing changes */
		return MCREPL_RPC__CODE__PERMISSION_DENIED;
	}
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
		dyn__fail_lease_task(s, &l);
	}
	return code;
}

static void count_completion(struct store *s, const struct object *o,
			     const mcrepl_lease *l)
{
	struct segment *src = store_segment(s, l->source.v);
	struct segment *dst = store_segment(s, l->target.v);
	bool same = src && dst && mcrepl_domain_equal(src->domain, dst->domain);
	bool from_dynamic = false;

	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == l->source.v)
			from_dynamic = o->replicas[i].dynamic;
	if (from_dynamic)
		s->ctr.dyn_from_replica++;
	else
		s->ctr.dyn_from_primary++;

	ratelog(&log_done, LOG_INFO,
		"dynamic copy of version %llu "
		"from segment %llu to %llu completed (%s domain)",
		(unsigned long long)l->version, (unsigned long long)l->source.v,
		(unsigned long long)l->target.v, same ? "same" : "cross");
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

/* A copy that will not become readable (revoked, or its target is gone). */
static McreplRpc__Code copy_failed(struct store *s, const mcrepl_lease *l,
				   const char *tenant, const char *key,
				   uint64_t now_ms, bool success)
{
	unpin_target(s, l, tenant, key, now_ms);
	if (success) /* the lease ended done: its copy did not */
		mcrepl_stats_add(s->stats, MCREPL_STAT_TASKS_FAILED, 1);
	finish_lease_task(s, l, false);
	return success ? MCREPL_RPC__CODE__NOT_FOUND : MCREPL_RPC__CODE__OK;
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

	if (!names_lease_key(s, &f, tenant, key)) {
		*reason = "wrong_key"; /* nothing changes */
		return MCREPL_RPC__CODE__PERMISSION_DENIED;
	}
	mcrepl_leases_get(s->leases, f.lease, &l);
	f.object_version = o ? o->version : 0;
	if (fn(s->leases, &f, now_ms, &l, &why) != MCREPL_OK) {
		*reason = mcrepl_reason_name(why);
		retire_if_gone(s, &l, tenant, key, now_ms);
		return reason_code(why);
	}
	/* a target on a segment unmounted since: gone (NOT_FOUND, failed) */
	i = o && store_segment(s, l.target.v) ? find_target(o, l.target.v)
					      : SIZE_MAX;
	if (!success || i == SIZE_MAX)
		return copy_failed(s, &l, tenant, key, now_ms, success);
	o->replicas[i].status = REPLICA_COMPLETE;
	store__journal_commit(s, o, &o->replicas[i]);
	s->ctr.dyn_replica_bytes += o->replicas[i].size;
	mcrepl_engine_replica_added(s->engine, o->tenant, o->key,
				    (mcrepl_segment_id){.v = l.target.v});
	o->copies--;
	count_completion(s, o, &l);
	finish_lease_task(s, &l, true);
	if (mcrepl_engine_is_auto(s->engine) &&
	    !s->opts.cfg.domain_aware) /* fan on at copy speed */
		mcrepl_triggers_push(s->triggers, tenant, key, "", now_ms);
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code dyn_copy_end(struct store *s, const mcrepl_fence *f,
			     const char *tenant, const char *key,
			     uint64_t now_ms, const char **reason)
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
			dyn__fail_lease_task(s, &out[i]);
		}
		total += n;
	} while (n == 32 && total < 4096);
	return total;
}

/* The dynamic tasks whose source or target client_id served, in one pass
 * over the tasks (ids: they are failed one by one after); *n of them. NULL
 * when memory is short. */
static uint64_t *tasks_of(struct store *s, uint64_t client_id, size_t *n)
{
	size_t cap = mcu_map_size(&s->tasks) + 1;
	uint64_t *ids = calloc(cap, sizeof(*ids));

	*n = 0;
	for (size_t i = 0; ids && i < s->n_clients; i++)
		for (struct task *t = s->clients[i]->head; t && *n < cap;
		     t = t->next) {
			struct segment *dst =
			    store_segment(s, t->msg.target_segment_id);

			if (t->msg.dynamic &&
			    (t->client_id == client_id ||
			     (dst && dst->client_id == client_id)))
				ids[(*n)++] = t->msg.task_id;
		}
	return ids;
}

/* Client client_id went away: retire every live lease whose source or
 * target it served, now, through the lease table (no cooldown): the
 * started copy's target is freed (quarantined) and the object unpinned,
 * the task failed and counted once. One pass over the tasks. */
void dyn_on_client_gone(struct store *s, uint64_t client_id, uint64_t now_ms)
{
	size_t n;
	uint64_t *ids = tasks_of(s, client_id, &n);

	for (size_t i = 0; ids && i < n; i++) {
		struct task *t = store_task(s, ids[i]);
		mcrepl_lease l;

		if (!t ||
		    mcrepl_leases_get(s->leases,
				      (mcrepl_lease_id){.v = t->msg.lease_id},
				      &l) != MCREPL_OK) {
			if (t) { /* no live lease: the task alone */
				dyn_on_task_failed(s, t);
				store_finish_task(s, t);
			}
			continue;
		}
		mcrepl_leases_copy_start_failed(s->leases, l.id, now_ms);
		if (l.started)
			unpin_target(s, &l, t->msg.tenant, t->msg.key, now_ms);
		dyn__fail_lease_task(s, &l);
		s->ctr.reclaimed.dyn_worker++;
		t = store_task(s, ids[i]);
		if (t) /* bound to another lease: never loop on it */
			store_finish_task(s, t);
	}
	free(ids);
}
