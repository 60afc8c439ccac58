/*
 * The segment views a proposal hands the policy (every segment, its bytes
 * and its node's load), kept between proposals: a proposal fills again
 * only the views whose inputs changed since the last one, so a stream of
 * proposals costs what changed (reads, projections, grants), not the
 * segment count. A node's load is computed again when it was read or
 * projected, at a bucket roll, and, at a new tick, when the tick alone
 * may move it (mcr_eng_node_load_span()).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"

int mcr_eng_views_init(mcrepl_engine *e)
{
	struct eviews *v = &e->v;
	uint32_t n = e->max_segs;

	v->words = (n + 63) / 64;
	v->idx = calloc(n, sizeof(*v->idx));
	v->next = calloc(n, sizeof(*v->next));
	v->head = calloc(n, sizeof(*v->head));
	v->load = calloc(n, sizeof(*v->load));
	v->node_dirty = calloc(v->words, sizeof(*v->node_dirty));
	v->span = calloc(v->words, sizeof(*v->span));
	v->seg_dirty = calloc(v->words, sizeof(*v->seg_dirty));
	if (!v->idx || !v->next || !v->head || !v->load || !v->node_dirty ||
	    !v->span || !v->seg_dirty)
		return -1;
	return 0;
}

void mcr_eng_views_free(mcrepl_engine *e)
{
	struct eviews *v = &e->v;

	free(v->idx);
	free(v->next);
	free(v->head);
	free(v->load);
	free(v->node_dirty);
	free(v->span);
	free(v->seg_dirty);
	memset(v, 0, sizeof(*v));
}

void mcr_eng_views_reset(mcrepl_engine *e)
{
	e->v.ok = false;
}

void mcr_eng_views_seg(mcrepl_engine *e, uint32_t slot)
{
	e->v.seg_dirty[slot / 64] |= 1ull << (slot % 64);
}

/* Node i's load into its views; whether it may move with the tick alone
 * into the span bitmap. */
static void node_fill(mcrepl_engine *e, uint32_t i)
{
	struct eviews *v = &e->v;
	bool span = false;
	uint64_t load;

	if (!e->nodes[i].name)
		return;
	load = mcr_eng_node_load_span(e, i, &span);
	if (span)
		v->span[i / 64] |= 1ull << (i % 64);
	else
		v->span[i / 64] &= ~(1ull << (i % 64));
	if (load == v->load[i])
		return;
	v->load[i] = load;
	for (uint32_t x = v->head[i]; x != ENG_NONE; x = v->next[x])
		e->scratch[x].read_load = load;
}

/* Slot's view into scratch[x]; its node's load as last computed. */
static void view_fill(mcrepl_engine *e, uint32_t slot, uint32_t x)
{
	const struct eseg *g = &e->segs[slot];
	uint32_t node = atomic_load(&g->node);

	e->scratch[x] = (mcrepl_segment_view){
	    .id = {g->id},
	    .client = {g->client},
	    .host = g->host,
	    .domain = g->domain,
	    .capacity = g->capacity,
	    .used = g->used + g->promised,
	    .allocatable = g->allocatable,
	    .read_load = e->on ? e->v.load[node] : g->read_load,
	};
}

static void bits_clear(struct eviews *v)
{
	for (uint32_t w = 0; w < v->words; w++) {
		atomic_exchange_explicit(&v->node_dirty[w], 0,
					 memory_order_acquire);
		v->seg_dirty[w] = 0;
		v->span[w] = 0;
	}
}

/* Every view anew: the node lists, every node's load, every segment. */
static void rebuild(mcrepl_engine *e)
{
	struct eviews *v = &e->v;
	size_t n = 0;

	bits_clear(v);
	for (uint32_t i = 0; i < e->max_segs; i++) {
		v->head[i] = ENG_NONE;
		v->idx[i] = ENG_NONE;
	}
	for (uint32_t i = 0; e->on && i < e->max_segs; i++) {
		v->load[i] = 0;
		node_fill(e, i);
	}
	for (uint32_t slot = 0; slot < e->max_segs; slot++) {
		uint32_t node = atomic_load(&e->segs[slot].node);

		if (!e->segs[slot].id)
			continue;
		v->idx[slot] = (uint32_t)n;
		v->next[n] = v->head[node];
		v->head[node] = (uint32_t)n;
		view_fill(e, slot, (uint32_t)n++);
	}
	v->n = n;
	v->ok = true;
}

/* The nodes to compute again: those read or projected, and at a new tick
 * those whose load depends on the span. */
static void nodes_update(mcrepl_engine *e, bool ticked)
{
	struct eviews *v = &e->v;

	for (uint32_t w = 0; w < v->words; w++) {
		uint64_t m = atomic_exchange_explicit(&v->node_dirty[w], 0,
						      memory_order_acquire);

		if (ticked)
			m |= v->span[w];
		for (; m; m &= m - 1)
			node_fill(e, w * 64 + (uint32_t)__builtin_ctzll(m));
	}
}

static void segs_update(mcrepl_engine *e)
{
	struct eviews *v = &e->v;

	for (uint32_t w = 0; w < v->words; w++) {
		for (uint64_t m = v->seg_dirty[w]; m; m &= m - 1) {
			uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(m);

			if (v->idx[slot] != ENG_NONE)
				view_fill(e, slot, v->idx[slot]);
		}
		v->seg_dirty[w] = 0;
	}
}

size_t mcr_eng_views_kept(mcrepl_engine *e)
{
	struct eviews *v = &e->v;
	bool full = mcr_eng_full(e);

	if (!v->ok || (e->on && (v->epoch != e->epoch || v->full != full))) {
		rebuild(e); /* a roll moved every node's counts */
	} else {
		if (e->on)
			nodes_update(e, v->ms != e->last_ms);
		segs_update(e);
	}
	v->ms = e->last_ms;
	v->epoch = e->epoch;
	v->full = full;
	return v->n;
}

size_t mcr_eng_views(mcrepl_engine *e)
{
	size_t n = mcr_eng_views_kept(e);

	e->v.ok = false; /* the caller may write into them */
	return n;
}
