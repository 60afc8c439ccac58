/* HA removes answered only once they hold (docs/HA.md, "Removed stays
 * removed"): a Remove waits until every worker that held a replica of the
 * key acknowledged its drop in FetchTasks (then its index no longer names
 * it, and no next leader hears of it again), or left this master (expired:
 * a worker cut off for --client_ttl re-registers nothing at all, so it
 * cannot bring the replica back either). The wait is bounded by the
 * client TTL: a worker that keeps heartbeating without acknowledging is
 * expired at that deadline. A caller is answered within REPLY_MS: OK, or
 * "recovering" (ask again), and a Remove of a key whose remove is still
 * waiting waits with it (then OK, for FORGET_MS after it settled).
 * The waits are indexed by their key's hash, so the question every read
 * asks (store_key_settling) and a remove's look for its earlier tries
 * cost one look-up, not a pass over up to RM_PENDING_MAX waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/map.h"
#include "stamp.h"
#include "store_priv.h"

/* Removes waiting at once; a further one is refused (ask again). */
#define RM_PENDING_MAX 4096u
/* A drop the journal could not take (full): it is never acknowledged,
 * the remove waits for its worker to leave. */
#define SEQ_NEVER UINT64_MAX
/* Longest a caller waits before "recovering" (below clients' 5 s call
 * timeout: they ask again, for 15 s). */
#define REPLY_MS 2000u
/* A settled remove answers OK to the callers asking again this long. */
#define FORGET_MS 20000u

struct rm_wait {
	uint64_t client_id, seq;
};

struct rm_pending {
	struct mcu_map_node node;  /* first: by key_hash, in by_key */
	size_t slot;		   /* its place in store_rmwait.p */
	store_remove_done_fn done; /* the caller waiting now, or NULL */
	void *arg;
	bool put; /* a PutEnd's commits, not a remove's drops */
	uint64_t key_hash, request_id, deadline_ms, reply_ms;
	uint64_t settled_ms; /* 0: still waiting */
	size_t n, cap;
	struct rm_wait *w;
};

struct store_rmwait {
	struct rm_pending **p;
	size_t n, cap;
	struct mcu_map by_key;	    /* every one of p, by key_hash */
	struct rm_pending *collect; /* the remove being made */
};

/* Buckets of by_key at first (it grows with the waits). */
#define RM_INDEX_BUCKETS 64u

static void pending_free(struct rm_pending *p)
{
	free(p->w);
	free(p);
}

void store__rm_free(struct store *s)
{
	struct store_rmwait *r = s->rmwait;

	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		pending_free(r->p[i]);
	free(r->p);
	mcu_map_fini(&r->by_key);
	free(r);
	s->rmwait = NULL;
}

/* p (made by pending_new, its key_hash set) joins the waits. */
static void pending_add(struct store_rmwait *r, struct rm_pending *p)
{
	p->slot = r->n;
	r->p[r->n++] = p;
	mcu_map_insert(&r->by_key, &p->node, p->key_hash);
}

static void pending_drop(struct store *s, size_t i)
{
	struct store_rmwait *r = s->rmwait;

	mcu_map_remove(&r->by_key, &r->p[i]->node);
	pending_free(r->p[i]);
	if (i < --r->n) { /* the last one takes its place */
		r->p[i] = r->p[r->n];
		r->p[i]->slot = i;
	}
}

/* The caller waiting on p (if any) is answered. */
static void pending_answer(struct rm_pending *p, McreplRpc__Code code,
			   const char *reason)
{
	store_remove_done_fn done = p->done;

	p->done = NULL;
	if (done)
		done(p->arg, code, reason);
}

/* Pending i has nothing left to wait for: OK to its caller, or, when none
 * waits (it was told to ask again), to the next one asking within
 * FORGET_MS (to every try naming its request id). */
static void pending_settled(struct store *s, size_t i)
{
	struct rm_pending *p = s->rmwait->p[i];

	if (p->put) {
		s->ctr.puts_waited++;
		pending_answer(p, MCREPL_RPC__CODE__OK, NULL);
		pending_drop(s, i);
		return;
	}
	s->ctr.removes_waited++;
	p->settled_ms = s->tick_ms ? s->tick_ms : 1;
	if (p->done) {
		pending_answer(p, MCREPL_RPC__CODE__OK, NULL);
		pending_drop(s, i);
	}
}

static const struct rm_pending *as_pending(const struct mcu_map_node *n)
{
	return (const struct rm_pending *)(const void *)n;
}

/* by_key's tests (its hash matched): a remove named *id (0: any) ... */
static bool remove_eq(const struct mcu_map_node *n, const void *id)
{
	const uint64_t *want = id;

	return !as_pending(n)->put &&
	       (!*want || as_pending(n)->request_id == *want);
}

