/*
 * mcrepl-master state: segments, clients, objects with their replicas,
 * per-client task queues, and the libmcrepl state (heat, triggers, leases,
 * stats) that drives dynamic replication. This header is the store's
 * contract: struct store is opaque here (its fields live in store_priv.h,
 * which only store_*.c include).
 *
 * Threading: the RPC loop and the admission thread share one store; every
 * store_* and dyn_* function must be called with the lock held
 * (store_lock / store_unlock) except store_create/destroy, the
 * fixed-for-life store_opts and store_segment_grant_key, the pure
 * store_key_valid, dyn_admit_batch (it locks
 * per batch) and dyn_admitter_start/stop. Records returned
 * (segments, objects, tasks) and their strings are borrowed: valid until
 * the lock is released. No function here reads a clock: now_ms is an
 * argument. Codes are mcrepl.Code values.
 *
 * The read path runs one way: service -> store_get (store_read.c) ->
 * dyn_on_read (store_dyn.c), which only records heat and queues a trigger.
 * The rest of dynamic replication (admission, placement, leases, the
 * fenced copy RPCs, warmup) lives in store_dyn*.c under the dyn_ prefix;
 * the store enters it only through the dyn_on_* hooks, the two dyn_
 * questions and dyn_sweep.
 */
#ifndef MCREPL_MASTER_STORE_H
#define MCREPL_MASTER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "util/map.h"
#include "mcrepl.pb-c.h"
#include "mcrepl/mcrepl.h"
#include "grant.h"
#include "stamp.h"

struct seg_alloc;
struct store;

/* The master's options. Defaults: master_opts_defaults() (flags.h): the
 * flag table is the one place they are written. */
struct master_opts {
	mcrepl_config cfg;		/* libmcrepl knobs */
	uint64_t client_ttl_ms;		/* silence before a client is dropped */
	uint64_t kv_lease_ttl_ms;	/* read lease per Get */
	double eviction_ratio;		/* share of a segment one pass frees */
	double eviction_high_watermark; /* usage above which eviction runs */
	uint32_t max_batch_keys;	/* most keys in one BatchGet */
	bool enable_proposal_rpc;	/* serve SubmitReplicaActionProposal */
	bool read_load_order;		/* order replicas by routed reads */
	uint32_t warmup_max_copies;	/* per warmup of a domain */
	uint64_t warmup_max_bytes;	/* per warmup of a domain */
	/* reservation deadlines (flags.c): an unfinished put may be replaced
	 * by a new PutStart after put_discard_ms and is reclaimed by the tick
	 * after put_release_ms; an ordinary copy is reclaimed after
	 * copy_release_ms */
	uint64_t put_discard_ms, put_release_ms, copy_release_ms;
	uint32_t max_heartbeat_segments; /* ids one Heartbeat may name */
	/* Hand out zero grants. Only for the benchmark baseline measuring
	 * what grants cost (--insecure_no_grants_for_benchmarks, loopback
	 * only; BENCHMARKS.md), with workers that skip the check alike;
	 * never a default. */
	bool grants_off;
	/* Every tenant without an auth-file setting of its own requires a
	 * payload digest with its PutEnds (--integrity; docs/SECURITY.md). */
	bool integrity;
};

/* ---- records the store lends out (read-only outside store_*.c) ---- */

struct segment {
	uint64_t id;
	char *name, *host, *domain, *endpoint;
	uint64_t client_id;
	uint64_t capacity;
	struct seg_alloc *alloc;
	bool dynamic_copy; /* its worker executes dynamic REPLICA_COPY */
	uint64_t base_addr;
	uint32_t rkey;
	char rdma_endpoint[256]; /* "host:rdma_cm_port", "" without rdma */
	uint64_t reads_total;	 /* last reads counter reported by the worker */
	bool reads_seen;	 /* a first heartbeat set the baseline */
	uint64_t reads_recent;	 /* reads in the last heartbeat interval */
	uint32_t inflight;	 /* dynamic copies with this as source */
	uint64_t incoming;	 /* bytes of live leases targeting it */
	/* the store's indexes (store_seg.c, store_obj.c): by id, and the
	 * objects holding a replica here, one entry per replica (a replica
	 * knows its entry: ix_slot), so leaving costs O(its replicas). A
	 * leaving segment (unmounted, worker gone) is out of the mounted list
	 * and invisible to store_segment() while its replicas are dropped
	 * over a few loop turns (store_drain). */
	struct mcu_map_node id_node;
	bool leaving;
	struct object **ix;
	size_t n_ix, cap_ix;
	uint64_t evict_left;	/* bytes eviction still means to free here */
	size_t n_dyn_ix;	/* entries of ix that are dynamic replicas */
	struct grant_key grant; /* signs its data-plane grants (grant.h) */
	/* HA: nothing new is placed here until its worker re-registered what
	 * it holds, or this deadline (0: not held; store_ha.c) */
	uint64_t held_until_ms;
	/* its worker drains it before stopping (store_drain.c): nothing new
	 * is placed here from then on */
	bool draining;
};

enum replica_status { REPLICA_PROCESSING = 1, REPLICA_COMPLETE = 2 };

/* A value: copied in and out freely. */
struct replica {
	uint64_t segment_id;
	uint64_t offset, size;
	enum replica_status status;
	bool dynamic;
	uint32_t ix_slot; /* its entry in its segment's index (store_obj.c) */
	/* The expiry of the WRITE grant handed out for its region (the put's
	 * or copy's deadline, master clock; kept once the replica is
	 * COMPLETE). A region dropped before then, for whatever reason, stays
	 * allocated until then (quarantined), so a writer still holding the
	 * grant can never write into its next owner. 0: none issued. */
	uint64_t grant_until_ms;
};

/* Most segments mounted at once (the policy engine's bound). */
#define MASTER_MAX_SEGMENTS 4096

