/* The simulated master: setup, object keys and the read path. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "master.h"

int sim_master_init(struct sim_master *m, const struct sim_opts *o,
		    struct sim_cluster *c, const struct trace *trace)
{
	const mcrepl_config *cfg = &o->cfg;

	memset(m, 0, sizeof(*m));
	m->o = o;
	m->cfg = cfg;
	m->c = c;
	m->trace = trace;
	m->copy_free = SIM_NONE;
	m->join_dom = SIM_NONE;
	mcrepl_heat_params_init(&m->hp, cfg);
	m->copy_ms = (double)c->object_size * 8.0 /
		     (o->nic_gbps * 1e9 * o->copy_share) * 1000.0;
	m->rv_cap = cfg->max_memory_replicas + o->domains + 2;
	if (cfg->policy == MCREPL_POLICY_AUTO) /* up to one per node */
		m->rv_cap += (cfg->auto_max_replicas ? cfg->auto_max_replicas
						     : c->n_nodes);
	m->rv = calloc(m->rv_cap, sizeof(*m->rv));
	m->rv_dyn = calloc(m->rv_cap, sizeof(*m->rv_dyn));
	m->order = calloc(m->rv_cap, sizeof(*m->order));
	m->batch = calloc(o->admission_batch, sizeof(*m->batch));
	m->swept = calloc(64, sizeof(*m->swept));
	if (!m->rv || !m->rv_dyn || !m->order || !m->batch || !m->swept)
		return -1;
	if (sim_engine_init(m) ||
	    mcrepl_triggers_create(cfg->admission_queue_limit, &m->triggers) !=
		MCREPL_OK ||
	    mcrepl_stats_create(&m->stats) != MCREPL_OK)
		return -1;
	if (c->n_domains > 1 &&
	    !(m->seen = calloc((c->n_objs * c->n_domains + 7) / 8, 1)))
		return -1;
	if (sim_relief_init(&m->relief, c->n_objs))
		return -1;
	if (cfg->domain_aware) {
		m->dcell_of = malloc(c->n_objs * sizeof(*m->dcell_of));
		if (!m->dcell_of)
			return -1;
		memset(m->dcell_of, 0xff, c->n_objs * sizeof(*m->dcell_of));
	}
	return 0;
}

void sim_master_free(struct sim_master *m)
{
	mcrepl_trigger t;

	while (m->triggers && mcrepl_triggers_pop(m->triggers, &t, 1))
		mcrepl_trigger_release(&t);
	mcrepl_triggers_destroy(m->triggers);
	mcrepl_stats_destroy(m->stats);
	sim_engine_free(m);
	free(m->dcell_of);
	free(m->dcells);
	free(m->seen);
	sim_events_free(&m->ev);
	free(m->copies);
	free(m->rv);
	free(m->rv_dyn);
	free(m->order);
	free(m->batch);
	free(m->swept);
	free(m->heat_at_late);
	sim_relief_free(&m->relief);
	memset(m, 0, sizeof(*m));
}

void sim_master_snapshot_late(struct sim_master *m, uint64_t now)
{
	uint64_t n = m->c->n_objs;

	if (m->heat_at_late || !(m->heat_at_late = malloc(n * 4 + 4)))
		return;
	m->thr_at_late = m->hp.threshold;
	for (uint64_t o = 0; o < n; o++) {
		const mcrepl_heat_cell *cell = sim_master_cell(m, o, 0, false);

		m->heat_at_late[o] =
		    cell ? mcrepl_heat_cell_count(cell, &m->hp, now) : 0;
	}
}

void sim_master_key(const struct sim_master *m, uint64_t o, char *buf,
		    size_t cap)
{
	if (m->trace)
		snprintf(buf, cap, "block-%" PRIu64, m->trace->ids[o]);
	else
		snprintf(buf, cap, "zipf-%" PRIu32, m->c->key_id[o]);
}

static void fill_one(struct sim_master *m, size_t i, uint32_t seg,
		     bool readable)
{
	const struct sim_cluster *c = m->c;
	const mcrepl_segment_view *s = &c->segs[seg];
	mcrepl_replica_view *r = &m->rv[i];

	r->segment = s->id;
	r->client = s->client;
	r->host = s->host;
	r->domain = s->domain;
	r->readable = readable;
	r->memory = true;
	r->dynamic = i > 0;
	r->can_copy = true;
	r->inflight = c->seg_inflight[seg];
}

/* The replicas of o into m->rv (primary first); all: PROCESSING too. */
void sim_master_fill_views(struct sim_master *m, uint64_t o, bool all,
			   size_t *n)
{
	const struct sim_cluster *c = m->c;
	size_t k = 0;

	fill_one(m, k, c->objs[o].primary, true);
	m->rv_dyn[k++] = SIM_NONE;
	for (uint32_t d = c->objs[o].dyn; d != SIM_NONE && k < m->rv_cap;
	     d = c->dyn[d].next) {
		if (!all && !c->dyn[d].readable)
			continue;
		fill_one(m, k, c->dyn[d].seg, c->dyn[d].readable);
		m->rv_dyn[k++] = d;
	}
	*n = k;
}

static void push_trigger(struct sim_master *m, const char *key,
			 const char *domain, uint64_t now)
{
	mcrepl_status st;

	mcrepl_stats_add(m->stats, MCREPL_STAT_OBSERVED_HOT, 1);
	st = mcrepl_triggers_push(m->triggers, NULL, key, domain, now);
	if (st == MCREPL_OK)
		mcrepl_stats_add(m->stats, MCREPL_STAT_TRIGGERS_QUEUED, 1);
	else if (st == MCREPL_EFULL)
		mcrepl_stats_add(m->stats, MCREPL_STAT_TRIGGERS_DROPPED, 1);
}

