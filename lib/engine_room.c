/*
 * The policy engine on a full cluster (mcrepl/engine.h,
 * mcrepl_engine_room()): a hot copy goes, with nothing evicted, where it
 * fits under the fill line (room_fill_limit, headroom above the target
 * watermark); otherwise it takes the place of cold objects of its size on
 * the segment placement would choose were there room, within a budget per
 * heat window. The segment is credited for that key's next proposal.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "engine_priv.h"

/* The most bytes a segment of `capacity` may hold after a copy: the
 * target watermark in place.h's exact arithmetic (9 decimal places). */
static uint64_t watermark_bytes(double wm, uint64_t capacity)
{
	double w = round(wm * 1e9);
	__uint128_t lim;

	w = w < 0 ? 0 : w > 1e9 ? 1e9 : w;
	lim = (__uint128_t)(uint64_t)w * capacity / 1000000000u;
	return (uint64_t)lim;
}

static uint64_t total_capacity(const mcrepl_engine *e)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < e->max_segs; i++)
		if (e->segs[i].id)
			sum += e->segs[i].capacity;
	return sum;
}

/* The fill line, 0 (no headroom) for a config that predates it. */
static double fill_line(const mcrepl_config *cfg)
{
	size_t end = offsetof(mcrepl_config, room_fill_limit) +
		     sizeof(cfg->room_fill_limit);

	return cfg->struct_size >= end ? cfg->room_fill_limit : 0;
}

/* The segment placement would choose among those the copy fits under the
 * fill line, by projected load as ever, or ENG_NONE (no headroom). */
static uint32_t headroom_target(mcrepl_engine *e,
				const mcrepl_propose_input *in)
{
	mcrepl_config cfg = e->cfg;
	mcrepl_place_request req = {
	    .tenant = in->proposal->tenant,
	    .key = in->proposal->key,
	    .size = in->object->size,
	    .target_domain =
		e->cfg.domain_aware ? in->proposal->target_domain : NULL,
	};
	size_t n, pick;

	if (fill_line(&e->cfg) <= e->cfg.target_high_watermark)
		return ENG_NONE;
	n = mcr_eng_views(e);
	cfg.target_high_watermark = fill_line(&e->cfg);
	cfg.read_load_aware_placement = true;
	if (mcrepl_place_target(&cfg, &req, e->scratch, n, in->replicas,
				in->n_replicas, &pick, NULL) != MCREPL_OK)
		return ENG_NONE;
	return mcr_eng_slot(e, e->scratch[pick].id.v);
}

/* Headroom is scarce on a full cluster (a copy or so a node under the
 * fill line), so it goes where a copy lowers the busiest node: to a key
 * with a replica on a node within balance_tolerance of the busiest one
 * (load-aware reads take its reads off its busiest replica first) whose
 * copy takes at least that tolerance of the busiest node's load off
 * (relief, mcrepl_room_relief(): its reads over its readable copies + 1),
 * onto a node that can take that much before it is as busy as that
 * replica (else the copy only moves the peak). As
 * copies bring the busiest node down the next one takes its place: a
 * greedy water-filling (docs/POLICY.md, "Room that costs no misses"). */
static bool lowers_the_peak(const mcrepl_engine *e,
			    const mcrepl_propose_input *in, uint32_t slot)
{
	uint64_t peak = 0, mine = 0,
		 target = mcr_eng_seg_load(e, e->segs[slot].id);
	uint64_t relief = mcrepl_room_relief(
	    in->heat_count, in->object->readable_memory_replicas);
	double tol = e->cfg.balance_tolerance;

	for (uint32_t i = 0; i < e->max_segs; i++) {
		uint64_t l = e->nodes[i].name ? mcr_eng_node_load(e, i) : 0;

		peak = l > peak ? l : peak;
	}
	for (size_t i = 0; i < in->n_replicas; i++) {
		uint64_t l = mcr_eng_seg_load(e, in->replicas[i].segment.v);

		mine = l > mine ? l : mine;
	}
	if (!peak) /* no reads seen: nothing to tell copies apart */
		return true;
	return (double)mine >= (1.0 - tol) * (double)peak &&
	       (double)relief >= tol * (double)peak &&
	       (double)target + tol * (double)peak <= (double)mine;
}

/* Headroom on slot: granted with nothing to evict, not charged to the
 * window's budget (it displaces nothing). */
static mcrepl_status headroom(mcrepl_engine *e, const mcrepl_propose_input *in,
			      uint32_t slot, mcrepl_room *out)
{
	struct eseg *g = &e->segs[slot];
	uint64_t used = g->used + g->promised;

	if (used + in->object->size <=
		watermark_bytes(e->cfg.target_high_watermark, g->capacity) ||
	    !lowers_the_peak(e, in, slot)) {
		/* it has room (refused for another reason), or the copy
		 * would not lower the busiest node */
		e->room_none++;
		return MCREPL_ENOENT;
	}
	g->room_key = mcr_eng_key_hash(in->proposal->tenant, in->proposal->key);
	g->room_charged = 0;
	e->room_live = true;
	e->room_ok++;
	e->room_headroom++;
	*out = (mcrepl_room){.segment = {g->id}, .bytes = 0};
	return MCREPL_OK;
}

/* The segment placement would choose were every segment empty enough to
 * take the copy (each view's used lowered to capacity - size), or
 * ENG_NONE; *used gets its real use. */