/* Most replicas an object may have in this master. */
#define MASTER_MAX_REPLICAS 64

/* Domain-aware heat: one window per requester domain of an object. */
#define MASTER_MAX_HEAT_DOMAINS 8
struct domain_heat {
	char domain[MCREPL_DOMAIN_MAX + 1];
	mcrepl_heat_cell cell;
};

/* Fields by size (8-byte ones first, the small ones together) and the
 * names inline, so an object with short names is one 240-byte heap block:
 * the master holds millions (BENCHMARKS.md, bench_store_mem). */
struct object {
	struct mcu_map_node node;
	struct object *lru_prev, *lru_next; /* least recently read first */
	uint64_t lru_seq;   /* its place in that order: larger, more recent */
	char *tenant, *key; /* in names[] below */
	uint64_t size, version;
	struct replica *replicas;  /* n_replicas of cap_replicas */
	mcrepl_heat_cell heat;	   /* reads from every domain */
	struct domain_heat *dheat; /* domain-aware: per requester domain */
	uint64_t lease_until_ms;   /* read lease */
	uint64_t last_read_ms;	   /* or put start while incomplete */
	uint64_t reads;		   /* salt for the reader order */
	uint64_t copy_target; /* segment of a running ordinary copy, 0 none */
	/* reservations (store_life.c): the put's writer (0: none given),
	 * deadline and RPC connection (0: in-process) while incomplete; the
	 * ordinary copy's owner and deadline while copy_target is set.
	 * Objects holding one are on the store's reservation lists, in
	 * deadline order (resv_prev/resv_next, in_resv: which list). */
	uint64_t put_owner, put_deadline_ms, put_conn;
	uint64_t copy_owner, copy_deadline_ms;
	struct object *resv_prev, *resv_next;
	/* HA: recovered from a worker, written under another master whose
	 * stamp key is gone (store_ha.c); NULL: placed by this store, whose
	 * incarnation and stamp tag it has (computed when asked for, so an
	 * ordinary object holds nothing more than this pointer). */
	struct object_origin *origin;
	/* SHA-256 of the bytes, from its writer's PutEnd (STORE_DIGEST_BYTES,
	 * malloc'd); NULL: none given (store_put_digest) */
	uint8_t *digest;
	uint32_t copies; /* started copies pinning the object */
	bool complete;	 /* PutEnd done */
	uint8_t n_dheat;
	uint8_t in_resv; /* 0, or STORE_RESV_PUTS / STORE_RESV_COPIES */
	/* at most MASTER_MAX_REPLICAS, the capacity at most twice that */
	uint8_t n_replicas, cap_replicas;
	/* what its put is charged to (store_quota.c): quota_n replicas of
	 * size (0: nothing, as for a recovered object), to its tenant and to
	 * principal quota_who - 1 of the auth table (0: none) */
	uint8_t quota_n;
	uint16_t quota_who;
	char names[]; /* tenant, NUL, key, NUL */
};

/* Where a recovered object's stamps came from: the incarnation they name
 * and the tag they carry, as the worker that held them reported. */
struct object_origin {
	uint64_t incarnation, stamp_tag;
};

struct task {
	struct mcu_map_node node; /* by id */
	struct task *prev, *next; /* in the client's list, oldest first */
	uint64_t client_id;
	bool fetched;
	bool done;   /* the worker reported it; kept while its lease lives */
	bool warmup; /* queued by a warmup and not yet counted as ended */
	uint64_t lease_expires_at_ms; /* master clock; sent as time left */
	McreplRpc__Task msg;	      /* strings owned by the task */
};

/* ---- figures for /metrics (one table) ----
 * X(field, metric name after mcrepl_master_, Prometheus type, help).
 * Counters are kept by the store as things happen; gauges are computed by
 * store_figures(). Rendered once, in this order, by metrics.c. */
