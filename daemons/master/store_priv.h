/*
 * The store's private state and the helpers its files share. Included only
 * by daemons/master/store_*.c and store.c; everything else sees struct
 * store as opaque (store.h). Helpers here use the store__ prefix.
 */
#ifndef MCREPL_MASTER_STORE_PRIV_H
#define MCREPL_MASTER_STORE_PRIV_H

#include <pthread.h>

#include "store.h"

struct client {
	uint64_t id;
	uint64_t last_seen_ms;
	size_t n_segs;		  /* its mounted segments */
	struct task *head, *tail; /* all its tasks, oldest first */
	size_t n_tasks;
	struct store_journal *journal; /* HA (store_ha.c); NULL: empty */
};

/* A dropped replica's region held allocated while a WRITE grant issued on
 * it runs (store_obj.c: drop_replica), so a late writer holding the grant
 * cannot hit a new owner. Each entry holds its region allocated, so there
 * are never more entries than regions the mounted segments can hold (plus
 * those of segments gone, dropped at their expiry): bounded, and at most
 * the WRITE grant's lifetime (put_start_discard_timeout_sec, 30 s by
 * default) long. */
struct quarantine {
	uint64_t segment_id, offset, bytes, free_at_ms;
	/* Revocation (store_revoke.c): the WRITE grant's owner worker,
	 * object id and expiry, and this entry's order; seq 0 = not
	 * revocable (a segment RDMA can write one-sidedly, grants off),
	 * held until free_at_ms. */
	uint64_t client_id, object_id, grant_until_ms, seq;
};

/* What puts hold (store_quota.c): bytes (size x replicas) of objects put
 * and not yet gone, per tenant (an entry while it holds any, so at most
 * one per object) and per principal of the auth table (unwritten ones
 * too); the next put's caller (store_put_caller); while a put evicts,
 * the tenant it evicts for and the share below which it may not evict
 * another tenant's objects. */
struct store_quota {
	struct mcu_map tenants;
	struct quota_tenant *last; /* the entry last found */
	struct quota_use {
		uint64_t bytes, unwritten;
	} * who; /* [principal index], n_who of them */
	size_t n_who;
	const struct auth_table *auth;
	const struct auth_principal *caller;
	const char **why;
	bool guard; /* eviction spares tenants within their share */
	const char *evict_for;
	uint64_t share, share_skips; /* objects it could not take */
	struct store_quota_figures refused;
};

