/* mcrepl-master state: segments, clients, objects, replicas, tasks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "grant.h"
#include "hash.h"
#include "str.h"
#include "store.h"

void master_opts_init(struct master_opts *o)
{
	memset(o, 0, sizeof(*o));
	mcrepl_config_init(&o->cfg);
	o->client_ttl_ms = 10000;
	o->kv_lease_ttl_ms = 10000;
	o->eviction_ratio = 0.05;
	o->eviction_high_watermark = 0.90;
	o->max_batch_keys = 4096;
	o->warmup_max_copies = 64;
	o->warmup_max_bytes = 1ULL << 30;
}

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

static bool id_eq_task(const struct mcu_map_node *n, const void *k)
{
	return ((const struct task *)(const void *)n)->msg.task_id ==
	       *(const uint64_t *)k;
}

int store_create(const struct master_opts *o, uint64_t grant_key,
		 struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->opts = *o;
	s->grant_key = grant_key;
	s->next_segment_id = s->next_version = s->next_task_id = 1;
	pthread_mutex_init(&s->lock, NULL);
	mcrepl_heat_params_init(&s->heat, &o->cfg);
	if (mcu_map_init(&s->objects, 1024) ||
	    mcu_map_init(&s->tasks, 256) ||
	    mcrepl_triggers_create(o->cfg.admission_queue_limit,
				   &s->triggers) ||
	    mcrepl_leases_create(&o->cfg, &s->leases) ||
	    mcrepl_stats_create(&s->stats)) {
		store_destroy(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

static void free_object(struct object *o)
{
	free(o->dheat);
	free(o->tenant);
	free(o->key);
	free(o->replicas);
	free(o);
}

static void free_task(struct task *t)
{
	free(t->msg.tenant);
	free(t->msg.key);
	free(t);
}

static void drain_object(struct mcu_map_node *n, void *ctx)
{
	(void)ctx;
	free_object((struct object *)(void *)n);
}

static void drain_task(struct mcu_map_node *n, void *ctx)
{
	(void)ctx;
	free_task((struct task *)(void *)n);
}

static void free_segment(struct segment *seg)
{
	seg_alloc_destroy(seg->alloc);
	free(seg->name);
	free(seg->host);
	free(seg->domain);
	free(seg->endpoint);
	free(seg);
}

void store_destroy(struct store *s)
{
	if (!s)
		return;
	if (s->objects.tab[0])
		mcu_map_drain(&s->objects, drain_object, NULL);
	if (s->tasks.tab[0])
		mcu_map_drain(&s->tasks, drain_task, NULL);
	mcu_map_fini(&s->objects);
	mcu_map_fini(&s->tasks);
	for (size_t i = 0; i < s->n_clients; i++)
		free(s->clients[i]);
	free(s->clients);
	for (size_t i = 0; i < s->n_segs; i++)
		free_segment(s->segs[i]);
	free(s->segs);
	free(s->quar);
	mcrepl_triggers_destroy(s->triggers);
	mcrepl_leases_destroy(s->leases);
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

/* ---- clients ---------------------------------------------------------- */

static struct client *find_client(struct store *s, uint64_t id)
{
	for (size_t i = 0; i < s->n_clients; i++)
		if (s->clients[i]->id == id)
			return s->clients[i];
	return NULL;
}

/* Grow the array at *arr (any T *, elements of `size` bytes) by doubling;
 * false when out of memory. memcpy keeps the pointer access
 * aliasing-safe. */
static bool grow_array(void *arr, size_t n, size_t *cap, size_t size)
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

static bool grow(void *arr, size_t n, size_t *cap)
{
	return grow_array(arr, n, cap, sizeof(void *));
}

static struct client *get_client(struct store *s, uint64_t id, uint64_t now)
{
	struct client *c = find_client(s, id);

	if (c)
		return c;
	if (!grow(&s->clients, s->n_clients, &s->cap_clients))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->id = id;
	c->last_seen_ms = now;
	s->clients[s->n_clients++] = c;
	return c;
}

