/* Objects and their replicas: the index by tenant + key, the LRU order,
 * replica regions (freed now or quarantined), and Remove. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "grant.h"
#include "hash.h"
#include "str.h"
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
	struct object *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->tenant = mcu_strdup(tenant);
	o->key = mcu_strdup(key);
	o->cap_replicas = n + 2;
	o->replicas = calloc(o->cap_replicas, sizeof(*o->replicas));
	if (!o->tenant || !o->key || !o->replicas) {
		store__free_object(o);
		return NULL;
	}
	o->size = size;
	return o;
}

void store__free_object(struct object *o)
{
	free(o->dheat);
	free(o->tenant);
	free(o->key);
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
	store__resv_untrack(s, o);
	store__lru_unlink(s, o);
	mcu_map_remove(&s->objects, &o->node);
	store__free_object(o);
}

/* ---- replicas ------------------------------------------------------------ */

uint64_t store_grant(const struct store *s, const struct replica *r)
{
	return grant_token(s->grant_key, r->segment_id, r->offset,
			   store_region_bytes(r->size));
}

bool store_reserve_replica(struct object *o)
{
	struct replica *r;
	size_t ncap;

	if (o->n_replicas < o->cap_replicas)
		return true;
	if (o->cap_replicas >= MASTER_MAX_REPLICAS)
		return false;
	ncap = 2 * o->cap_replicas;
	r = realloc(o->replicas, ncap * sizeof(*r));
	if (!r)
		return false;
	o->replicas = r;
	o->cap_replicas = ncap;
	return true;
}

bool store__on_segment(const struct object *o, uint64_t seg_id)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id)
			return true;
	return false;
}

static void drop_replica(struct store *s, struct object *o, size_t i,
			 uint64_t now_ms, bool free_region)
{
	struct replica r = o->replicas[i];
	struct segment *seg = store_segment(s, r.segment_id);

	if (seg && free_region)
		seg_alloc_free(seg->alloc, r.offset);
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
	struct quarantine q = {
	    .segment_id = o->replicas[i].segment_id,
	    .offset = o->replicas[i].offset,
	    .free_at_ms = now_ms + s->opts.cfg.lease_ttl_ms,
	};

	if (!store__grow(&s->quar, s->n_quar, &s->cap_quar, sizeof(q))) {
		store_drop_replica(s, o, i, now_ms); /* no memory: free now */
		return;
	}
	s->quar[s->n_quar++] = q;
	drop_replica(s, o, i, now_ms, false);
}

void store__release_quarantine(struct store *s, uint64_t now_ms)
{
	for (size_t i = s->n_quar; i-- > 0;) {
		struct segment *seg;

		if (s->quar[i].free_at_ms > now_ms)
			continue;
		/* segment ids are never reused: a gone segment took it along */
		seg = store_segment(s, s->quar[i].segment_id);
		if (seg)
			seg_alloc_free(seg->alloc, s->quar[i].offset);
		s->quar[i] = s->quar[--s->n_quar];
	}
}

static bool readable(const struct object *o)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].status == REPLICA_COMPLETE)
			return true;
	return false;
}

void store__drop_segment_replicas(struct store *s, const struct segment *seg,
				  uint64_t now_ms, uint64_t *lost_replicas,
				  uint64_t *lost_objects)
{
	struct object *o = s->lru_head;

	while (o) {
		struct object *next = o->lru_next;
		uint32_t lost = 0;

		for (size_t i = o->n_replicas; i-- > 0;) {
			if (o->replicas[i].segment_id != seg->id)
				continue;
			lost += o->replicas[i].status == REPLICA_COMPLETE;
			store_drop_replica(s, o, i, now_ms);
		}
		if (lost) {
			*lost_replicas += lost;
			*lost_objects += !readable(o);
		}
		if (o->n_replicas == 0 && o->copies == 0)
			store_delete_object(s, o);
		o = next;
	}
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
	store__free_replicas(s, o, now_ms);
	store_delete_object(s, o);
	s->ctr.removes++;
	return MCREPL_RPC__CODE__OK;
}