#define STORE_FIGURES(X)                                                       \
	X(segments, "segments", gauge, "Mounted segments")                     \
	X(clients, "clients", gauge, "Live store clients")                     \
	X(capacity, "capacity_bytes", gauge, "Capacity of all segments")       \
	X(used, "used_bytes", gauge, "Bytes allocated to replicas")            \
	X(keys, "keys", gauge, "Objects stored")                               \
	X(dyn_replica_bytes, "dynamic_replica_bytes", gauge,                   \
	  "Bytes held by readable dynamic replicas")                           \
	X(tasks, "tasks", gauge, "Tasks queued or running")                    \
	X(puts, "put_requests_total", counter, "PutStart requests accepted")   \
	X(gets, "get_requests_total", counter,                                 \
	  "GetReplicaList and BatchGetReplicaList requests")                   \
	X(get_keys, "get_keys_total", counter, "Keys looked up by reads")      \
	X(stat_requests, "stat_requests_total", counter,                       \
	  "Stat requests (heat-free lookups)")                                 \
	X(removes, "remove_requests_total", counter, "Objects removed")        \
	X(eviction_runs, "eviction_runs_total", counter, "Eviction passes")    \
	X(evicted_objects, "evicted_objects_total", counter,                   \
	  "Objects evicted")                                                   \
	X(evicted_bytes, "evicted_bytes_total", counter,                       \
	  "Replica bytes evicted")                                             \
	X(evict_visits, "eviction_visits_total", counter,                      \
	  "Replica index entries eviction looked at")                          \
	X(dyn_retired, "dynamic_replicas_retired_total", counter,              \
	  "Dynamic replicas retired by the auto policy (cold)")                \
	X(admission_queue, "admission_queue", gauge,                           \
	  "Admission triggers queued")                                         \
	X(dyn_from_primary, "dynamic_copies_from_primary_total", counter,      \
	  "Dynamic copies completed from an ordinary replica (the put's)")     \
	X(dyn_from_replica, "dynamic_copies_from_replica_total", counter,      \
	  "Dynamic copies completed from another dynamic replica (fan-out)")   \
	X(warmup_runs, "warmup_runs_total", counter,                           \
	  "Warmups of a domain run")                                           \
	X(warmup_queued, "warmup_copies_total", counter,                       \
	  "Copies queued by warmups")                                          \
	X(warmup_done, "warmup_copies_completed_total", counter,               \
	  "Warmup copies that became readable replicas")                       \
	X(warmup_failed, "warmup_copies_failed_total", counter,                \
	  "Warmup copies revoked, failed or expired")                          \
	X(warmup_inflight, "warmup_copies_inflight", gauge,                    \
	  "Warmup copies queued and not yet ended")                            \
	X(replicas_lost, "replicas_lost_total", counter,                       \
	  "Readable replicas lost with their segment (worker gone)")           \
	X(objects_lost, "objects_lost_total", counter,                         \
	  "Objects that lost their last readable replica with a segment")      \
	X(heartbeats_refused, "heartbeats_refused_total", counter,             \
	  "Heartbeats refused for naming too many segments")                   \
	X(removed_refused, "removed_reregister_refused_total", counter,        \
	  "Re-registered replicas refused: their key was removed in this "     \
	  "term")                                                              \
	X(recover_unheld, "reregister_refused_unheld_total", counter,          \
	  "Re-registered records refused: their segment was not re-mounted "   \
	  "after a leader change, or its re-registration had ended")           \
	X(recover_term, "reregister_refused_term_total", counter,              \
	  "Re-registered records refused: not written in an earlier term")     \
	X(removes_waited, "remove_waits_total", counter,                       \
	  "Removes answered once their workers acknowledged the drops (HA)")   \
	X(put_digests, "put_digests_total", counter,                           \
	  "PutEnds that brought a payload digest (kept for readers)")          \
	X(put_digest_refused, "put_digest_refused_total", counter,             \
	  "PutEnds refused: their tenant requires a digest and none came")     \
	X(puts_waited, "put_waits_total", counter,                             \
	  "PutEnds answered once their workers acknowledged the commits (HA)") \
	X(puts_unacked, "put_waits_unacknowledged_total", counter,             \
	  "PutEnds answered after 2 s without every worker's acknowledgement") \
	X(removes_expired_workers, "remove_workers_expired_total", counter,    \
	  "Workers expired for not acknowledging a remove's drop within "      \
	  "--client_ttl")                                                      \
	X(fences_written, "fences_written_total", counter,                     \
	  "Mounts of expired workers fenced in etcd (they re-register "        \
	  "nothing at a later leader)")                                        \
	X(fences_failed, "fence_writes_failed_total", counter,                 \
	  "Fence writes etcd did not confirm, or not sent yet (each is "       \
	  "tried again)")                                                      \
	X(removed_forgotten, "removed_keys_forgotten_total", counter,          \
	  "Keys removed in this term dropped from the bounded record of "      \
	  "them")                                                              \
	X(segments_leaving, "segments_leaving", gauge,                         \
	  "Segments gone whose replicas are still being dropped")              \
	X(replicas_leaving, "replicas_leaving", gauge,                         \
	  "Replicas of leaving segments not yet dropped")                      \
	X(retire_visits, "dynamic_retire_visits_total", counter,               \
	  "Objects the retirement pass looked at (those holding a dynamic "    \
	  "replica)")                                                          \
	X(quarantined, "regions_quarantined_total", counter,                   \
	  "Regions kept allocated after their replica went, until a write "    \
	  "grant or lease for them expired")                                   \
	X(quar_regions, "regions_quarantined", gauge,                          \
	  "Regions held now after their replica went (a write grant or lease " \
	  "for them still runs)")                                              \
	X(quar_bytes, "quarantined_bytes", gauge,                              \
	  "Bytes of the regions held now after their replica went")            \
	X(grants_revoked, "write_grants_revoked_total", counter,               \
	  "Held regions released before their write grant expired: the "       \
	  "worker acknowledged the grant's revocation")                        \
	X(policy_nodes, "policy_nodes", gauge,                                 \
	  "Nodes serving reads in the policy engine's cluster view")           \
	X(policy_window_reads, "policy_window_reads", gauge,                   \
	  "Reads the master routed over the last heat window")                 \
	X(policy_threshold, "policy_trigger_threshold", gauge,                 \
	  "Hits over the heat window at which a key is proposed")              \
	X(policy_projections, "policy_projections_total", counter,             \
	  "Granted copies whose read load the engine projected")               \
	X(policy_dynamic_replicas, "policy_dynamic_replicas", gauge,           \
	  "Readable dynamic replicas the engine tracks for retirement")        \
	X(policy_untracked, "policy_untracked_total", counter,                 \
	  "Dynamic replicas not tracked (engine bound), left to eviction")     \
	X(policy_room, "policy_room_total", counter,                           \
	  "Hot copies with no target under the watermark for which eviction "  \
	  "made room")                                                         \
	X(policy_room_bytes, "policy_room_bytes_total", counter,               \
	  "Bytes eviction was asked to free for hot copies")                   \
	X(policy_room_budget, "policy_room_refused_budget_total", counter,     \
	  "Room for a hot copy refused: the heat window's budget was spent")   \
	X(policy_room_none, "policy_room_refused_none_total", counter,         \
	  "Room for a hot copy refused: no segment could take the copy")       \
	X(room_dropped_dynamic, "policy_room_dropped_dynamic_total", counter,  \
	  "Dynamic replicas dropped for a hot copy's room (object readable)")  \
	X(room_dropped_duplicate, "policy_room_dropped_duplicate_total",       \
	  counter,                                                             \
	  "Replicas dropped for a hot copy's room, another copy readable")     \
	X(room_evicted_only, "policy_room_evicted_only_copies_total", counter, \
	  "Objects evicted for a hot copy's room, their only copy (a miss)")   \
	X(room_short, "policy_room_refused_short_total", counter,              \
	  "Room granted that eviction could not make under the room rule")     \
	X(policy_room_headroom, "policy_room_headroom_total", counter,         \
	  "Hot copies placed under room_fill_limit with nothing evicted")      \
	X(evict_gave_back, "eviction_gave_back_dynamic_total", counter,        \
	  "Dynamic replicas, their object readable elsewhere, eviction "       \
	  "dropped before any other copy")                                     \
	X(drains, "drains_total", counter,                                     \
	  "Drain requests of workers about to stop (store_drain.c)")           \
	X(drain_copies_queued, "drain_copies_total", counter,                  \
	  "Copies queued to move objects off draining workers")