void sim_master_retrigger(struct sim_master *m, uint64_t o, uint64_t now)
{
	char key[48];

	sim_master_key(m, o, key, sizeof(key));
	if (mcrepl_triggers_push(m->triggers, NULL, key, "", now) == MCREPL_OK)
		mcrepl_stats_add(m->stats, MCREPL_STAT_TRIGGERS_QUEUED, 1);
}

mcrepl_heat_cell *sim_master_cell(struct sim_master *m, uint64_t o,
				  uint32_t dom, bool create)
{
	uint32_t d = m->c->n_domains;

	if (!m->dcell_of)
		return &m->c->objs[o].heat;
	if (m->dcell_of[o] == SIM_NONE) {
		if (!create)
			return NULL;
		if (m->n_dcells + d > m->cap_dcells) {
			uint32_t cap = m->cap_dcells ? 2 * m->cap_dcells : 1024;
			mcrepl_heat_cell *p;

			while (cap < m->n_dcells + d)
				cap *= 2;
			p = realloc(m->dcells, cap * sizeof(*p));
			if (!p)
				return NULL;
			m->dcells = p;
			m->cap_dcells = cap;
		}
		memset(&m->dcells[m->n_dcells], 0, d * sizeof(*m->dcells));
		m->dcell_of[o] = m->n_dcells;
		m->n_dcells += d;
	}
	return &m->dcells[m->dcell_of[o] + dom];
}

/* Record the read in the heat window; on CROSSED queue one trigger. */
static void record_heat(struct sim_master *m, uint64_t o, uint32_t reader,
			uint64_t now)
{
	const struct sim_cluster *c = m->c;
	uint32_t dom = c->nodes[reader].domain;
	mcrepl_heat_cell *cell;
	char key[48];

	if (m->cfg->mode == MCREPL_MODE_OFF)
		return; /* off: no heat work at all */
	cell = sim_master_cell(m, o, dom, true);
	if (!cell || mcrepl_heat_cell_record(cell, &m->hp, now, NULL) !=
			 MCREPL_HEAT_CROSSED)
		return;
	sim_master_key(m, o, key, sizeof(key));
	push_trigger(m, key, m->dcell_of ? c->domain_names[dom] : "", now);
}

/* Index into m->rv of the replica the reader uses (n >= 2). */
static size_t choose(struct sim_master *m, uint64_t o, uint32_t reader,
		     size_t n)
{
	const struct sim_cluster *c = m->c;
	uint32_t dom = c->nodes[reader].domain;
	char key[48];

	for (size_t i = 0; i < n; i++)
		if (sim_node_of(c, (uint32_t)m->rv[i].segment.v - 1) == reader)
			return i; /* local first */
	sim_master_key(m, o, key, sizeof(key));
	if (c->n_domains == 1) { /* the first replica is enough: O(n) */
		size_t pick = 0;

		mcrepl_engine_pick(m->eng.e, NULL, key, m->rv, n,
				   c->objs[o].reads++, &pick);
		return pick;
	}
	mcrepl_engine_order(m->eng.e, NULL, key, m->rv, n, c->objs[o].reads++,
			    m->order);
	if (c->n_domains > 1)
		for (size_t i = 0; i < n; i++) {
			uint32_t s = (uint32_t)m->rv[m->order[i]].segment.v - 1;

			if (c->nodes[sim_node_of(c, s)].domain == dom)
				return m->order[i];
		}
	return m->order[0];
}

/* First read of o from dom while o's primary is elsewhere: remote for
 * any policy that copies only after the domain has read the object. */
static void count_floor(struct sim_master *m, uint64_t o, uint32_t dom)
{
	const struct sim_cluster *c = m->c;
	uint64_t bit = o * c->n_domains + dom;
	uint8_t mask = (uint8_t)(1u << (bit % 8));

	if (!m->seen || (m->seen[bit / 8] & mask))
		return;
	m->seen[bit / 8] |= mask;
	if (c->nodes[sim_node_of(c, c->objs[o].primary)].domain != dom)
		m->floor_reads++;
}

void sim_master_read(struct sim_master *m, uint64_t o, uint32_t reader,
		     uint64_t now)
{
	struct sim_cluster *c = m->c;
	uint32_t seg = c->objs[o].primary;
	struct sim_node *node;
	uint32_t dom = c->nodes[reader].domain;
	bool cross;

	m->reads++;
	if (seg == SIM_NONE) { /* evicted for room: written back */
		seg = sim_cluster_put_segment(c);
		if (seg == SIM_NONE)
			return;
		sim_cluster_write(c, o, seg);
		m->refetched++;
	}
	count_floor(m, o, dom);
	record_heat(m, o, reader, now);
	if (c->objs[o].dyn != SIM_NONE) {
		size_t n, i;

		sim_master_fill_views(m, o, false, &n);
		i = n > 1 ? choose(m, o, reader, n) : 0;
		seg = (uint32_t)m->rv[i].segment.v - 1;
		if (m->rv_dyn[i] != SIM_NONE)
			c->dyn[m->rv_dyn[i]].last_read_ms = now;
	}
	node = &c->nodes[sim_node_of(c, seg)];
	sim_relief_read(&m->relief, c, o);
	mcrepl_engine_read(m->eng.e, c->segs[seg].id);
	node->load++;
	node->recent++;
	node->served++;
	cross = node->domain != dom;
	m->cross_reads += cross;
	m->cross_read_bytes += cross ? c->object_size : 0;
	if (dom == m->join_dom && now >= m->join_from_ms &&
	    now < m->join_until_ms) {
		m->join_reads++;
		m->join_remote += cross;
	}
}
