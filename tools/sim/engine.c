/*
 * The simulated master on libmcrepl's policy engine (mcrepl/engine.h), as
 * the master daemon uses it: the engine keeps the reads routed to each
 * node, projections of granted copies, the cluster view and threshold,
 * the reader order and which dynamic replicas exist; the simulator tells
 * it what changes and drops the replicas it names once per heat window.
 */
#include <stdlib.h>
#include <string.h>

#include "master.h"

static void segment_view(const struct sim_master *m, uint32_t s,
			 mcrepl_engine_segment *v)
{
	const mcrepl_segment_view *x = &m->c->segs[s];

	*v = (mcrepl_engine_segment){
	    .id = x->id,
	    .client = x->client,
	    .host = x->host, /* "node-<i>": a node's segments share it */
	    .domain = x->domain,
	    .capacity = x->capacity,
	    .used = x->used,
	    .allocatable = x->allocatable,
	    .can_copy = true,
	    .read_load = x->read_load,
	};
}

int sim_engine_init(struct sim_master *m)
{
	struct sim_engine *g = &m->eng;
	mcrepl_engine_opts eo = {
	    .struct_size = sizeof(eo),
	    .max_segments = m->c->n_segs,
	    .order_by_load = m->o->read_load_order,
	    .order_period_ms = (uint32_t)(m->o->interval * 1000.0),
	};

	memset(g, 0, sizeof(*g));
	g->on = m->cfg->policy == MCREPL_POLICY_AUTO &&
		m->cfg->mode != MCREPL_MODE_OFF;
	if (!(g->mounted = calloc(m->c->n_segs, sizeof(*g->mounted))) ||
	    !(g->sent = calloc(m->c->n_segs, sizeof(*g->sent))) ||
	    mcrepl_engine_create(m->cfg, &eo, &g->e) != MCREPL_OK)
		return -1;
	m->leases = mcrepl_engine_leases(g->e);
	mcrepl_engine_heat_params(g->e, &m->hp);
	sim_engine_sync(m);
	return 0;
}

void sim_engine_free(struct sim_master *m)
{
	mcrepl_engine_destroy(m->eng.e);
	free(m->eng.mounted);
	free(m->eng.sent);
	memset(&m->eng, 0, sizeof(m->eng));
	m->leases = NULL;
}

/* The engine knows the segments of the joined nodes (the cluster view's
 * node count is theirs). */
void sim_engine_sync(struct sim_master *m)
{
	struct sim_engine *g = &m->eng;

	for (uint32_t s = 0; s < m->c->n_segs; s++) {
		bool in = m->c->segs[s].allocatable;
		mcrepl_engine_segment v;

		if (in == g->mounted[s])
			continue;
		segment_view(m, s, &v);
		g->sent[s] = (struct sim_sent){.used = v.used,
					       .allocatable = v.allocatable,
					       .stale = false};
		if (in)
			g->mounted[s] =
			    mcrepl_engine_segment_set(g->e, &v) == MCREPL_OK;
		else {
			mcrepl_engine_segment_remove(g->e, v.id);
			g->mounted[s] = false;
		}
	}
}

void sim_engine_granted(struct sim_master *m, uint32_t seg)
{
	if (m->eng.sent && seg < m->c->n_segs) {
		m->eng.sent[seg].stale = true;
		m->eng.granted = true;
	}
}

/* Auto: send segment s's use when it changed or a grant promised on it
 * (the engine has the loads; an unchanged use is already there). */
static void send_used(struct sim_master *m, uint32_t s)
{
	const mcrepl_segment_view *x = &m->c->segs[s];
	struct sim_sent *t = &m->eng.sent[s];

	if (!t->stale && t->used == x->used && t->allocatable == x->allocatable)
		return;
	*t = (struct sim_sent){
	    .used = x->used, .allocatable = x->allocatable, .stale = false};
	mcrepl_engine_segment_used(m->eng.e, x->id, x->used, x->allocatable);
}

