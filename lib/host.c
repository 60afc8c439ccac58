/*
 * The host calls (mcrepl/host.h): ids by name and by 128-bit wire ids, the
 * read path over a host's per-object state, proposals and copy fences by
 * names with outcome classes, the sweep with a callback, and the counters
 * a host used to keep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"
#include "util/hash.h"

#define SEED_SEGNAME 0x6d6372657367ULL /* "mcresg" */
/* replicas one read orders (a read returns a handful) */
#define READ_MAX 16
/* leases retired per sweep batch */
#define SWEEP_BATCH 64

/* ---- ids ---------------------------------------------------------------- */

mcrepl_segment_id mcrepl_segment_id_of(const char *name)
{
	uint64_t h;

	if (!name || !*name)
		return (mcrepl_segment_id){0};
	h = mcu_hash_str(name, SEED_SEGNAME);
	/* 0 and all ones are the engine's free and dead slots */
	return (mcrepl_segment_id){.v = h == 0 || h == UINT64_MAX ? 1 : h};
}

mcrepl_engine_segment mcr_eng_seg_named(const mcrepl_engine_segment *s)
{
	mcrepl_engine_segment x = *s;

	if (!x.id.v)
		x.id = mcrepl_segment_id_of(x.name);
	return x;
}

mcrepl_client_id mcrepl_client_of_wire(mcrepl_wire_id w)
{
	uint64_t v;

	if (!w.hi && !w.lo)
		return (mcrepl_client_id){0};
	v = mcu_splitmix64_mix(w.hi ^ mcu_mix64(w.lo));
	return (mcrepl_client_id){.v = v ? v : 1};
}

mcrepl_wire_id mcrepl_engine_lease_wire(const mcrepl_engine *e,
					mcrepl_lease_id id)
{
	return (mcrepl_wire_id){.hi = e ? e->incarnation : 0, .lo = id.v};
}

mcrepl_lease_id mcrepl_engine_lease_of_wire(const mcrepl_engine *e,
					    mcrepl_wire_id w)
{
	return (mcrepl_lease_id){.v = e && w.hi == e->incarnation ? w.lo : 0};
}

/* ---- the read path ------------------------------------------------------ */

static void count(mcrepl_engine *e, mcrepl_stat which)
{
	mcrepl_stats_add(e->stats, which, 1);
}

/* A crossing: a trigger for the admission loop (enforce) or a
 * would-propose (observe). */
static bool crossed(mcrepl_engine *e, const char *tenant, const char *key,
		    uint64_t now_ms)
{
	mcrepl_status st;

	count(e, MCREPL_STAT_OBSERVED_HOT);
	if (e->cfg.mode != MCREPL_MODE_ENFORCE) {
		count(e, MCREPL_STAT_WOULD_PROPOSE);
		return false;
	}
	st = mcrepl_triggers_push(e->triggers, tenant ? tenant : "", key, "",
				  now_ms);
	if (st == MCREPL_OK)
		count(e, MCREPL_STAT_TRIGGERS_QUEUED);
	else if (st == MCREPL_EFULL)
		count(e, MCREPL_STAT_TRIGGERS_DROPPED);
	return st == MCREPL_OK;
}

/* The first replica's segment, from st's cache when it is the replica
 * routed first last time. */
static mcrepl_segment_id routed(mcrepl_object_state *st,
				const mcrepl_read_replica *r)
{
	if (!r->id || r->id != st->routed_replica || !st->routed_segment.v) {
		st->routed_segment = mcrepl_segment_id_of(r->segment);
		st->routed_replica = r->id;
	}
	return st->routed_segment;
}

