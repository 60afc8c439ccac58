/* Eviction: free eviction_ratio of a segment's capacity, borrowed space
 * first (dynamic replicas whose object stays readable elsewhere, the
 * copies a hot key took in headroom: give_back), then least recently
 * read objects first, never an object under read lease, with a copy
 * running or with a pending dynamic copy, nor, for a put, another
 * tenant's object while that tenant is within its fair share
 * (store_quota.c).
 *
 * Victims come from the segment's own replica index (store_obj.c): each is
 * the least recently read (lru_seq) of STORE_EVICT_SAMPLES entries sampled
 * there, all of them on a segment holding no more (exact LRU then), as
 * Redis approximates LRU. So eviction costs O(victims x samples), never a
 * walk of every object, and each call looks at no more than a budget of
 * entries (STORE_EVICT_VISITS). A segment over the high watermark gets a
 * goal once a second (store_evict_all); every tick works towards the goals
 * with one budget (store__evict_step), the segments taken in turn. */
#include "alloc.h"
#include "util/hash.h"
#include "store_priv.h"

bool store__evictable(struct store *s, const struct object *o, uint64_t now)
{
	return o->complete && o->copies == 0 && o->lease_until_ms <= now &&
	       !dyn_key_is_pending(s, o->tenant, o->key, now) &&
	       store__quota_may_evict(s, o);
}

/* The least recently read evictable object among k entries of seg's index
 * (every entry when it holds no more than STORE_EVICT_SAMPLES); its slot
 * in *slot. NULL when none of them is evictable. */
static struct object *pick(struct store *s, struct segment *seg, size_t *visits,
			   uint64_t now, size_t *slot)
{
	bool all = seg->n_ix <= STORE_EVICT_SAMPLES;
	size_t k = all ? seg->n_ix : STORE_EVICT_SAMPLES;
	struct object *best = NULL;

	for (size_t j = 0; j<k && * visits> 0; j++) {
		size_t at =
		    all ? j
			: (size_t)(mcu_splitmix64(&s->evict_rng) % seg->n_ix);
		struct object *o = seg->ix[at];

		(*visits)--;
		s->ctr.evict_visits++;
		if (store__evictable(s, o, now) &&
		    (!best || o->lru_seq < best->lru_seq)) {
			best = o;
			*slot = at;
		}
	}
	return best;
}

#define GIVE_BACK_PICKS 64

struct lent {
	struct object *o;
	size_t i; /* its replica on the segment */
};

/* Up to GIVE_BACK_PICKS evictable dynamic replicas on seg whose object has
 * another readable copy, least recently read first, from at most half of
 * *visits entries (a random place when the index holds more). */
static size_t borrowed(struct store *s, struct segment *seg, size_t *visits,
		       uint64_t now, struct lent *picks)
{
	size_t n_ix = seg->n_ix, k = *visits / 2, start = 0, n = 0;

	if (k >= n_ix)
		k = n_ix;
	else
		start = (size_t)(mcu_splitmix64(&s->evict_rng) % n_ix);
	for (size_t j = 0; j < k && n < GIVE_BACK_PICKS; j++) {
		size_t at = (start + j) % n_ix, i, to = n;
		struct object *o = seg->ix[at];

		(*visits)--;
		s->ctr.evict_visits++;
		i = store__replica_at_slot(o, seg->id, at);
		if (i == SIZE_MAX || !o->replicas[i].dynamic ||
		    !store__evictable(s, o, now) ||
		    store__others_readable(s, o, i) == 0)
			continue;
		while (to > 0 && picks[to - 1].o->lru_seq > o->lru_seq) {
			picks[to] = picks[to - 1];
			to--;
		}
		picks[to] = (struct lent){.o = o, .i = i};
		n++;
	}
	return n;
}

/* Borrowed space back first: the objects stay readable, nobody misses. */
static uint64_t give_back(struct store *s, struct segment *seg, uint64_t goal,
			  size_t *visits, uint64_t now_ms)
{
	struct lent picks[GIVE_BACK_PICKS];
	uint64_t freed = 0;
	size_t n;

	if (seg->n_dyn_ix == 0)
		return 0;
	n = borrowed(s, seg, visits, now_ms, picks);
	for (size_t j = 0; j < n && freed < goal; j++) {
		struct object *o = picks[j].o;
		size_t i = picks[j].i;

		freed += o->replicas[i].size;
		s->ctr.evicted_bytes += o->replicas[i].size;
		s->ctr.evict_gave_back++;
		store_drop_replica(s, o, i, now_ms);
	}
	return freed;
}

