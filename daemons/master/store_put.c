/* Puts: PutStart places the replicas (other hosts first, then the least
 * used segment, evicting when nothing has room), PutEnd makes them
 * readable, PutRevoke forgets them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "store_priv.h"

bool store__host_used(struct store *s, const struct object *o, const char *host)
{
	for (size_t i = 0; i < o->n_replicas; i++) {
		struct segment *seg =
		    store_segment(s, o->replicas[i].segment_id);

		if (seg && strcmp(seg->host, host) == 0)
			return true;
	}
	return false;
}

/* Best segment for one more put replica of o: not holding one, other hosts
 * first, then lowest utilization after the write; NULL if none has room. */
static struct segment *put_target(struct store *s, const struct object *o)
{
	struct segment *best = NULL;
	bool best_new_host = false;
	double best_util = 2.0;

	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];
		bool new_host = !store__host_used(s, o, seg->host);
		double util;

		if (store__on_segment(o, seg->id) || !store__placeable(seg) ||
		    seg_alloc_largest_free(seg->alloc) <
			store_region_bytes(o->size))
			continue;
		util = (double)(store_used(seg) + store_region_bytes(o->size)) /
		       (double)seg->capacity;
		if (!best || (new_host && !best_new_host) ||
		    (new_host == best_new_host && util < best_util)) {
			best = seg;
			best_new_host = new_host;
			best_util = util;
		}
	}
	return best;
}

/* Evict on the first segment that could ever hold size, within one
 * budget of index entries for the put, taking another tenant's objects
 * only above its fair share (store_quota.c); true if freed. */
static bool evict_for(struct store *s, const struct object *o, uint64_t now_ms)
{
	size_t visits = STORE_EVICT_VISITS;
	bool freed = false;

	store__quota_evict_for(s, true, o->tenant);
	for (size_t i = 0; i < s->n_segs && visits > 0 && !freed; i++) {
		struct segment *seg = s->segs[i];

		freed = !store__on_segment(o, seg->id) &&
			store__placeable(seg) &&
			seg->capacity >= store_region_bytes(o->size) &&
			store__evict_budgeted(s, seg, &visits, now_ms) > 0 &&
			seg_alloc_largest_free(seg->alloc) >=
			    store_region_bytes(o->size);
	}
	store__quota_evict_for(s, false, NULL);
	return freed;
}

static bool add_put_replica(struct store *s, struct object *o, uint64_t now_ms)
{
	struct segment *seg = put_target(s, o);

	if (!seg && evict_for(s, o, now_ms))
		seg = put_target(s, o);
	return seg &&
	       store__place_replica(s, o, seg, REPLICA_PROCESSING, false);
}

/* NO_SPACE for a put of size: reason fair_share when eviction passed
 * over objects of tenants at or below their share. */
static McreplRpc__Code no_space(struct store *s, uint64_t size, char *err,
				size_t errlen)
{
	int n = snprintf(err, errlen, "no segment has %llu free bytes",
			 (unsigned long long)size);

	if (s->q.share_skips) {
		s->q.refused.fair_share++;
		if (s->q.why)
			*s->q.why = "fair_share";
		if (n > 0 && (size_t)n < errlen)
			snprintf(err + n, errlen - (size_t)n,
				 " (the rest is other tenants' within their "
				 "fair share of %llu bytes)",
				 (unsigned long long)s->q.share);
	}
	return MCREPL_RPC__CODE__NO_SPACE;
}

/* A new object with n placed replicas, or NO_SPACE / INTERNAL. One of the
 * three places a region is reserved (put here, ordinary copy: reserve_copy,
 * dynamic copy: reserve_target). */
static McreplRpc__Code place_object(struct store *s, const char *tenant,
				    const char *key, uint64_t size, uint32_t n,
				    uint64_t now_ms, struct object **out,
				    char *err, size_t errlen)
{
	struct object *o = store__new_object(tenant, key, size, n);

	if (!o)
		return MCREPL_RPC__CODE__INTERNAL;
	s->q.share_skips = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!add_put_replica(s, o, now_ms)) {
			store__free_replicas(s, o, now_ms);
			store__free_object(o);
			return no_space(s, size, err, errlen);
		}
	}
	*out = o;
	return MCREPL_RPC__CODE__OK;
}

/* A put's WRITE grants end when another may take its regions: at its
 * deadline (put_release_ms), or earlier when a new PutStart of the key
 * may discard it (put_discard_ms). */
static uint64_t put_grant_expiry(const struct store *s, uint64_t now_ms)
{
	uint64_t ttl = s->opts.put_release_ms;

	if (s->opts.put_discard_ms && s->opts.put_discard_ms < ttl)
		ttl = s->opts.put_discard_ms;
	return now_ms + ttl;
}

/* True when size may name an object (1..STORE_MAX_OBJECT_BYTES);
 * otherwise false, the reason in err. */
static bool store_size_valid(uint64_t size, char *err, size_t errlen)
{
	if (size <= STORE_MAX_OBJECT_BYTES)
		return true;
	snprintf(err, errlen,
		 "size %llu is above the largest object, %llu bytes (its "
		 "region adds a %u-byte stamp)",
		 (unsigned long long)size,
		 (unsigned long long)STORE_MAX_OBJECT_BYTES, STAMP_BYTES);
	return false;
}