static uint32_t room_target(mcrepl_engine *e, const mcrepl_propose_input *in,
			    uint64_t *used)
{
	uint64_t size = in->object->size;
	mcrepl_config cfg = e->cfg;
	mcrepl_place_request req = {
	    .tenant = in->proposal->tenant,
	    .key = in->proposal->key,
	    .size = size,
	    .target_domain =
		e->cfg.domain_aware ? in->proposal->target_domain : NULL,
	};
	size_t n = mcr_eng_views(e), pick;

	for (size_t i = 0; i < n; i++) {
		mcrepl_segment_view *v = &e->scratch[i];

		if (v->capacity >= size && v->used > v->capacity - size)
			v->used = v->capacity - size;
	}
	cfg.target_high_watermark = 1.0;
	cfg.read_load_aware_placement = true;
	if (mcrepl_place_target(&cfg, &req, e->scratch, n, in->replicas,
				in->n_replicas, &pick, NULL) != MCREPL_OK)
		return ENG_NONE;
	pick = mcr_eng_slot(e, e->scratch[pick].id.v);
	*used = e->segs[pick].used + e->segs[pick].promised;
	return (uint32_t)pick;
}

static mcrepl_status
room_locked(mcrepl_engine *e, const mcrepl_propose_input *in, mcrepl_room *out)
{
	uint64_t used = 0, limit, need, charge, budget, key;
	uint32_t slot;
	struct eseg *g;

	if (!e->on || e->room_permille == MCREPL_ENGINE_NO_ROOM) {
		e->room_none++;
		return MCREPL_ENOENT;
	}
	if ((slot = headroom_target(e, in)) != ENG_NONE)
		return headroom(e, in, slot, out);
	if ((slot = room_target(e, in, &used)) == ENG_NONE) {
		e->room_none++;
		return MCREPL_ENOENT;
	}
	g = &e->segs[slot];
	limit = watermark_bytes(e->cfg.target_high_watermark, g->capacity);
	if (used + in->object->size <= limit) {
		e->room_none++; /* it has room: refused for another reason */
		return MCREPL_ENOENT;
	}
	/* a swap: cold bytes out, the hot copy in, the use unchanged */
	need = in->object->size;
	key = mcr_eng_key_hash(in->proposal->tenant, in->proposal->key);
	charge = g->room_key == key ? 0 : need;
	budget =
	    (uint64_t)((double)total_capacity(e) * e->room_permille / 1000.0);
	if (charge && e->room_spent > 0 && e->room_spent + charge > budget) {
		e->room_budget++;
		return MCREPL_EFULL;
	}
	e->room_spent += charge;
	e->room_bytes += charge;
	e->room_live = true;
	if (g->room_key != key)
		g->room_charged = 0;
	g->room_charged += charge;
	g->room_key = key;
	e->room_ok++;
	*out = (mcrepl_room){.segment = {g->id}, .bytes = need};
	return MCREPL_OK;
}

void mcr_eng_room_credit(mcrepl_engine *e, const mcrepl_propose_input *in,
			 size_t n)
{
	uint64_t key =
	    mcr_eng_key_hash(in->proposal->tenant, in->proposal->key);

	for (size_t i = 0; i < n; i++) {
		mcrepl_segment_view *v = &e->scratch[i];
		uint32_t slot = mcr_eng_slot(e, v->id.v);
		uint64_t limit;

		if (slot == ENG_NONE || e->segs[slot].room_key != key)
			continue;
		limit =
		    watermark_bytes(e->cfg.target_high_watermark, v->capacity);
		if (limit >= in->object->size &&
		    v->used > limit - in->object->size)
			v->used = limit - in->object->size;
	}
}

mcrepl_status mcrepl_engine_room(mcrepl_engine *e,
				 const mcrepl_propose_input *in,
				 mcrepl_room *out)
{
	mcrepl_status st;

	if (!e || !in || !in->proposal || !in->object || !out ||
	    (in->n_replicas && !in->replicas))
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	st = room_locked(e, in, out);
	pthread_mutex_unlock(&e->mu);
	return st;
}

/* Give back the grant for in's key on the room's segment: its charge to
 * the budget and the segment's credit. */
static mcrepl_status refused_locked(mcrepl_engine *e,
				    const mcrepl_propose_input *in,
				    const mcrepl_room *room)
{
	uint32_t slot = mcr_eng_slot(e, room->segment.v);
	struct eseg *g;

	if (slot == ENG_NONE)
		return MCREPL_ENOENT;
	g = &e->segs[slot];
	if (!g->room_key ||
	    g->room_key !=
		mcr_eng_key_hash(in->proposal->tenant, in->proposal->key))
		return MCREPL_ENOENT;
	e->room_spent -=
	    g->room_charged < e->room_spent ? g->room_charged : e->room_spent;
	g->room_charged = 0;
	g->room_key = 0;
	return MCREPL_OK;
}

mcrepl_status mcrepl_engine_room_refused(mcrepl_engine *e,
					 const mcrepl_propose_input *in,
					 const mcrepl_room *room)
{
	mcrepl_status st;

	if (!e || !in || !in->proposal || !room)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	st = refused_locked(e, in, room);
	pthread_mutex_unlock(&e->mu);
	return st;
}