/* ... and any wait not settled yet. */
static bool waiting_eq(const struct mcu_map_node *n, const void *unused)
{
	(void)unused;
	return !as_pending(n)->settled_ms;
}

/* The remove of key hash h with request id id waiting or settled lately;
 * id 0 (a caller that names none): any remove of h. */
static struct rm_pending *pending_of(const struct store *s, uint64_t h,
				     uint64_t id, size_t *at)
{
	struct mcu_map_node *n =
	    s->rmwait ? mcu_map_find(&s->rmwait->by_key, h, remove_eq, &id)
		      : NULL;
	struct rm_pending *p = (struct rm_pending *)(void *)n;

	if (p)
		*at = p->slot;
	return p;
}

/* A Remove of a key whose remove is still waiting, or settled lately:
 * it waits with it, or is answered now. */
static McreplRpc__Code join(struct store *s, struct rm_pending *p, size_t at,
			    uint64_t now_ms, store_remove_done_fn done,
			    void *arg, bool *later, char *err, size_t errlen)
{
	if (p->settled_ms) { /* a named remove answers every try */
		if (!p->request_id)
			pending_drop(s, at);
		return MCREPL_RPC__CODE__OK;
	}
	if (p->done) { /* one caller waits at a time: ask again */
		snprintf(err, errlen, "the remove waits for a worker");
		return MCREPL_RPC__CODE__UNAVAILABLE;
	}
	p->done = done;
	p->arg = arg;
	p->reply_ms = now_ms + REPLY_MS;
	*later = true;
	return MCREPL_RPC__CODE__OK;
}

void store__rm_note_drop(struct store *s, uint64_t client_id, uint64_t seq)
{
	struct rm_pending *p = s->rmwait ? s->rmwait->collect : NULL;

	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		if (p->w[i].client_id == client_id) {
			if (p->w[i].seq <
			    seq) /* acknowledgements are cumulative */
				p->w[i].seq = seq;
			return;
		}
	if (!store__grow(&p->w, p->n, &p->cap, sizeof(*p->w))) {
		p->n = SIZE_MAX; /* out of memory: the remove is not made */
		return;
	}
	p->w[p->n++] = (struct rm_wait){.client_id = client_id,
					.seq = seq ? seq : SEQ_NEVER};
}

/* A new wait, room for it made in the store's list; NULL when there is
 * none (out of memory, or RM_PENDING_MAX waiting). */
static struct rm_pending *pending_new(struct store *s)
{
	struct store_rmwait *r = s->rmwait;

	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r || mcu_map_init(&r->by_key, RM_INDEX_BUCKETS)) {
			free(r);
			return NULL;
		}
		s->rmwait = r;
	}
	if (r->n >= RM_PENDING_MAX ||
	    !store__grow(&r->p, r->n, &r->cap, sizeof(*r->p)))
		return NULL;
	return calloc(1, sizeof(struct rm_pending));
}

McreplRpc__Code store_remove_acked(struct store *s, const char *tenant,
				   const char *key, uint64_t request_id,
				   uint64_t now_ms, store_remove_done_fn done,
				   void *arg, bool *later, char *err,
				   size_t errlen)
{
	struct store_rmwait *r = s->rmwait;
	struct rm_pending *p;
	McreplRpc__Code code;
	uint64_t h;
	size_t at;

	*later = false;
	if (!s->term || !done || !store__key_ok(tenant, key))
		return store_remove(s, tenant, key, now_ms, err, errlen);
	h = stamp_key_hash(tenant, strlen(tenant), key, strlen(key));
	/* a try of a remove made already (named: whatever the key holds
	 * now, a put may have come since) waits with it or is answered */
	if ((request_id || !store__lookup(s, tenant, key)) &&
	    (p = pending_of(s, h, request_id, &at)))
		return join(s, p, at, now_ms, done, arg, later, err, errlen);
	/* another's put or remove of the key, not confirmed yet: an answer
	 * now would show it (NOT_FOUND for a value a next leader may
	 * still serve) */
	if (store_key_settling(s, tenant, key)) {
		snprintf(err, errlen, "%s", STORE_SETTLING_MSG);
		return MCREPL_RPC__CODE__UNAVAILABLE;
	}
	if (!(p = pending_new(s))) {
		if (!s->rmwait || s->rmwait->n < RM_PENDING_MAX)
			return MCREPL_RPC__CODE__INTERNAL;
		snprintf(err, errlen,
			 "%u removes and puts are waiting for their workers",
			 RM_PENDING_MAX);
		return MCREPL_RPC__CODE__TOO_MANY;
	}
	r = s->rmwait;
	r->collect = p;
	code = store_remove(s, tenant, key, now_ms, err, errlen);
	r->collect = NULL;
	if (code != MCREPL_RPC__CODE__OK || p->n == 0 || p->n == SIZE_MAX) {
		if (p->n == SIZE_MAX) /* removed, then no memory to wait */
			code = MCREPL_RPC__CODE__INTERNAL;
		pending_free(p);
		return code;
	}
	p->done = done;
	p->arg = arg;
	p->key_hash = h;
	p->request_id = request_id;
	p->deadline_ms = now_ms + s->opts.client_ttl_ms;
	p->reply_ms = now_ms + REPLY_MS;
	pending_add(r, p);
	*later = true;
	return code;
}