struct store {
	pthread_mutex_t lock;
	struct master_opts opts;
	/* the root of every segment's grant key (grant.h); never sent */
	uint8_t grant_secret[GRANT_SECRET_BYTES];
	/* tags stamps (stamp.h): derived from the grant secret, never sent */
	struct mcu_siphash_key stamp_key;
	uint64_t incarnation; /* stamped into regions with each version */
	/* segments, clients (store_seg.c) */
	struct segment **segs;
	size_t n_segs, cap_segs;
	struct client **clients;
	size_t n_clients, cap_clients;
	uint64_t next_segment_id;
	/* objects (store_obj.c), least recently read first */
	struct mcu_map objects;
	struct object *lru_head, *lru_tail;
	uint64_t lru_clock; /* the last lru_seq given */
	struct quarantine *quar;
	size_t n_quar, cap_quar;
	uint64_t quar_bytes; /* sum of quar[].bytes */
	uint64_t revoke_seq; /* the last quarantine.seq given */
	uint64_t next_version;
	/* objects holding a reservation, one list per kind, oldest deadline
	 * first (store_life.c) */
	struct resv_list {
		struct object *head, *tail;
	} resv[3]; /* [STORE_RESV_PUTS], [STORE_RESV_COPIES] */
	/* tasks (store_task.c) */
	struct mcu_map tasks;
	uint64_t next_task_id;
	/* dynamic replication (store_dyn*.c) */
	uint64_t next_proposal;
	mcrepl_heat_params heat;
	mcrepl_triggers *triggers;
	/* the policy engine: segment loads, projections, the threshold,
	 * reader order, retirement (store_dyn_policy.c); leases is its table */
	mcrepl_engine *engine;
	mcrepl_leases *leases;
	mcrepl_stats *stats;
	/* live dynamic copies whose source and target domains differ, by
	 * lease id (store_dyn_copy.c: mcrepl_dynamic_cross_domain_inflight);
	 * made at the first */
	struct mcu_map cross;
	/* indexes kept as things change, so no request or tick walks every
	 * object or segment (store_seg.c, store_obj.c): segments by id
	 * (mounted or leaving); the leaving ones, their replicas still being
	 * dropped, and the lost ones counted since the drain began (its log
	 * line); mounted segments per host */
	struct mcu_map seg_ids;
	struct segment **leaving;
	size_t n_leaving, cap_leaving;
	uint64_t drain_lost_r, drain_lost_o;
	struct mcu_map hosts;
	/* eviction (store_evict.c): sampling, the segment the next step
	 * starts at */
	uint64_t evict_rng;
	size_t evict_next;
	/* high availability (store_ha.c) */
	uint64_t term;
	/* the store's first and latest tick in this term: segments mounted
	 * within REMOUNT_WINDOW_MS of the first may re-register (store_ha.c) */
	uint64_t term_tick0_ms, tick_ms;
	struct orphan *orphans; /* re-registered regions without a key */
	size_t n_orphans, cap_orphans;
	struct store_removed *removed; /* keys removed in this term */
	struct store_rmwait *rmwait;   /* removes waiting for their workers */
	struct store_fences *fences;   /* expired mounts to fence (HA) */
	struct store_ha_figures ha;
	/* the counters of STORE_FIGURES (gauges are filled when taken) */
	struct store_figures ctr;
	/* bounds on puts (store_quota.c) */
	struct store_quota q;
};

/* Grow the array at *arr (any T *, elements of `size` bytes) by doubling;
 * false when out of memory. */
bool store__grow(void *arr, size_t n, size_t *cap, size_t size);

/* store_seg.c */
struct client *store__find_client(struct store *s, uint64_t id);
void store__free_segments(struct store *s);
/* The segment with this id, mounted or leaving; NULL when none. */
struct segment *store__segment_any(const struct store *s, uint64_t id);
/* Hosts with a mounted segment (kept as segments come and go). */

/* store_obj.c */
/* key and tenant can name an object (store_key_valid without a reason) */
bool store__key_ok(const char *tenant, const char *key);
/* the object named so, NULL for a bad name or none */
struct object *store__lookup(struct store *s, const char *tenant,
			     const char *key);
/* o has a replica (in any state) on segment seg_id */
bool store__on_segment(const struct object *o, uint64_t seg_id);
/* Some replica of o is on a segment of host (store_put.c). */
bool store__host_used(struct store *s, const struct object *o,
		      const char *host);
void store__free_replicas(struct store *s, struct object *o, uint64_t now_ms);
/* One more replica of o on seg (mounted), of o's size, in state st: its
 * region reserved and the replica indexed. NULL (nothing changed) when o
 * has no room for another replica, seg none for the region, or memory is
 * short. The one way a replica is created. */
struct replica *store__place_replica(struct store *s, struct object *o,
				     struct segment *seg,
				     enum replica_status st, bool dynamic);
/* Index replica r of o (its last, about to be counted in n_replicas) on
 * seg; false when memory is short. For a replica placed otherwise than by
 * store__place_replica (a region reserved at a given offset): every
 * replica must be indexed, or its segment's departure will not find it. */
bool store__link_replica(struct segment *seg, struct object *o,
			 struct replica *r);
/* Drop up to max replicas of the leaving segment seg, last indexed first;
 * objects left without replicas go. Adds the readable replicas dropped to
 * *lost_replicas (of a drained segment, only those whose object is left
 * with none readable: the others were served elsewhere as the drain
 * planned) and the objects left with none readable to *lost_objects.
 * Returns how many were dropped. */