struct segment *store_segment(struct store *s, uint64_t id)
{
	for (size_t i = 0; i < s->n_segs; i++)
		if (s->segs[i]->id == id)
			return s->segs[i];
	return NULL;
}

uint64_t store_used(const struct segment *seg)
{
	return seg_alloc_used(seg->alloc);
}

static struct segment *find_segment_by_name(struct store *s, const char *name)
{
	for (size_t i = 0; i < s->n_segs; i++)
		if (strcmp(s->segs[i]->name, name) == 0)
			return s->segs[i];
	return NULL;
}

static struct segment *new_segment(const struct mount_args *a)
{
	struct segment *seg = calloc(1, sizeof(*seg));

	if (!seg)
		return NULL;
	seg->name = mcu_strdup(a->name);
	seg->host = mcu_strdup(a->host);
	seg->domain = mcu_strdup(mcrepl_domain_name(a->domain));
	seg->endpoint = mcu_strdup(a->endpoint);
	if (!seg->name || !seg->host || !seg->domain || !seg->endpoint ||
	    seg_alloc_create(a->capacity, 0, &seg->alloc) != 0) {
		free_segment(seg);
		return NULL;
	}
	seg->client_id = a->client_id;
	seg->capacity = a->capacity;
	seg->dynamic_copy = a->dynamic_copy;
	seg->base_addr = a->base_addr;
	seg->rkey = a->rkey;
	snprintf(seg->rdma_endpoint, sizeof(seg->rdma_endpoint), "%s",
		 a->rdma_endpoint ? a->rdma_endpoint : "");
	return seg;
}

static bool valid_text(const char *t, size_t max)
{
	return t && t[0] && strlen(t) <= max;
}