/* Reservations reclaimed by the master, one labeled counter family
 * (mcrepl_master_reservations_reclaimed_total{kind,reason}):
 * X(field, kind, reason). */
#define STORE_RECLAIMS(X)                                                      \
	X(put_deadline, "put", "deadline")                                     \
	X(put_owner, "put", "owner_expired")                                   \
	X(put_conn, "put", "client_gone")                                      \
	X(copy_deadline, "copy", "deadline")                                   \
	X(copy_owner, "copy", "owner_expired")                                 \
	X(dyn_worker, "dynamic_copy", "worker_expired")

struct store_figures {
#define STORE_FIGURE_FIELD(field, name, type, help) uint64_t field;
	STORE_FIGURES(STORE_FIGURE_FIELD)
#undef STORE_FIGURE_FIELD
	struct {
#define STORE_RECLAIM_FIELD(field, kind, reason) uint64_t field;
		STORE_RECLAIMS(STORE_RECLAIM_FIELD)
#undef STORE_RECLAIM_FIELD
	} reclaimed;
};

/* ---- the store (store.c) ---- */

/* A new store with a copy of *o; grant_secret (GRANT_SECRET_BYTES random
 * bytes, new at every start) is the root each segment's data-plane grant
 * key is derived from (grant.h);
 * incarnation (random, non-zero, new at every start) is stamped into every
 * object's regions with its version (runtime/data/stamp.h), so nothing
 * placed by an earlier master is ever served as one of this master's
 * objects. 0, or -ENOMEM. The caller frees it with store_destroy (NULL is
 * fine). */
int store_create(const struct master_opts *o,
		 const uint8_t grant_secret[GRANT_SECRET_BYTES],
		 uint64_t incarnation, struct store **out);
void store_destroy(struct store *s);
void store_lock(struct store *s);
void store_unlock(struct store *s);
/* The options the store was created with; fixed for its life, so readable
 * without the lock. */
const struct master_opts *store_opts(const struct store *s);
/* The key segment_id's data-plane grants are signed with (grant.h: derived
 * from the root secret, which never leaves the store), into out; for that
 * segment's MountSegmentResponse, to its worker only. */
void store_segment_grant_key(const struct store *s, uint64_t segment_id,
			     uint8_t out[GRANT_SECRET_BYTES]);
/* This master's incarnation (fixed for the store's life). */
uint64_t store_incarnation(const struct store *s);
/* The largest object a put may name: its region (the stamp, then the
 * object, rounded up to the allocator's 64-byte unit) still counts in 64
 * bits. 2^64 - 128. */
#define STORE_MAX_OBJECT_BYTES                                                 \
	((UINT64_MAX & ~(uint64_t)(SEG_ALLOC_DEFAULT_ALIGN - 1u)) - STAMP_BYTES)
/* Bytes a replica of a size-byte object occupies: its stamp, then the
 * object (runtime/data/stamp.h). Every object's size passed
 * store_size_valid (puts and recovered records), so this never wraps. */
static inline uint64_t store_region_bytes(uint64_t size)
{
	return STAMP_BYTES + size;
}
/* The master's periodic housekeeping at now_ms: sweep leases, free due
 * quarantine, expire clients and, at most once a second (*last_evict_ms
 * is when it last ran; updated), evict and start a new routing second. */
void store_tick(struct store *s, uint64_t now_ms, uint64_t *last_evict_ms);
/* Most replicas of leaving segments one loop turn drops. */
#define STORE_DRAIN_CHUNK 2048
/* One turn of dropping the replicas of leaving segments (at most
 * STORE_DRAIN_CHUNK; store_tick runs one): true while some are left. The
 * loop runs more turns, other events between them, while store_backlog()
 * says so. */
bool store_drain(struct store *s, uint64_t now_ms);
bool store_backlog(const struct store *s);
/* Every figure of STORE_FIGURES at this moment. */
void store_figures(struct store *s, struct store_figures *f);
/* libmcrepl's RFC counters copied into dst (mcrepl_stats_copy): under
 * the store lock, with store_snapshot, they agree with the store's
 * figures; /metrics renders the copy after the lock is released. */
void store_copy_stats(struct store *s, mcrepl_stats *dst);

/* ---- high availability (store_ha.c, docs/HA.md) ---- */
/* The leader's term (0: a single master, the default). Versions handed
 * out from now carry its low 32 bits in their high 32 bits; a put or copy
 * naming a version of another term on an object this store does not hold
 * is STALE ("old term"). Committed replicas and the regions dropped are
 * journaled per worker and fed to it with FetchTasks, so a worker keeps an
 * index of what it holds and re-registers it with the next leader. */
void store_set_term(struct store *s, uint64_t term);
uint64_t store_term(const struct store *s);
/* The incarnation o's stamps name: the master's that placed it (recovered
 * objects keep the one they were written under). */
uint64_t store_object_incarnation(const struct store *s,
				  const struct object *o);