size_t store__drain_segment(struct store *s, struct segment *seg, size_t max,
			    uint64_t now_ms, uint64_t *lost_replicas,
			    uint64_t *lost_objects);
/* The replica of o on seg_id indexed at slot of that segment's index. */
size_t store__replica_at_slot(const struct object *o, uint64_t seg_id,
			      size_t slot);
/* A COMPLETE dynamic replica of o became readable: o joins the list the
 * retirement pass walks (idempotent; it leaves when its last one goes). */
void store__release_quarantine(struct store *s, uint64_t now_ms);
/* Frees held region i now (the last entry takes its place). */
void store__quarantine_free(struct store *s, size_t i);
/* An object with room for n + 2 replicas, not in the store yet. */
struct object *store__new_object(const char *tenant, const char *key,
				 uint64_t size, uint32_t n);
void store__free_object(struct object *o);
/* Index a new object and make it the most recently read. */
void store__insert_object(struct store *s, struct object *o);
void store__free_objects(struct store *s);

/* store_life.c: the reservation lifecycle */
#define STORE_RESV_PUTS 1
#define STORE_RESV_COPIES 2
/* o holds a reservation from now (an unfinished put, or an ordinary copy
 * just started): it goes to the tail of its kind's list, whose deadlines
 * (now + a fixed timeout) are then in order. */
void store__resv_track(struct store *s, struct object *o);
/* Take o off that list (it is being deleted). */
void store__resv_untrack(struct store *s, struct object *o);
/* Client c is going away: reclaim the puts and ordinary copies it owns
 * and revoke the dynamic copies whose source or target it served. */
void store__reclaim_client(struct store *s, uint64_t client_id,
			   uint64_t now_ms);

/* store_quota.c */
/* OK when tenant's put of bytes (size x replicas) is within the caller's
 * and the tenant's bounds, else QUOTA with the reason and message; the
 * caller is forgotten either way (kept for store__quota_charge). */
McreplRpc__Code store__quota_check(struct store *s, const char *tenant,
				   uint64_t bytes, char *err, size_t errlen);
/* o was placed: charge it to its tenant and the checked caller. */
void store__quota_charge(struct store *s, struct object *o);
/* o's put ended (its bytes are no longer unwritten). */
void store__quota_written(struct store *s, struct object *o);
/* o is going: give back what it was charged. */
void store__quota_release(struct store *s, struct object *o);
/* Whether eviction may take o (store_evict.c): no guard, o is the
 * putting tenant's, or its tenant holds more than the fair share. */
bool store__quota_may_evict(struct store *s, const struct object *o);
/* Guard the evictions that follow (on) for a put of tenant (NULL: the
 * watermark's), when two or more tenants count; or end the guard. */
void store__quota_evict_for(struct store *s, bool on, const char *tenant);
void store__quota_free(struct store *s);

/* store_evict.c */
/* o may be evicted now: complete, no copy running or pending, no read
 * lease, and the put's fair-share guard allows it (store_quota.c). */
bool store__evictable(struct store *s, const struct object *o, uint64_t now);
/* o's replicas other than i that a reader can be sent to: COMPLETE, on a
 * mounted segment (store_dyn_room.c). */
uint32_t store__others_readable(struct store *s, const struct object *o,
				size_t i);
/* store_evict_segment with the caller's budget of index entries to look
 * at (*visits, decremented): a put evicting on several segments shares
 * one. */
uint64_t store__evict_budgeted(struct store *s, struct segment *seg,
			       size_t *visits, uint64_t now_ms);
/* One bounded step towards the segments' eviction goals. */
void store__evict_step(struct store *s, uint64_t now_ms);

/* store_task.c */
/* Fail and forget every task of c (its client went away). */
void store__fail_client_tasks(struct store *s, struct client *c);
void store__free_tasks(struct store *s);

/* store_ha.c: the per-worker journal of committed and dropped replicas
 * (no-ops while term is 0) */
void store__journal_commit(struct store *s, const struct object *o,
			   const struct replica *r);
