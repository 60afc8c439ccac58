/* Dynamic replication in the master: the hooks the store calls (a read, a
 * remove, a dropped replica, a failed task, a new domain) and the proposal
 * path every copy goes through. Every decision is libmcrepl's; these files
 * (store_dyn*.c) only build its inputs and apply its output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_dyn.h"

/* ---- hooks ---------------------------------------------------------------- */

/* True when a mounted segment is in `domain`: only such domains are
 * requester domains (a name a client invents gets no per-object heat). */
static bool domain_mounted(const struct store *s, const char *domain)
{
	for (size_t i = 0; i < s->n_segs; i++)
		if (mcrepl_domain_equal(s->segs[i]->domain, domain))
			return true;
	return false;
}

mcrepl_heat_cell *dyn__heat_cell(const struct store *s, struct object *o,
				 const char *domain, bool create)
{
	struct domain_heat *d;

	if (!s->opts.cfg.domain_aware)
		return &o->heat;
	domain = mcrepl_domain_name(domain);
	for (uint8_t i = 0; i < o->n_dheat; i++)
		if (strcmp(o->dheat[i].domain, domain) == 0)
			return &o->dheat[i].cell;
	if (!create || strlen(domain) > MCREPL_DOMAIN_MAX ||
	    !domain_mounted(s, domain))
		return NULL;
	if (o->n_dheat == MASTER_MAX_HEAT_DOMAINS) {
		/* full: the slot of a domain no longer mounted is reused */
		for (uint8_t i = 0; i < o->n_dheat; i++) {
			d = &o->dheat[i];
			if (domain_mounted(s, d->domain))
				continue;
			memset(d, 0, sizeof(*d));
			strcpy(d->domain, domain);
			return &d->cell;
		}
		return NULL;
	}
	d = realloc(o->dheat, (o->n_dheat + 1u) * sizeof(*d));
	if (!d)
		return NULL;
	o->dheat = d;
	d = &o->dheat[o->n_dheat++];
	memset(d, 0, sizeof(*d));
	strcpy(d->domain, domain);
	return &d->cell;
}

static void queue_trigger(struct store *s, const struct object *o,
			  const char *domain, uint64_t now_ms)
{
	mcrepl_status st;

	mcrepl_stats_add(s->stats, MCREPL_STAT_OBSERVED_HOT, 1);
	st = mcrepl_triggers_push(
	    s->triggers, o->tenant, o->key,
	    s->opts.cfg.domain_aware ? mcrepl_domain_name(domain) : "", now_ms);
	if (st == MCREPL_OK)
		mcrepl_stats_add(s->stats, MCREPL_STAT_TRIGGERS_QUEUED, 1);
	else if (st == MCREPL_EFULL)
		mcrepl_stats_add(s->stats, MCREPL_STAT_TRIGGERS_DROPPED, 1);
}

void dyn_on_read(struct store *s, struct object *o, const char *domain,
		 uint64_t now_ms)
{
	mcrepl_heat_cell *cell;

	if (s->opts.cfg.mode == MCREPL_MODE_OFF)
		return;
	cell = dyn__heat_cell(s, o, domain, true);
	if (s->opts.cfg.domain_aware) /* global heat feeds warmup */
		mcrepl_heat_cell_record(&o->heat, &s->heat, now_ms, NULL);
	if (cell && mcrepl_heat_cell_record(cell, &s->heat, now_ms, NULL) ==
			MCREPL_HEAT_CROSSED)
		queue_trigger(s, o, domain, now_ms);
}

McreplRpc__Code dyn_on_remove(struct store *s, const char *tenant,
			      const char *key, char *err, size_t errlen)
{
	mcrepl_lease cleared[4];
	size_t n = 0;

	if (mcrepl_leases_object_removed(s->leases, tenant, key, cleared, 4,
					 &n) == MCREPL_EBUSY) {
		snprintf(err, errlen, "a dynamic copy of it has started");
		return MCREPL_RPC__CODE__BUSY;
	}
	for (size_t i = 0; i < n; i++)
		dyn__fail_lease_task(s, &cleared[i]);
	return MCREPL_RPC__CODE__OK;
}

void dyn_on_replica_dropped(struct store *s, const struct object *o,
			    const struct replica *r, const struct segment *seg,
			    uint64_t now_ms)
{
	if (!r->dynamic || r->status != REPLICA_COMPLETE)
		return;
	mcrepl_stats_add(s->stats, MCREPL_STAT_REPLICAS, -1);
	s->ctr.dyn_replica_bytes -= r->size;
	mcrepl_leases_replica_removed(s->leases, o->tenant, o->key,
				      seg ? seg->domain : NULL, now_ms);
	mcrepl_engine_replica_dropped(s->engine, o->tenant, o->key,
				      (mcrepl_segment_id){.v = r->segment_id},
				      false, now_ms);
}

void dyn_on_replica_recovered(struct store *s, const struct object *o,
			      const struct replica *r)
{
	mcrepl_stats_add(s->stats, MCREPL_STAT_REPLICAS, 1);
	s->ctr.dyn_replica_bytes += r->size;
	mcrepl_engine_replica_recovered(
	    s->engine, o->tenant, o->key,
	    (mcrepl_segment_id){.v = r->segment_id});
}

void dyn_on_task_failed(struct store *s, const struct task *t)
{
	if (t->msg.dynamic)
		mcrepl_stats_add(s->stats, MCREPL_STAT_TASKS_FAILED, 1);
}