/* The tag o's stamps carry (stamp.h): computed with the store's stamp key,
 * or kept from its worker for a recovered object. 0 with stamp tags off
 * (the benchmark baseline, master_opts.grants_off). */
uint64_t store_object_stamp_tag(const struct store *s, const struct object *o);
struct store_ha_figures {
	uint64_t objects_recovered, replicas_recovered, recover_refused;
	uint64_t journal_overflow;
	uint64_t orphans, orphans_adopted, orphans_expired; /* keyless */
	uint64_t superseded; /* older versions replaced by a newer record */
};
void store_ha_figures(struct store *s, struct store_ha_figures *f);
/* A WRITE grant the master revokes on its worker (store_revoke.c). */
struct write_revoke {
	uint64_t seq, segment_id, offset, length, object_id, until_ms;
};
/* FetchTasks of client_id that applied every revocation up to seq ack:
 * releases those held regions at once (mcrepl_master_write_grants_
 * revoked_total), then gives the next ones, up to max, in seq order, into
 * out. Returns how many. A region whose worker never acknowledges stays
 * held until its grant's expiry (store_tick). */
size_t store_revokes(struct store *s, uint64_t client_id, uint64_t ack,
		     struct write_revoke *out, size_t max);

/* Up to max journal entries of client_id after seq ack (entries up to ack
 * are forgotten: the worker applied them) into out; strings borrowed
 * until the lock is released. Returns how many. */
size_t store_journal_fill(struct store *s, uint64_t client_id, uint64_t ack,
			  McreplRpc__IndexEntry *out, size_t max);
/* A worker re-registers a committed replica it holds on its segment
 * seg_id (e: as the journal fed it; the worker verified its stamp): the
 * region is reserved at its offset and the object recreated (or given
 * this replica). OK, or INVALID_ARGUMENT / PERMISSION_DENIED / NO_SPACE
 * (overlap) / ALREADY_EXISTS (another version holds the key) with the
 * reason in err. */
McreplRpc__Code store_recover(struct store *s, uint64_t client_id,
			      uint64_t seg_id, const McreplRpc__IndexEntry *e,
			      uint64_t now_ms, char *err, size_t errlen);
/* A Remove that holds through failovers (store_rmwait.c, docs/HA.md):
 * store_remove(), and in an HA store (a term) with done given, when some
 * worker held a replica, *later is set and done(arg, code, reason) is
 * called once: OK when every such worker acknowledged the drop in
 * FetchTasks or left this master (at most --client_ttl: a worker that
 * does not acknowledge by then is expired); UNAVAILABLE "recovering"
 * after 2 s without (asked again: a try naming the same request_id, or
 * any Remove while the key is absent if request_id is 0, waits with the
 * first one, and is answered OK for 20 s after it settled, whatever the
 * key holds by then); UNAVAILABLE "unconfirmed" from
 * store_abort_removes() (made here, perhaps not known at the next
 * leader). TOO_MANY (nothing removed) while 4096 removes
 * wait. */
typedef void (*store_remove_done_fn)(void *arg, McreplRpc__Code code,
				     const char *reason);
McreplRpc__Code store_remove_acked(struct store *s, const char *tenant,
				   const char *key, uint64_t request_id,
				   uint64_t now_ms, store_remove_done_fn done,
				   void *arg, bool *later, char *err,
				   size_t errlen);
/* A PutEnd that holds through failovers (store_rmwait.c, docs/HA.md):
 * store_put_end(), and in an HA store with done given, when the put
 * committed replicas, *later is set and done(arg, OK, NULL) is called once
 * every worker holding one acknowledged its commit in FetchTasks (its
 * index names the key: a next leader hears of it whatever happens), or
 * left, or after 2 s (counted: such a put survives a failover only as an
 * orphan); UNAVAILABLE "unconfirmed" from store_abort_removes() (done
 * here, perhaps not known at the next leader: the store client does not
 * put it again blindly). While 4096 removes and puts wait, it does not
 * wait. */
McreplRpc__Code store_put_end_acked(struct store *s, const char *tenant,
				    const char *key, uint64_t version,
				    uint64_t now_ms, store_remove_done_fn done,
				    void *arg, bool *later);
/* The leader steps down: every waiting remove and put ends UNAVAILABLE
 * "unconfirmed" (made here; whether the next leader will know is not
 * known). Before store_destroy(). */
void store_abort_removes(struct store *s);
size_t store_removes_waiting(const struct store *s);
/* HA: a put or remove of tenant/key is still waiting for its workers'
 * acknowledgements. Until it settles, no answer about the key may show
 * it: a next leader may not have it (store_put_end_acked,
 * store_remove_acked). */
bool store_key_settling(const struct store *s, const char *tenant,
			const char *key);
#define STORE_SETTLING_MSG                                                     \
	"a put or remove of this key is being confirmed: ask again"
/* Hold segment seg_id (mounted by client_id) out of placement until
 * until_ms, or release it (until_ms 0) once re-registration is done; the
 * tick releases holds past their deadline. No-op without a term. */
void store_hold_segment(struct store *s, uint64_t client_id, uint64_t seg_id,
			uint64_t until_ms);
/* Drain (store_drain.c): the segments of client_id (or, with client_id
 * 0, of host) are about to go; every object no replica off them serves
 * gets a plain REPLICA_COPY task for the worker holding it, to another
 * segment (a host without the object first, then the most free bytes).
 * From then on nothing new (puts, copies, dynamic copies) is placed on
 * those segments. OK, NOT_FOUND (no such segment), INVALID_ARGUMENT
 * (neither given). */
struct store_drain_figures {
	uint32_t segments;
	uint64_t objects_left, copies_queued, copies_pending, no_target;
};
McreplRpc__Code store_drain_worker(struct store *s, uint64_t client_id,
				   const char *host, uint64_t now_ms,
				   struct store_drain_figures *f);