mcrepl_status mcrepl_engine_on_read(mcrepl_engine *e, mcrepl_object_state *st,
				    const char *tenant, const char *key,
				    const mcrepl_read_replica *replicas,
				    size_t n, uint64_t salt, uint64_t now_ms,
				    mcrepl_read_result *out)
{
	mcrepl_replica_view v[READ_MAX];
	mcrepl_heat_params hp;
	size_t k = n < READ_MAX ? n : READ_MAX, pick = 0;

	if (!e || !st || !key || !out || (n && !replicas))
		return MCREPL_EINVAL;
	*out = (mcrepl_read_result){0};
	if (e->cfg.mode == MCREPL_MODE_OFF)
		return MCREPL_OK;
	hp = e->hp;
	hp.threshold =
	    atomic_load_explicit(&e->read_threshold, memory_order_relaxed);
	if (mcrepl_heat_cell_record(&st->heat, &hp, now_ms, &out->count) ==
	    MCREPL_HEAT_CROSSED) {
		out->crossed = true;
		out->queued = crossed(e, tenant, key, now_ms);
	}
	if (!k)
		return MCREPL_OK;
	for (size_t i = 0; i < k; i++)
		v[i] = (mcrepl_replica_view){
		    .segment = i ? mcrepl_segment_id_of(replicas[i].segment)
				 : routed(st, &replicas[0]),
		    .readable = true,
		    .memory = true};
	if (k > 1 && (mcrepl_engine_pick(e, tenant, key, v, k, salt, &pick) !=
			  MCREPL_OK ||
		      pick >= k))
		pick = 0;
	out->first = pick;
	mcrepl_engine_read(e, v[pick].segment);
	return MCREPL_OK;
}

uint32_t mcrepl_engine_object_heat(mcrepl_engine *e,
				   const mcrepl_object_state *st,
				   uint64_t now_ms, uint32_t *recent)
{
	if (recent)
		*recent = 0;
	if (!e || !st)
		return 0;
	if (recent)
		*recent = mcrepl_heat_cell_recent(&st->heat, &e->hp, now_ms);
	return mcrepl_heat_cell_count(&st->heat, &e->hp, now_ms);
}

size_t mcrepl_engine_triggers_pop(mcrepl_engine *e, mcrepl_trigger *out,
				  size_t cap)
{
	return e && out ? mcrepl_triggers_pop(e->triggers, out, cap) : 0;
}

/* ---- proposals and copies ------------------------------------------------ */

static void task_of(mcrepl_engine *e, const mcrepl_lease *l,
		    mcrepl_copy_task *t)
{
	memset(t, 0, sizeof(*t));
	t->lease = mcrepl_engine_lease_wire(e, l->id);
	t->task = (mcrepl_wire_id){.hi = l->task_hi, .lo = l->task.v};
	(void)mcrepl_engine_segment_name(e, l->source, t->source,
					 sizeof(t->source));
	(void)mcrepl_engine_segment_name(e, l->target, t->target,
					 sizeof(t->target));
	memcpy(t->target_domain, l->target_domain, sizeof(t->target_domain));
	t->target_domain[sizeof(t->target_domain) - 1] = '\0';
	t->version = l->version;
	t->size = l->size;
	t->expires_at_ms = l->expires_at_ms;
	t->started = l->started;
}

static void answer(mcrepl_host_result *out, mcrepl_reason why, bool fence)
{
	out->reason = why;
	out->outcome = mcrepl_reason_outcome(why, fence);
}

mcrepl_status mcrepl_engine_propose_named(mcrepl_engine *e,
					  const mcrepl_named_proposal *p,
					  mcrepl_host_result *out)
{
	mcrepl_replica_view *v = NULL;
	mcrepl_propose_result res;
	mcrepl_propose_input in;
	mcrepl_proposal pr;
	mcrepl_status st;
	char id[33];

	if (!out)
		return MCREPL_EINVAL;
	memset(out, 0, sizeof(*out));
	answer(out, MCREPL_REASON_INVALID_PROPOSAL, false);
	if (!e || !p || (p->n_replicas && !p->replicas))
		return MCREPL_EINVAL;
	if (p->n_replicas && !(v = calloc(p->n_replicas, sizeof(*v))))
		return MCREPL_ENOMEM;
	for (size_t i = 0; i < p->n_replicas; i++) {
		v[i].segment = mcrepl_segment_id_of(p->replicas[i].segment);
		v[i].readable = p->replicas[i].readable;
		v[i].memory = p->replicas[i].memory;
		v[i].dynamic = p->replicas[i].dynamic;
	}
	snprintf(id, sizeof(id), "%016llx%016llx", (unsigned long long)p->id.hi,
		 (unsigned long long)p->id.lo);
	memset(&pr, 0, sizeof(pr));
	pr.action = MCREPL_ACTION_ADD;
	pr.proposal_id = id;
	pr.tenant = p->tenant;
	pr.key = p->key;
	pr.requester_domain = p->requester_domain;
	pr.target_domain = p->target_domain;
	pr.observed_version =
	    p->observed_version ? p->observed_version : p->object.version;
	pr.expected_size = p->expected_size ? p->expected_size : p->object.size;
	pr.preferred_target = mcrepl_segment_id_of(p->preferred_target);
	pr.expires_at_ms = p->expires_at_ms ? p->expires_at_ms
					    : p->now_ms + e->cfg.lease_ttl_ms;
	memset(&in, 0, sizeof(in));
	in.proposal = &pr;
	in.object = &p->object;
	in.heat_count = p->heat_count;
	in.heat_recent = p->heat_recent;
	in.replicas = v;
	in.n_replicas = p->n_replicas;
	in.replicas_from_engine = true;
	in.now_ms = p->now_ms;
	memset(&res, 0, sizeof(res));
	st = mcrepl_engine_propose(e, &in, &res);
	free(v);
	answer(out, res.reason, false);
	out->repeated = res.repeated;
	if (st != MCREPL_OK) {
		mcrepl_stats_reject(e->stats, res.reason);
		return st;
	}
	task_of(e, &res.lease, &out->task);
	if (res.repeated &&
	    (!res.live || (!res.lease.task.v && !res.lease.task_hi))) {
		/* the lease ended, or its task is not made yet */
		out->outcome = MCREPL_OUTCOME_UNAVAILABLE;
		return MCREPL_EBUSY;
	}
	return MCREPL_OK;
}

