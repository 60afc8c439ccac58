/*
 * The policy engine's evidence over several heat windows: each node's
 * reads per full window, for the balance gate where one window holds too
 * few reads to tell a hot node from noise (mcrepl_policy_long_helps()).
 */
#include <stdatomic.h>

#include "engine_priv.h"

void mcrepl__eng_window_end(mcrepl_engine *e, bool skipped)
{
	uint32_t h = (e->whead + 1) % ENG_W;
	uint64_t total = 0;

	for (uint32_t i = 0; i < e->max_segs; i++) {
		struct enode *n = &e->nodes[i];
		uint32_t x = 0;

		if (!n->name)
			continue;
		for (uint32_t k = 0; k < ENG_B; k++)
			x += atomic_load_explicit(&n->bucket[k],
						  memory_order_relaxed);
		n->hist[h] = x;
		n->hist_n = skipped ? 0 : n->hist_n + (n->hist_n < ENG_W);
		total += x;
	}
	e->whist[h] = total;
	e->wnodes[h] = e->n_nodes;
	e->whead = h;
	e->wn = skipped ? 0 : e->wn + (e->wn < ENG_W);
}

/* The windows every readable replica node of the key has: 0 when one of
 * them is unknown to the engine. */
static uint32_t shared_windows(const mcrepl_engine *e,
			       const mcrepl_propose_input *in)
{
	uint32_t have = e->wn;
	bool any = false;

	for (size_t i = 0; i < in->n_replicas; i++) {
		uint32_t slot, node;

		if (!in->replicas[i].readable)
			continue;
		slot = mcrepl__eng_slot(e, in->replicas[i].segment.v);
		if (slot == ENG_NONE)
			return 0;
		node = atomic_load_explicit(&e->segs[slot].node,
					    memory_order_relaxed);
		if (e->nodes[node].hist_n < have)
			have = e->nodes[node].hist_n;
		any = true;
	}
	return any ? have : 0;
}

/* The lowest sum over the last w windows among the key's replica nodes. */
static uint64_t key_load(const mcrepl_engine *e, const mcrepl_propose_input *in,
			 uint32_t w)
{
	uint64_t best = UINT64_MAX;

	for (size_t i = 0; i < in->n_replicas; i++) {
		const struct enode *n;
		uint64_t sum = 0;

		if (!in->replicas[i].readable)
			continue;
		n = &e->nodes[atomic_load_explicit(
		    &e->segs[mcrepl__eng_slot(e, in->replicas[i].segment.v)]
			 .node,
		    memory_order_relaxed)];
		for (uint32_t k = 0; k < w; k++)
			sum += n->hist[(e->whead + ENG_W - k) % ENG_W];
		best = sum < best ? sum : best;
	}
	return best;
}

void mcrepl__eng_long_balance(const mcrepl_engine *e,
			      const mcrepl_propose_input *in,
			      mcrepl_long_balance *out)
{
	static const uint32_t horizon[MCREPL_POLICY_LONG_HORIZONS] = {2, 4, 8,
								      16, 32};
	uint32_t have = shared_windows(e, in);

	*out = (mcrepl_long_balance){.nodes = e->n_nodes};
	for (uint32_t j = 0; j < MCREPL_POLICY_LONG_HORIZONS; j++) {
		uint32_t w = horizon[j];
		double mean = 0;

		if (w > have)
			break;
		for (uint32_t k = 0; k < w; k++) {
			uint32_t at = (e->whead + ENG_W - k) % ENG_W;

			if (e->wnodes[at])
				mean += (double)e->whist[at] / e->wnodes[at];
		}
		out->h[out->n].windows = w;
		out->h[out->n].key_load = key_load(e, in, w);
		out->h[out->n].mean = mean;
		out->n++;
	}
}
