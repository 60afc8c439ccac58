/*
 * The host side of the library's auto policy (mcrepl/policy.h), as
 * docs/POLICY.md asks a master to do it:
 *   - count the reads routed to each node, and to the whole cluster, in
 *     the heat window's buckets (window / MCREPL_HEAT_BUCKETS), so a
 *     node's read_load and a key's hit count share one unit;
 *   - add each granted copy's projected load (mcrepl_policy_project_level()),
 *     fading it out over one window as the real reads take its place;
 *   - the cluster view and the read path's trigger threshold
 *     (mcrepl_policy_trigger_threshold()) at every tick, and once per
 *     window a retirement pass (mcrepl_policy_should_retire(),
 *     mcrepl_policy_retire_pick()).
 */
#include <stdlib.h>
#include <string.h>

#include "master.h"

#define B MCREPL_HEAT_BUCKETS

int sim_auto_init(struct sim_master *m)
{
	struct sim_auto *a = &m->au;
	uint32_t n = m->c->n_nodes;

	memset(a, 0, sizeof(*a));
	if (m->cfg->policy != MCREPL_POLICY_AUTO ||
	    m->cfg->mode == MCREPL_MODE_OFF)
		return 0;
	a->on = true;
	a->bucket_ms = m->hp.bucket_ms;
	m->hp.refire_buckets = 1; /* a refused hot key is judged again soon */
	a->win = calloc((size_t)n * B, sizeof(*a->win));
	a->win_sum = calloc(n, sizeof(*a->win_sum));
	a->proj = calloc(n, sizeof(*a->proj));
	a->dec = calloc((size_t)n * B, sizeof(*a->dec));
	a->objs = calloc(1024, sizeof(*a->objs));
	a->cap_objs = 1024;
	if (!a->win || !a->win_sum || !a->proj || !a->dec || !a->objs)
		return -1;
	sim_auto_view(m);
	return 0;
}

void sim_auto_free(struct sim_master *m)
{
	struct sim_auto *a = &m->au;

	free(a->win);
	free(a->win_sum);
	free(a->proj);
	free(a->dec);
	free(a->objs);
	memset(a, 0, sizeof(*a));
}

uint64_t sim_auto_load(const struct sim_master *m, uint32_t node)
{
	const struct sim_auto *a = &m->au;
	double x = (double)a->win_sum[node] + a->proj[node];

	return x > 0 ? (uint64_t)(x + 0.5) : 0;
}

/* Hand one node's load to placement (every segment of the node). */
static void publish(struct sim_master *m, uint32_t node)
{
	struct sim_cluster *c = m->c;
	uint64_t l = sim_auto_load(m, node);

	for (uint32_t h = 0; h < c->hosts_per_node; h++)
		c->segs[node * c->hosts_per_node + h].read_load = l;
}

void sim_auto_publish(struct sim_master *m)
{
	for (uint32_t i = 0; i < m->c->n_nodes; i++)
		publish(m, i);
}

void sim_auto_read(struct sim_master *m, uint32_t node)
{
	struct sim_auto *a = &m->au;

	a->win[(size_t)node * B + a->cur]++;
	a->win_sum[node]++;
	a->total[a->cur]++;
	a->total_sum++;
}

void sim_auto_view(struct sim_master *m)
{
	struct sim_auto *a = &m->au;

	a->view.window_reads = a->total_sum;
	a->view.nodes = m->c->n_active;
	m->hp.threshold = mcrepl_policy_trigger_threshold(m->cfg, &a->view);
}

/* d reads per window on node: now, fading by d/B at each of the next B
 * bucket boundaries. */
static void add_projection(struct sim_master *m, uint32_t node, double d)
{
	struct sim_auto *a = &m->au;

	a->proj[node] += d;
	for (uint32_t k = 1; k <= B; k++)
		a->dec[(size_t)node * B + (a->cur + k) % B] += d / B;
	publish(m, node);
}

