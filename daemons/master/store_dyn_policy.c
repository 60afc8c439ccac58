/*
 * The host side of libmcrepl's auto policy (mcrepl/policy.h), wired as
 * docs/POLICY.md section 4 asks:
 *   - the reads the master routes, per segment and for the whole cluster,
 *     in heat-window buckets (counted inline by store_get, rolled here), so
 *     a segment's read_load and a key's hit count share one unit;
 *   - each granted copy's projected reads (mcrepl_policy_project_level())
 *     on its target and the key's replicas, fading out over one window;
 *   - the cluster view and the read path's trigger threshold
 *     (mcrepl_policy_trigger_threshold()) at every tick;
 *   - once per window, a retirement pass (mcrepl_policy_should_retire(),
 *     mcrepl_policy_retire_pick()) through the eviction path.
 * Under policy rfc (or mode off) nothing here runs and the master keeps
 * the RFC's rules exactly.
 */
#include <string.h>

#include "store_dyn.h"

#define B MCREPL_HEAT_BUCKETS

void store__policy_init(struct store *s)
{
	struct dyn_policy *p = &s->pol;

	memset(p, 0, sizeof(*p));
	p->on = s->opts.cfg.policy == MCREPL_POLICY_AUTO &&
		s->opts.cfg.mode != MCREPL_MODE_OFF;
	if (p->on)
		s->heat.refire_buckets = 1; /* a refused hot key: again soon */
}

uint64_t dyn__segment_load(const struct segment *seg)
{
	double x = (double)seg->routed_win_sum + seg->proj;

	return x > 0 ? (uint64_t)(x + 0.5) : 0;
}

/* d reads per window on seg: now, fading by d/B at each of the next B
 * bucket boundaries. */
static void add_projection(struct store *s, uint64_t seg_id, double d)
{
	struct segment *seg = store_segment(s, seg_id);

	if (!seg)
		return;
	seg->proj += d;
	for (uint32_t k = 1; k <= B; k++)
		seg->proj_fade[(s->pol.cur + k) % B] += d / B;
}

void dyn__policy_project(struct store *s, const struct object *o,
			 const mcrepl_lease *l, uint64_t now_ms)
{
	const struct segment *dst = store_segment(s, l->target.v);
	uint64_t level = UINT64_MAX;
	mcrepl_projection p;

	/* readers spread by load: the copy fills its target up to the level
	 * of the key's replicas, the lowest load among their segments */
	for (size_t i = 0; i < o->n_replicas; i++) {
		const struct segment *seg;

		if (o->replicas[i].status != REPLICA_COMPLETE ||
		    !(seg = store_segment(s, o->replicas[i].segment_id)))
			continue;
		if (dyn__segment_load(seg) < level)
			level = dyn__segment_load(seg);
	}
	mcrepl_policy_project_level(
	    mcrepl_heat_cell_count(&o->heat, &s->heat, now_ms),
	    dyn__readable_count(o), level == UINT64_MAX ? 0 : level,
	    dst ? dyn__segment_load(dst) : 0, &p);
	add_projection(s, l->target.v, (double)p.to_target);
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].status == REPLICA_COMPLETE)
			add_projection(s, o->replicas[i].segment_id,
				       -(double)p.from_each);
}

static void roll(struct store *s)
{
	struct dyn_policy *p = &s->pol;
	uint32_t next = (p->cur + 1) % B;

	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];

		seg->routed_win_sum -= seg->routed_win[next];
		seg->routed_win[next] = 0;
		seg->proj -= seg->proj_fade[next];
		seg->proj_fade[next] = 0;
	}
	p->total_sum -= p->total[next];
	p->total[next] = 0;
	p->cur = next;
}

/* The dynamic replica of o to retire among its readable replicas in
 * `domain` (NULL: anywhere), the one on the busiest segment
 * (mcrepl_policy_retire_pick()); SIZE_MAX when none. */
static size_t retire_pick(struct store *s, const struct object *o,
			  const char *domain)
{
	mcrepl_replica_view v[MASTER_MAX_REPLICAS];
	uint64_t load[MASTER_MAX_REPLICAS];
	size_t n = o->n_replicas < MASTER_MAX_REPLICAS ? o->n_replicas
						       : MASTER_MAX_REPLICAS;
	size_t pick;

	for (size_t i = 0; i < n; i++) {
		const struct replica *r = &o->replicas[i];
		const struct segment *seg = store_segment(s, r->segment_id);

		memset(&v[i], 0, sizeof(v[i]));
		v[i].segment.v = r->segment_id;
		v[i].readable =
		    seg && r->status == REPLICA_COMPLETE &&
		    (!domain || mcrepl_domain_equal(seg->domain, domain));
		v[i].memory = true;
		v[i].dynamic = r->dynamic;
		load[i] = seg ? dyn__segment_load(seg) : 0;
	}
	if (mcrepl_policy_retire_pick(o->tenant, o->key, v, load, n, &pick) !=
	    MCREPL_OK)
		return SIZE_MAX;
	return pick;
}