void sim_engine_usage(struct sim_master *m)
{
	struct sim_engine *g = &m->eng;
	mcrepl_engine_segment v;

	/* auto: no use changed and no grant since the last send, no send */
	if (g->on && !g->granted && g->sent_gen == m->c->segs_gen)
		return;
	g->granted = false;
	g->sent_gen = m->c->segs_gen;
	for (uint32_t s = 0; s < m->c->n_segs; s++) {
		if (!g->mounted[s])
			continue;
		if (g->on) {
			send_used(m, s);
			continue;
		}
		segment_view(m, s, &v); /* the host's own read_load */
		mcrepl_engine_segment_set(g->e, &v);
	}
}

/* o's heat in domain index dom, or over every domain (dom SIM_NONE). */
static uint32_t heat_in(struct sim_master *m, uint64_t o, uint32_t dom,
			uint64_t now)
{
	uint32_t sum = 0;

	for (uint32_t d = 0; d < m->c->n_domains; d++) {
		const mcrepl_heat_cell *cell;

		if (dom != SIM_NONE && d != dom)
			continue;
		cell = sim_master_cell(m, o, d, false);
		sum += cell ? mcrepl_heat_cell_count(cell, &m->hp, now) : 0;
		if (!m->cfg->domain_aware)
			break; /* one cell per object */
	}
	return sum;
}

/* o's readable replicas in domain index dom (SIM_NONE: all). */
static uint32_t readable_in(const struct sim_cluster *c, uint64_t o,
			    uint32_t dom)
{
	uint32_t n = 0;

	if (dom == SIM_NONE ||
	    c->nodes[sim_node_of(c, c->objs[o].primary)].domain == dom)
		n++;
	for (uint32_t d = c->objs[o].dyn; d != SIM_NONE; d = c->dyn[d].next)
		n += c->dyn[d].readable &&
		     (dom == SIM_NONE ||
		      c->nodes[sim_node_of(c, c->dyn[d].seg)].domain == dom);
	return n;
}

struct probe_ctx {
	struct sim_master *m;
	uint64_t now;
};

static void probe(void *ctx, const char *tenant, const char *key,
		  const char *domain, mcrepl_retire_probe *out)
{
	const struct probe_ctx *p = ctx;
	struct sim_master *m = p->m;
	int64_t o = sim_master_lookup(m, key);
	uint32_t dom = domain ? sim_domain_index(m->c, domain) : SIM_NONE;

	(void)tenant;
	if (o < 0 || m->c->objs[o].primary == SIM_NONE) {
		out->gone = true;
		return;
	}
	out->count = heat_in(m, (uint64_t)o, dom, p->now);
	out->readable = readable_in(m->c, (uint64_t)o, dom);
}

/* The dynamic replica of o on segment index seg, or SIM_NONE. */
static uint32_t dyn_on(const struct sim_cluster *c, uint64_t o, uint32_t seg)
{
	for (uint32_t d = c->objs[o].dyn; d != SIM_NONE; d = c->dyn[d].next)
		if (c->dyn[d].seg == seg && c->dyn[d].readable)
			return d;
	return SIM_NONE;
}

static void retire_pass(struct sim_master *m, uint64_t now)
{
	struct probe_ctx p = {.m = m, .now = now};
	mcrepl_retirement out[64];
	size_t n;

	while (mcrepl_engine_retire(m->eng.e, now, probe, &p, out, 64, &n))
		for (size_t i = 0; i < n; i++) {
			int64_t o = sim_master_lookup(m, out[i].key);
			uint32_t d =
			    o < 0 ? SIM_NONE
				  : dyn_on(m->c, (uint64_t)o,
					   (uint32_t)out[i].segment.v - 1);

			if (d == SIM_NONE)
				continue;
			sim_master_drop(m, d, now);
			m->retired++;
		}
}

/* At most this many objects looked at for room's only copies (from a
 * rotating cursor), whatever --keys: the master's STORE_EVICT_VISITS. */