void sim_auto_project(struct sim_master *m, const mcrepl_lease *l, size_t n_rv,
		      uint32_t count, uint32_t readable)
{
	struct sim_cluster *c = m->c;
	mcrepl_projection p;
	mcrepl_balance b;

	/* readers spread by load: the copy fills its target up to the level
	 * of the key's replicas (the loads as placement saw them) */
	mcrepl_policy_balance(c->segs, c->n_segs, m->rv, n_rv, &b);
	mcrepl_policy_project_level(count, readable, b.key_load,
				    c->segs[l->target.v - 1].read_load, &p);
	add_projection(m, sim_node_of(c, (uint32_t)l->target.v - 1),
		       (double)p.to_target);
	for (size_t i = 0; i < n_rv; i++)
		if (m->rv[i].readable)
			add_projection(
			    m, sim_node_of(c, (uint32_t)m->rv[i].segment.v - 1),
			    -(double)p.from_each);
}

/* Retire one dynamic replica of o if its heat has fallen (policy). */
static void retire_one(struct sim_master *m, uint32_t o, uint64_t now)
{
	struct sim_cluster *c = m->c;
	const mcrepl_heat_cell *cell = sim_master_cell(m, o, 0, false);
	uint32_t count = cell ? mcrepl_heat_cell_count(cell, &m->hp, now) : 0;
	size_t n, pick;
	char key[48];

	sim_master_fill_views(m, o, false, &n);
	if (!mcrepl_policy_should_retire(m->cfg, &m->au.view, count,
					 (uint32_t)n))
		return;
	for (size_t i = 0; i < n; i++)
		m->rv_load[i] = sim_auto_load(
		    m, sim_node_of(c, (uint32_t)m->rv[i].segment.v - 1));
	sim_master_key(m, o, key, sizeof(key));
	if (mcrepl_policy_retire_pick(NULL, key, m->rv, m->rv_load, n, &pick) !=
		MCREPL_OK ||
	    m->rv_dyn[pick] == SIM_NONE)
		return;
	sim_master_drop(m, m->rv_dyn[pick], now);
	m->retired++;
}

/* One pass over the objects holding a readable dynamic replica. */
static void retire_pass(struct sim_master *m, uint64_t now)
{
	struct sim_cluster *c = m->c;
	struct sim_auto *a = &m->au;
	uint32_t k = 0;

	if (m->cfg->domain_aware)
		return; /* per-domain retirement: not modelled */
	for (uint32_t i = 0; i < c->n_nodes; i++)
		for (uint32_t j = 0; j < c->nodes[i].n_dyn; j++) {
			uint32_t d = c->nodes[i].dyn[j], o = c->dyn[d].obj;

			/* once per object: at its first dynamic replica */
			if (!c->dyn[d].readable || c->objs[o].dyn != d)
				continue;
			if (k == a->cap_objs) {
				uint32_t *p = realloc(a->objs, 2 * a->cap_objs *
								   sizeof(*p));

				if (!p)
					goto run;
				a->objs = p;
				a->cap_objs *= 2;
			}
			a->objs[k++] = o;
		}
run:
	for (uint32_t i = 0; i < k; i++)
		retire_one(m, a->objs[i], now);
}

void sim_auto_tick(struct sim_master *m, uint64_t now)
{
	struct sim_auto *a = &m->au;
	uint64_t epoch;

	if (!a->on)
		return;
	epoch = now / a->bucket_ms;
	sim_auto_view(m); /* the cluster's reads so far in the window */
	if (epoch == a->epoch)
		return;
	for (uint64_t e = a->epoch; e < epoch && e < a->epoch + B; e++) {
		uint32_t next = (a->cur + 1) % B;

		for (uint32_t i = 0; i < m->c->n_nodes; i++) {
			size_t s = (size_t)i * B + next;

			a->win_sum[i] -= a->win[s];
			a->win[s] = 0;
			a->proj[i] -= a->dec[s];
			a->dec[s] = 0;
		}
		a->total_sum -= a->total[next];
		a->total[next] = 0;
		a->cur = next;
	}
	a->epoch = epoch;
	sim_auto_view(m);
	sim_auto_publish(m);
	if (epoch % B == 0) /* once per window: independent counts */
		retire_pass(m, now);
}
