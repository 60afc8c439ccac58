/* Eviction: a node above the high watermark frees eviction_ratio of its
 * capacity, dropping readable dynamic replicas least recently read first,
 * never one read within the master's read lease (--default_kv_lease_ttl,
 * 10 s as the master's: the master evicts no object under read lease). Primaries
 * are evicted only to make room for hot copies (engine.c). */
#include <stdlib.h>

#include "master.h"

static const struct sim_dyn *sort_pool;

static int cmp_lru(const void *a, const void *b)
{
	const struct sim_dyn *x = &sort_pool[*(const uint32_t *)a];
	const struct sim_dyn *y = &sort_pool[*(const uint32_t *)b];

	if (x->last_read_ms != y->last_read_ms)
		return x->last_read_ms < y->last_read_ms ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void sim_master_drop(struct sim_master *m, uint32_t d, uint64_t now)
{
	struct sim_cluster *c = m->c;
	uint32_t node = sim_node_of(c, c->dyn[d].seg);
	char key[48];

	sim_master_key(m, c->dyn[d].obj, key, sizeof(key));
	mcrepl_engine_replica_dropped(m->eng.e, NULL, key,
				      c->segs[c->dyn[d].seg].id, false, now);
	sim_dyn_remove(c, d);
	mcrepl_leases_replica_removed(
	    m->leases, NULL, key, c->domain_names[c->nodes[node].domain], now);
	mcrepl_stats_add(m->stats, MCREPL_STAT_REPLICAS, -1);
}

static void evict_node(struct sim_master *m, uint32_t node, uint64_t now)
{
	struct sim_cluster *c = m->c;
	struct sim_node *n = &c->nodes[node];
	uint64_t goal =
	    (uint64_t)(m->o->evict_ratio * (double)c->node_capacity);
	uint64_t freed = 0;
	uint32_t *lru, k = 0;

	lru = malloc((n->n_dyn + 1) * sizeof(*lru));
	if (!lru)
		return;
	for (uint32_t i = 0; i < n->n_dyn; i++)
		if (c->dyn[n->dyn[i]].readable &&
		    (double)c->dyn[n->dyn[i]].last_read_ms +
			    m->o->kv_lease_ttl <=
			(double)now)
			lru[k++] = n->dyn[i];
	sort_pool = c->dyn;
	qsort(lru, k, sizeof(*lru), cmp_lru);
	for (uint32_t i = 0; i < k && freed < goal; i++) {
		sim_master_drop(m, lru[i], now);
		m->evicted++;
		freed += c->object_size;
	}
	free(lru);
}

void sim_master_evict(struct sim_master *m, uint64_t now)
{
	struct sim_cluster *c = m->c;

	for (uint32_t i = 0; i < c->n_dirty; i++) {
		uint32_t node = c->dirty[i];
		struct sim_node *n = &c->nodes[node];

		n->dirty = false;
		if ((double)n->used >
		    m->o->evict_high * (double)c->node_capacity)
			evict_node(m, node, now);
	}
	c->n_dirty = 0;
}
