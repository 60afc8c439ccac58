/* The background admission worker: triggers -> proposals -> tasks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "master.h"

int64_t sim_master_lookup(const struct sim_master *m, const char *key)
{
	const char *prefix = m->trace ? "block-" : "zipf-";
	size_t len = strlen(prefix);
	char *end;
	uint64_t v;

	if (strncmp(key, prefix, len))
		return -1;
	v = strtoull(key + len, &end, 10);
	if (*end)
		return -1;
	if (m->trace)
		return trace_lookup(m->trace, v);
	return v < m->c->n_objs ? (int64_t)m->c->obj_of[v] : -1;
}

uint32_t sim_domain_index(const struct sim_cluster *c, const char *d)
{
	for (uint32_t i = 0; i < c->n_domains; i++)
		if (mcrepl_domain_equal(c->domain_names[i], d))
			return i;
	return 0;
}

static uint32_t heat_count(struct sim_master *m, uint64_t o, uint32_t dom,
			   uint64_t now)
{
	const mcrepl_heat_cell *cell = sim_master_cell(m, o, dom, false);

	return cell ? mcrepl_heat_cell_count(cell, &m->hp, now) : 0;
}

/*
 * Host bookkeeping, not policy: between two load reports the new replica
 * will take about 1/(replicas+1) of the key's reads. Adding that to the
 * target's read_load keeps one batch from piling onto the least-loaded
 * node (read-load-aware placement would otherwise see stale loads).
 */
static void node_load_add(struct sim_cluster *c, uint32_t node, double d)
{
	for (uint32_t h = 0; h < c->hosts_per_node; h++) {
		uint64_t *v = &c->segs[node * c->hosts_per_node + h].read_load;
		double x = (double)*v + d;

		*v = x > 0 ? (uint64_t)(x + 0.5) : 0;
	}
}

/* The new replica takes q/(r+1) of the key's reads; each of the r readable
 * replicas (m->rv, as passed to propose) gives up q/r - q/(r+1). */
static void project_load(struct sim_master *m, const mcrepl_lease *l,
			 size_t n_rv, uint32_t count, uint32_t readable)
{
	struct sim_cluster *c = m->c;
	double q = (double)count * m->o->interval * 1000.0 /
		   (double)m->cfg->heat_window_ms;
	double r = readable ? readable : 1;

	node_load_add(c, sim_node_of(c, (uint32_t)l->target.v - 1),
		      q / (r + 1));
	for (size_t i = 0; i < n_rv; i++)
		if (m->rv[i].readable)
			node_load_add(
			    c, sim_node_of(c, (uint32_t)m->rv[i].segment.v - 1),
			    -q / (r * (r + 1)));
}

/* A lease was granted: create the REPLICA_COPY task for the source. */
static void create_task(struct sim_master *m, uint64_t o, const mcrepl_lease *l,
			uint64_t now)
{
	struct sim_copy *x = sim_copy_new(m);
	uint64_t fetch = now + (uint64_t)(m->o->task_fetch_ms + 0.999999);

	if (!x ||
	    mcrepl_leases_bind_task(m->leases, l->id,
				    (mcrepl_task_id){.v = x->task}) !=
		MCREPL_OK ||
	    sim_events_push(&m->ev, fetch, SIM_EV_FETCH, x->task)) {
		/* Task creation failed: roll the pending state back. */
		mcrepl_leases_abort(m->leases, l->id);
		if (x)
			sim_copy_release(m, x);
		mcrepl_stats_add(m->stats, MCREPL_STAT_TASKS_FAILED, 1);
		return;
	}
	x->lease = *l;
	x->obj = (uint32_t)o;
	x->dyn = SIM_NONE;
	x->state = COPY_WAIT;
	sim_copy_incoming(m, x, true);
	m->c->seg_inflight[l->source.v - 1]++;
	mcrepl_stats_add(m->stats, MCREPL_STAT_TASKS_CREATED, 1);
	mcrepl_stats_add(m->stats, MCREPL_STAT_INFLIGHT, 1);
}

bool sim_master_propose(struct sim_master *m, uint64_t o, uint32_t dom,
			mcrepl_proposal_kind kind, uint32_t heat, uint64_t now)
{
	const struct sim_cluster *c = m->c;
	char pid[32], key[48];
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD};
	mcrepl_object_view ov = {0};
	mcrepl_propose_input in = {.proposal = &p, .object = &ov};
	const mcrepl_heat_cell *cell = sim_master_cell(m, o, dom, false);
	mcrepl_propose_result res;
	size_t n;

	snprintf(pid, sizeof(pid), "p%" PRIu64, ++m->prop_seq);
	sim_master_key(m, o, key, sizeof(key));
	p.proposal_id = pid;
	p.key = key;
	p.kind = kind;
	if (m->cfg->domain_aware)
		p.requester_domain = p.target_domain = c->domain_names[dom];
	p.observed_version = 1;
	p.expected_size = c->object_size;
	p.expires_at_ms = now + m->cfg->lease_ttl_ms;
	ov.exists = true;
	ov.version = 1;
	ov.size = c->object_size;
	ov.readable_memory_replicas = 1 + sim_obj_readable_dyn(c, o);
	sim_master_fill_views(m, o, true, &n);
	in.heat_count = heat;
	in.heat_recent = cell ? mcrepl_heat_cell_recent(cell, &m->hp, now) : 0;
	in.replicas = m->rv;
	in.n_replicas = n;
	in.now_ms = now;
	sim_engine_usage(m); /* what the segments hold as of now */
	if (mcrepl_engine_propose(m->eng.e, &in, &res) != MCREPL_OK &&
	    !((res.reason == MCREPL_REASON_NO_TARGET ||
	       res.reason == MCREPL_REASON_NO_TARGET_IN_DOMAIN) &&
	      sim_engine_room(m, &in, now) &&
	      mcrepl_engine_propose(m->eng.e, &in, &res) == MCREPL_OK)) {
		/* a full cluster: room made, then the copy placed at once,
		 * before puts refill it */
		mcrepl_stats_reject(m->stats, res.reason);
		return false;
	}
	mcrepl_stats_add(m->stats, MCREPL_STAT_ACCEPTED, 1);
	sim_engine_granted(m, (uint32_t)res.lease.target.v - 1);
	if (m->cfg->domain_aware)
		mcrepl_stats_domain_proposal(m->stats, p.requester_domain,
					     res.lease.target_domain);
	if (!m->eng.on && m->o->project_load &&
	    m->cfg->read_load_aware_placement)
		project_load(m, &res.lease, n, heat,
			     ov.readable_memory_replicas);
	create_task(m, o, &res.lease, now);
	return true;
}

static void propose(struct sim_master *m, const mcrepl_trigger *t, uint64_t now)
{
	int64_t o = sim_master_lookup(m, t->key);
	uint32_t dom;

	if (o < 0 || m->c->objs[o].primary == SIM_NONE) {
		m->trigger_lookups_failed++;
		return;
	}
	dom = sim_domain_index(m->c, t->domain);
	sim_master_propose(m, (uint64_t)o, dom, MCREPL_PROPOSAL_HOT,
			   heat_count(m, (uint64_t)o, dom, now), now);
}

void sim_master_admit(struct sim_master *m, uint64_t now)
{
	size_t n =
	    mcrepl_triggers_pop(m->triggers, m->batch, m->o->admission_batch);

	for (size_t i = 0; i < n; i++) {
		propose(m, &m->batch[i], now);
		mcrepl_trigger_release(&m->batch[i]);
	}
}