static McreplRpc__Code put_start(struct store *s, const char *tenant,
				 const char *key, uint64_t size, uint32_t n,
				 uint64_t now_ms, struct object **out,
				 char *err, size_t errlen);

McreplRpc__Code store_put_start(struct store *s, const char *tenant,
				const char *key, uint64_t size, uint32_t n,
				uint64_t now_ms, struct object **out, char *err,
				size_t errlen)
{
	McreplRpc__Code code =
	    put_start(s, tenant, key, size, n, now_ms, out, err, errlen);

	store_put_caller(s, NULL, NULL, NULL); /* for this put only */
	return code;
}

static McreplRpc__Code put_start(struct store *s, const char *tenant,
				 const char *key, uint64_t size, uint32_t n,
				 uint64_t now_ms, struct object **out,
				 char *err, size_t errlen)
{
	struct object *o;
	McreplRpc__Code code;

	if (!store__key_ok(tenant, key) || size == 0 || n > 16) {
		snprintf(err, errlen,
			 "put needs a key (1..%d bytes), a size > 0 "
			 "and replica_num <= 16",
			 MCREPL_KEY_MAX);
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	if (!store_size_valid(size, err, errlen))
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	o = store_find(s, tenant, key);
	if (o && (o->complete || o->copies ||
		  now_ms - o->last_read_ms < s->opts.put_discard_ms))
		return MCREPL_RPC__CODE__ALREADY_EXISTS;
	if (o) { /* an abandoned put: its writer never ended it */
		store__free_replicas(s, o, now_ms);
		store_delete_object(s, o);
	}
	n = n ? n : 1;
	code = store__quota_check(s, tenant, size * n, err, errlen);
	if (code == MCREPL_RPC__CODE__OK)
		code = place_object(s, tenant, key, size, n, now_ms, &o, err,
				    errlen);
	if (code != MCREPL_RPC__CODE__OK)
		return code;
	store__quota_charge(s, o);
	o->version = s->next_version++;
	o->last_read_ms = now_ms;
	o->put_deadline_ms = now_ms + s->opts.put_release_ms;
	for (size_t i = 0; i < o->n_replicas; i++)
		o->replicas[i].grant_until_ms = put_grant_expiry(s, now_ms);
	store__insert_object(s, o);
	s->ctr.puts++;
	*out = o;
	return MCREPL_RPC__CODE__OK;
}

static struct object *find_version(struct store *s, const char *tenant,
				   const char *key, uint64_t version,
				   McreplRpc__Code *code)
{
	struct object *o = store__lookup(s, tenant, key);

	*code = MCREPL_RPC__CODE__OK;
	if (!o && s->term && version >> 32 != (s->term & 0xffffffffULL))
		*code = MCREPL_RPC__CODE__STALE; /* an older term's put */
	else if (!o)
		*code = MCREPL_RPC__CODE__NOT_FOUND;
	else if (o->version != version)
		*code = MCREPL_RPC__CODE__STALE;
	else if (o->complete)
		*code = MCREPL_RPC__CODE__ALREADY_EXISTS;
	return *code == MCREPL_RPC__CODE__OK ? o : NULL;
}

McreplRpc__Code store_put_end(struct store *s, const char *tenant,
			      const char *key, uint64_t version)
{
	McreplRpc__Code code;
	struct object *o = find_version(s, tenant, key, version, &code);

	if (!o)
		return code;
	for (size_t i = 0; i < o->n_replicas; i++) {
		o->replicas[i].status = REPLICA_COMPLETE;
		store__journal_commit(s, o, &o->replicas[i]);
	}
	o->complete = true;
	store__quota_written(s, o);
	if (!o->copy_target) /* nothing left to reclaim */
		store__resv_untrack(s, o);
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code store_put_revoke(struct store *s, const char *tenant,
				 const char *key, uint64_t version)
{
	McreplRpc__Code code;
	struct object *o = find_version(s, tenant, key, version, &code);

	if (!o)
		return code;
	store__free_replicas(s, o, 0);
	store_delete_object(s, o);
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code store_put_digest(struct store *s, const char *tenant,
				 const char *key, uint64_t version,
				 const uint8_t *digest, size_t len,
				 bool required, char *err, size_t errlen)
{
	McreplRpc__Code code;
	struct object *o;

	if (len != 0 && len != STORE_DIGEST_BYTES) {
		snprintf(err, errlen, "digest of %zu bytes (SHA-256: %d)", len,
			 STORE_DIGEST_BYTES);
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	o = find_version(s, tenant, key, version, &code);
	if (!o)
		return code; /* store_put_end answers it alike */
	if (len == 0 && required) {
		s->ctr.put_digest_refused++;
		snprintf(err, errlen,
			 "tenant '%.64s' requires a payload digest with PutEnd "
			 "(integrity=on)",
			 tenant);
		return MCREPL_RPC__CODE__REJECTED;
	}
	if (len == 0)
		return MCREPL_RPC__CODE__OK;
	if (!o->digest && !(o->digest = malloc(STORE_DIGEST_BYTES))) {
		snprintf(err, errlen, "out of memory");
		return MCREPL_RPC__CODE__INTERNAL;
	}
	memcpy(o->digest, digest, STORE_DIGEST_BYTES);
	s->ctr.put_digests++;
	return MCREPL_RPC__CODE__OK;
}