void store__journal_drop(struct store *s, const struct object *o,
			 const struct replica *r);
void store__journal_free(struct client *c);
/* release segment holds past their deadline, expire orphans */
void store__ha_tick(struct store *s, uint64_t now_ms);
/* The orphan whose stamp names tenant/key becomes its object (NULL: none) */
struct object *store__adopt(struct store *s, const char *tenant,
			    const char *key);
/* o is removed in this term: no re-registered replica of its key at its
 * version or older brings it back (a bounded record; no-op while term is
 * 0). */
void store__removed_note(struct store *s, const struct object *o);
void store__removed_free(struct store *s);
/* o is removed: the orphans of its key (not adopted: o was found with
 * its own replicas) at its version or older are freed now. */
void store__orphans_removed(struct store *s, const struct object *o);

/* store_dyn_copy.c: frees the record of cross-domain copies in flight */
void store__cross_free(struct store *s);
/* store_rmwait.c: removes answered once their drops are acknowledged */
/* A drop (a commit) journaled for client_id's worker at seq (0: not
 * journaled) by the remove (the PutEnd) being made. */
void store__rm_note_drop(struct store *s, uint64_t client_id, uint64_t seq);
/* client_id applied its journal up to ack / left this master. */
void store__rm_acked(struct store *s, uint64_t client_id, uint64_t ack);
void store__rm_client_gone(struct store *s, uint64_t client_id);

/* store_fence.c: client_id expired with the segments seg_ids mounted: in
 * HA its waits end once each is fenced in etcd, otherwise now. */
void store__fence_client(struct store *s, uint64_t client_id,
			 const uint64_t *seg_ids, size_t n);
void store__fences_free(struct store *s);
/* Workers past a remove's deadline are expired in this tick. */
void store__rm_tick(struct store *s, uint64_t now_ms);
/* Forgets the waiting removes without answering them (store_destroy). */
void store__rm_free(struct store *s);

/* store_dyn_policy.c */
/* Create the policy engine and its lease table, and the read path's heat
 * parameters (after s->opts). 0, or -1 when memory is short. */
int store__policy_init(struct store *s);
/* The engine's tick: the read path's threshold, and once per heat window
 * (auto) the retirement of dynamic replicas that went cold. */
void store__policy_tick(struct store *s, uint64_t now_ms);
/* The engine's figures into f (policy_*). */
void store__policy_figures(struct store *s, struct store_figures *f);
/* Tell the engine what segment seg is now (mount, heartbeat):
 * MCREPL_EFULL past MASTER_MAX_SEGMENTS, MCREPL_ENOMEM. */
mcrepl_status store__policy_segment(struct store *s, const struct segment *seg);

/* New replicas may be placed on seg: not held (HA) nor draining. */
static inline bool store__placeable(const struct segment *seg)
{
	return !seg->held_until_ms && !seg->draining;
}

/* r can be handed to a reader: COMPLETE, and its segment not leaving
 * (the check costs nothing while no segment is leaving). */
static inline bool store__serving(const struct store *s,
				  const struct replica *r)
{
	const struct segment *seg;

	if (r->status != REPLICA_COMPLETE)
		return false;
	if (s->n_leaving == 0)
		return true;
	seg = store__segment_any(s, r->segment_id);
	return seg && !seg->leaving;
}

/* The LRU order (least recently read first), inline: the read path
 * touches it on every read. */
static inline void store__lru_unlink(struct store *s, struct object *o)
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

static inline void store__lru_append(struct store *s, struct object *o)
{
	o->lru_seq = ++s->lru_clock;
	o->lru_prev = s->lru_tail;
	o->lru_next = NULL;
	if (s->lru_tail)
		s->lru_tail->lru_next = o;
	else
		s->lru_head = o;
	s->lru_tail = o;
}

static inline void store__lru_touch(struct store *s, struct object *o)
{
	store__lru_unlink(s, o);
	store__lru_append(s, o);
}

#endif
