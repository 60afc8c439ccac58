/* The lease table: idempotent proposals, single-flight pending leases,
 * version fences and cooldowns (RFC "Lease And Version Fence"). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "policy.h"
#include "util/map.h"
#include "mcrepl/domain.h"
#include "mcrepl/lease.h"
#include "minheap.h"

/* Records forgotten per sweep besides the expiries (see lease.h). */
#define CLEANUP_PER_SWEEP 64
#define MAP_BUCKETS 64

#define SEED_OBJ 0x6d63726c6f626a00ULL	  /* "mcrlobj" */
#define SEED_PROP 0x6d63726c70726f70ULL	  /* "mcrlprop" */
#define SEED_DIGEST 0x6d63726c64696700ULL /* "mcrldig" */

#define container_of(p, type, member)                                          \
	((type *)(void *)((char *)(p)-offsetof(type, member)))
#define const_container_of(p, type, member)                                    \
	((const type *)(const void *)((const char *)(p)-offsetof(type, member)))

struct obj;
struct lrec;
struct prec;

/* An admission key: an object, plus the target domain when domain-aware. */
struct akey {
	struct obj *obj;
	struct akey *prev, *next;  /* the object's admission keys */
	struct lrec *pending;	   /* the single-flight lease or NULL */
	uint64_t action_until;	   /* action cooldown end, 0 = none */
	uint64_t recreate_after;   /* recreate cooldown end, 0 = none */
	uint64_t failed_until;	   /* auto: a revoked copy's hold, 0 = none */
	uint64_t balanced_at;	   /* last judged BALANCED, 0 = none */
	uint64_t balanced_since;   /* the run of BALANCED began */
	mcrepl_evidence ev;	   /* the gate's inputs over the run */
	uint32_t nleases;	   /* live leases naming this key */
	struct mcr_heap_node idle; /* in t->idle while only a cooldown
					* keeps the record */
	char domain[MCREPL_DOMAIN_MAX + 1]; /* "" unless domain-aware */
};

/* An object (tenant, key) that has at least one admission key. */
struct obj {
	struct mcu_map_node node; /* t->objs */
	struct akey *keys;
	size_t tenant_len, key_len;
	char name[]; /* tenant NUL key NUL */
};

struct lrec {
	struct mcu_map_node node; /* t->leases, by id */
	struct mcr_heap_node exp; /* t->expiry, by expires_at_ms */
	struct akey *key;
	struct prec *prop; /* its idempotency record, NULL once forgotten */
	mcrepl_lease l;
};

/* Idempotency record of one proposal id. */
struct prec {
	struct mcu_map_node node;    /* t->props, by id */
	struct mcr_heap_node retire; /* t->retire once the lease ended */
	struct prec *older, *newer;  /* age order (retention limit) */
	struct lrec *live;	     /* NULL once the lease ended */
	uint64_t digest;	     /* of the proposal's content */
	mcrepl_lease l;		     /* the lease when it ended */
	char id[];
};

struct mcrepl_leases {
	pthread_mutex_t mu;
	mcrepl_config cfg;
	struct mcu_map objs, leases, props;
	/* Capacity invariants, so that nothing but a create allocates:
	 * expiry >= leases, retire >= props, idle >= nkeys. */
	struct mcr_heap expiry, retire, idle;
	struct prec *oldest, *newest;
	uint64_t next_id;
	uint64_t nkeys, nstarted, expired_total;
	uint64_t key_seq;    /* heap tie-break for keys */
	mcrepl_stats *stats; /* the lifecycle counters (may be NULL) */
};

/* How a lease leaves the table. */
enum end_how {
	END_ABORT,   /* rolled back: no cooldown, proposal id forgotten */
	END_DEAD,    /* fence or reservation failed: no cooldown */
	END_EXPIRE,  /* expiry: recreate cooldown */
	END_DONE,    /* copy_end: action cooldown */
	END_REVOKE,  /* copy_revoke: action cooldown */
	END_REMOVED, /* object removed (no now_ms: see object_removed) */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- lookups ------------------------------------------------------------- */

struct obj_name {
	const char *tenant, *key;
	size_t tenant_len, key_len;
};

static struct obj_name obj_name(const char *tenant, const char *key)
{
	struct obj_name n = {.tenant = mcu_nz(tenant), .key = mcu_nz(key)};

	n.tenant_len = strlen(n.tenant);
	n.key_len = strlen(n.key);
	return n;
}

static uint64_t obj_hash(const struct obj_name *n)
{
	return mcu_hash64(n->key, n->key_len,
			  mcu_hash64(n->tenant, n->tenant_len, SEED_OBJ));
}

static bool obj_eq(const struct mcu_map_node *x, const void *key)
{
	const struct obj *o = const_container_of(x, struct obj, node);
	const struct obj_name *n = key;

	return o->tenant_len == n->tenant_len && o->key_len == n->key_len &&
	       memcmp(o->name, n->tenant, n->tenant_len) == 0 &&
	       memcmp(o->name + n->tenant_len + 1, n->key, n->key_len) == 0;
}

static struct obj *obj_find(const mcrepl_leases *t, const struct obj_name *n)
{
	struct mcu_map_node *x = mcu_map_find(&t->objs, obj_hash(n), obj_eq, n);