McreplRpc__Code store_mount(struct store *s, const struct mount_args *a,
			 uint64_t now_ms, uint64_t *segment_id, char *err,
			 size_t errlen)
{
	struct segment *seg;
	struct client *c;

	if (a->client_id == 0 || a->capacity == 0 ||
	    !valid_text(a->name, 255) || !valid_text(a->endpoint, 255) ||
	    !valid_text(a->host, 255) || !mcrepl_domain_is_valid(a->domain) ||
	    (a->rdma_endpoint && strlen(a->rdma_endpoint) > 255)) {
		snprintf(err, errlen,
			 "mount needs a client id, a name, a host, "
			 "an endpoint, a valid domain and a "
			 "capacity");
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	if (a->capacity < SEG_ALLOC_DEFAULT_ALIGN) {
		snprintf(err, errlen,
			 "segment capacity %llu is below the %u-byte "
			 "allocation unit",
			 (unsigned long long)a->capacity,
			 SEG_ALLOC_DEFAULT_ALIGN);
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	seg = find_segment_by_name(s, a->name);
	if (seg && seg->client_id != a->client_id) {
		snprintf(err, errlen,
			 "segment name %s is mounted by another "
			 "client",
			 a->name);
		return MCREPL_RPC__CODE__ALREADY_EXISTS;
	}
	c = get_client(s, a->client_id, now_ms);
	if (!c)
		return MCREPL_RPC__CODE__INTERNAL;
	c->last_seen_ms = now_ms;
	if (seg) { /* idempotent re-mount */
		*segment_id = seg->id;
		return MCREPL_RPC__CODE__OK;
	}
	if (!grow(&s->segs, s->n_segs, &s->cap_segs))
		return MCREPL_RPC__CODE__INTERNAL;
	seg = new_segment(a);
	if (!seg)
		return MCREPL_RPC__CODE__INTERNAL;
	seg->id = s->next_segment_id++;
	s->segs[s->n_segs++] = seg;
	*segment_id = seg->id;
	return MCREPL_RPC__CODE__OK;
}

/* Drop every replica on seg; objects left without replicas go. */
static void drop_segment_replicas(struct store *s, struct segment *seg,
				  uint64_t now_ms);

static void remove_segment_at(struct store *s, size_t i, uint64_t now_ms)
{
	struct segment *seg = s->segs[i];

	drop_segment_replicas(s, seg, now_ms);
	s->segs[i] = s->segs[--s->n_segs];
	free_segment(seg);
}

McreplRpc__Code store_unmount(struct store *s, uint64_t client_id,
			   uint64_t segment_id, uint64_t now_ms)
{
	for (size_t i = 0; i < s->n_segs; i++) {
		if (s->segs[i]->id != segment_id)
			continue;
		if (s->segs[i]->client_id != client_id)
			return MCREPL_RPC__CODE__PERMISSION_DENIED;
		remove_segment_at(s, i, now_ms);
		return MCREPL_RPC__CODE__OK;
	}
	return MCREPL_RPC__CODE__NOT_FOUND;
}

McreplRpc__Code store_heartbeat(struct store *s, uint64_t client_id,
			     const uint64_t *seg_ids, const uint64_t *reads,
			     size_t n, uint64_t now_ms)
{
	struct client *c = find_client(s, client_id);

	if (!c)
		return MCREPL_RPC__CODE__UNKNOWN_CLIENT;
	c->last_seen_ms = now_ms;
	for (size_t i = 0; i < n; i++) {
		struct segment *seg = store_segment(s, seg_ids[i]);

		if (!seg || seg->client_id != client_id)
			continue;
		/* the first report after a mount is the baseline */
		seg->reads_recent = !seg->reads_seen ? 0
				    : reads[i] >= seg->reads_total
					? reads[i] - seg->reads_total
					: reads[i];
		seg->reads_seen = true;
		seg->reads_total = reads[i];
	}
	return MCREPL_RPC__CODE__OK;
}

static void fail_client_tasks(struct store *s, struct client *c);

size_t store_expire_clients(struct store *s, uint64_t now_ms)
{
	size_t gone = 0;

	for (size_t i = s->n_clients; i-- > 0;) {
		struct client *c = s->clients[i];

		if (now_ms - c->last_seen_ms <= s->opts.client_ttl_ms)
			continue;
		for (size_t j = s->n_segs; j-- > 0;)
			if (s->segs[j]->client_id == c->id)
				remove_segment_at(s, j, now_ms);
		fail_client_tasks(s, c);
		s->clients[i] = s->clients[--s->n_clients];
		free(c);
		gone++;
	}
	return gone;
}

/* ---- tasks -------------------------------------------------------------- */

struct task *store_task(struct store *s, uint64_t id)
{
	return (struct task *)(void *)mcu_map_find(
	    &s->tasks, mcu_mix64(id), id_eq_task, &id);
}

struct task *store_add_task(struct store *s, uint64_t client_id,
			    const McreplRpc__Task *msg, uint64_t now_ms,
			    uint64_t lease_expires_at_ms)
{
	struct client *c = find_client(s, client_id);
	struct task *t;

	(void)now_ms;
	if (!c)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->msg = *msg;
	t->msg.tenant = mcu_strdup(msg->tenant);
	t->msg.key = mcu_strdup(msg->key);
	if (!t->msg.tenant || !t->msg.key) {
		free_task(t);
		return NULL;
	}
	t->msg.task_id = s->next_task_id++;
	t->client_id = client_id;
	t->lease_expires_at_ms = lease_expires_at_ms;
	t->prev = c->tail;
	if (c->tail)
		c->tail->next = t;
	else
		c->head = t;
	c->tail = t;
	c->n_tasks++;
	mcu_map_insert(&s->tasks, &t->node, mcu_mix64(t->msg.task_id));
	return t;
}

size_t store_fetch_tasks(struct store *s, uint64_t client_id, struct task **out,
			 size_t max, uint64_t now_ms)
{
	struct client *c = find_client(s, client_id);
	size_t n = 0;

	if (!c)
		return 0;
	c->last_seen_ms = now_ms;
	for (struct task *t = c->head; t && n < max; t = t->next) {
		if (t->fetched)
			continue;
		t->fetched = true;
		t->msg.lease_ttl_ms = t->lease_expires_at_ms > now_ms
					  ? t->lease_expires_at_ms - now_ms
					  : 0;
		out[n++] = t;
	}
	return n;
}

void store_finish_task(struct store *s, struct task *t)
{
	struct client *c = find_client(s, t->client_id);

	if (c) {
		if (t->prev)
			t->prev->next = t->next;
		else
			c->head = t->next;
		if (t->next)
			t->next->prev = t->prev;
		else
			c->tail = t->prev;
		c->n_tasks--;
	}
	mcu_map_remove(&s->tasks, &t->node);
	free_task(t);
}

static void fail_client_tasks(struct store *s, struct client *c)
{
	while (c->head) {
		if (c->head->msg.dynamic)
			mcrepl_stats_add(s->stats, MCREPL_STAT_TASKS_FAILED, 1);
		store_finish_task(s, c->head);
	}
}

/* ---- objects ------------------------------------------------------------ */

struct object *store_find(struct store *s, const char *tenant, const char *key)
{
	struct obj_key k = {tenant, key};

	return (struct object *)(void *)mcu_map_find(
	    &s->objects, obj_hash(tenant, key), obj_eq, &k);
}

static void lru_unlink(struct store *s, struct object *o)
{
	if (o->lru_prev)
		o->lru_prev->lru_next = o->lru_next;
	else
		s->lru_head = o->lru_next;
	if (o->lru_next)
		o->lru_next->lru_prev = o->lru_prev;
	else
		s->lru_tail = o->lru_prev;
	o->lru_prev = o->lru_next = NULL;
}

static void lru_append(struct store *s, struct object *o)
{
	o->lru_prev = s->lru_tail;
	o->lru_next = NULL;
	if (s->lru_tail)
		s->lru_tail->lru_next = o;
	else
		s->lru_head = o;
	s->lru_tail = o;
}

uint64_t store_grant(const struct store *s, const struct replica *r)
{
	return grant_token(s->grant_key, r->segment_id, r->offset, r->size);
}

void store_delete_object(struct store *s, struct object *o)
{
	lru_unlink(s, o);
	mcu_map_remove(&s->objects, &o->node);
	free_object(o);
}

static void drop_replica(struct store *s, struct object *o, size_t i,
			 uint64_t now_ms, bool free_region)
{
	struct replica r = o->replicas[i];
	struct segment *seg = store_segment(s, r.segment_id);

	if (seg && free_region)
		seg_alloc_free(seg->alloc, r.offset);
	memmove(&o->replicas[i], &o->replicas[i + 1],
		(o->n_replicas - i - 1) * sizeof(r));
	o->n_replicas--;
	if (!r.dynamic || r.status != REPLICA_COMPLETE)
		return;
	mcrepl_stats_add(s->stats, MCREPL_STAT_REPLICAS, -1);
	s->dyn_replica_bytes -= r.size;
	mcrepl_leases_replica_removed(s->leases, o->tenant, o->key,
				      seg ? seg->domain : NULL, now_ms);
}

void store_drop_replica(struct store *s, struct object *o, size_t i,
			uint64_t now_ms)
{
	drop_replica(s, o, i, now_ms, true);
}

void store_drop_replica_quarantined(struct store *s, struct object *o, size_t i,
				    uint64_t now_ms)
{
	struct quarantine q = {o->replicas[i].segment_id, o->replicas[i].offset,
			       now_ms + s->opts.cfg.lease_ttl_ms};

	if (!grow_array(&s->quar, s->n_quar, &s->cap_quar, sizeof(q))) {
		store_drop_replica(s, o, i, now_ms); /* no memory: free now */
		return;
	}
	s->quar[s->n_quar++] = q;
	drop_replica(s, o, i, now_ms, false);
}

void store_release_quarantine(struct store *s, uint64_t now_ms)
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

static void drop_segment_replicas(struct store *s, struct segment *seg,
				  uint64_t now_ms)
{
	struct object *o = s->lru_head;

	while (o) {
		struct object *next = o->lru_next;

		for (size_t i = o->n_replicas; i-- > 0;)
			if (o->replicas[i].segment_id == seg->id)
				store_drop_replica(s, o, i, now_ms);
		if (o->n_replicas == 0 && o->copies == 0)
			store_delete_object(s, o);
		o = next;
	}
}

static bool key_ok(const char *tenant, const char *key)
{
	return key && key[0] && strlen(key) <= MCREPL_KEY_MAX && tenant &&
	       strlen(tenant) <= MCREPL_TENANT_MAX;
}

static struct object *new_object(const char *tenant, const char *key,
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
		free_object(o);
		return NULL;
	}
	o->size = size;
	return o;
}

/* Room for one more replica in o. */
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

static bool host_used(struct store *s, const struct object *o, const char *host)
{
	for (size_t i = 0; i < o->n_replicas; i++) {
		struct segment *seg =
		    store_segment(s, o->replicas[i].segment_id);

		if (seg && strcmp(seg->host, host) == 0)
			return true;
	}
	return false;
}

static bool on_segment(const struct object *o, uint64_t seg_id)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id)
			return true;
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
		bool new_host = !host_used(s, o, seg->host);
		double util;

		if (on_segment(o, seg->id) ||
		    seg_alloc_largest_free(seg->alloc) < o->size)
			continue;
		util =
		    (double)(store_used(seg) + o->size) / (double)seg->capacity;
		if (!best || (new_host && !best_new_host) ||
		    (new_host == best_new_host && util < best_util)) {
			best = seg;
			best_new_host = new_host;
			best_util = util;
		}
	}
	return best;
}