/* Some segment is held (a worker is re-registering). */
bool store_segments_held(const struct store *s);

/* ---- segments, clients and heartbeats (store_seg.c) ---- */
struct mount_args {
	uint64_t client_id;
	const char *host, *domain, *name, *endpoint;
	uint64_t capacity, base_addr;
	uint32_t rkey;
	bool dynamic_copy;
	const char *rdma_endpoint; /* NULL or "" without rdma */
};
/* Mount a segment (idempotent for its own client). A domain that joins a
 * running domain-aware cluster is warmed (dyn_on_new_domain). */
McreplRpc__Code store_mount(struct store *s, const struct mount_args *a,
			    uint64_t now_ms, uint64_t *segment_id, char *err,
			    size_t errlen);
/* The segment leaves at once (no placement, read or copy uses it from
 * now on; its objects are read from their other replicas); its replicas
 * are dropped by store_drain, the lost ones counted then
 * (replicas_lost, objects_lost). */
McreplRpc__Code store_unmount(struct store *s, uint64_t client_id,
			      uint64_t segment_id, uint64_t now_ms);
/* A client's heartbeat: n (segment id, reads) pairs. INVALID_ARGUMENT
 * when n exceeds max_heartbeat_segments; otherwise at most as many ids as
 * the client has mounted segments are looked at (the rest ignored), so the
 * work is bounded by what the client mounted, not by what it sends. */
McreplRpc__Code store_heartbeat(struct store *s, uint64_t client_id,
				const uint64_t *seg_ids, const uint64_t *reads,
				size_t n, uint64_t now_ms);
/* Drop clients silent for longer than client_ttl (their segments leave as
 * with store_unmount). Returns how many. */
size_t store_expire_clients(struct store *s, uint64_t now_ms);

/* HA: the mounts of workers this leader expired whose fence (hafence.h)
 * is still to be written to etcd, up to cap segment ids; each is handed
 * out once, until store_fence_done() says its write failed. The removes
 * waiting on an expired worker end only once all its fences are
 * written: then no later leader takes back what they removed. */
size_t store_fences_to_write(struct store *s, uint64_t *segment_ids,
			     size_t cap);
void store_fence_done(struct store *s, uint64_t segment_id, bool written);
/* True when client_id is mounted (known to the master). */
bool store_client_known(struct store *s, uint64_t client_id);
/* The mounted segment with this id (O(1)); NULL when none or leaving. */
struct segment *store_segment(struct store *s, uint64_t id);
/* Mounted segments, in no particular order: i < store_n_segments(s). */
size_t store_n_segments(const struct store *s);
const struct segment *store_segment_at(const struct store *s, size_t i);
uint64_t store_used(const struct segment *seg);

/* ---- objects, puts and removes (store_obj.c, store_put.c) ---- */
/* ---- bounds on puts (store_quota.c, docs/SECURITY.md) ---- */
/* Refusals of a put by its bounds, by Result.reason: QUOTA for the
 * caller's unwritten bytes (reserve=), its written and unwritten ones
 * (quota=), its tenant's (a tenant line); NO_SPACE fair_share when
 * room could only come from evicting tenants at or below their fair
 * share. X(field, reason). */
#define STORE_QUOTA_REFUSALS(X)                                                \
	X(reserve, "quota_reserve")                                            \
	X(principal, "quota_principal")                                        \
	X(tenant, "quota_tenant")                                              \
	X(fair_share, "fair_share")
struct store_quota_figures {
#define STORE_QUOTA_FIELD(field, reason) uint64_t field;
	STORE_QUOTA_REFUSALS(STORE_QUOTA_FIELD)
#undef STORE_QUOTA_FIELD
};
struct auth_table;
struct auth_principal;
/* Who calls the next store_put_start (under the same lock hold): the
 * auth table and the caller's principal in it (NULL, NULL: none, no
 * bound), and where its refusal's reason label goes (NULL: nowhere).
 * store_put_start uses it once and forgets it. */
void store_put_caller(struct store *s, const struct auth_table *t,
		      const struct auth_principal *p, const char **why);
void store_quota_figures(struct store *s, struct store_quota_figures *f);

/* ---- /metrics' copy of the store (store.c, metrics.c) ---- */
/* Every figure /metrics shows from the store, taken at one moment. */
struct store_snapshot {
	struct store_figures fig;
	struct store_quota_figures quota;
	struct store_ha_figures ha;
};
/* Copies them all into *out, under the store lock the caller holds: one
 * hold per scrape; nothing is formatted or allocated under it. */
void store_snapshot(struct store *s, struct store_snapshot *out);

struct object *store_find(struct store *s, const char *tenant, const char *key);
/* True when a COMPLETE object (PutEnd done) has this name. */
bool store_exists(struct store *s, const char *tenant, const char *key);
McreplRpc__Code store_put_start(struct store *s, const char *tenant,
				const char *key, uint64_t size,
				uint32_t replicas, uint64_t now_ms,
				struct object **out, char *err, size_t errlen);
/* The put's writer (PutStartRequest.client_id; 0: none): when it is a
 * known client and expires, its unfinished puts are reclaimed. */
void store_put_owner(struct store *s, struct object *o, uint64_t client_id);
/* The RPC connection that started the put (rpc_call_conn_id(); 0:
 * in-process, none): see store_conns_gone. */
void store_put_conn(struct store *s, struct object *o, uint64_t conn_id);
/* The RPC connections conn_ids[0..n) closed (in any order; the array is
 * sorted in place): every unfinished put one of them started is released
 * at once (its regions freed, or held until the worker acknowledges the
 * revocation of their WRITE grants, store_revokes), unless its writer
 * names a live client id, a session that may come back on another
 * connection: that put waits for its PutEnd, its deadline, or the id's
 * expiry. Counted as reclaimed{kind="put",reason="client_gone"}; returns
 * how many (store_life.c). */
