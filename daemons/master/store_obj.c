/* Objects and their replicas: the index by tenant + key, the LRU order,
 * replica regions (freed now or quarantined), and Remove. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "grant.h"
#include "util/hash.h"
#include "store_priv.h"

static uint64_t obj_hash(const char *tenant, const char *key)
{
	return mcu_hash_str(key, mcu_hash_str(tenant, 0x0b1ec7));
}

struct obj_key {
	const char *tenant, *key;
};

static bool obj_eq(const struct mcu_map_node *n, const void *k)
{
	const struct object *o = (const struct object *)(const void *)n;
	const struct obj_key *ok = k;

	return strcmp(o->key, ok->key) == 0 &&
	       strcmp(o->tenant, ok->tenant) == 0;
}

bool store__key_ok(const char *tenant, const char *key)
{
	return key && key[0] && strlen(key) <= MCREPL_KEY_MAX && tenant &&
	       strlen(tenant) <= MCREPL_TENANT_MAX;
}

struct object *store_find(struct store *s, const char *tenant, const char *key)
{
	struct obj_key k = {.tenant = tenant, .key = key};
	struct object *o = (struct object *)(void *)mcu_map_find(
	    &s->objects, obj_hash(tenant, key), obj_eq, &k);

	/* HA: a re-registered region whose key the journal had not told */
	return o || !s->n_orphans ? o : store__adopt(s, tenant, key);
}

struct object *store__lookup(struct store *s, const char *tenant,
			     const char *key)
{
	return store__key_ok(tenant, key) ? store_find(s, tenant, key) : NULL;
}

bool store_exists(struct store *s, const char *tenant, const char *key)
{
	struct object *o = key && key[0] ? store_find(s, tenant, key) : NULL;

	return o && o->complete;
}

/* ---- records and the LRU order ---------------------------------------- */

struct object *store__new_object(const char *tenant, const char *key,
				 uint64_t size, uint32_t n)
{
	size_t tlen = strlen(tenant), klen = strlen(key);
	struct object *o =
	    calloc(1, offsetof(struct object, names) + tlen + klen + 2);

	if (!o)
		return NULL;
	o->tenant = memcpy(o->names, tenant, tlen + 1);
	o->key = memcpy(o->names + tlen + 1, key, klen + 1);
	/* as many as the put asks: copies are few and grow the array */
	o->cap_replicas = (uint8_t)(n ? n : 1);
	o->replicas = calloc(o->cap_replicas, sizeof(*o->replicas));
	if (!o->replicas) {
		store__free_object(o);
		return NULL;
	}
	o->size = size;
	return o;
}

void store__free_object(struct object *o)
{
	free(o->dheat);
	free(o->origin);
	free(o->digest);
	free(o->replicas);
	free(o);
}

static void drain_object(struct mcu_map_node *n, void *ctx)
{
	(void)ctx;
	store__free_object((struct object *)(void *)n);
}

void store__free_objects(struct store *s)
{
	if (s->objects.tab[0])
		mcu_map_drain(&s->objects, drain_object, NULL);
	mcu_map_fini(&s->objects);
}

void store__insert_object(struct store *s, struct object *o)
{
	mcu_map_insert(&s->objects, &o->node, obj_hash(o->tenant, o->key));
	store__lru_append(s, o);
	if (!o->complete)
		store__resv_track(s, o);
}

void store_delete_object(struct store *s, struct object *o)
{
	store__quota_release(s, o);
	store__resv_untrack(s, o);
	store__lru_unlink(s, o);
	mcu_map_remove(&s->objects, &o->node);
	store__free_object(o);
}

/* ---- replicas ------------------------------------------------------------ */

uint64_t store_read_grant_expiry(const struct store *s, uint64_t now_ms)
{
	return now_ms + s->opts.kv_lease_ttl_ms + STORE_READ_GRANT_SLACK_MS;
}

struct data_grant store_grant(const struct store *s, uint8_t op,
			      const struct segment *seg,
			      const struct replica *r, uint64_t version,
			      uint64_t expires_ms)
{
	struct grant_key gone;

	if (s->opts.grants_off)
		return (struct data_grant){0};
	if (!seg || seg->id != r->segment_id) {
		seg = store__segment_any(s, r->segment_id);
		if (!seg) /* no longer served: signed alike, for no one */
			grant_segment_key(&gone, s->grant_secret,
					  s->incarnation, r->segment_id);
	}
	return grant_sign(seg ? &seg->grant : &gone, op, r->segment_id,
			  r->offset, store_region_bytes(r->size), version,
			  expires_ms);
}

bool store_reserve_replica(struct object *o)
{
	struct replica *r;
	size_t ncap;

	if (o->n_replicas < o->cap_replicas)
		return true;
	if (o->cap_replicas >= MASTER_MAX_REPLICAS)
		return false;
	ncap = 2u * o->cap_replicas;
	if (ncap > MASTER_MAX_REPLICAS)
		ncap = MASTER_MAX_REPLICAS;
	r = realloc(o->replicas, ncap * sizeof(*r));
	if (!r)
		return false;
	o->replicas = r;
	o->cap_replicas = (uint8_t)ncap;
	return true;
}

