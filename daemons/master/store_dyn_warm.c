/* Warmup of a domain (domain-aware only): copy the hottest objects it
 * lacks into it, within a copy and byte budget, through the same proposal
 * path as any dynamic copy. */
#include <stdio.h>
#include <stdlib.h>

#include "store_dyn.h"

static bool held_in_domain(struct store *s, const struct object *o,
			   const char *domain)
{
	for (size_t i = 0; i < o->n_replicas; i++) {
		struct segment *seg =
		    store_segment(s, o->replicas[i].segment_id);

		if (seg && o->replicas[i].status == REPLICA_COMPLETE &&
		    mcrepl_domain_equal(seg->domain, domain))
			return true;
	}
	return false;
}

static void warm_one(struct store *s, struct object *o, const char *domain,
		     uint64_t now_ms, uint32_t *queued)
{
	mcrepl_propose_result res;
	mcrepl_proposal p;
	char id[48];

	snprintf(id, sizeof(id), "warmup-%llu",
		 (unsigned long long)++s->next_proposal);
	p = (mcrepl_proposal){
	    .action = MCREPL_ACTION_ADD,
	    .proposal_id = id,
	    .tenant = o->tenant,
	    .key = o->key,
	    .requester_domain = domain,
	    .target_domain = domain,
	    .observed_version = o->version,
	    .expected_size = o->size,
	    .expires_at_ms = now_ms + s->opts.cfg.lease_ttl_ms,
	    .kind = MCREPL_PROPOSAL_WARMUP,
	};
	if (dyn_propose(s, &p, now_ms, &res) == MCREPL_OK)
		(*queued)++;
}

/* The complete objects read within the heat window (the rest have no heat
 * and are never chosen), up to n, found from the most recently read end
 * of the LRU order and given in LRU order: the work follows the objects
 * read lately, not every object. */
static size_t candidates(struct store *s, const char *domain, size_t n,
			 uint64_t now_ms, mcrepl_warmup_candidate *c,
			 struct object **objs)
{
	/* the window's oldest bucket may reach one bucket further back */
	uint64_t window = s->opts.cfg.heat_window_ms + s->heat.bucket_ms;
	size_t i = 0;

	for (struct object *o = s->lru_tail;
	     o && i < n && now_ms - o->last_read_ms <= window;
	     o = o->lru_prev) {
		if (!o->complete)
			continue;
		objs[i] = o;
		c[i].heat = mcrepl_heat_cell_count(&o->heat, &s->heat, now_ms);
		c[i].size = o->size;
		c[i].in_domain = held_in_domain(s, o, domain);
		i++;
	}
	for (size_t a = 0, b = i; a + 1 < b; a++, b--) { /* LRU order */
		mcrepl_warmup_candidate tc = c[a];
		struct object *to = objs[a];

		c[a] = c[b - 1];
		c[b - 1] = tc;
		objs[a] = objs[b - 1];
		objs[b - 1] = to;
	}
	return i;
}

uint32_t dyn_warmup(struct store *s, const char *domain, uint32_t max_copies,
		    uint64_t max_bytes, uint64_t now_ms)
{
	size_t n = mcu_map_size(&s->objects), chosen;
	mcrepl_warmup_candidate *c;
	struct object **objs;
	size_t *pick = calloc((size_t)max_copies + 1, sizeof(*pick));
	uint32_t queued = 0;

	if (n > STORE_WARMUP_SCAN)
		n = STORE_WARMUP_SCAN;
	c = calloc(n + 1, sizeof(*c));
	objs = calloc(n + 1, sizeof(*objs));
	if (!c || !objs || !pick || !s->opts.cfg.domain_aware)
		goto out_free;
	n = candidates(s, domain, n, now_ms, c, objs);
	chosen = mcrepl_warmup_select(c, n, max_copies, max_bytes, pick);
	for (size_t j = 0; j < chosen; j++)
		warm_one(s, objs[pick[j]], domain, now_ms, &queued);
	s->ctr.warmup_runs++;
	s->ctr.warmup_queued += queued;
out_free:
	free(c);
	free(objs);
	free(pick);
	return queued;
}