size_t store_conns_gone(struct store *s, uint64_t *conn_ids, size_t n,
			uint64_t now_ms);
/* Reclaim reservations past their deadline (puts, ordinary copies);
 * returns how many (store_life.c; store_tick calls it). */
size_t store_reclaim_reservations(struct store *s, uint64_t now_ms);
McreplRpc__Code store_put_end(struct store *s, const char *tenant,
			      const char *key, uint64_t version);
/* Payload digests (docs/SECURITY.md "Payload digests"): the digest of
 * the put (tenant, key, version) before its store_put_end, under the same
 * lock hold: len 0 (none given) or STORE_DIGEST_BYTES. OK when kept or
 * none was needed; INVALID_ARGUMENT for another length; REJECTED with
 * why "digest_required" when required (the tenant's setting) and none
 * came; the put's own codes (NOT_FOUND, STALE, ALREADY_EXISTS) as
 * store_put_end gives them, leaving the object as it was. err: one line. */
#define STORE_DIGEST_BYTES 32
McreplRpc__Code store_put_digest(struct store *s, const char *tenant,
				 const char *key, uint64_t version,
				 const uint8_t *digest, size_t len,
				 bool required, char *err, size_t errlen);
McreplRpc__Code store_put_revoke(struct store *s, const char *tenant,
				 const char *key, uint64_t version);
McreplRpc__Code store_remove(struct store *s, const char *tenant,
			     const char *key, uint64_t now_ms, char *err,
			     size_t errlen);
/* A READ grant of a replica of object version lives this long past a read
 * (the read lease and this slack; the worker's stamp check keeps a grant
 * that outlives the lease to the same object). */
#define STORE_READ_GRANT_SLACK_MS 10000u
/* The expiry of READ grants handed out at now_ms. */
uint64_t store_read_grant_expiry(const struct store *s, uint64_t now_ms);
/* The data-plane grant (grant.h) for op (DATA_OP_READ or DATA_OP_WRITE) on
 * replica r's whole region, naming version, until expires_ms, signed with
 * the key of r's segment (seg: that segment when the caller holds it, or
 * NULL); zeros when grants are off. */
struct data_grant store_grant(const struct store *s, uint8_t op,
			      const struct segment *seg,
			      const struct replica *r, uint64_t version,
			      uint64_t expires_ms);
/* Room for one more replica in o (false at MASTER_MAX_REPLICAS / OOM). */
bool store_reserve_replica(struct object *o);
/* Free a replica's region and drop it from the object (index i). */
void store_drop_replica(struct store *s, struct object *o, size_t i,
			uint64_t now_ms);
/* Drop replica i of o like store_drop_replica, but keep its region
 * allocated until now + lease TTL (a stale writer may still hold a grant). */
void store_drop_replica_quarantined(struct store *s, struct object *o, size_t i,
				    uint64_t now_ms);
/* Unlink and free an object (its replicas must be gone). */
void store_delete_object(struct store *s, struct object *o);

/* The auditor of the store's indexes (tests, fuzzing; O(objects), never
 * on a serving loop): every replica is in its segment's index (mounted or
 * leaving) at its slot and every entry names one; the objects on the
 * dynamic-replica list are those holding a COMPLETE dynamic replica. */
bool store_indexes_consistent(struct store *s);

/* ---- the read path (store_read.c) ---- */
/* true when the key (1..MCREPL_KEY_MAX bytes) and tenant (at most
 * MCREPL_TENANT_MAX) can name an object; otherwise false, the reason in err. */
bool store_key_valid(const char *tenant, const char *key, char *err,
		     size_t errlen);
/* One read request (GetReplicaList or BatchGetReplicaList) begins: counted
 * once; its keys then go through store_get. */
void store_read_begin(struct store *s);
/* One key of a read: COMPLETE replicas in reader order into order[]
 * (indexes into obj->replicas; at most cap), read lease extended, and
 * dyn_on_read told of the read (heat, at most one trigger per hot key per
 * window). INVALID_ARGUMENT for a key or tenant store_key_valid() refuses;
 * NOT_FOUND when nothing is readable. */
McreplRpc__Code store_get(struct store *s, const char *tenant, const char *key,
			  const char *domain, uint64_t now_ms,
			  struct object **out, size_t *order, size_t cap,
			  size_t *n_out);
/* A look at the object without reading it (a Stat request; counted): the
 * COMPLETE replicas of store_get in metadata order; no heat, LRU, read
 * lease or routed-read count. INVALID_ARGUMENT (reason in err) for a
 * missing or oversized key or tenant; NOT_FOUND as store_get. */
McreplRpc__Code store_stat(struct store *s, const char *tenant, const char *key,
			   struct object **out, size_t *order, size_t cap,
			   size_t *n_out, char *err, size_t errlen);

/* ---- ordinary (client-driven) copies (store_copy.c) ---- */
/* Copy a COMPLETE object to a segment: reserves the target region. */
/* caller: the CopyStart caller's client id, the copy's owner: only it
 * may end or revoke the copy (PERMISSION_DENIED otherwise); the copy is
 * reclaimed past copy_release_ms or when the owner (a known client)
 * expires. */
McreplRpc__Code store_copy_start(struct store *s, uint64_t caller,
				 const char *tenant, const char *key,
				 uint64_t src_seg, uint64_t dst_seg,
				 uint64_t now_ms, struct replica *src_out,
				 struct replica *dst_out, char *err,
				 size_t errlen);
McreplRpc__Code store_copy_finish(struct store *s, uint64_t caller,
				  const char *tenant, const char *key,
				  bool success, uint64_t now_ms);