mcrepl_status mcrepl_engine_bind_task(mcrepl_engine *e, mcrepl_wire_id lease,
				      mcrepl_wire_id task)
{
	mcrepl_lease_id id = mcrepl_engine_lease_of_wire(e, lease);

	if (!e)
		return MCREPL_EINVAL;
	if (!id.v)
		return MCREPL_ENOENT;
	return mcrepl_leases_bind_task128(e->leases, id, task.hi, task.lo);
}

mcrepl_status mcrepl_engine_abort(mcrepl_engine *e, mcrepl_wire_id lease)
{
	mcrepl_lease_id id = mcrepl_engine_lease_of_wire(e, lease);

	if (!e)
		return MCREPL_EINVAL;
	return id.v ? mcrepl_leases_abort(e->leases, id) : MCREPL_ENOENT;
}

static mcrepl_fence fence_of(const mcrepl_engine *e,
			     const mcrepl_named_fence *f)
{
	mcrepl_fence x;

	memset(&x, 0, sizeof(x));
	x.lease = mcrepl_engine_lease_of_wire(e, f->lease);
	x.version = f->version;
	x.caller = mcrepl_client_of_wire(f->caller);
	x.source = mcrepl_segment_id_of(f->source);
	if (f->n_targets == 1 && f->targets)
		x.target = mcrepl_segment_id_of(f->targets[0]);
	else if (f->n_targets > 1) /* one target, the lease's */
		x.target.v = UINT64_MAX;
	x.object_version = f->object_version;
	return x;
}

typedef mcrepl_status (*fence_fn)(mcrepl_leases *, const mcrepl_fence *,
				  uint64_t, mcrepl_lease *, mcrepl_reason *);

/* One fence call; *lease_out tells whether the table returned a lease. */
static mcrepl_status fence_call(mcrepl_engine *e, fence_fn fn,
				const mcrepl_named_fence *f, uint64_t now_ms,
				mcrepl_host_result *out)
{
	mcrepl_reason why = MCREPL_REASON_NONE;
	mcrepl_lease lease;
	mcrepl_fence x;
	mcrepl_status st;

	if (!out)
		return MCREPL_EINVAL;
	memset(out, 0, sizeof(*out));
	answer(out, MCREPL_REASON_INVALID_PROPOSAL, true);
	if (!e || !f)
		return MCREPL_EINVAL;
	x = fence_of(e, f);
	memset(&lease, 0, sizeof(lease));
	st = fn(e->leases, &x, now_ms, &lease, &why);
	answer(out, st == MCREPL_OK ? MCREPL_REASON_NONE : why, true);
	if (lease.id.v)
		task_of(e, &lease, &out->task);
	return st;
}

mcrepl_status mcrepl_engine_copy_start(mcrepl_engine *e,
				       const mcrepl_named_fence *f,
				       uint64_t now_ms, mcrepl_host_result *out)
{
	mcrepl_status st =
	    fence_call(e, mcrepl_leases_copy_start, f, now_ms, out);

	if (st != MCREPL_EREJECTED)
		return st;
	/* the work is gone, not wrong: an expired lease, or a stale task of
	 * a key with no lease left */
	if (out->reason == MCREPL_REASON_LEASE_EXPIRED ||
	    (out->reason == MCREPL_REASON_UNKNOWN_LEASE &&
	     !mcrepl_leases_key_is_pending(e->leases, f->tenant, f->key,
					   now_ms)))
		out->outcome = MCREPL_OUTCOME_UNAVAILABLE;
	return st;
}

