/*
 * What the engine keeps for its hosts so that they keep nothing of their
 * own (mcrepl/engine.h): the whole segment list in one call, segment
 * names, and replica views completed from the engine's segments.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"

mcrepl_status mcrepl_engine_segments_sync(mcrepl_engine *e,
					  const mcrepl_engine_segment *segs,
					  size_t n, size_t *removed)
{
	mcrepl_status st = MCREPL_OK, one;
	size_t gone = 0;
	uint32_t slot;

	if (removed)
		*removed = 0;
	if (!e || (n && !segs))
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	for (uint32_t i = 0; i < e->max_segs; i++)
		e->segs[i].synced = false;
	for (size_t i = 0; i < n; i++) {
		one = mcr_eng_seg_set(e, &segs[i]);
		slot = mcr_eng_slot(e, mcr_eng_seg_named(&segs[i]).id.v);
		if (slot != ENG_NONE)
			e->segs[slot].synced = true;
		if (one != MCREPL_OK && st == MCREPL_OK)
			st = one;
	}
	for (uint32_t i = 0; i < e->max_segs; i++)
		if (e->segs[i].id && !e->segs[i].synced) {
			mcr_eng_seg_drop(e, i);
			gone++;
		}
	pthread_mutex_unlock(&e->mu);
	if (removed)
		*removed = gone;
	return st;
}

size_t mcrepl_engine_segment_name(mcrepl_engine *e, mcrepl_segment_id id,
				  char *buf, size_t cap)
{
	size_t len = 0;
	uint32_t slot;

	if (buf && cap)
		buf[0] = '\0';
	if (!e)
		return 0;
	pthread_mutex_lock(&e->mu);
	slot = mcr_eng_slot(e, id.v);
	if (slot != ENG_NONE && e->segs[slot].name) {
		len = strlen(e->segs[slot].name);
		if (buf && cap) {
			size_t k = len < cap - 1 ? len : cap - 1;

			memcpy(buf, e->segs[slot].name, k);
			buf[k] = '\0';
		}
	}
	pthread_mutex_unlock(&e->mu);
	return len;
}

mcrepl_status mcr_eng_fill_replicas(mcrepl_engine *e,
				    const mcrepl_propose_input *in,
				    mcrepl_propose_input *x,
				    mcrepl_replica_view **buf)
{
	mcrepl_replica_view *v;
	size_t n = 0;

	*buf = NULL;
	x->n_replicas = 0;
	if (!in->n_replicas || !in->replicas)
		return MCREPL_OK;
	if (!(v = calloc(in->n_replicas, sizeof(*v))))
		return MCREPL_ENOMEM;
	for (size_t i = 0; i < in->n_replicas; i++) {
		const mcrepl_replica_view *r = &in->replicas[i];
		uint32_t slot = mcr_eng_slot(e, r->segment.v);
		const struct eseg *g;

		if (slot == ENG_NONE)
			continue; /* not a segment the engine knows */
		g = &e->segs[slot];
		v[n] = *r;
		v[n].client.v = g->client;
		v[n].host = g->host;
		v[n].domain = g->domain;
		v[n].can_copy = g->can_copy;
		n++;
	}
	*buf = v;
	x->replicas = v;
	x->n_replicas = n;
	return MCREPL_OK;
}