/* Evict on the fullest segment that could ever hold size; true if freed. */
static bool evict_for(struct store *s, const struct object *o, uint64_t now_ms)
{
	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];

		if (!on_segment(o, seg->id) && seg->capacity >= o->size &&
		    store_evict_segment(s, seg, now_ms) > 0 &&
		    seg_alloc_largest_free(seg->alloc) >= o->size)
			return true;
	}
	return false;
}

static bool add_put_replica(struct store *s, struct object *o, uint64_t now_ms)
{
	struct segment *seg = put_target(s, o);
	struct replica *r;

	if (!seg && evict_for(s, o, now_ms))
		seg = put_target(s, o);
	if (!seg || !store_reserve_replica(o))
		return false;
	r = &o->replicas[o->n_replicas];
	if (seg_alloc_alloc(seg->alloc, o->size, &r->offset) != 0)
		return false;
	r->segment_id = seg->id;
	r->size = o->size;
	r->status = REPLICA_PROCESSING;
	r->dynamic = false;
	o->n_replicas++;
	return true;
}

static void free_replicas(struct store *s, struct object *o, uint64_t now_ms)
{
	while (o->n_replicas > 0)
		store_drop_replica(s, o, o->n_replicas - 1, now_ms);
}

McreplRpc__Code store_put_start(struct store *s, const char *tenant,
			     const char *key, uint64_t size, uint32_t n,
			     uint64_t now_ms, struct object **out, char *err,
			     size_t errlen)
{
	struct object *o;

	if (!key_ok(tenant, key) || size == 0 || n > 16) {
		snprintf(err, errlen,
			 "put needs a key (1..%d bytes), a size > 0 "
			 "and replica_num <= 16",
			 MCREPL_KEY_MAX);
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	o = store_find(s, tenant, key);
	if (o && (o->complete || o->copies ||
		  now_ms - o->last_read_ms < 4 * s->opts.kv_lease_ttl_ms))
		return MCREPL_RPC__CODE__ALREADY_EXISTS;
	if (o) { /* an abandoned put: its writer never ended it */
		free_replicas(s, o, now_ms);
		store_delete_object(s, o);
	}
	o = new_object(tenant, key, size, n ? n : 1);
	if (!o)
		return MCREPL_RPC__CODE__INTERNAL;
	for (uint32_t i = 0; i < (n ? n : 1); i++) {
		if (!add_put_replica(s, o, now_ms)) {
			free_replicas(s, o, now_ms);
			free_object(o);
			snprintf(err, errlen, "no segment has %llu free bytes",
				 (unsigned long long)size);
			return MCREPL_RPC__CODE__NO_SPACE;
		}
	}
	o->version = s->next_version++;
	o->last_read_ms = now_ms;
	mcu_map_insert(&s->objects, &o->node, obj_hash(tenant, key));
	lru_append(s, o);
	s->puts++;
	*out = o;
	return MCREPL_RPC__CODE__OK;
}

static struct object *find_version(struct store *s, const char *tenant,
				   const char *key, uint64_t version,
				   McreplRpc__Code *code)
{
	struct object *o =
	    key_ok(tenant, key) ? store_find(s, tenant, key) : NULL;

	*code = MCREPL_RPC__CODE__OK;
	if (!o)
		*code = MCREPL_RPC__CODE__NOT_FOUND;
	else if (o->version != version)
		*code = MCREPL_RPC__CODE__STALE;
	else if (o->complete)
		*code = MCREPL_RPC__CODE__ALREADY_EXISTS;
	return *code == MCREPL_RPC__CODE__OK ? o : NULL;
}

McreplRpc__Code store_put_end(struct store *s, const char *tenant, const char *key,
			   uint64_t version)
{
	McreplRpc__Code code;
	struct object *o = find_version(s, tenant, key, version, &code);

	if (!o)
		return code;
	for (size_t i = 0; i < o->n_replicas; i++)
		o->replicas[i].status = REPLICA_COMPLETE;
	o->complete = true;
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code store_put_revoke(struct store *s, const char *tenant,
			      const char *key, uint64_t version)
{
	McreplRpc__Code code;
	struct object *o = find_version(s, tenant, key, version, &code);

	if (!o)
		return code;
	free_replicas(s, o, 0);
	store_delete_object(s, o);
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code store_remove(struct store *s, const char *tenant, const char *key,
			  uint64_t now_ms, char *err, size_t errlen)
{
	struct object *o =
	    key_ok(tenant, key) ? store_find(s, tenant, key) : NULL;
	mcrepl_lease cleared[4];
	size_t n = 0;

	if (!o || !o->complete)
		return MCREPL_RPC__CODE__NOT_FOUND;
	if (o->lease_until_ms > now_ms || o->copies > 0) {
		snprintf(err, errlen, "%s",
			 o->copies ? "a copy of it is running"
				   : "under read lease");
		return MCREPL_RPC__CODE__BUSY;
	}
	if (mcrepl_leases_object_removed(s->leases, tenant, key, cleared, 4,
					 &n) == MCREPL_EBUSY) {
		snprintf(err, errlen, "a dynamic copy of it has started");
		return MCREPL_RPC__CODE__BUSY;
	}
	for (size_t i = 0; i < n; i++)
		store_fail_lease_task(s, &cleared[i]);
	free_replicas(s, o, now_ms);
	store_delete_object(s, o);
	s->removes++;
	return MCREPL_RPC__CODE__OK;
}

mcrepl_heat_cell *store_heat_cell(const struct store *s, struct object *o,
				  const char *domain, bool create)
{
	struct domain_heat *d;

	if (!s->opts.cfg.domain_aware)
		return &o->heat;
	domain = mcrepl_domain_name(domain);
	for (uint8_t i = 0; i < o->n_dheat; i++)
		if (strcmp(o->dheat[i].domain, domain) == 0)
			return &o->dheat[i].cell;
	if (!create || o->n_dheat == MASTER_MAX_HEAT_DOMAINS ||
	    strlen(domain) > MCREPL_DOMAIN_MAX)
		return NULL;
	d = realloc(o->dheat, (o->n_dheat + 1u) * sizeof(*d));
	if (!d)
		return NULL;
	o->dheat = d;
	d = &o->dheat[o->n_dheat++];
	memset(d, 0, sizeof(*d));
	strcpy(d->domain, domain);
	return &d->cell;
}

/* Read path: heat + one deduplicated trigger per hot key per window. */
static void record_heat(struct store *s, struct object *o, const char *domain,
			uint64_t now_ms)
{
	mcrepl_heat_cell *cell;
	mcrepl_status st;

	if (s->opts.cfg.mode == MCREPL_MODE_OFF)
		return;
	cell = store_heat_cell(s, o, domain, true);
	if (s->opts.cfg.domain_aware) /* global heat feeds warmup */
		mcrepl_heat_cell_record(&o->heat, &s->heat, now_ms, NULL);
	if (!cell || mcrepl_heat_cell_record(cell, &s->heat, now_ms, NULL) !=
			 MCREPL_HEAT_CROSSED)
		return;
	mcrepl_stats_add(s->stats, MCREPL_STAT_OBSERVED_HOT, 1);
	st = mcrepl_triggers_push(
	    s->triggers, o->tenant, o->key,
	    s->opts.cfg.domain_aware ? mcrepl_domain_name(domain) : "", now_ms);
	if (st == MCREPL_OK)
		mcrepl_stats_add(s->stats, MCREPL_STAT_TRIGGERS_QUEUED, 1);
	else if (st == MCREPL_EFULL)
		mcrepl_stats_add(s->stats, MCREPL_STAT_TRIGGERS_DROPPED, 1);
}

bool store_key_valid(const char *tenant, const char *key, char *err,
		     size_t errlen)
{
	if (key_ok(tenant, key))
		return true;
	snprintf(err, errlen,
		 "a read needs a key (1..%d bytes) and a tenant of at most %d "
		 "bytes",
		 MCREPL_KEY_MAX, MCREPL_TENANT_MAX);
	return false;
}

/* The complete object's COMPLETE replicas (indexes into o->replicas, in
 * metadata order); NULL when there is none to read. */
static struct object *readable(struct store *s, const char *tenant,
			       const char *key, size_t *idx, size_t *n)
{
	struct object *o =
	    key_ok(tenant, key) ? store_find(s, tenant, key) : NULL;

	*n = 0;
	if (!o || !o->complete)
		return NULL;
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].status == REPLICA_COMPLETE)
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

McreplRpc__Code store_get(struct store *s, const char *tenant, const char *key,
		       const char *domain, uint64_t now_ms, struct object **out,
		       size_t *order, size_t cap, size_t *n_out)
{
	mcrepl_replica_view v[MASTER_MAX_REPLICAS];
	size_t idx[MASTER_MAX_REPLICAS], n, perm[MASTER_MAX_REPLICAS];
	uint64_t load[MASTER_MAX_REPLICAS];
	struct segment *seg;
	struct object *o;

	s->get_keys++;
	if (!key_ok(tenant, key))
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	o = readable(s, tenant, key, idx, &n);
	if (!o)
		return MCREPL_RPC__CODE__NOT_FOUND;
	for (size_t i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].segment.v = o->replicas[idx[i]].segment_id;
		v[i].readable = v[i].memory = true;
		seg = store_segment(s, v[i].segment.v);
		load[i] = seg ? seg->routed_now + seg->routed_prev : 0;
	}
	/* salted: equal replicas share a key's reads evenly; read-load
	 * order: the replica whose segment was given the fewest reads in
	 * the last second or two goes first (the master counts what it
	 * routes: readers take the first replica unless one is local) */
	mcrepl_order_replicas(tenant, key, v,
			      s->opts.read_load_order ? load : NULL, n,
			      o->reads++, perm);
	seg = store_segment(s, o->replicas[idx[perm[0]]].segment_id);
	if (seg)
		seg->routed_now++;
	*n_out = n < cap ? n : cap;
	for (size_t i = 0; i < *n_out; i++)
		order[i] = idx[perm[i]];
	o->lease_until_ms = now_ms + s->opts.kv_lease_ttl_ms;
	o->last_read_ms = now_ms;
	lru_unlink(s, o);
	lru_append(s, o);
	record_heat(s, o, domain, now_ms);
	*out = o;
	return MCREPL_RPC__CODE__OK;
}

/* ---- ordinary copy -------------------------------------------------------- */

static size_t replica_on(const struct object *o, uint64_t seg_id,
			 enum replica_status st)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id &&
		    o->replicas[i].status == st)
			return i;
	return SIZE_MAX;
}

