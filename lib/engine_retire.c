/*
 * The policy engine's dynamic replicas (mcrepl/engine.h): which keys hold
 * readable dynamic replicas and where, and the retirement pass that visits
 * them once per heat window.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"
#include "mcrepl/domain.h"

#define SEED_DKEY 0x6d63726c646b6579ULL /* "mcrldkey" */
#define container_of(p, type, member)                                          \
	((type *)(void *)((char *)(p)-offsetof(type, member)))

struct dkey_name {
	const char *tenant, *key;
};

uint64_t mcr_eng_key_hash(const char *tenant, const char *key)
{
	uint64_t h =
	    mcu_hash_str(mcu_nz(key), mcu_hash_str(mcu_nz(tenant), SEED_DKEY));

	return h ? h : 1;
}

static bool dkey_eq(const struct mcu_map_node *x, const void *arg)
{
	const struct dkey *k = (const struct dkey *)(const void *)x;
	const struct dkey_name *n = arg;

	return strcmp(k->tenant, n->tenant) == 0 && strcmp(k->key, n->key) == 0;
}

static struct dkey *dkey_find(const mcrepl_engine *e, const char *tenant,
			      const char *key)
{
	struct dkey_name n = {.tenant = mcu_nz(tenant), .key = mcu_nz(key)};
	struct mcu_map_node *x = mcu_map_find(
	    &e->dkeys, mcr_eng_key_hash(n.tenant, n.key), dkey_eq, &n);

	return x ? container_of(x, struct dkey, node) : NULL;
}

int mcr_eng_dkeys_init(mcrepl_engine *e)
{
	return mcu_map_init(&e->dkeys, 64);
}

static void dkey_free(mcrepl_engine *e, struct dkey *k)
{
	mcu_map_remove(&e->dkeys, &k->node);
	if (e->cursor == k)
		e->cursor = k->next;
	if (k->prev)
		k->prev->next = k->next;
	else
		e->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		e->tail = k->prev;
	e->n_dreplicas -= k->n;
	free(k->tenant);
	free(k->segs);
	free(k);
}

void mcr_eng_dkeys_free(mcrepl_engine *e)
{
	while (e->head)
		dkey_free(e, e->head);
	mcu_map_fini(&e->dkeys);
}

static struct dkey *dkey_new(mcrepl_engine *e, const char *tenant,
			     const char *key)
{
	size_t tl = strlen(tenant), kl = strlen(key);
	struct dkey *k = calloc(1, sizeof(*k));

	if (!k || !(k->tenant = malloc(tl + kl + 2))) {
		free(k);
		return NULL;
	}
	memcpy(k->tenant, tenant, tl + 1);
	k->key = k->tenant + tl + 1;
	memcpy(k->key, key, kl + 1);
	mcu_map_insert(&e->dkeys, &k->node, mcr_eng_key_hash(tenant, key));
	k->prev = e->tail;
	if (e->tail)
		e->tail->next = k;
	else
		e->head = k;
	e->tail = k;
	return k;
}

static size_t seg_index(const struct dkey *k, uint64_t seg)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->segs[i] == seg)
			return i;
	return SIZE_MAX;
}

static mcrepl_status track(mcrepl_engine *e, const char *tenant,
			   const char *key, uint64_t seg)
{
	struct dkey *k = dkey_find(e, tenant, key);

	if (!k) {
		if (mcu_map_size(&e->dkeys) >= e->max_dkeys) {
			e->untracked++;
			return MCREPL_EFULL;
		}
		if (!(k = dkey_new(e, tenant, key)))
			return MCREPL_ENOMEM;
	}
	if (seg_index(k, seg) != SIZE_MAX)
		return MCREPL_OK;
	if (k->n == k->cap) {
		uint32_t cap = k->cap ? 2 * k->cap : 2;
		uint64_t *p = realloc(k->segs, cap * sizeof(*p));

		if (!p) {
			if (!k->n)
				dkey_free(e, k);
			return MCREPL_ENOMEM;
		}
		k->segs = p;
		k->cap = cap;
	}
	k->segs[k->n++] = seg;
	e->n_dreplicas++;
	return MCREPL_OK;
}