/* o's readable replicas on mounted segments in `domain` (NULL: all). */
static uint32_t readable_in(struct store *s, const struct object *o,
			    const char *domain)
{
	uint32_t n = 0;

	for (size_t i = 0; i < o->n_replicas; i++) {
		const struct segment *seg =
		    store_segment(s, o->replicas[i].segment_id);

		n += seg && o->replicas[i].status == REPLICA_COMPLETE &&
		     (!domain || mcrepl_domain_equal(seg->domain, domain));
	}
	return n;
}

/* Domain-aware: judge each reader domain holding a dynamic replica of o
 * by o's heat in that domain (mcrepl_policy_should_retire_in_domain()),
 * so the only copy in a domain stays while that domain reads it, whatever
 * the cluster's heat, and goes when it does not. Never o's last readable
 * replica. The replica to retire, or SIZE_MAX. */
static size_t retire_choice_domain(struct store *s, struct object *o,
				   uint64_t now_ms)
{
	if (readable_in(s, o, NULL) < 2)
		return SIZE_MAX;
	for (size_t i = 0; i < o->n_replicas; i++) {
		const struct replica *r = &o->replicas[i];
		const struct segment *seg = store_segment(s, r->segment_id);
		mcrepl_heat_cell *cell;
		uint32_t count;

		if (!seg || !r->dynamic || r->status != REPLICA_COMPLETE)
			continue;
		cell = dyn__heat_cell(s, o, seg->domain, false);
		count =
		    cell ? mcrepl_heat_cell_count(cell, &s->heat, now_ms) : 0;
		if (mcrepl_policy_should_retire_in_domain(
			&s->opts.cfg, &s->pol.view, count,
			readable_in(s, o, seg->domain)))
			return retire_pick(s, o, seg->domain);
	}
	return SIZE_MAX;
}

/* o's COMPLETE dynamic replica to retire, or SIZE_MAX. */
static size_t retire_choice(struct store *s, struct object *o, uint64_t now_ms)
{
	uint32_t count;

	if (s->opts.cfg.domain_aware)
		return retire_choice_domain(s, o, now_ms);
	count = mcrepl_heat_cell_count(&o->heat, &s->heat, now_ms);
	if (!mcrepl_policy_should_retire(&s->opts.cfg, &s->pol.view, count,
					 dyn__readable_count(o)))
		return SIZE_MAX;
	return retire_pick(s, o, NULL);
}

/* One pass over the objects holding a COMPLETE dynamic replica (the
 * store's list of them): retire one cold dynamic replica of each, never
 * under a read lease, a running copy or a pending dynamic copy (as
 * eviction). Its work follows the dynamic replicas, not the objects. */
static void retire_pass(struct store *s, uint64_t now_ms)
{
	struct object *o = s->dyn_head, *next;

	for (; o; o = next) {
		size_t i;

		next = o->dyn_next; /* o may leave the list */
		s->ctr.retire_visits++;
		if (!o->complete || o->copies || o->lease_until_ms > now_ms ||
		    dyn_key_is_pending(s, o->tenant, o->key, now_ms))
			continue;
		i = retire_choice(s, o, now_ms);
		if (i == SIZE_MAX || !o->replicas[i].dynamic ||
		    o->replicas[i].status != REPLICA_COMPLETE)
			continue;
		store_drop_replica(s, o, i, now_ms);
		s->ctr.dyn_retired++;
	}
}

void store__policy_tick(struct store *s, uint64_t now_ms)
{
	struct dyn_policy *p = &s->pol;
	uint64_t epoch;
	bool rolled = false;

	if (!p->on)
		return;
	epoch = now_ms / s->heat.bucket_ms;
	if (p->epoch == 0)
		p->epoch = epoch;
	for (uint64_t e = p->epoch; e < epoch && e < p->epoch + B; e++)
		roll(s);
	if (epoch != p->epoch) {
		p->epoch = epoch;
		rolled = true;
	}
	p->view.nodes = (uint32_t)store__n_hosts(s);
	p->view.window_reads = p->total_sum;
	s->heat.threshold =
	    mcrepl_policy_trigger_threshold(&s->opts.cfg, &p->view);
	if (rolled && epoch % B == 0) /* once per window: independent counts */
		retire_pass(s, now_ms);
}
