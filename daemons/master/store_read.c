/* The read path: GetReplicaList / BatchGetReplicaList keys (store_get) and
 * heat-free Stat lookups. A read orders the readable replicas, extends the
 * read lease, refreshes the LRU order and hands the read to dynamic
 * replication once (dyn_on_read); nothing calls back into it. */
#include <stdio.h>
#include <string.h>

#include "store_priv.h"

bool store_key_valid(const char *tenant, const char *key, char *err,
		     size_t errlen)
{
	if (store__key_ok(tenant, key))
		return true;
	snprintf(err, errlen,
		 "a read needs a key (1..%d bytes) and a tenant of at most %d "
		 "bytes",
		 MCREPL_KEY_MAX, MCREPL_TENANT_MAX);
	return false;
}

void store_read_begin(struct store *s)
{
	s->ctr.gets++;
}

/* The complete object's COMPLETE replicas (indexes into o->replicas, in
 * metadata order); NULL when there is none to read. The name is valid. */
static struct object *readable(struct store *s, const char *tenant,
			       const char *key, size_t *idx, size_t *n)
{
	struct object *o = store_find(s, tenant, key);

	*n = 0;
	if (!o || !o->complete)
		return NULL;
	for (size_t i = 0; i < o->n_replicas; i++)
		if (store__serving(s, &o->replicas[i]))
			idx[(*n)++] = i;
	/* n == 0: every copy went with its worker: not found, cleanly */
	return *n ? o : NULL;
}

McreplRpc__Code store_stat(struct store *s, const char *tenant, const char *key,
			   struct object **out, size_t *order, size_t cap,
			   size_t *n_out, char *err, size_t errlen)
{
	size_t idx[MASTER_MAX_REPLICAS], n;
	struct object *o;

	s->ctr.stat_requests++;
	*n_out = 0;
	if (!store_key_valid(tenant, key, err, errlen))
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	o = readable(s, tenant, key, idx, &n);
	if (!o)
		return MCREPL_RPC__CODE__NOT_FOUND;
	*n_out = n < cap ? n : cap;
	memcpy(order, idx, *n_out * sizeof(*order));
	*out = o;
	return MCREPL_RPC__CODE__OK;
}

/* A worker is late when it has not polled (FetchTasks, every 20 ms by
 * default) nor sent a heartbeat for this long: stopped, swapped out or
 * cut off. Its replicas are still offered, after the timely ones. */
#define READ_LATE_MS 200

/* The replica's worker has been silent past READ_LATE_MS at now_ms. */
static bool replica_late(struct store *s, const struct replica *r,
			 uint64_t now_ms)
{
	const struct segment *seg = store__segment_any(s, r->segment_id);
	const struct client *c =
	    seg ? store__find_client(s, seg->client_id) : NULL;

	return c && now_ms > c->last_seen_ms &&
	       now_ms - c->last_seen_ms > READ_LATE_MS;
}

/* Moves the replicas of late workers to the end of perm[0, n), keeping
 * the order within the timely and within the late ones. */
static void late_last(struct store *s, const struct object *o,
		      const size_t *idx, size_t n, size_t *perm,
		      uint64_t now_ms)
{
	size_t late[MASTER_MAX_REPLICAS], n_late = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		if (replica_late(s, &o->replicas[idx[perm[i]]], now_ms))
			late[n_late++] = perm[i];
		else
			perm[k++] = perm[i];
	}
	memcpy(perm + k, late, n_late * sizeof(*perm));
}

/* Reader order of the n readable replicas idx[] of o into perm[]
 * (mcrepl_engine_order(): salted, so equal replicas share a key's reads;
 * auto or read-load order: the replica whose node was given the fewest
 * reads this second goes first), then those of late workers moved last,
 * and the read counted on the first: the master counts what it routes,
 * readers take the first replica unless one is local. */
static void reader_order(struct store *s, struct object *o, const size_t *idx,
			 size_t n, size_t *perm, uint64_t now_ms)
{
	mcrepl_replica_view v[MASTER_MAX_REPLICAS];

	for (size_t i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].segment.v = o->replicas[idx[i]].segment_id;
		v[i].readable = v[i].memory = true;
	}
	mcrepl_engine_order(s->engine, o->tenant, o->key, v, n, o->reads++,
			    perm);
	if (n > 1)
		late_last(s, o, idx, n, perm, now_ms);
	mcrepl_engine_read(s->engine, v[perm[0]].segment);
}

McreplRpc__Code store_get(struct store *s, const char *tenant, const char *key,
			  const char *domain, uint64_t now_ms,
			  struct object **out, size_t *order, size_t cap,
			  size_t *n_out)
{
	size_t idx[MASTER_MAX_REPLICAS], n, perm[MASTER_MAX_REPLICAS];
	struct object *o;

	s->ctr.get_keys++;
	if (!store__key_ok(tenant, key))
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	o = readable(s, tenant, key, idx, &n);
	if (!o)
		return MCREPL_RPC__CODE__NOT_FOUND;
	reader_order(s, o, idx, n, perm, now_ms);
	*n_out = n < cap ? n : cap;
	for (size_t i = 0; i < *n_out; i++)
		order[i] = idx[perm[i]];
	o->lease_until_ms = now_ms + s->opts.kv_lease_ttl_ms;
	o->last_read_ms = now_ms;
	store__lru_touch(s, o);
	dyn_on_read(s, o, domain, now_ms);
	*out = o;
	return MCREPL_RPC__CODE__OK;
}