bool store__on_segment(const struct object *o, uint64_t seg_id)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id)
			return true;
	return false;
}

/* ---- the per-segment index: seg->ix[r.ix_slot] == o for each replica r of
 * o on seg; removal moves the last entry into the hole ---- */

size_t store__replica_at_slot(const struct object *o, uint64_t seg_id,
			      size_t slot)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id &&
		    o->replicas[i].ix_slot == slot)
			return i;
	return SIZE_MAX;
}

bool store__link_replica(struct segment *seg, struct object *o,
			 struct replica *r)
{
	if (seg->n_ix == UINT32_MAX ||
	    !store__grow(&seg->ix, seg->n_ix, &seg->cap_ix, sizeof(o)))
		return false;
	r->ix_slot = (uint32_t)seg->n_ix;
	seg->ix[seg->n_ix++] = o;
	seg->n_dyn_ix += r->dynamic;
	return true;
}

static void ix_unlink(struct segment *seg, const struct object *o,
		      const struct replica *r)
{
	size_t last, i;
	struct object *moved;

	if (r->ix_slot >= seg->n_ix || seg->ix[r->ix_slot] != o)
		return; /* never indexed (a replica not made as it should be) */
	last = seg->n_ix - 1;
	moved = seg->ix[last];
	if (r->ix_slot != last) {
		i = store__replica_at_slot(moved, seg->id, last);
		moved->replicas[i].ix_slot = r->ix_slot;
		seg->ix[r->ix_slot] = moved;
	}
	seg->n_ix = last;
	seg->n_dyn_ix -= r->dynamic && seg->n_dyn_ix > 0;
}

struct replica *store__place_replica(struct store *s, struct object *o,
				     struct segment *seg,
				     enum replica_status st, bool dynamic)
{
	struct replica *r;

	if (!store_reserve_replica(o))
		return NULL;
	r = &o->replicas[o->n_replicas];
	*r = (struct replica){
	    .segment_id = seg->id,
	    .size = o->size,
	    .status = st,
	    .dynamic = dynamic,
	};
	if (seg_alloc_alloc(seg->alloc, store_region_bytes(o->size),
			    &r->offset) != 0)
		return NULL;
	if (!store__link_replica(seg, o, r)) {
		seg_alloc_free(seg->alloc, r->offset);
		return NULL;
	}
	(void)s;
	o->n_replicas++;
	return r;
}

/* Keep r's region (of object o) allocated until free_at_ms, or until its
 * worker acknowledges the revocation of its WRITE grant (store_revoke.c):
 * a segment RDMA can write one-sidedly (rkey) is held to the end, a data
 * port write is refused once revoked. False when out of memory (the
 * caller frees it now). */
static bool quarantine(struct store *s, const struct object *o,
		       const struct replica *r, uint64_t free_at_ms)
{
	const struct segment *seg = store__segment_any(s, r->segment_id);
	bool revocable = seg && !seg->leaving && !seg->rkey &&
			 !s->opts.grants_off && r->grant_until_ms;
	struct quarantine q = {
	    .segment_id = r->segment_id,
	    .offset = r->offset,
	    .bytes = store_region_bytes(r->size),
	    .free_at_ms = free_at_ms,
	    .client_id = seg ? seg->client_id : 0,
	    .object_id = o->version,
	    .grant_until_ms = r->grant_until_ms,
	    .seq = revocable ? s->revoke_seq + 1 : 0,
	};

	if (!store__grow(&s->quar, s->n_quar, &s->cap_quar, sizeof(q)))
		return false;
	s->quar[s->n_quar++] = q;
	s->quar_bytes += q.bytes;
	if (q.seq)
		s->revoke_seq = q.seq;
	s->ctr.quarantined++;
	return true;
}

/* A region on which a WRITE grant was issued (a put's, a copy's) stays
 * allocated until that grant expires, whatever ended its replica (Remove,
 * eviction, a put's expiry or revoke, a copy dropped): a writer still
 * holding the grant then writes into nobody's object, never into the
 * region's next owner. A leaving segment's regions go with its allocator:
 * never freed one by one. */
static void drop_replica(struct store *s, struct object *o, size_t i,
			 uint64_t now_ms, bool free_region)
{
	struct replica r = o->replicas[i];
	struct segment *seg = store__segment_any(s, r.segment_id);

	if (seg) {
		ix_unlink(seg, o, &r);
		if (seg->leaving)
			free_region = false; /* goes with its allocator */
		else if (free_region && r.grant_until_ms > now_ms &&
			 quarantine(s, o, &r, r.grant_until_ms))
			free_region = false; /* a WRITE grant still runs */
		if (free_region)
			seg_alloc_free(seg->alloc, r.offset);
	}
	store__journal_drop(s, o, &r);
	memmove(&o->replicas[i], &o->replicas[i + 1],
		(o->n_replicas - i - 1) * sizeof(r));
	o->n_replicas--;
	dyn_on_replica_dropped(s, o, &r, seg, now_ms);
}