	return x ? container_of(x, struct obj, node) : NULL;
}

/* The admission key's domain part: "" unless domain-aware. */
static const char *akey_domain(const mcrepl_leases *t, const char *d)
{
	return t->cfg.domain_aware ? mcrepl_domain_name(d) : "";
}

static struct akey *akey_find(const struct obj *o, const char *domain)
{
	struct akey *k = o ? o->keys : NULL;

	while (k && strcmp(k->domain, domain) != 0)
		k = k->next;
	return k;
}

static struct akey *key_lookup(const mcrepl_leases *t, const char *tenant,
			       const char *key, const char *domain)
{
	struct obj_name n = obj_name(tenant, key);

	return akey_find(obj_find(t, &n), akey_domain(t, domain));
}

static bool lease_eq(const struct mcu_map_node *x, const void *key)
{
	return const_container_of(x, struct lrec, node)->l.id.v ==
	       *(const uint64_t *)key;
}

static struct lrec *lease_find(const mcrepl_leases *t, mcrepl_lease_id id)
{
	struct mcu_map_node *x =
	    mcu_map_find(&t->leases, mcu_mix64(id.v), lease_eq, &id.v);

	return x ? container_of(x, struct lrec, node) : NULL;
}

static bool prop_eq(const struct mcu_map_node *x, const void *key)
{
	return strcmp(const_container_of(x, struct prec, node)->id, key) == 0;
}

static struct prec *prop_find(const mcrepl_leases *t, const char *id)
{
	struct mcu_map_node *x =
	    mcu_map_find(&t->props, mcu_hash_str(id, SEED_PROP), prop_eq, id);