mcrepl_status mcrepl_engine_copy_end(mcrepl_engine *e,
				     const mcrepl_named_fence *f,
				     uint64_t now_ms, mcrepl_host_result *out)
{
	return fence_call(e, mcrepl_leases_copy_end, f, now_ms, out);
}

mcrepl_status mcrepl_engine_copy_revoke(mcrepl_engine *e,
					const mcrepl_named_fence *f,
					uint64_t now_ms,
					mcrepl_host_result *out)
{
	mcrepl_status st =
	    fence_call(e, mcrepl_leases_copy_revoke, f, now_ms, out);

	/* nothing left to revoke: the host frees the targets */
	if (st == MCREPL_EREJECTED &&
	    (out->reason == MCREPL_REASON_LEASE_EXPIRED ||
	     out->reason == MCREPL_REASON_UNKNOWN_LEASE))
		out->outcome = MCREPL_OUTCOME_OK;
	return st;
}

mcrepl_status mcrepl_engine_copy_committed(mcrepl_engine *e,
					   const mcrepl_copy_task *task,
					   const char *tenant, const char *key,
					   bool committed)
{
	if (!e || !task || !key)
		return MCREPL_EINVAL;
	if (!committed) {
		count(e, MCREPL_STAT_TASKS_FAILED);
		return MCREPL_OK;
	}
	return mcrepl_engine_replica_added_named(e, tenant, key, task->target);
}

mcrepl_status mcrepl_engine_copy_failed(mcrepl_engine *e, mcrepl_wire_id lease,
					uint64_t now_ms)
{
	mcrepl_lease_id id = mcrepl_engine_lease_of_wire(e, lease);

	if (!e)
		return MCREPL_EINVAL;
	return id.v ? mcrepl_leases_copy_start_failed(e->leases, id, now_ms)
		    : MCREPL_ENOENT;
}

bool mcrepl_engine_key_pending(mcrepl_engine *e, const char *tenant,
			       const char *key, uint64_t now_ms)
{
	return e && key &&
	       mcrepl_leases_key_is_pending(e->leases, tenant, key, now_ms);
}

mcrepl_status mcrepl_engine_object_removed(mcrepl_engine *e, const char *tenant,
					   const char *key)
{
	if (!e || !key)
		return MCREPL_EINVAL;
	return mcrepl_leases_object_removed(e->leases, tenant, key, NULL, 0,
					    NULL);
}

size_t mcrepl_engine_sweep(mcrepl_engine *e, uint64_t now_ms,
			   mcrepl_expired_fn fn, void *ctx)
{
	mcrepl_lease batch[SWEEP_BATCH];
	mcrepl_copy_task task;
	size_t n, total = 0;

	if (!e)
		return 0;
	do {
		n = mcrepl_leases_sweep(e->leases, now_ms, batch, SWEEP_BATCH);
		for (size_t i = 0; i < n && fn; i++) {
			task_of(e, &batch[i], &task);
			fn(ctx, &task);
		}
		total += n;
	} while (n == SWEEP_BATCH);
	return total;
}

/* ---- dynamic replicas by segment name -------------------------------------- */

mcrepl_status mcrepl_engine_replica_added_named(mcrepl_engine *e,
						const char *tenant,
						const char *key,
						const char *segment)
{
	return mcrepl_engine_replica_added(e, tenant, key,
					   mcrepl_segment_id_of(segment));
}

mcrepl_status mcrepl_engine_replica_recovered_named(mcrepl_engine *e,
						    const char *tenant,
						    const char *key,
						    const char *segment)
{
	return mcrepl_engine_replica_recovered(e, tenant, key,
					       mcrepl_segment_id_of(segment));
}

mcrepl_status
mcrepl_engine_replica_dropped_named(mcrepl_engine *e, const char *tenant,
				    const char *key, const char *segment,
				    bool cooldown, uint64_t now_ms)
{
	return mcrepl_engine_replica_dropped(
	    e, tenant, key, mcrepl_segment_id_of(segment), cooldown, now_ms);
}