/* Track a dynamic replica, counting a completed copy when count. */
static mcrepl_status added(mcrepl_engine *e, const char *tenant,
			   const char *key, mcrepl_segment_id segment,
			   bool count)
{
	mcrepl_status st;

	if (!e || !key || !*key || strlen(key) > MCREPL_KEY_MAX ||
	    strlen(mcu_nz(tenant)) > MCREPL_TENANT_MAX)
		return MCREPL_EINVAL;
	if (count)
		mcrepl_stats_add(e->stats, MCREPL_STAT_TASKS_COMPLETED, 1);
	pthread_mutex_lock(&e->mu);
	st = mcr_eng_slot(e, segment.v) == ENG_NONE
		 ? MCREPL_ENOENT
		 : track(e, mcu_nz(tenant), key, segment.v);
	pthread_mutex_unlock(&e->mu);
	return st;
}

mcrepl_status mcrepl_engine_replica_added(mcrepl_engine *e, const char *tenant,
					  const char *key,
					  mcrepl_segment_id segment)
{
	return added(e, tenant, key, segment, true);
}

mcrepl_status mcrepl_engine_replica_recovered(mcrepl_engine *e,
					      const char *tenant,
					      const char *key,
					      mcrepl_segment_id segment)
{
	return added(e, tenant, key, segment, false);
}

/* Forget replica i of k (k freed when it was the last). */
static void untrack(mcrepl_engine *e, struct dkey *k, size_t i)
{
	k->segs[i] = k->segs[--k->n];
	e->n_dreplicas--;
	if (!k->n)
		dkey_free(e, k);
}

static const char *seg_domain(const mcrepl_engine *e, uint64_t seg)
{
	uint32_t slot = mcr_eng_slot(e, seg);

	return slot == ENG_NONE ? NULL : e->segs[slot].domain;
}

mcrepl_status mcrepl_engine_replica_dropped(mcrepl_engine *e,
					    const char *tenant, const char *key,
					    mcrepl_segment_id segment,
					    bool cooldown, uint64_t now_ms)
{
	mcrepl_status st = MCREPL_ENOENT;
	struct dkey *k;
	size_t i;

	if (!e || !key)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	if (cooldown)
		mcrepl_leases_replica_removed(e->leases, tenant, key,
					      seg_domain(e, segment.v), now_ms);
	k = dkey_find(e, tenant, key);
	if (k && (i = seg_index(k, segment.v)) != SIZE_MAX) {
		untrack(e, k, i);
		st = MCREPL_OK;
	}
	pthread_mutex_unlock(&e->mu);
	return st;
}

void mcr_eng_forget_segment(mcrepl_engine *e, uint64_t id)
{
	struct dkey *k = e->head, *next;
	size_t i;

	for (; k; k = next) {
		next = k->next;
		if ((i = seg_index(k, id)) != SIZE_MAX)
			untrack(e, k, i);
	}
}

/* ---- retirement ------------------------------------------------------- */

/* Most replicas of one key a pass looks at (and retires). */
#define PICK_MAX 64

/* Of k's replicas in `domain` (NULL: all) not yet in taken[], the one to
 * retire (mcr_policy_retire_pick() by node load), or SIZE_MAX. */
static size_t pick(const mcrepl_engine *e, const struct dkey *k,
		   const char *domain, const bool *taken)
{
	mcrepl_replica_view v[PICK_MAX];
	uint64_t load[PICK_MAX];
	size_t idx[PICK_MAX], n = 0, p;

	for (size_t i = 0; i < k->n && i < PICK_MAX; i++) {
		const char *d = seg_domain(e, k->segs[i]);

		if ((domain && !mcrepl_domain_equal(d, domain)) ||
		    (taken && taken[i]))
			continue;
		memset(&v[n], 0, sizeof(v[n]));
		v[n].segment.v = k->segs[i];
		v[n].readable = v[n].memory = v[n].dynamic = true;
		load[n] = mcr_eng_seg_load(e, k->segs[i]);
		idx[n++] = i;
	}
	if (mcr_policy_retire_pick(k->tenant, k->key, v, load, n, &p) !=
	    MCREPL_OK)
		return SIZE_MAX;
	return idx[p];
}

