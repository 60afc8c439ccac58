/* The store's life: create/destroy, the lock, the periodic tick
 * and the figures /metrics renders. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_priv.h"

int store_create(const struct master_opts *o,
		 const uint8_t grant_secret[GRANT_SECRET_BYTES],
		 uint64_t incarnation, struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->opts = *o;
	s->incarnation = incarnation;
	memcpy(s->grant_secret, grant_secret, GRANT_SECRET_BYTES);
	s->stamp_key = stamp_key_derive(grant_secret);
	s->next_segment_id = s->next_version = s->next_task_id = 1;
	s->evict_rng = incarnation;
	pthread_mutex_init(&s->lock, NULL);
	if (mcrepl_stats_create(&s->stats) || /* the engine counts into it */
	    store__policy_init(s) || mcu_map_init(&s->objects, 1024) ||
	    mcu_map_init(&s->tasks, 256) || mcu_map_init(&s->seg_ids, 64) ||
	    mcu_map_init(&s->hosts, 64) ||
	    mcrepl_triggers_create(o->cfg.admission_queue_limit,
				   &s->triggers)) {
		store_destroy(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void store_destroy(struct store *s)
{
	if (!s)
		return;
	store__free_objects(s);
	store__quota_free(s);
	store__free_tasks(s);
	store__free_segments(s);
	free(s->quar);
	free(s->orphans);
	store__removed_free(s);
	store__rm_free(s);
	store__cross_free(s);
	store__fences_free(s);
	mcrepl_triggers_destroy(s->triggers);
	mcrepl_engine_destroy(s->engine);
	mcrepl_stats_destroy(s->stats);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void store_lock(struct store *s)
{
	pthread_mutex_lock(&s->lock);
}

void store_unlock(struct store *s)
{
	pthread_mutex_unlock(&s->lock);
}

const struct master_opts *store_opts(const struct store *s)
{
	return &s->opts;
}

uint64_t store_incarnation(const struct store *s)
{
	return s->incarnation;
}

void store_segment_grant_key(const struct store *s, uint64_t segment_id,
			     uint8_t out[GRANT_SECRET_BYTES])
{
	grant_key_derive(s->grant_secret, s->incarnation, segment_id, out);
}

/* memcpy keeps the pointer access aliasing-safe. */
bool store__grow(void *arr, size_t n, size_t *cap, size_t size)
{
	void *p;
	size_t ncap;

	if (n < *cap)
		return true;
	ncap = *cap ? 2 * *cap : 16;
	memcpy(&p, arr, sizeof(p));
	p = realloc(p, ncap * size);
	if (!p)
		return false;
	memcpy(arr, &p, sizeof(p));
	*cap = ncap;
	return true;
}

void store_tick(struct store *s, uint64_t now_ms, uint64_t *last_evict_ms)
{
	dyn_sweep(s, now_ms);
	store__policy_tick(s, now_ms);
	store__release_quarantine(s, now_ms);
	store__ha_tick(s, now_ms);
	store_reclaim_reservations(s, now_ms);
	store_expire_clients(s, now_ms);
	store_drain(s, now_ms);
	if (now_ms - *last_evict_ms >= 1000) {
		store_evict_all(s, now_ms);
		*last_evict_ms = now_ms;
	} else {
		store__evict_step(s, now_ms);
	}
}

void store_figures(struct store *s, struct store_figures *f)
{
	*f = s->ctr;
	f->segments = s->n_segs;
	f->clients = s->n_clients;
	f->segments_leaving = s->n_leaving;
	f->quar_regions = s->n_quar;
	f->quar_bytes = s->quar_bytes;
	f->replicas_leaving = 0;
	for (size_t i = 0; i < s->n_leaving; i++)
		f->replicas_leaving += s->leaving[i]->n_ix;
	f->capacity = f->used = 0;
	for (size_t i = 0; i < s->n_segs; i++) {
		f->capacity += s->segs[i]->capacity;
		f->used += store_used(s->segs[i]);
	}
	f->keys = mcu_map_size(&s->objects);
	f->tasks = mcu_map_size(&s->tasks);
	f->admission_queue = mcrepl_triggers_len(s->triggers);
	f->warmup_inflight =
	    s->ctr.warmup_queued - s->ctr.warmup_done - s->ctr.warmup_failed;
	store__policy_figures(s, f);
}

void store_snapshot(struct store *s, struct store_snapshot *out)
{
	store_figures(s, &out->fig);
	store_quota_figures(s, &out->quota);
	store_ha_figures(s, &out->ha);
}

void store_copy_stats(struct store *s, mcrepl_stats *dst)
{
	mcrepl_stats_copy(dst, s->stats);
}