/* ---- tasks (store_task.c) ---- */
struct task *store_task(struct store *s, uint64_t id);
/* Up to max queued tasks of a client, moved to fetched; returns count. */
size_t store_fetch_tasks(struct store *s, uint64_t client_id, struct task **out,
			 size_t max, uint64_t now_ms);
/* A worker's MarkTaskToComplete: NOT_FOUND for an id never issued,
 * PERMISSION_DENIED for another client's task, else OK (a task already
 * closed is a late report, not a wrong one). */
McreplRpc__Code store_task_report(struct store *s, uint64_t client_id,
				  uint64_t task_id);
/* Forget a task (completed or failed). */
void store_finish_task(struct store *s, struct task *t);
/* Queue a task for client_id; the task takes copies of the strings. NULL
 * when the client is unknown or memory is short. */
struct task *store_add_task(struct store *s, uint64_t client_id,
			    const McreplRpc__Task *msg, uint64_t now_ms,
			    uint64_t lease_expires_at_ms);

/* ---- eviction (store_evict.c) ---- */
/* Each victim is the least recently read of this many replicas sampled on
 * its segment (every one of them on a segment holding no more). */
#define STORE_EVICT_SAMPLES 8
/* Most index entries one eviction call (or one tick's step) looks at. */
#define STORE_EVICT_VISITS 4096
/* Free eviction_ratio of a segment's capacity, within STORE_EVICT_VISITS;
 * returns bytes freed. */
uint64_t store_evict_segment(struct store *s, struct segment *seg,
			     uint64_t now_ms);
/* Give every segment above the high watermark an eviction goal (the
 * others none) and take a first step towards them; store_tick then takes
 * one step a tick. */
void store_evict_all(struct store *s, uint64_t now_ms);

/* ---- dynamic replication (store_dyn*.c, prefix dyn_) ---- */
/* Hooks the store calls; each is the only way in from its operation. */
/* The read path: record heat; queue a trigger when the key turns hot. */
void dyn_on_read(struct store *s, struct object *o, const char *domain,
		 uint64_t now_ms);
/* Remove: BUSY (reason in err) when a dynamic copy of the key started;
 * otherwise clears its pending leases, failing their tasks. */
McreplRpc__Code dyn_on_remove(struct store *s, const char *tenant,
			      const char *key, char *err, size_t errlen);
/* A replica r left o (seg: its segment, NULL when gone). */
void dyn_on_replica_dropped(struct store *s, const struct object *o,
			    const struct replica *r, const struct segment *seg,
			    uint64_t now_ms);
/* A COMPLETE dynamic replica r of o came back at a failover (its worker
 * re-registered it): counted and tracked for retirement, as a copy made
 * here, but no copy task counted. */
void dyn_on_replica_recovered(struct store *s, const struct object *o,
			      const struct replica *r);
/* A client went away: its dynamic copies (as source or target) are
 * retired through the lease table, each task failed once. */
void dyn_on_client_gone(struct store *s, uint64_t client_id, uint64_t now_ms);
/* A task of a client that went away was failed. */
void dyn_on_task_failed(struct store *s, const struct task *t);
/* A segment of a new domain joined a running cluster (domain-aware). */
void dyn_on_new_domain(struct store *s, const char *domain, uint64_t now_ms);
/* Questions the store asks: a dynamic copy of the key is pending (its
 * object must not be evicted or copied otherwise); the lease of a dynamic
 * task still lives (its task is kept after the worker reports it). */
bool dyn_key_is_pending(struct store *s, const char *tenant, const char *key,
			uint64_t now_ms);
bool dyn_task_lease_live(struct store *s, const struct task *t);
/* Expire leases, fail their tasks, free their targets. */
size_t dyn_sweep(struct store *s, uint64_t now_ms);

/* The admission worker. dyn_admit_batch pops up to max queued triggers
 * (the queue is thread-safe) and judges them under the store lock, which
 * it takes itself per batch so reads never wait behind a whole run: call
 * it without the lock. Returns how many were processed. */
size_t dyn_admit_batch(struct store *s, size_t max, uint64_t now_ms);
/* A thread that runs dyn_admit_batch(s, batch, now_ms()) until stopped. */
struct dyn_admitter;
int dyn_admitter_start(struct store *s, size_t batch, uint64_t (*now_ms)(void),
		       struct dyn_admitter **out);
/* Stop and join the thread; NULL is fine. */
void dyn_admitter_stop(struct dyn_admitter *a);

/* Judge one proposal (the SubmitReplicaActionProposal path). */
mcrepl_status dyn_propose(struct store *s, const mcrepl_proposal *p,
			  uint64_t now_ms, mcrepl_propose_result *res);
/* The fenced copy RPCs. *reason receives a static reason label when the
 * call is refused. */
McreplRpc__Code dyn_copy_start(struct store *s, const mcrepl_fence *f,
			       const char *tenant, const char *key,
			       uint64_t task_id, uint64_t now_ms,
			       struct replica *src_out, struct replica *dst_out,
			       const char **reason);
McreplRpc__Code dyn_copy_end(struct store *s, const mcrepl_fence *f,
			     const char *tenant, const char *key,
			     uint64_t now_ms, const char **reason);
McreplRpc__Code dyn_copy_revoke(struct store *s, const mcrepl_fence *f,
				const char *tenant, const char *key,
				uint64_t now_ms, const char **reason);
/* Warm `domain` with the hottest objects it lacks (domain-aware only):
 * queues at most max_copies copies of at most max_bytes in total; returns
 * how many were queued. The candidates are the objects read within the
 * heat window, at most STORE_WARMUP_SCAN of them, the most recently read
 * first (a mount never walks every object). */
#define STORE_WARMUP_SCAN 16384
uint32_t dyn_warmup(struct store *s, const char *domain, uint32_t max_copies,
		    uint64_t max_bytes, uint64_t now_ms);

#endif
