/*
 * The master on libmcrepl's policy engine (mcrepl/engine.h): the engine
 * keeps segment loads, projections, the threshold, the reader order and
 * which dynamic replicas exist; the store tells it what changes and, once
 * per heat window, drops the replicas it names (through the eviction
 * path's drop, as before).
 */
#include <string.h>

#include "store_dyn.h"

int store__policy_init(struct store *s)
{
	mcrepl_engine_opts eo = {
	    .struct_size = sizeof(eo),
	    .max_segments = MASTER_MAX_SEGMENTS,
	    .order_by_load = s->opts.read_load_order,
	    .stats = s->stats, /* the leases' lifecycle, completed copies */
	};

	if (mcrepl_engine_create(&s->opts.cfg, &eo, &s->engine) != MCREPL_OK)
		return -1;
	s->leases = mcrepl_engine_leases(s->engine);
	mcrepl_engine_heat_params(s->engine, &s->heat);
	return 0;
}

mcrepl_status store__policy_segment(struct store *s, const struct segment *seg)
{
	mcrepl_engine_segment v = {
	    .id = {seg->id},
	    .client = {seg->client_id},
	    .host = seg->host,
	    .domain = seg->domain,
	    .capacity = seg->capacity,
	    .used = store_used(seg) + seg->incoming,
	    .allocatable = store__placeable(seg),
	    .can_copy = seg->dynamic_copy,
	    .read_load = seg->reads_recent,
	};

	return mcrepl_engine_segment_set(s->engine, &v);
}

struct probe_ctx {
	struct store *s;
	uint64_t now_ms;
};

void store__policy_figures(struct store *s, struct store_figures *f)
{
	mcrepl_engine_stats es = {.struct_size = sizeof(es)};

	mcrepl_engine_get_stats(s->engine, &es);
	f->policy_nodes = es.nodes;
	f->policy_window_reads = es.window_reads;
	f->policy_threshold = es.threshold;
	f->policy_projections = es.projections;
	f->policy_dynamic_replicas = es.dynamic_replicas;
	f->policy_untracked = es.untracked_total;
	/* room made: the engine's grants less those the room rule left
	 * short (store_dyn_room.c), which freed nothing, and those in
	 * headroom, which needed nothing freed */
	f->policy_room_headroom = es.room_headroom_total;
	f->policy_room =
	    es.room_total > f->room_short + es.room_headroom_total
		? es.room_total - f->room_short - es.room_headroom_total
		: 0;
	f->policy_room_bytes = es.room_bytes_total;
	f->policy_room_budget = es.room_budget_total;
	f->policy_room_none = es.room_none_total;
}

/* What the engine asks of an object at retirement: never under a read
 * lease or a running copy (as eviction); readable replicas in `domain`. */
static void probe(void *ctx, const char *tenant, const char *key,
		  const char *domain, mcrepl_retire_probe *out)
{
	const struct probe_ctx *c = ctx;
	struct store *s = c->s;
	struct object *o = store_find(s, tenant, key);
	const mcrepl_heat_cell *cell;

	if (!o) {
		out->gone = true;
		return;
	}
	out->busy = !o->complete || o->copies || o->lease_until_ms > c->now_ms;
	cell = domain ? dyn__heat_cell(s, o, domain, false) : &o->heat;
	out->count =
	    cell ? mcrepl_heat_cell_count(cell, &s->heat, c->now_ms) : 0;
	for (size_t i = 0; i < o->n_replicas; i++) {
		const struct segment *seg =
		    store_segment(s, o->replicas[i].segment_id);

		out->readable +=
		    seg && o->replicas[i].status == REPLICA_COMPLETE &&
		    (!domain || mcrepl_domain_equal(seg->domain, domain));
	}
}

/* The replica of o on segment seg, or SIZE_MAX. */
static size_t replica_on(const struct object *o, uint64_t seg)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg)
			return i;
	return SIZE_MAX;
}

/* The pass: each retirement the engine names is dropped (the drop tells
 * the engine, and the key enters the recreate cooldown). */
static void retire_pass(struct store *s, uint64_t now_ms)
{
	struct probe_ctx c = {.s = s, .now_ms = now_ms};
	mcrepl_retirement out[64];
	size_t n, visited;

	while ((visited = mcrepl_engine_retire(s->engine, now_ms, probe, &c,
					       out, 64, &n)) > 0) {
		s->ctr.retire_visits += visited;
		for (size_t i = 0; i < n; i++) {
			struct object *o =
			    store_find(s, out[i].tenant, out[i].key);
			size_t r =
			    o ? replica_on(o, out[i].segment.v) : SIZE_MAX;

			if (r == SIZE_MAX || !o->replicas[r].dynamic ||
			    o->replicas[r].status != REPLICA_COMPLETE)
				continue;
			store_drop_replica(s, o, r, now_ms);
			s->ctr.dyn_retired++;
		}
	}
}

void store__policy_tick(struct store *s, uint64_t now_ms)
{
	mcrepl_engine_tick_result t;

	mcrepl_engine_tick(s->engine, now_ms, &t);
	/* the engine owns the threshold: the tick's, in the read path's
	 * params */
	mcrepl_engine_heat_params(s->engine, &s->heat);
	if (t.retire_due)
		retire_pass(s, now_ms);
}