/* Domain-aware: judge each domain holding a dynamic replica of k by k's
 * heat there, so a domain's only copy stays while it reads the key. */
static size_t choose_domain(mcrepl_engine *e, const struct dkey *k,
			    mcrepl_retire_probe_fn probe, void *ctx)
{
	for (size_t i = 0; i < k->n; i++) {
		const char *d = seg_domain(e, k->segs[i]);
		mcrepl_retire_probe p = {0};

		probe(ctx, k->tenant, k->key, mcrepl_domain_name(d), &p);
		if (!p.busy && !p.gone &&
		    mcr_policy_should_retire_in_domain(&e->cfg, &e->view,
						       p.count, p.readable))
			return pick(e, k, d, NULL);
	}
	return SIZE_MAX;
}

/* Up to `room` of k's replicas to retire into idx[] (the busiest first);
 * how many. Not domain-aware: as many as the rule retires one after the
 * other, readable r, r - 1, ... at the same heat, so a key whose heat fell
 * away sheds its copies in one pass, not one a window (a shifting hot set
 * left replicas growing phase after phase); the rule's margin stays the
 * same at each step. *gone when the object is gone. */
static size_t choose(mcrepl_engine *e, const struct dkey *k, uint64_t now_ms,
		     mcrepl_retire_probe_fn probe, void *ctx, size_t room,
		     size_t *idx, bool *gone)
{
	mcrepl_retire_probe p = {0};
	bool taken[PICK_MAX] = {false};
	size_t n = 0;

	probe(ctx, k->tenant, k->key, NULL, &p);
	*gone = p.gone;
	if (p.gone || p.busy || p.readable < 2 ||
	    mcrepl_leases_key_is_pending(e->leases, k->tenant, k->key, now_ms))
		return 0;
	if (e->cfg.domain_aware) {
		idx[0] = choose_domain(e, k, probe, ctx);
		return idx[0] != SIZE_MAX;
	}
	while (
	    n < room && p.readable >= 2 &&
	    mcr_policy_should_retire(&e->cfg, &e->view, p.count, p.readable)) {
		size_t i = pick(e, k, NULL, taken);

		if (i == SIZE_MAX)
			break;
		taken[i] = true;
		idx[n++] = i;
		p.readable--;
	}
	return n;
}

size_t mcrepl_engine_retire(mcrepl_engine *e, uint64_t now_ms,
			    mcrepl_retire_probe_fn probe, void *ctx,
			    mcrepl_retirement *out, size_t cap, size_t *n_out)
{
	size_t visited = 0, n = 0;

	if (n_out)
		*n_out = 0;
	if (!e || !probe || (cap && !out))
		return 0;
	pthread_mutex_lock(&e->mu);
	while (e->pass_open && e->cursor && visited < cap && n < cap) {
		struct dkey *k = e->cursor;
		size_t idx[PICK_MAX], m;
		bool gone;

		e->cursor = k->next;
		visited++;
		e->visits++;
		m = choose(e, k, now_ms, probe, ctx, cap - n, idx, &gone);
		if (gone) {
			dkey_free(e, k);
			continue;
		}
		for (size_t j = 0; j < m; j++)
			out[n++] = (mcrepl_retirement){
			    .tenant = k->tenant,
			    .key = k->key,
			    .segment = {.v = k->segs[idx[j]]}};
		e->retired += m;
	}
	if (!e->cursor)
		e->pass_open = false;
	pthread_mutex_unlock(&e->mu);
	if (n_out)
		*n_out = n;
	return visited;
}