#define SIM_ROOM_VISITS 4096

/* Dynamic replicas on seg whose object's primary stays readable, the
 * least recently read first, while under a read lease none (the master's
 * eviction spares those): the room rule's first class (a drop, no
 * miss). Bytes freed. */
static uint64_t room_from_dynamic(struct sim_master *m, uint32_t seg,
				  uint64_t bytes, uint64_t now)
{
	struct sim_cluster *c = m->c;
	struct sim_node *n = &c->nodes[sim_node_of(c, seg)];
	uint64_t freed = 0;

	while (freed < bytes) {
		uint32_t best = SIM_NONE;

		for (uint32_t i = 0; i < n->n_dyn; i++) {
			const struct sim_dyn *d = &c->dyn[n->dyn[i]];

			if (d->seg != seg || !d->readable ||
			    c->objs[d->obj].primary == SIM_NONE ||
			    (double)d->last_read_ms + m->o->kv_lease_ttl > now)
				continue;
			if (best == SIM_NONE ||
			    d->last_read_ms < c->dyn[best].last_read_ms)
				best = n->dyn[i];
		}
		if (best == SIM_NONE)
			break;
		sim_master_drop(m, best, now);
		freed += c->object_size;
		m->room_dropped++;
	}
	return freed;
}

/* Primaries on seg that are their object's only copy, as the room rule
 * allows (mcrepl_room_classify(), room_miss_cost; never by default),
 * within SIM_ROOM_VISITS objects from the cursor. Bytes freed. */
static uint64_t room_from_only_copies(struct sim_master *m, uint32_t seg,
				      uint64_t bytes, uint64_t relief,
				      uint64_t now)
{
	struct sim_cluster *c = m->c;
	uint64_t freed = 0, n = c->n_objs;
	uint64_t k_max = n < SIM_ROOM_VISITS ? n : SIM_ROOM_VISITS, k;

	if (!m->cfg->room_miss_cost || n == 0)
		return 0;
	for (k = 0; k < k_max && freed < bytes; k++) {
		uint64_t o = (m->room_cursor + k) % n;
		mcrepl_room_victim v = {.reads = 0};

		if (c->objs[o].primary != seg || c->objs[o].dyn != SIM_NONE)
			continue;
		v.reads = heat_in(m, o, SIM_NONE, now);
		if (mcrepl_room_classify(m->cfg, &v, relief) !=
		    MCREPL_ROOM_ONLY_COPY)
			continue;
		sim_cluster_evict(c, o);
		freed += c->object_size;
		m->room_evicted++;
	}
	/* the next call starts after what this one looked at */
	m->room_cursor = (m->room_cursor + k) % n;
	return freed;
}

bool sim_engine_room(struct sim_master *m, const mcrepl_propose_input *in,
		     uint64_t now)
{
	uint64_t relief = mcrepl_room_relief(
	    in->heat_count, in->object->readable_memory_replicas);
	uint64_t freed;
	mcrepl_room room;
	uint32_t seg;

	if (mcrepl_engine_room(m->eng.e, in, &room) != MCREPL_OK)
		return false;
	seg = (uint32_t)room.segment.v - 1;
	m->room_headroom += room.bytes == 0; /* under room_fill_limit */
	freed = room_from_dynamic(m, seg, room.bytes, now);
	if (freed < room.bytes)
		freed += room_from_only_copies(m, seg, room.bytes - freed,
					       relief, now);
	sim_engine_usage(m);
	if (freed >= room.bytes)
		return true;
	/* as the master: room it could not make goes back to the budget */
	mcrepl_engine_room_refused(m->eng.e, in, &room);
	return false;
}

void sim_engine_tick(struct sim_master *m, uint64_t now)
{
	mcrepl_engine_tick_result t;

	mcrepl_engine_tick(m->eng.e, now, &t);
	mcrepl_engine_heat_params(m->eng.e, &m->hp); /* the tick's threshold */
	if (t.retire_due)
		retire_pass(m, now);
}