	return x ? container_of(x, struct prec, node) : NULL;
}

static bool lease_live_at(const struct lrec *l, uint64_t now)
{
	return l->l.expires_at_ms > now;
}

/* Until when a BALANCED refusal is remembered (one heat window, in which
 * the balance gate asks for more: mcrepl_admit()); 0 = none. */
static uint64_t balanced_kept(const mcrepl_leases *t, const struct akey *k)
{
	return k->balanced_at ? sat_add(k->balanced_at, t->cfg.heat_window_ms)
			      : 0;
}

/* What admission sees. An expired pending lease that the sweep has not
 * reached yet reads as swept at now: not pending, in recreate cooldown. */
static void key_state_of(const mcrepl_leases *t, const struct akey *k,
			 uint64_t now, mcrepl_key_state *out)
{
	uint64_t recreate;

	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	recreate = k->recreate_after;
	if (k->pending && lease_live_at(k->pending, now))
		out->pending = true;
	else if (k->pending)
		recreate =
		    max64(recreate, sat_add(now, t->cfg.recreate_cooldown_ms));
	out->action_cooldown_until_ms =
	    k->action_until > now ? k->action_until : 0;
	out->recreate_after_ms = recreate > now ? recreate : 0;
	out->balanced_at_ms = balanced_kept(t, k) > now ? k->balanced_at : 0;
	if (out->balanced_at_ms)
		out->balanced_since_ms = k->balanced_since;
}

/* ---- record lifetimes ---------------------------------------------------- */

static void prop_free(mcrepl_leases *t, struct prec *p)
{
	mcr_heap_remove(&t->retire, &p->retire);
	mcu_map_remove(&t->props, &p->node);
	if (p->older)
		p->older->newer = p->newer;
	else
		t->oldest = p->newer;
	if (p->newer)
		p->newer->older = p->older;
	else
		t->newest = p->older;
	if (p->live)
		p->live->prop = NULL;
	free(p);
}

static void key_free(mcrepl_leases *t, struct akey *k)
{
	struct obj *o = k->obj;

	mcr_heap_remove(&t->idle, &k->idle);
	if (k->prev)
		k->prev->next = k->next;
	else
		o->keys = k->next;
	if (k->next)
		k->next->prev = k->prev;
	t->nkeys--;
	free(k);
	if (!o->keys) {
		mcu_map_remove(&t->objs, &o->node);
		free(o);
	}
}

/* A key no lease names is kept only while a cooldown or the memory of a
 * BALANCED refusal runs. */
static void key_settle(mcrepl_leases *t, struct akey *k, uint64_t now)
{
	uint64_t until = max64(max64(k->action_until, k->recreate_after),
			       max64(k->failed_until, balanced_kept(t, k)));

	if (k->nleases)
		mcr_heap_remove(&t->idle, &k->idle);
	else if (until > now)
		mcr_heap_set(&t->idle, &k->idle, until);
	else
		key_free(t, k);
}

/* A task is bound to the lease (bind_task, bind_task128). */
static bool bound(const struct lrec *l)
{
	return l->l.task.v || l->l.task_hi;
}

/* The first task bound to l: the admission is accepted, its task created
 * and in flight until the lease ends. */
static void bind(mcrepl_leases *t, struct lrec *l, uint64_t hi, uint64_t lo)
{
	if (!bound(l)) {
		mcrepl_stats_add(t->stats, MCREPL_STAT_ACCEPTED, 1);
		mcrepl_stats_add(t->stats, MCREPL_STAT_TASKS_CREATED, 1);
		mcrepl_stats_add(t->stats, MCREPL_STAT_INFLIGHT, 1);
	}
	l->l.task.v = lo;
	l->l.task_hi = hi;
}

void mcr_leases_set_stats(mcrepl_leases *t, mcrepl_stats *s)
{
	t->stats = s;
}

/* Remove a live lease; the key's pending slot is cleared only if it holds
 * this lease (a stale lease never touches a newer one). */
static void lease_end(mcrepl_leases *t, struct lrec *l, enum end_how how,
		      uint64_t now)
{
	struct akey *k = l->key;
	struct prec *p = l->prop;
	/* object_removed has no clock: keep the record past the deadline
	 * the lease had, and leave cooldowns to the next sweep. */
	uint64_t ended = how == END_REMOVED ? l->l.expires_at_ms : now;

	if (l->l.started)
		t->nstarted--;
	if (bound(l)) { /* its task ends: done (counted by the host's
			 * replica_added, readable or not), revoked or failed */
		mcrepl_stats_add(t->stats, MCREPL_STAT_INFLIGHT, -1);
		if (how != END_DONE)
			mcrepl_stats_add(t->stats,
					 how == END_REVOKE
					     ? MCREPL_STAT_TASKS_REVOKED
					     : MCREPL_STAT_TASKS_FAILED,
					 1);
	}
	mcr_heap_remove(&t->expiry, &l->exp);
	mcu_map_remove(&t->leases, &l->node);
	if (k->pending == l)
		k->pending = NULL;
	k->nleases--;
	if (how == END_EXPIRE) {
		k->recreate_after =
		    max64(k->recreate_after,
			  sat_add(now, t->cfg.recreate_cooldown_ms));
		t->expired_total++;
	} else if (how == END_DONE || how == END_REVOKE) {
		k->action_until = max64(
		    k->action_until, sat_add(now, t->cfg.action_cooldown_ms));
	}
	if (how == END_REVOKE) /* the worker failed the copy */
		k->failed_until =
		    max64(k->failed_until, sat_add(now, t->cfg.heat_window_ms));
	if (p) {
		p->l = l->l;
		p->live = NULL;
		if (how == END_ABORT)
			prop_free(t, p);
		else
			mcr_heap_set(&t->retire, &p->retire,
				     sat_add(ended, t->cfg.lease_ttl_ms));
	}
	free(l);
	key_settle(t, k, how == END_REMOVED ? 0 : now);
}

/* Create the admission key (and its object) or leave everything as it
 * was. The caller validated the lengths. */
static int key_make(mcrepl_leases *t, const struct obj_name *n,
		    const char *domain, struct akey **out)
{
	struct obj *o = obj_find(t, n), *fresh = NULL;
	struct akey *k;

	if (mcr_heap_reserve(&t->idle, t->nkeys + 1))
		return -1;
	if (!o) {
		fresh = malloc(sizeof(*fresh) + n->tenant_len + n->key_len + 2);
		if (!fresh)
			return -1;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		free(fresh);
		return -1;
	}
	if (fresh) {
		fresh->keys = NULL;
		fresh->tenant_len = n->tenant_len;
		fresh->key_len = n->key_len;
		memcpy(fresh->name, n->tenant, n->tenant_len + 1);
		memcpy(fresh->name + n->tenant_len + 1, n->key, n->key_len + 1);
		mcu_map_insert(&t->objs, &fresh->node, obj_hash(n));
		o = fresh;
	}
	strcpy(k->domain, domain);
	mcr_heap_node_init(&k->idle, ++t->key_seq);
	k->obj = o;
	k->next = o->keys;
	if (o->keys)
		o->keys->prev = k;
	o->keys = k;
	t->nkeys++;
	*out = k;
	return 0;
}

/* ---- create / destroy ---------------------------------------------------- */

/* Honour struct_size: an older caller's shorter config gets defaults for
 * the fields it does not know. */
static void config_copy(mcrepl_config *dst, const mcrepl_config *src)
{
	size_t n = src->struct_size;

	if (n == 0 || n > sizeof(*dst))
		n = sizeof(*dst);
	mcrepl_config_init(dst);
	memcpy(dst, src, n);
	dst->struct_size = sizeof(*dst);
}

mcrepl_status mcrepl_leases_create(const mcrepl_config *cfg,
				   mcrepl_leases **out)
{
	mcrepl_leases *t;
	mcrepl_status st;

	if (!out)
		return MCREPL_EINVAL;
	*out = NULL;
	if (!cfg)
		return MCREPL_EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return MCREPL_ENOMEM;
	config_copy(&t->cfg, cfg);
	st = mcrepl_config_validate(&t->cfg, NULL);
	if (st != MCREPL_OK)
		goto out_free_t;
	st = MCREPL_ENOMEM;
	if (mcu_map_init(&t->objs, MAP_BUCKETS))
		goto out_free_t;
	if (mcu_map_init(&t->leases, MAP_BUCKETS))
		goto out_fini_objs;
	if (mcu_map_init(&t->props, MAP_BUCKETS))
		goto out_fini_leases;
	if (pthread_mutex_init(&t->mu, NULL))
		goto out_fini_props;
	mcr_heap_init(&t->expiry);
	mcr_heap_init(&t->retire);
	mcr_heap_init(&t->idle);
	t->next_id = 1;
	*out = t;
	return MCREPL_OK;

out_fini_props:
	mcu_map_fini(&t->props);
out_fini_leases:
	mcu_map_fini(&t->leases);
out_fini_objs:
	mcu_map_fini(&t->objs);
out_free_t:
	free(t);
	return st;
}

static void free_lease_node(struct mcu_map_node *x, void *ctx)
{
	(void)ctx;
	free(container_of(x, struct lrec, node));
}

static void free_prop_node(struct mcu_map_node *x, void *ctx)
{
	(void)ctx;
	free(container_of(x, struct prec, node));
}

static void free_obj_node(struct mcu_map_node *x, void *ctx)
{
	struct obj *o = container_of(x, struct obj, node);

	(void)ctx;
	while (o->keys) {
		struct akey *k = o->keys;

		o->keys = k->next;
		free(k);
	}
	free(o);
}

void mcrepl_leases_destroy(mcrepl_leases *t)
{
	if (!t)
		return;
	mcu_map_drain(&t->leases, free_lease_node, NULL);
	mcu_map_drain(&t->props, free_prop_node, NULL);
	mcu_map_drain(&t->objs, free_obj_node, NULL);
	mcu_map_fini(&t->leases);
	mcu_map_fini(&t->props);
	mcu_map_fini(&t->objs);
	mcr_heap_fini(&t->expiry);
	mcr_heap_fini(&t->retire);
	mcr_heap_fini(&t->idle);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* ---- propose ------------------------------------------------------------- */

static bool len_ok(const char *s, size_t min, size_t max)
{
	size_t n = s ? strnlen(s, max + 1) : 0;

	return n >= min && n <= max;
}

static bool input_ok(const mcrepl_leases *t, const mcrepl_propose_input *in)
{
	const mcrepl_proposal *p = in ? in->proposal : NULL;

	if (!p || !in->object || (in->n_replicas && !in->replicas) ||
	    (in->n_segments && !in->segments))
		return false;
	if (!len_ok(p->proposal_id, 1, MCREPL_PROPOSAL_ID_MAX) ||
	    !len_ok(p->key, 1, MCREPL_KEY_MAX) ||
	    (p->tenant && !len_ok(p->tenant, 0, MCREPL_TENANT_MAX)))
		return false;
	return !t->cfg.domain_aware || mcrepl_domain_is_valid(p->target_domain);
}

static uint64_t digest_str(uint64_t h, const char *s)
{
	s = mcu_nz(s);
	return mcu_hash64(s, strlen(s), h);
}

/* Every content field of a proposal but its id and its deadline: a retry
 * over RPC carries a relative deadline, so its absolute one moves with the
 * time of the retry; it is the same request and gets the same lease. */
static uint64_t proposal_digest(const mcrepl_proposal *p)
{
	uint64_t v[5] = {(uint64_t)p->action, p->observed_version,
			 p->expected_size, p->preferred_target.v,
			 (uint64_t)p->kind};
	uint64_t h = SEED_DIGEST;

	h = digest_str(h, p->tenant);
	h = digest_str(h, p->key);
	h = digest_str(h, p->requester_domain);
	h = digest_str(h, p->target_domain);
	return mcu_hash64(v, sizeof(v), h);
}

/* Map a placement failure onto the propose result. */
static mcrepl_status place_failed(mcrepl_status st, mcrepl_reason why,
				  mcrepl_propose_result *res)
{
	if (st == MCREPL_EREJECTED) {
		res->reason = why;
		return MCREPL_EREJECTED;
	}
	res->reason = MCREPL_REASON_INVALID_PROPOSAL;
	return MCREPL_EINVAL;
}

static mcrepl_status place(const mcrepl_config *cfg,
			   const mcrepl_propose_input *in, const char *domain,
			   size_t *src, size_t *dst, mcrepl_propose_result *res)
{
	const mcrepl_proposal *p = in->proposal;
	mcrepl_place_request req = {
	    .tenant = p->tenant,
	    .key = p->key,
	    .size = in->object->size,
	    .target_domain = cfg->domain_aware ? domain : NULL,
	    .preferred_target = p->preferred_target,
	};
	mcrepl_reason why = MCREPL_REASON_NONE;
	mcrepl_status st;

	st = mcrepl_place_source(cfg, &req, in->replicas, in->n_replicas, src,
				 &why);
	if (st != MCREPL_OK)
		return place_failed(st, why, res);
	st = mcrepl_place_target(cfg, &req, in->segments, in->n_segments,
				 in->replicas, in->n_replicas, dst, &why);
	if (st != MCREPL_OK)
		return place_failed(st, why, res);
	return MCREPL_OK;
}

static void copy_domain(char *dst, const char *src)
{
	size_t n = strnlen(src, MCREPL_DOMAIN_MAX);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void lease_fill(mcrepl_leases *t, const mcrepl_propose_input *in,
		       size_t src, size_t dst, const char *domain,
		       mcrepl_lease *l)
{
	const mcrepl_replica_view *r = &in->replicas[src];
	const mcrepl_segment_view *s = &in->segments[dst];
	uint64_t ttl_end = sat_add(in->now_ms, t->cfg.lease_ttl_ms);

	memset(l, 0, sizeof(*l));
	l->id.v = t->next_id++;
	l->source = r->segment;
	l->source_client = r->client;
	l->target = s->id;
	l->target_client = s->client;
	l->version = in->object->version;
	l->size = in->object->size;
	l->granted_at_ms = in->now_ms;
	l->expires_at_ms = ttl_end < in->proposal->expires_at_ms
			       ? ttl_end
			       : in->proposal->expires_at_ms;
	copy_domain(l->target_domain, t->cfg.domain_aware
					  ? domain
					  : mcrepl_domain_name(s->domain));
}

static void prop_link(mcrepl_leases *t, struct prec *p, struct lrec *l,
		      uint64_t digest)
{
	if (mcu_map_size(&t->props) >= t->cfg.proposal_retention_limit)
		prop_free(t, t->oldest);
	p->digest = digest;
	p->live = l;
	p->l = l->l;
	mcr_heap_node_init(&p->retire, l->l.id.v);
	p->newer = NULL;
	p->older = t->newest;
	if (t->newest)
		t->newest->newer = p;
	else
		t->oldest = p;
	t->newest = p;
	mcu_map_insert(&t->props, &p->node, mcu_hash_str(p->id, SEED_PROP));
	l->prop = p;
}

/* Allocate everything first, then commit without failing. */
static mcrepl_status install(mcrepl_leases *t, const mcrepl_propose_input *in,
			     size_t src, size_t dst, struct akey *k,
			     const char *domain, uint32_t readable,
			     mcrepl_propose_result *res)
{
	const mcrepl_proposal *p = in->proposal;
	struct obj_name n = obj_name(p->tenant, p->key);
	size_t id_len = strlen(p->proposal_id);
	struct prec *pr = NULL;
	struct lrec *l;

	if (mcr_heap_reserve(&t->expiry, mcu_map_size(&t->leases) + 1) ||
	    mcr_heap_reserve(&t->retire, mcu_map_size(&t->props) + 1))
		return MCREPL_ENOMEM;
	l = calloc(1, sizeof(*l));
	if (!l)
		return MCREPL_ENOMEM;
	if (t->cfg.proposal_retention_limit) {
		pr = malloc(sizeof(*pr) + id_len + 1);
		if (!pr)
			goto out_free_lease;
		memcpy(pr->id, p->proposal_id, id_len + 1);
	}
	if (!k && key_make(t, &n, domain, &k))
		goto out_free_prop;

	lease_fill(t, in, src, dst, domain, &l->l);
	l->key = k;
	k->nleases++;
	k->balanced_at = 0; /* admitted: the gate starts afresh */
	mcr_policy_evidence_granted(&k->ev, readable);
	/* An expired, unswept pending lease stays for the sweep to report. */
	k->pending = l;
	mcr_heap_remove(&t->idle, &k->idle);
	mcr_heap_node_init(&l->exp, l->l.id.v);
	mcr_heap_set(&t->expiry, &l->exp, l->l.expires_at_ms);
	mcu_map_insert(&t->leases, &l->node, mcu_mix64(l->l.id.v));
	if (pr)
		prop_link(t, pr, l, proposal_digest(p));
	res->lease = l->l;
	res->live = true;
	return MCREPL_OK;

out_free_prop:
	free(pr);
out_free_lease:
	free(l);
	return MCREPL_ENOMEM;
}

/* Readable MEMORY replicas in domain (the domain-aware replica count). */
static uint32_t readable_in_domain(const mcrepl_replica_view *r, size_t n,
				   const char *domain)
{
	uint32_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += r[i].readable && r[i].memory &&
		     mcrepl_domain_equal(r[i].domain, domain);
	return c;
}

/* Remember a BALANCED refusal (the gate's hysteresis) and when the run of
 * refusals it continues began; best effort: without memory for the record
 * the next proposal is judged as a first one. */
static struct akey *remember_balanced(mcrepl_leases *t, struct akey *k,
				      const mcrepl_admit_input *ai,
				      const char *domain)
{
	const mcrepl_proposal *p = ai->proposal;
	struct obj_name n = obj_name(p->tenant, p->key);
	uint64_t now = ai->now_ms;

	if (!k && key_make(t, &n, domain, &k))
		return NULL;
	if (balanced_kept(t, k) <= now)
		k->balanced_since = now;
	k->balanced_at = now ? now : 1;
	mcr_policy_evidence_add(&k->ev, &ai->balance, ai->heat_count, now,
				t->cfg.heat_window_ms);
	key_settle(t, k, now);
	return k;
}

/* A BALANCED refusal that the key's run of refusals outweighs: the copy is
 * admitted (observe mode: would be). */
static mcrepl_reason evidence_reason(const mcrepl_leases *t,
				     const struct akey *k,
				     const mcrepl_admit_input *ai)
{
	if (!k ||
	    !mcr_policy_evidence_helps(&t->cfg, &k->ev, ai->balance.segments,
				       ai->object->readable_memory_replicas))
		return MCREPL_REASON_BALANCED;
	return t->cfg.mode == MCREPL_MODE_OBSERVE ? MCREPL_REASON_MODE_OBSERVE
						  : MCREPL_REASON_NONE;
}

static mcrepl_status propose_locked(mcrepl_leases *t,
				    const mcrepl_propose_input *in,
				    mcrepl_propose_result *res)
{
	const mcrepl_proposal *p = in->proposal;
	struct prec *pr = prop_find(t, p->proposal_id);
	const char *domain = akey_domain(t, p->target_domain);
	struct akey *k;
	mcrepl_object_view ov;
	mcrepl_admit_input ai;
	mcrepl_config place_cfg = t->cfg;
	mcrepl_status st;
	size_t src, dst;

	if (pr && pr->digest != proposal_digest(p)) {
		res->reason = MCREPL_REASON_PROPOSAL_CONFLICT;
		return MCREPL_ECONFLICT;
	}
	if (pr) {
		res->repeated = true;
		res->lease = pr->live ? pr->live->l : pr->l;
		res->live = pr->live != NULL;
		return MCREPL_OK;
	}
	k = key_lookup(t, p->tenant, p->key, p->target_domain);
	ov = *in->object;
	if (t->cfg.domain_aware)
		ov.readable_memory_replicas =
		    readable_in_domain(in->replicas, in->n_replicas, domain);
	memset(&ai, 0, sizeof(ai));
	ai.cfg = &t->cfg;
	ai.proposal = p;
	ai.object = &ov;
	ai.heat_count = in->heat_count;
	ai.now_ms = in->now_ms;
	ai.cluster = in->cluster;
	if (mcr_policy_is_auto(&t->cfg, in->cluster)) {
		mcr_policy_balance(in->segments, in->n_segments, in->replicas,
				   in->n_replicas, &ai.balance);
		place_cfg = t->cfg; /* targets by projected read load */
		place_cfg.read_load_aware_placement = true;
	}
	key_state_of(t, k, in->now_ms, &ai.key_state);
	res->reason = mcrepl_admit(&ai);
	if (res->reason == MCREPL_REASON_INVALID_PROPOSAL)
		return MCREPL_EINVAL;
	if (res->reason == MCREPL_REASON_BALANCED) {
		k = remember_balanced(t, k, &ai, domain);
		res->reason = evidence_reason(t, k, &ai);
	}
	/* auto sets the action cooldown aside for the balance gate, but not
	 * after a failed copy: a key whose last copy a worker revoked waits
	 * a heat window, so a target that fails every copy is not tried
	 * again at the rate the key's reads trigger */
	if (res->reason == MCREPL_REASON_NONE && k &&
	    in->now_ms < k->failed_until &&
	    mcr_policy_is_auto(&t->cfg, in->cluster))
		res->reason = MCREPL_REASON_ACTION_COOLDOWN;
	if (res->reason != MCREPL_REASON_NONE &&
	    res->reason != MCREPL_REASON_MODE_OBSERVE)
		return MCREPL_EREJECTED;
	st = place(&place_cfg, in, domain, &src, &dst, res);
	if (st != MCREPL_OK)
		return st;
	/* A domain that already reads locally gets no cross-domain copy. */
	if (t->cfg.domain_aware && ov.readable_memory_replicas > 0 &&
	    !mcrepl_domain_equal(in->replicas[src].domain, domain)) {
		res->reason = MCREPL_REASON_TARGET_DOMAIN_HAS_REPLICA;
		return MCREPL_EREJECTED;
	}
	if (res->reason == MCREPL_REASON_MODE_OBSERVE)
		return MCREPL_EREJECTED;
	return install(t, in, src, dst, k, domain, ov.readable_memory_replicas,
		       res);
}

mcrepl_status mcrepl_leases_propose(mcrepl_leases *t,
				    const mcrepl_propose_input *in,
				    mcrepl_propose_result *res)
{
	mcrepl_status st;

	if (!res)
		return MCREPL_EINVAL;
	memset(res, 0, sizeof(*res));
	if (!t || !input_ok(t, in)) {
		res->reason = MCREPL_REASON_INVALID_PROPOSAL;
		return MCREPL_EINVAL;
	}
	pthread_mutex_lock(&t->mu);
	st = propose_locked(t, in, res);
	pthread_mutex_unlock(&t->mu);
	return st;
}

/* ---- lease operations ---------------------------------------------------- */

mcrepl_status mcrepl_leases_bind_task(mcrepl_leases *t, mcrepl_lease_id id,
				      mcrepl_task_id task)
{
	mcrepl_status st = MCREPL_ENOENT;
	struct lrec *l;

	if (!t || !task.v)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&t->mu);
	l = lease_find(t, id);
	if (l) {
		bind(t, l, 0, task.v);
		st = MCREPL_OK;
	}
	pthread_mutex_unlock(&t->mu);
	return st;
}

mcrepl_status mcrepl_leases_bind_task128(mcrepl_leases *t, mcrepl_lease_id id,
					 uint64_t hi, uint64_t lo)
{
	mcrepl_status st = MCREPL_ENOENT;
	struct lrec *l;

	if (!t || !(hi | lo))
		return MCREPL_EINVAL;
	pthread_mutex_lock(&t->mu);
	l = lease_find(t, id);
	if (l) {
		bind(t, l, hi, lo);
		st = MCREPL_OK;
	}
	pthread_mutex_unlock(&t->mu);
	return st;
}

mcrepl_status mcrepl_leases_abort(mcrepl_leases *t, mcrepl_lease_id id)
{
	mcrepl_status st = MCREPL_ENOENT;
	struct lrec *l;

	if (!t)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&t->mu);
	l = lease_find(t, id);
	if (l && l->l.started) {
		st = MCREPL_EBUSY;
	} else if (l) {
		lease_end(t, l, END_ABORT, l->l.granted_at_ms);
		st = MCREPL_OK;
	}
	pthread_mutex_unlock(&t->mu);
	return st;
}

static mcrepl_status reject(mcrepl_reason r, mcrepl_reason *why)
{
	*why = r;
	return MCREPL_EREJECTED;
}

/* Retire l with `how` after a refused fence; the host gets the lease. */
static mcrepl_status reject_retire(mcrepl_leases *t, struct lrec *l,
				   enum end_how how, uint64_t now,
				   mcrepl_lease *out, mcrepl_reason r,
				   mcrepl_reason *why)
{
	*out = l->l;
	lease_end(t, l, how, now);
	return reject(r, why);
}

static mcrepl_status start_locked(mcrepl_leases *t, const mcrepl_fence *f,
				  uint64_t now, mcrepl_lease *out,
				  mcrepl_reason *why)
{
	struct lrec *l = lease_find(t, f->lease);

	if (!l)
		return reject(MCREPL_REASON_UNKNOWN_LEASE, why);
	if (f->caller.v != l->l.source_client.v)
		return reject(MCREPL_REASON_NOT_SOURCE, why);
	if ((f->source.v && f->source.v != l->l.source.v) ||
	    (f->target.v && f->target.v != l->l.target.v))
		return reject(MCREPL_REASON_WRONG_TARGET, why);
	if (f->version != l->l.version)
		return reject(MCREPL_REASON_STALE_LEASE, why);
	if (!lease_live_at(l, now))
		return reject_retire(t, l, END_EXPIRE, now, out,
				     MCREPL_REASON_LEASE_EXPIRED, why);
	if (f->object_version == 0)
		return reject_retire(t, l, END_DEAD, now, out,
				     MCREPL_REASON_UNKNOWN_OBJECT, why);
	if (f->object_version != l->l.version)
		return reject_retire(t, l, END_DEAD, now, out,
				     MCREPL_REASON_VERSION_MISMATCH, why);
	if (l->l.started)
		return reject(MCREPL_REASON_STALE_LEASE, why);
	l->l.started = true;
	t->nstarted++;
	*out = l->l;
	*why = MCREPL_REASON_NONE;
	return MCREPL_OK;
}

/* The public fence calls: optional outputs, locking. */
static mcrepl_status
fenced(mcrepl_leases *t, const mcrepl_fence *f, uint64_t now, mcrepl_lease *out,
       mcrepl_reason *why,
       mcrepl_status (*fn)(mcrepl_leases *, const mcrepl_fence *, uint64_t,
			   mcrepl_lease *, mcrepl_reason *))
{
	mcrepl_lease scratch;
	mcrepl_reason r;
	mcrepl_status st;

	if (!why)
		why = &r;
	if (!out)
		out = &scratch;
	if (!t || !f) {
		*why = MCREPL_REASON_NONE;
		return MCREPL_EINVAL;
	}
	pthread_mutex_lock(&t->mu);
	st = fn(t, f, now, out, why);
	pthread_mutex_unlock(&t->mu);
	return st;
}

mcrepl_status mcrepl_leases_copy_start(mcrepl_leases *t, const mcrepl_fence *f,
				       uint64_t now_ms, mcrepl_lease *out,
				       mcrepl_reason *why)
{
	return fenced(t, f, now_ms, out, why, start_locked);
}

mcrepl_status mcrepl_leases_copy_start_failed(mcrepl_leases *t,
					      mcrepl_lease_id id,
					      uint64_t now_ms)
{
	mcrepl_status st = MCREPL_ENOENT;
	struct lrec *l;

	if (!t)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&t->mu);
	l = lease_find(t, id);
	if (l) {
		lease_end(t, l, END_DEAD, now_ms);
		st = MCREPL_OK;
	}
	pthread_mutex_unlock(&t->mu);
	return st;
}