McreplRpc__Code store_put_end_acked(struct store *s, const char *tenant,
				    const char *key, uint64_t version,
				    uint64_t now_ms, store_remove_done_fn done,
				    void *arg, bool *later)
{
	struct rm_pending *p;
	McreplRpc__Code code;

	*later = false;
	if (!s->term || !done || !(p = pending_new(s)))
		return store_put_end(s, tenant, key, version);
	s->rmwait->collect = p;
	code = store_put_end(s, tenant, key, version);
	s->rmwait->collect = NULL;
	if (code != MCREPL_RPC__CODE__OK || p->n == 0 || p->n == SIZE_MAX) {
		pending_free(p); /* nothing to wait for, or no memory to */
		return code;
	}
	p->put = true;
	p->key_hash = stamp_key_hash(tenant, strlen(tenant), key, strlen(key));
	p->done = done;
	p->arg = arg;
	p->reply_ms = now_ms + REPLY_MS;
	pending_add(s->rmwait, p);
	*later = true;
	return code;
}

/* The waits satisfied by client_id having applied its journal up to ack
 * (gone: it left) end; removes with nothing left to wait for end OK. */
static void rm_settle(struct store *s, uint64_t client_id, uint64_t ack,
		      bool gone)
{
	struct store_rmwait *r = s->rmwait;

	for (size_t i = r ? r->n : 0; i-- > 0;) {
		struct rm_pending *p = r->p[i];

		if (p->settled_ms)
			continue;
		for (size_t j = p->n; j-- > 0;)
			if (p->w[j].client_id == client_id &&
			    (gone || p->w[j].seq <= ack))
				p->w[j] = p->w[--p->n];
		if (p->n == 0)
			pending_settled(s, i);
	}
}

void store__rm_acked(struct store *s, uint64_t client_id, uint64_t ack)
{
	rm_settle(s, client_id, ack, false);
}

void store__rm_client_gone(struct store *s, uint64_t client_id)
{
	rm_settle(s, client_id, 0, true);
}

void store__rm_tick(struct store *s, uint64_t now_ms)
{
	struct store_rmwait *r = s->rmwait;

	for (size_t i = r ? r->n : 0; i-- > 0;) {
		struct rm_pending *p = r->p[i];

		if (p->settled_ms) {
			if (now_ms - p->settled_ms >= FORGET_MS)
				pending_drop(s, i);
			continue;
		}
		if (p->put) { /* answered OK anyway: it is committed here */
			if (p->reply_ms <= now_ms) {
				s->ctr.puts_unacked++;
				pending_answer(p, MCREPL_RPC__CODE__OK, NULL);
				pending_drop(s, i);
			}
			continue;
		}
		if (p->done && p->reply_ms <= now_ms)
			pending_answer(p, MCREPL_RPC__CODE__UNAVAILABLE,
				       "recovering");
		if (p->deadline_ms > now_ms)
			continue;
		/* expired by store_expire_clients() in this tick */
		for (size_t j = 0; j < p->n; j++) {
			struct client *c =
			    store__find_client(s, p->w[j].client_id);

			if (c && now_ms > s->opts.client_ttl_ms &&
			    now_ms - c->last_seen_ms <= s->opts.client_ttl_ms) {
				c->last_seen_ms =
				    now_ms - s->opts.client_ttl_ms - 1;
				s->ctr.removes_expired_workers++;
			}
		}
	}
}

void store_abort_removes(struct store *s)
{
	struct store_rmwait *r = s->rmwait;

	while (r && r->n) { /* done here, perhaps not known there */
		pending_answer(r->p[r->n - 1], MCREPL_RPC__CODE__UNAVAILABLE,
			       "unconfirmed");
		pending_drop(s, r->n - 1);
	}
}

bool store_key_settling(const struct store *s, const char *tenant,
			const char *key)
{
	const struct store_rmwait *r = s->rmwait;
	uint64_t h;

	if (!r || !r->n || !store__key_ok(tenant, key))
		return false;
	h = stamp_key_hash(tenant, strlen(tenant), key, strlen(key));
	return mcu_map_find(&r->by_key, h, waiting_eq, NULL) != NULL;
}

size_t store_removes_waiting(const struct store *s)
{
	return s->rmwait ? s->rmwait->n : 0;
}
