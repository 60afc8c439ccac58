/*
 * Room for a hot copy on a full cluster (store_dyn.c make_room): the
 * bytes the engine granted on a segment, freed under the room rule
 * (mcrepl_room_classify()): dynamic replicas first, then replicas of
 * objects with another readable copy, then, only as room_miss_cost
 * allows, objects whose only copy they are; least recently read first
 * within a class, never what eviction spares (store__evictable).
 *
 * One pass over at most STORE_EVICT_VISITS entries of the segment's index
 * (from a random place when it holds more) keeps the best ROOM_PICKS
 * candidates; they are evicted only when together they free the bytes,
 * so a refused room costs nothing.
 */
#include <string.h>

#include "util/hash.h"
#include "store_dyn.h"

#define ROOM_PICKS 64

struct room_pick {
	struct object *o;
	mcrepl_room_class cls;
};

/* The object's reads over the heat window, from every domain's cell. */
static uint64_t object_reads(const struct store *s, struct object *o,
			     uint64_t now_ms)
{
	uint64_t n = 0;

	if (!s->opts.cfg.domain_aware)
		return mcrepl_heat_cell_count(&o->heat, &s->heat, now_ms);
	for (uint8_t i = 0; i < o->n_dheat; i++)
		n +=
		    mcrepl_heat_cell_count(&o->dheat[i].cell, &s->heat, now_ms);
	return n;
}

static size_t replica_on(const struct object *o, uint64_t seg_id)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id)
			return i;
	return o->n_replicas;
}

uint32_t store__others_readable(struct store *s, const struct object *o,
				size_t i)
{
	uint32_t n = 0;

	for (size_t j = 0; j < o->n_replicas; j++)
		n += j != i && o->replicas[j].status == REPLICA_COMPLETE &&
		     store_segment(s, o->replicas[j].segment_id) != NULL;
	return n;
}

static mcrepl_room_class classify(struct store *s, struct object *o, size_t i,
				  uint64_t relief, uint64_t now_ms)
{
	mcrepl_room_victim v = {
	    .dynamic = o->replicas[i].dynamic,
	    .other_readable = store__others_readable(s, o, i),
	};

	if (v.other_readable == 0 && s->opts.cfg.room_miss_cost)
		v.reads = object_reads(s, o, now_ms);
	return mcrepl_room_classify(&s->opts.cfg, &v, relief);
}

static bool before(const struct room_pick *a, const struct room_pick *b)
{
	return a->cls != b->cls ? a->cls < b->cls
				: a->o->lru_seq < b->o->lru_seq;
}

/* Insert p into the n sorted picks (at most ROOM_PICKS kept). */
static size_t keep(struct room_pick *picks, size_t n, const struct room_pick *p)
{
	size_t at = n;

	for (size_t j = 0; j < n; j++)
		if (picks[j].o == p->o)
			return n; /* two replicas on one segment: once */
	while (at > 0 && before(p, &picks[at - 1]))
		at--;
	if (at == ROOM_PICKS)
		return n;
	if (n == ROOM_PICKS)
		n--;
	memmove(&picks[at + 1], &picks[at], (n - at) * sizeof(*picks));
	picks[at] = *p;
	return n + 1;
}

static size_t scan(struct store *s, struct segment *seg, uint64_t relief,
		   uint64_t now_ms, struct room_pick *picks)
{
	size_t n_ix = seg->n_ix, k = n_ix, start = 0, n = 0;

	if (n_ix > STORE_EVICT_VISITS) {
		k = STORE_EVICT_VISITS;
		start = (size_t)(mcu_splitmix64(&s->evict_rng) % n_ix);
	}
	for (size_t j = 0; j < k; j++) {
		size_t at = (start + j) % n_ix;
		struct object *o = seg->ix[at];
		struct room_pick p = {.o = o};

		s->ctr.evict_visits++;
		if (!store__evictable(s, o, now_ms))
			continue;
		p.cls = classify(s, o, store__replica_at_slot(o, seg->id, at),
				 relief, now_ms);
		if (p.cls != MCREPL_ROOM_KEEP)
			n = keep(picks, n, &p);
	}
	return n;
}

static void drop(struct store *s, struct segment *seg,
		 const struct room_pick *p, uint64_t now_ms)
{
	struct object *o = p->o;
	size_t i = replica_on(o, seg->id);

	s->ctr.evicted_bytes += o->replicas[i].size;
	s->ctr.room_dropped_dynamic += p->cls == MCREPL_ROOM_DYNAMIC;
	s->ctr.room_dropped_duplicate += p->cls == MCREPL_ROOM_DUPLICATE;
	store_drop_replica(s, o, i, now_ms);
	if (o->n_replicas == 0) {
		s->ctr.room_evicted_only++;
		s->ctr.evicted_objects++;
		store_delete_object(s, o);
	}
}

uint64_t dyn__evict_room(struct store *s, struct segment *seg, uint64_t bytes,
			 uint64_t relief, uint64_t now_ms)
{
	struct room_pick picks[ROOM_PICKS];
	uint64_t sum = 0, freed = 0;
	size_t n, use = 0;

	s->ctr.eviction_runs++;
	n = scan(s, seg, relief, now_ms, picks);
	while (use < n && sum < bytes) {
		struct object *o = picks[use++].o;

		sum += o->replicas[replica_on(o, seg->id)].size;
	}
	if (sum < bytes) {
		s->ctr.room_short++;
		return 0;
	}
	for (size_t j = 0; j < use; j++) {
		size_t i = replica_on(picks[j].o, seg->id);

		freed += picks[j].o->replicas[i].size;
		drop(s, seg, &picks[j], now_ms);
	}
	return freed;
}
