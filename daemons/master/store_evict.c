/* Eviction: free eviction_ratio of a segment's capacity, least recently
 * read objects first, never an object under read lease, with a copy
 * running or with a pending dynamic copy. */
#include "alloc.h"
#include "store_priv.h"

static bool evictable(struct store *s, const struct object *o, uint64_t now)
{
	return o->complete && o->copies == 0 && o->lease_until_ms <= now &&
	       !dyn_key_is_pending(s, o->tenant, o->key, now);
}

uint64_t store_evict_segment(struct store *s, struct segment *seg,
			     uint64_t now_ms)
{
	uint64_t goal =
	    (uint64_t)((double)seg->capacity * s->opts.eviction_ratio);
	uint64_t freed = 0;
	struct object *o = s->lru_head;

	if (goal == 0)
		goal = 1;
	s->ctr.eviction_runs++;
	while (o && freed < goal) {
		struct object *next = o->lru_next;

		for (size_t i = 0; evictable(s, o, now_ms) && i < o->n_replicas;
		     i++) {
			if (o->replicas[i].segment_id != seg->id)
				continue;
			freed += o->replicas[i].size;
			s->ctr.evicted_bytes += o->replicas[i].size;
			store_drop_replica(s, o, i, now_ms);
			if (o->n_replicas == 0) {
				s->ctr.evicted_objects++;
				store_delete_object(s, o);
			}
			break;
		}
		o = next;
	}
	return freed;
}

void store_evict_all(struct store *s, uint64_t now_ms)
{
	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];

		if ((double)store_used(seg) >
		    s->opts.eviction_high_watermark * (double)seg->capacity)
			store_evict_segment(s, seg, now_ms);
	}
}