/* copy_end and copy_revoke (how): the same fence, the same bookkeeping. */
static mcrepl_status finish_locked(mcrepl_leases *t, const mcrepl_fence *f,
				   uint64_t now, mcrepl_lease *out,
				   mcrepl_reason *why, enum end_how how)
{
	struct lrec *l = lease_find(t, f->lease);

	if (!l)
		return reject(MCREPL_REASON_UNKNOWN_LEASE, why);
	if (f->caller.v != l->l.source_client.v)
		return reject(MCREPL_REASON_NOT_SOURCE, why);
	if (f->version != l->l.version || !l->l.started)
		return reject(MCREPL_REASON_STALE_LEASE, why);
	if (!lease_live_at(l, now))
		return reject_retire(t, l, END_EXPIRE, now, out,
				     MCREPL_REASON_LEASE_EXPIRED, why);
	*out = l->l;
	lease_end(t, l, how, now);
	*why = MCREPL_REASON_NONE;
	return MCREPL_OK;
}

static mcrepl_status end_locked(mcrepl_leases *t, const mcrepl_fence *f,
				uint64_t now, mcrepl_lease *out,
				mcrepl_reason *why)
{
	return finish_locked(t, f, now, out, why, END_DONE);
}

static mcrepl_status revoke_locked(mcrepl_leases *t, const mcrepl_fence *f,
				   uint64_t now, mcrepl_lease *out,
				   mcrepl_reason *why)
{
	return finish_locked(t, f, now, out, why, END_REVOKE);
}