void store_drop_replica(struct store *s, struct object *o, size_t i,
			uint64_t now_ms)
{
	drop_replica(s, o, i, now_ms, true);
}

void store__free_replicas(struct store *s, struct object *o, uint64_t now_ms)
{
	while (o->n_replicas > 0)
		store_drop_replica(s, o, o->n_replicas - 1, now_ms);
}

void store_drop_replica_quarantined(struct store *s, struct object *o, size_t i,
				    uint64_t now_ms)
{
	uint64_t until = now_ms + s->opts.cfg.lease_ttl_ms;

	if (o->replicas[i].grant_until_ms > until)
		until = o->replicas[i].grant_until_ms;
	if (!quarantine(s, o, &o->replicas[i], until)) {
		store_drop_replica(s, o, i, now_ms); /* no memory: free now */
		return;
	}
	drop_replica(s, o, i, now_ms, false);
}

void store__quarantine_free(struct store *s, size_t i)
{
	/* segment ids are never reused: a gone segment took it along */
	struct segment *seg = store_segment(s, s->quar[i].segment_id);

	if (seg)
		seg_alloc_free(seg->alloc, s->quar[i].offset);
	s->quar_bytes -= s->quar[i].bytes;
	s->quar[i] = s->quar[--s->n_quar];
}

void store__release_quarantine(struct store *s, uint64_t now_ms)
{
	for (size_t i = s->n_quar; i-- > 0;)
		if (s->quar[i].free_at_ms <= now_ms)
			store__quarantine_free(s, i);
}

static bool readable(const struct object *o)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].status == REPLICA_COMPLETE)
			return true;
	return false;
}

size_t store__drain_segment(struct store *s, struct segment *seg, size_t max,
			    uint64_t now_ms, uint64_t *lost_replicas,
			    uint64_t *lost_objects)
{
	size_t done = 0;

	while (seg->n_ix > 0 && done < max) {
		struct object *o = seg->ix[seg->n_ix - 1];
		size_t i = store__replica_at_slot(o, seg->id, seg->n_ix - 1);
		bool was_readable = o->replicas[i].status == REPLICA_COMPLETE;
		bool gone;

		drop_replica(s, o, i, now_ms, false);
		gone = was_readable && !readable(o);
		if (was_readable && (gone || !seg->draining))
			(*lost_replicas)++;
		*lost_objects += gone;
		if (o->n_replicas == 0 && o->copies == 0)
			store_delete_object(s, o);
		done++;
	}
	return done;
}

/* ---- the indexes' auditor (tests, fuzzing) ---------------------------- */

/* Every entry names its replica; n_dyn_ix counts the dynamic ones. */
static bool segment_index_ok(const struct segment *seg)
{
	size_t dyn = 0;

	for (size_t k = 0; k < seg->n_ix; k++) {
		size_t i = store__replica_at_slot(seg->ix[k], seg->id, k);

		if (i == SIZE_MAX)
			return false;
		dyn += seg->ix[k]->replicas[i].dynamic;
	}
	return dyn == seg->n_dyn_ix;
}

bool store_indexes_consistent(struct store *s)
{
	size_t indexed = 0, replicas = 0;

	for (size_t i = 0; i < s->n_segs; i++) {
		if (s->segs[i]->leaving || !segment_index_ok(s->segs[i]))
			return false;
		indexed += s->segs[i]->n_ix;
	}
	for (size_t i = 0; i < s->n_leaving; i++) {
		if (!s->leaving[i]->leaving || !segment_index_ok(s->leaving[i]))
			return false;
		indexed += s->leaving[i]->n_ix;
	}
	for (const struct object *o = s->lru_head; o; o = o->lru_next) {
		for (size_t i = 0; i < o->n_replicas; i++) {
			const struct segment *seg =
			    store__segment_any(s, o->replicas[i].segment_id);

			if (!seg || o->replicas[i].ix_slot >= seg->n_ix ||
			    seg->ix[o->replicas[i].ix_slot] != o)
				return false;
		}
		replicas += o->n_replicas;
	}
	return indexed == replicas;
}

/* ---- Remove ---------------------------------------------------------------- */

McreplRpc__Code store_remove(struct store *s, const char *tenant,
			     const char *key, uint64_t now_ms, char *err,
			     size_t errlen)
{
	struct object *o = store__lookup(s, tenant, key);
	McreplRpc__Code code;

	if (!o || !o->complete)
		return MCREPL_RPC__CODE__NOT_FOUND;
	if (o->lease_until_ms > now_ms || o->copies > 0) {
		snprintf(err, errlen, "%s",
			 o->copies ? "a copy of it is running"
				   : "under read lease");
		return MCREPL_RPC__CODE__BUSY;
	}
	code = dyn_on_remove(s, tenant, key, err, errlen);
	if (code != MCREPL_RPC__CODE__OK)
		return code;
	store__removed_note(s, o);
	store__orphans_removed(s, o);
	store__free_replicas(s, o, now_ms);
	store_delete_object(s, o);
	s->ctr.removes++;
	return MCREPL_RPC__CODE__OK;
}