void dyn_on_new_domain(struct store *s, const char *domain, uint64_t now_ms)
{
	if (s->opts.cfg.domain_aware)
		dyn_warmup(s, domain, s->opts.warmup_max_copies,
			   s->opts.warmup_max_bytes, now_ms);
}

bool dyn_key_is_pending(struct store *s, const char *tenant, const char *key,
			uint64_t now_ms)
{
	return mcrepl_leases_key_is_pending(s->leases, tenant, key, now_ms);
}

bool dyn_task_lease_live(struct store *s, const struct task *t)
{
	mcrepl_lease l;

	return t->msg.dynamic &&
	       mcrepl_leases_get(s->leases,
				 (mcrepl_lease_id){.v = t->msg.lease_id},
				 &l) == MCREPL_OK;
}

/* ---- the proposal path ---------------------------------------------------- */

/* o's COMPLETE replicas. */
static uint32_t dyn__readable_count(const struct object *o)
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

/* The engine places on what segments hold now: count granted copies
 * before they reserve at CopyStart, so one batch of admissions does not
 * pile onto one target. */
static void segment_usage(struct store *s)
{
	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];

		mcrepl_engine_segment_used(
		    s->engine, (mcrepl_segment_id){.v = seg->id},
		    store_used(seg) + seg->incoming, store__placeable(seg));
	}
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
				(mcrepl_task_id){.v = t->msg.task_id});
	res->lease.task.v = t->msg.task_id;
	if (s->opts.cfg.domain_aware)
		mcrepl_stats_domain_proposal(s->stats, p->requester_domain,
					     res->lease.target_domain);
	dyn__lease_live(s, &res->lease, 1);
	return MCREPL_OK;
}

/* What libmcrepl judges a proposal on: the object, its replicas, its heat
 * in the requester's domain (in is zeroed except for the object view). */
static void object_input(struct store *s, struct object *o,
			 const mcrepl_proposal *p, uint64_t now_ms,
			 mcrepl_object_view *ov, mcrepl_replica_view *rv,
			 mcrepl_propose_input *in)
{
	mcrepl_heat_cell *cell =
	    dyn__heat_cell(s, o, p->requester_domain, false);

	*ov = (mcrepl_object_view){
	    .exists = true,
	    .version = o->version,
	    .size = o->size,
	    .readable_memory_replicas = dyn__readable_count(o),
	    .busy = o->copy_target != 0,
	};
	in->heat_count =
	    cell ? mcrepl_heat_cell_count(cell, &s->heat, now_ms) : 0;
	in->heat_recent =
	    cell ? mcrepl_heat_cell_recent(cell, &s->heat, now_ms) : 0;
	replica_views(s, o, rv);
	in->n_replicas = o->n_replicas;
}

/* A full cluster: a hot key passed admission but no segment has room
 * under the watermark. Where the copy fits under room_fill_limit the
 * engine grants it with nothing to free (headroom). Otherwise eviction under the room rule (store_dyn_room.c:
 * dynamic replicas and copies with another readable copy first, an only
 * copy as room_miss_cost allows, never an object under read lease) frees
 * what the engine asks on the segment it names, at once, so the copy is
 * placed there before puts refill it. True when the room was made; room
 * refused is reported back (mcrepl_engine_room_refused()). */
static bool make_room(struct store *s, const mcrepl_propose_input *in,
		      uint64_t now_ms)
{
	uint64_t relief = mcrepl_room_relief(
	    in->heat_count, in->object->readable_memory_replicas);
	struct segment *seg;
	mcrepl_room room;

	if (mcrepl_engine_room(s->engine, in, &room) != MCREPL_OK)
		return false;
	if (!(seg = store_segment(s, room.segment.v)) ||
	    (room.bytes && dyn__evict_room(s, seg, room.bytes, relief, now_ms) <
			       room.bytes)) {
		/* refused: its bytes go back to the window's room budget */
		mcrepl_engine_room_refused(s->engine, in, &room);
		return false;
	}
	if (room.bytes == 0) /* headroom under room_fill_limit */
		return true;
	segment_usage(s);
	return true;
}

static bool no_target(const mcrepl_propose_result *res)
{
	return res->reason == MCREPL_REASON_NO_TARGET ||
	       res->reason == MCREPL_REASON_NO_TARGET_IN_DOMAIN;
}

mcrepl_status dyn_propose(struct store *s, const mcrepl_proposal *p,
			  uint64_t now_ms, mcrepl_propose_result *res)
{
	struct object *o =
	    p->key ? store_find(s, p->tenant ? p->tenant : "", p->key) : NULL;
	mcrepl_replica_view rv[MASTER_MAX_REPLICAS];
	mcrepl_object_view ov = {0};
	mcrepl_propose_input in = {
	    .proposal = p,
	    .object = &ov,
	    .replicas = rv,
	    .now_ms = now_ms,
	};
	mcrepl_status st;

	memset(res, 0, sizeof(*res));
	if (o && o->complete)
		object_input(s, o, p, now_ms, &ov, rv, &in);
	segment_usage(s);
	st = mcrepl_engine_propose(s->engine, &in, res);
	if (st != MCREPL_OK && no_target(res) && make_room(s, &in, now_ms))
		st = mcrepl_engine_propose(s->engine, &in, res);
	if (st == MCREPL_OK && !res->repeated)
		return publish(s, o, p, res, now_ms);
	if (st != MCREPL_OK)
		mcrepl_stats_reject(s->stats, res->reason);
	return st;
}