mcrepl_status mcrepl_leases_copy_end(mcrepl_leases *t, const mcrepl_fence *f,
				     uint64_t now_ms, mcrepl_lease *out,
				     mcrepl_reason *why)
{
	return fenced(t, f, now_ms, out, why, end_locked);
}

mcrepl_status mcrepl_leases_copy_revoke(mcrepl_leases *t, const mcrepl_fence *f,
					uint64_t now_ms, mcrepl_lease *out,
					mcrepl_reason *why)
{
	return fenced(t, f, now_ms, out, why, revoke_locked);
}

/* ---- sweep and removals -------------------------------------------------- */

/* Forget one record past its retention, earliest first; false if none. */
static bool cleanup_one(mcrepl_leases *t, uint64_t now)
{
	struct mcr_heap_node *p = mcr_heap_top(&t->retire);
	struct mcr_heap_node *k = mcr_heap_top(&t->idle);

	if (p && p->at > now)
		p = NULL;
	if (k && k->at > now)
		k = NULL;
	if (p && (!k || p->at <= k->at))
		prop_free(t, container_of(p, struct prec, retire));
	else if (k)
		key_free(t, container_of(k, struct akey, idle));
	return p || k;
}

size_t mcrepl_leases_sweep(mcrepl_leases *t, uint64_t now_ms, mcrepl_lease *out,
			   size_t cap)
{
	struct mcr_heap_node *x;
	size_t n = 0;

	if (!t)
		return 0;
	if (!out)
		cap = 0;
	pthread_mutex_lock(&t->mu);
	while (n < cap && (x = mcr_heap_top(&t->expiry)) && x->at <= now_ms) {
		struct lrec *l = container_of(x, struct lrec, exp);

		out[n++] = l->l;
		lease_end(t, l, END_EXPIRE, now_ms);
	}
	for (int i = 0; i < CLEANUP_PER_SWEEP && cleanup_one(t, now_ms); i++)
		;
	pthread_mutex_unlock(&t->mu);
	return n;
}