McreplRpc__Code store_copy_start(struct store *s, const char *tenant,
			      const char *key, uint64_t src_seg,
			      uint64_t dst_seg, uint64_t now_ms,
			      struct replica *src_out, struct replica *dst_out,
			      char *err, size_t errlen)
{
	struct object *o =
	    key_ok(tenant, key) ? store_find(s, tenant, key) : NULL;
	struct segment *dst = store_segment(s, dst_seg);
	size_t si;
	struct replica *r;

	if (!o || !o->complete)
		return MCREPL_RPC__CODE__NOT_FOUND;
	si = replica_on(o, src_seg, REPLICA_COMPLETE);
	if (si == SIZE_MAX || !dst || on_segment(o, dst_seg)) {
		snprintf(err, errlen,
			 "source must hold a readable replica and "
			 "the target none");
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	if (o->copy_target ||
	    mcrepl_leases_key_is_pending(s->leases, tenant, key, now_ms)) {
		snprintf(err, errlen, "another copy of the object is pending");
		return MCREPL_RPC__CODE__BUSY;
	}
	if (!store_reserve_replica(o))
		return MCREPL_RPC__CODE__NO_SPACE;
	r = &o->replicas[o->n_replicas];
	if (seg_alloc_alloc(dst->alloc, o->size, &r->offset) != 0)
		return MCREPL_RPC__CODE__NO_SPACE;
	*r = (struct replica){dst_seg, r->offset, o->size, REPLICA_PROCESSING,
			      false};
	*src_out = o->replicas[si];
	*dst_out = *r;
	o->n_replicas++;
	o->copies++;
	o->copy_target = dst_seg;
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code store_copy_finish(struct store *s, const char *tenant,
			       const char *key, bool success, uint64_t now_ms)
{
	struct object *o =
	    key_ok(tenant, key) ? store_find(s, tenant, key) : NULL;
	size_t i;

	if (!o || !o->copy_target)
		return MCREPL_RPC__CODE__NOT_FOUND;
	i = replica_on(o, o->copy_target, REPLICA_PROCESSING);
	o->copy_target = 0;
	o->copies--;
	if (i == SIZE_MAX)
		return MCREPL_RPC__CODE__NOT_FOUND;
	if (success)
		o->replicas[i].status = REPLICA_COMPLETE;
	else
		store_drop_replica(s, o, i, now_ms);
	return MCREPL_RPC__CODE__OK;
}

bool store_client_known(struct store *s, uint64_t client_id)
{
	return find_client(s, client_id) != NULL;
}

void store_task_reported(struct store *s, struct task *t)
{
	mcrepl_lease l;

	if (t->msg.dynamic &&
	    mcrepl_leases_get(s->leases, (mcrepl_lease_id){t->msg.lease_id},
			      &l) == MCREPL_OK) {
		t->done = true;
		return;
	}
	store_finish_task(s, t);
}

bool store_domain_is_new(struct store *s, const char *domain)
{
	for (size_t i = 0; i < s->n_segs; i++)
		if (mcrepl_domain_equal(s->segs[i]->domain, domain))
			return false;
	return true;
}

void store_roll_routed(struct store *s)
{
	for (size_t i = 0; i < s->n_segs; i++) {
		s->segs[i]->routed_prev = s->segs[i]->routed_now;
		s->segs[i]->routed_now = 0;
	}
}

void store_tick(struct store *s, uint64_t now_ms, uint64_t *last_evict_ms)
{
	dyn_sweep(s, now_ms);
	store_release_quarantine(s, now_ms);
	store_expire_clients(s, now_ms);
	if (now_ms - *last_evict_ms >= 1000) {
		store_evict_all(s, now_ms);
		store_roll_routed(s);
		*last_evict_ms = now_ms;
	}
}
