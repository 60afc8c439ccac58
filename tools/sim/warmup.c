/* Warmup of a newly joined domain, as the master daemon does it
 * (daemons/master/store_dyn.c dyn_warmup): library selection, then one
 * WARMUP proposal per chosen object through the normal lease path. */
#include <stdio.h>
#include <stdlib.h>

#include "master.h"

/* Heat summed over the object's domain cells (or its own cell). */
static uint32_t global_heat(struct sim_master *m, uint64_t o, uint64_t now)
{
	uint64_t sum = 0;

	if (!m->dcell_of)
		return mcrepl_heat_cell_count(&m->c->objs[o].heat, &m->hp, now);
	for (uint32_t d = 0; d < m->c->n_domains; d++) {
		const mcrepl_heat_cell *cell = sim_master_cell(m, o, d, false);

		sum += cell ? mcrepl_heat_cell_count(cell, &m->hp, now) : 0;
	}
	return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

/* A readable replica of o on a node of domain dom. */
static bool held_in(const struct sim_cluster *c, uint64_t o, uint32_t dom)
{
	if (c->nodes[sim_node_of(c, c->objs[o].primary)].domain == dom)
		return true;
	for (uint32_t d = c->objs[o].dyn; d != SIM_NONE; d = c->dyn[d].next)
		if (c->dyn[d].readable &&
		    c->nodes[sim_node_of(c, c->dyn[d].seg)].domain == dom)
			return true;
	return false;
}

void sim_master_warmup(struct sim_master *m, uint32_t dom, uint64_t now)
{
	const struct sim_cluster *c = m->c;
	uint64_t n = c->n_objs;
	size_t max = m->o->warmup_max_copies, chosen;
	mcrepl_warmup_candidate *cand;
	size_t *pick;

	if (!m->cfg->domain_aware || !max)
		return;
	cand = calloc(n ? n : 1, sizeof(*cand));
	pick = calloc(max, sizeof(*pick));
	if (!cand || !pick) {
		fprintf(stderr, "mcrepl-sim: warmup: out of memory\n");
		goto out;
	}
	for (uint64_t o = 0; o < n; o++) {
		if (c->objs[o].primary == SIM_NONE)
			continue; /* never written: nothing to warm */
		cand[o].heat = global_heat(m, o, now);
		cand[o].size = c->object_size;
		cand[o].in_domain = held_in(c, o, dom);
	}
	chosen =
	    mcrepl_warmup_select(cand, n, max, m->o->warmup_max_bytes, pick);
	m->warmup_chosen += chosen;
	for (size_t i = 0; i < chosen; i++)
		m->warmup_accepted +=
		    sim_master_propose(m, pick[i], dom, MCREPL_PROPOSAL_WARMUP,
				       cand[pick[i]].heat, now);
out:
	free(cand);
	free(pick);
}