static bool name_ok(const char *tenant, const char *key)
{
	return len_ok(key, 1, MCREPL_KEY_MAX) &&
	       (!tenant || len_ok(tenant, 0, MCREPL_TENANT_MAX));
}

mcrepl_status mcrepl_leases_replica_removed(mcrepl_leases *t,
					    const char *tenant, const char *key,
					    const char *domain, uint64_t now_ms)
{
	struct obj_name n = obj_name(tenant, key);
	mcrepl_status st = MCREPL_OK;
	const char *d;
	struct akey *k;

	if (!t || !name_ok(tenant, key) ||
	    (t->cfg.domain_aware && !mcrepl_domain_is_valid(domain)))
		return MCREPL_EINVAL;
	d = akey_domain(t, domain);
	pthread_mutex_lock(&t->mu);
	k = akey_find(obj_find(t, &n), d);
	if (!k && key_make(t, &n, d, &k)) {
		st = MCREPL_ENOMEM;
		goto out_unlock;
	}
	k->recreate_after = max64(k->recreate_after,
				  sat_add(now_ms, t->cfg.recreate_cooldown_ms));
	key_settle(t, k, now_ms);
out_unlock:
	pthread_mutex_unlock(&t->mu);
	return st;
}

static bool obj_has_started(const struct obj *o)
{
	for (const struct akey *k = o->keys; k; k = k->next) {
		if (k->pending && k->pending->l.started)
			return true;
	}
	return false;
}