static uint64_t evict_some(struct store *s, struct segment *seg, uint64_t goal,
			   size_t *visits, uint64_t now_ms)
{
	uint64_t freed = give_back(s, seg, goal, visits, now_ms);

	while (freed < goal && seg->n_ix > 0 && *visits > 0) {
		size_t slot = 0, i;
		struct object *o = pick(s, seg, visits, now_ms, &slot);

		if (!o && seg->n_ix <= STORE_EVICT_SAMPLES)
			break; /* looked at all of them: nothing to evict */
		if (!o)
			continue;
		i = store__replica_at_slot(o, seg->id, slot);
		freed += o->replicas[i].size;
		s->ctr.evicted_bytes += o->replicas[i].size;
		store_drop_replica(s, o, i, now_ms);
		if (o->n_replicas == 0) {
			s->ctr.evicted_objects++;
			store_delete_object(s, o);
		}
	}
	return freed;
}

static uint64_t goal_of(const struct store *s, const struct segment *seg)
{
	uint64_t goal =
	    (uint64_t)((double)seg->capacity * s->opts.eviction_ratio);

	return goal ? goal : 1;
}

uint64_t store__evict_budgeted(struct store *s, struct segment *seg,
			       size_t *visits, uint64_t now_ms)
{
	s->ctr.eviction_runs++;
	return evict_some(s, seg, goal_of(s, seg), visits, now_ms);
}

uint64_t store_evict_segment(struct store *s, struct segment *seg,
			     uint64_t now_ms)
{
	size_t visits = STORE_EVICT_VISITS;

	return store__evict_budgeted(s, seg, &visits, now_ms);
}

/* Towards goal on seg: first only from tenants above their fair share
 * (within half the budget left); when that falls short for want of any
 * (every tenant within its share), least recently read first, as with one
 * tenant. */
static uint64_t evict_fair(struct store *s, struct segment *seg, uint64_t goal,
			   size_t *visits, uint64_t now_ms)
{
	size_t half = *visits / 2, rest = *visits - half;
	uint64_t freed;

	if (!s->q.guard)
		return evict_some(s, seg, goal, visits, now_ms);
	s->q.share_skips = 0;
	freed = evict_some(s, seg, goal, &half, now_ms);
	rest += half;
	if (freed < goal && s->q.share_skips) {
		s->q.guard = false;
		freed += evict_some(s, seg, goal - freed, &rest, now_ms);
		s->q.guard = true;
	}
	*visits = rest;
	return freed;
}

/* One step towards the n segments' goals, within one budget. */
static void evict_goals(struct store *s, size_t n, uint64_t now_ms)
{
	size_t visits = STORE_EVICT_VISITS;

	for (size_t j = 0; j < n && visits > 0; j++) {
		struct segment *seg = s->segs[(s->evict_next + j) % n];
		uint64_t freed;

		if (seg->evict_left == 0)
			continue;
		freed = evict_fair(s, seg, seg->evict_left, &visits, now_ms);
		/* done, or nothing more it could evict: no goal left */
		seg->evict_left = visits > 0 || freed >= seg->evict_left
				      ? 0
				      : seg->evict_left - freed;
		if (visits == 0) /* the next step starts after it */
			s->evict_next = (s->evict_next + j + 1) % n;
	}
}

void store__evict_step(struct store *s, uint64_t now_ms)
{
	store__quota_evict_for(s, true, NULL);
	evict_goals(s, s->n_segs, now_ms);
	store__quota_evict_for(s, false, NULL);
}

void store_evict_all(struct store *s, uint64_t now_ms)
{
	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];
		bool over =
		    (double)store_used(seg) >
		    s->opts.eviction_high_watermark * (double)seg->capacity;

		seg->evict_left = over ? goal_of(s, seg) : 0;
		s->ctr.eviction_runs += over;
	}
	store__evict_step(s, now_ms);
}