mcrepl_status mcrepl_leases_object_removed(mcrepl_leases *t, const char *tenant,
					   const char *key,
					   mcrepl_lease *cleared, size_t cap,
					   size_t *n_cleared)
{
	struct obj_name n = obj_name(tenant, key);
	mcrepl_status st = MCREPL_OK;
	size_t done = 0;
	struct akey *k, *next;
	struct obj *o;

	if (n_cleared)
		*n_cleared = 0;
	if (!t || !key)
		return MCREPL_EINVAL;
	if (!cleared)
		cap = 0;
	pthread_mutex_lock(&t->mu);
	o = obj_find(t, &n);
	if (o && obj_has_started(o)) {
		st = MCREPL_EBUSY;
		goto out_unlock;
	}
	/* Ending a lease may free its key, and the object with its last. */
	for (k = o ? o->keys : NULL; k; k = next) {
		next = k->next;
		if (!k->pending)
			continue;
		if (done < cap)
			cleared[done++] = k->pending->l;
		lease_end(t, k->pending, END_REMOVED, 0);
	}
	if (n_cleared)
		*n_cleared = done;
out_unlock:
	pthread_mutex_unlock(&t->mu);
	return st;
}

/* ---- questions ----------------------------------------------------------- */

void mcrepl_leases_key_state(mcrepl_leases *t, const char *tenant,
			     const char *key, const char *domain,
			     uint64_t now_ms, mcrepl_key_state *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!t || !key)
		return;
	pthread_mutex_lock(&t->mu);
	key_state_of(t, key_lookup(t, tenant, key, domain), now_ms, out);
	pthread_mutex_unlock(&t->mu);
}

bool mcrepl_leases_key_is_pending(mcrepl_leases *t, const char *tenant,
				  const char *key, uint64_t now_ms)
{
	struct obj_name n = obj_name(tenant, key);
	bool pending = false;
	struct obj *o;

	if (!t || !key)
		return false;
	pthread_mutex_lock(&t->mu);
	o = obj_find(t, &n);
	for (struct akey *k = o ? o->keys : NULL; k && !pending; k = k->next)
		pending = k->pending && lease_live_at(k->pending, now_ms);
	pthread_mutex_unlock(&t->mu);
	return pending;
}

mcrepl_status mcrepl_leases_get(mcrepl_leases *t, mcrepl_lease_id id,
				mcrepl_lease *out)
{
	mcrepl_status st = MCREPL_ENOENT;
	struct lrec *l;

	if (!t || !out)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&t->mu);
	l = lease_find(t, id);
	if (l) {
		*out = l->l;
		st = MCREPL_OK;
	}
	pthread_mutex_unlock(&t->mu);
	return st;
}

void mcrepl_leases_get_stats(mcrepl_leases *t, mcrepl_leases_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	out->leases = mcu_map_size(&t->leases);
	out->started = t->nstarted;
	out->proposals = mcu_map_size(&t->props);
	out->key_records = t->nkeys;
	out->expired_total = t->expired_total;
	pthread_mutex_unlock(&t->mu);
}
