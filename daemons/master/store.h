/*
 * mcrepl-master state: segments, clients, objects with their replicas,
 * per-client task queues, and the libmcrepl state (heat, triggers, leases,
 * stats) that drives dynamic replication.
 *
 * Threading: the RPC loop and the admission thread share one store; every
 * store_* function except store_create/destroy must be called with
 * store->lock held (store_lock / store_unlock). No function here reads a
 * clock: now_ms is an argument. Codes are mcrepl.Code values.
 */
#ifndef MCREPL_MASTER_STORE_H
#define MCREPL_MASTER_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "map.h"
#include "mcrepl.pb-c.h"
#include "mcrepl/mcrepl.h"

struct seg_alloc;

struct master_opts {
	mcrepl_config cfg;		/* libmcrepl knobs */
	uint64_t client_ttl_ms;		/* 10000 */
	uint64_t kv_lease_ttl_ms;	/* 10000: read lease per Get */
	double eviction_ratio;		/* 0.05 */
	double eviction_high_watermark; /* 0.90 */
	uint32_t max_batch_keys;	/* 4096 */
	bool enable_proposal_rpc;	/* false */
	bool read_load_order;		/* false: salted order */
	uint32_t warmup_max_copies;	/* 64 per warmup */
	uint64_t warmup_max_bytes;	/* 1 GiB per warmup */
};

void master_opts_init(struct master_opts *o);

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
	uint64_t reads_total;  /* last reads counter reported by the worker */
	bool reads_seen;       /* a first heartbeat set the baseline */
	uint64_t reads_recent; /* reads in the last heartbeat interval */
	uint32_t inflight;     /* dynamic copies with this as source */
	uint64_t incoming;     /* bytes of live leases targeting it */
	/* reads routed to it per second (reader order, read-load-aware
	 * placement), plus the projected share of copies granted to it */
	uint64_t routed_now, routed_prev;
};

enum replica_status { REPLICA_PROCESSING = 1, REPLICA_COMPLETE = 2 };

struct replica {
	uint64_t segment_id;
	uint64_t offset, size;
	enum replica_status status;
	bool dynamic;
};

/* Domain-aware heat: one window per requester domain of an object. */
#define MASTER_MAX_HEAT_DOMAINS 8
struct domain_heat {
	char domain[MCREPL_DOMAIN_MAX + 1];
	mcrepl_heat_cell cell;
};

struct object {
	struct mcu_map_node node;
	struct object *lru_prev, *lru_next; /* least recently read first */
	char *tenant, *key;
	uint64_t size, version;
	bool complete;		  /* PutEnd done */
	struct replica *replicas; /* n_replicas of cap_replicas */
	size_t n_replicas, cap_replicas;
	mcrepl_heat_cell heat;	   /* reads from every domain */
	struct domain_heat *dheat; /* domain-aware: per requester domain */
	uint8_t n_dheat;
	uint64_t lease_until_ms; /* read lease */
	uint64_t last_read_ms;	 /* or put start while incomplete */
	uint64_t reads;		 /* salt for the reader order */
	uint32_t copies;	 /* started copies pinning the object */
	uint64_t copy_target; /* segment of a running ordinary copy, 0 none */
};

struct task {
	struct mcu_map_node node; /* by id */
	struct task *prev, *next;     /* in the client's list, oldest first */
	uint64_t client_id;
	bool fetched;
	bool done;   /* the worker reported it; kept while its lease lives */
	bool warmup; /* queued by a warmup and not yet counted as ended */
	uint64_t lease_expires_at_ms; /* master clock; sent as time left */
	McreplRpc__Task msg;	      /* strings owned by the task */
};

struct client {
	uint64_t id;
	uint64_t last_seen_ms;
	struct task *head, *tail; /* all its tasks, oldest first */
	size_t n_tasks;
};

struct store {
	pthread_mutex_t lock;
	struct master_opts opts;
	uint64_t grant_key;
	struct segment **segs;
	size_t n_segs, cap_segs;
	struct client **clients;
	size_t n_clients, cap_clients;
	struct mcu_map objects, tasks;
	struct object *lru_head, *lru_tail;
	/* Regions of copies that ended badly stay allocated for one lease TTL
	 * so a late writer holding their grant cannot hit a new owner. */
	struct quarantine {
		uint64_t segment_id, offset, free_at_ms;
	} * quar;
	size_t n_quar, cap_quar;
	uint64_t next_segment_id, next_version, next_task_id, next_proposal;
	mcrepl_heat_params heat;
	mcrepl_triggers *triggers;
	mcrepl_leases *leases;
	mcrepl_stats *stats;
	/* store's own counters for /metrics */
	uint64_t evicted_objects, evicted_bytes, evictions_runs;
	uint64_t puts, gets, get_keys, removes, stats_req;
	uint64_t dyn_replica_bytes; /* held by readable dynamic replicas */
	uint64_t warmup_runs, warmup_queued; /* warmups; copies they queued */
	uint64_t warmup_done, warmup_failed; /* of those copies, ended */
};

int store_create(const struct master_opts *o, uint64_t grant_key,
		 struct store **out);
void store_destroy(struct store *s);
void store_lock(struct store *s);
void store_unlock(struct store *s);

/* ---- segments and clients ---- */
struct mount_args {
	uint64_t client_id;
	const char *host, *domain, *name, *endpoint;
	uint64_t capacity, base_addr;
	uint32_t rkey;
	bool dynamic_copy;
	const char *rdma_endpoint; /* NULL or "" without rdma */
};
McreplRpc__Code store_mount(struct store *s, const struct mount_args *a,
			 uint64_t now_ms, uint64_t *segment_id, char *err,
			 size_t errlen);
McreplRpc__Code store_unmount(struct store *s, uint64_t client_id,
			   uint64_t segment_id, uint64_t now_ms);
McreplRpc__Code store_heartbeat(struct store *s, uint64_t client_id,
			     const uint64_t *seg_ids, const uint64_t *reads,
			     size_t n, uint64_t now_ms);
/* Drop clients silent for longer than client_ttl. Returns how many. */
size_t store_expire_clients(struct store *s, uint64_t now_ms);
struct segment *store_segment(struct store *s, uint64_t id);
uint64_t store_used(const struct segment *seg);

/* ---- objects ---- */
struct object *store_find(struct store *s, const char *tenant, const char *key);
McreplRpc__Code store_put_start(struct store *s, const char *tenant,
			     const char *key, uint64_t size, uint32_t replicas,
			     uint64_t now_ms, struct object **out, char *err,
			     size_t errlen);
McreplRpc__Code store_put_end(struct store *s, const char *tenant, const char *key,
			   uint64_t version);
McreplRpc__Code store_put_revoke(struct store *s, const char *tenant,
			      const char *key, uint64_t version);
McreplRpc__Code store_remove(struct store *s, const char *tenant, const char *key,
			  uint64_t now_ms, char *err, size_t errlen);
/* true when the key (1..MCREPL_KEY_MAX bytes) and tenant (at most
 * MCREPL_TENANT_MAX) can name an object; otherwise false, the reason in err. */
bool store_key_valid(const char *tenant, const char *key, char *err,
		     size_t errlen);
/* The read path: COMPLETE replicas in reader order into order[] (indexes
 * into obj->replicas; at most cap), read lease extended, heat recorded and
 * at most one trigger queued per hot key per window. INVALID_ARGUMENT for a
 * key or tenant store_key_valid() refuses; NOT_FOUND when nothing is
 * readable. */
McreplRpc__Code store_get(struct store *s, const char *tenant, const char *key,
		       const char *domain, uint64_t now_ms, struct object **out,
		       size_t *order, size_t cap, size_t *n_out);
/* A look at the object without reading it: the COMPLETE replicas of
 * store_get in metadata order; no heat, LRU, read lease or routed-read
 * count. INVALID_ARGUMENT (reason in err) for a missing or oversized key
 * or tenant; NOT_FOUND as store_get. */
McreplRpc__Code store_stat(struct store *s, const char *tenant, const char *key,
			struct object **out, size_t *order, size_t cap,
			size_t *n_out, char *err, size_t errlen);
/* The heat cell for reads from `domain` (the object's own cell unless the
 * config is domain-aware); NULL when the per-object domain table is full
 * or memory is short (create: make one). */
mcrepl_heat_cell *store_heat_cell(const struct store *s, struct object *o,
				  const char *domain, bool create);
/* Data-plane grant for a replica's region. */
uint64_t store_grant(const struct store *s, const struct replica *r);
/* Room for one more replica in o (false at MASTER_MAX_REPLICAS / OOM). */
bool store_reserve_replica(struct object *o);
/* Drop replica i of o like store_drop_replica, but keep its region
 * allocated until now + lease TTL (a stale writer may still hold a grant). */
void store_drop_replica_quarantined(struct store *s, struct object *o, size_t i,
				    uint64_t now_ms);
/* Start a new routing second (the read-load order's window). */
void store_roll_routed(struct store *s);
/* The master's periodic housekeeping at now_ms: sweep leases, free due
 * quarantine, expire clients and, at most once a second (*last_evict_ms
 * is when it last ran; updated), evict and start a new routing second. */
void store_tick(struct store *s, uint64_t now_ms, uint64_t *last_evict_ms);
/* Free quarantined regions that are due. */
void store_release_quarantine(struct store *s, uint64_t now_ms);
/* Unlink and free an object (its replicas must be gone). */
void store_delete_object(struct store *s, struct object *o);
/* Free a replica's region and drop it from the object (index i). */
void store_drop_replica(struct store *s, struct object *o, size_t i,
			uint64_t now_ms);

/* Ordinary (client-driven) copy of a COMPLETE object to a segment. */
McreplRpc__Code store_copy_start(struct store *s, const char *tenant,
			      const char *key, uint64_t src_seg,
			      uint64_t dst_seg, uint64_t now_ms,
			      struct replica *src_out, struct replica *dst_out,
			      char *err, size_t errlen);
McreplRpc__Code store_copy_finish(struct store *s, const char *tenant,
			       const char *key, bool success, uint64_t now_ms);

/* ---- tasks ---- */
struct task *store_task(struct store *s, uint64_t id);
/* Up to max queued tasks of a client, moved to fetched; returns count. */
size_t store_fetch_tasks(struct store *s, uint64_t client_id, struct task **out,
			 size_t max, uint64_t now_ms);
/* True when client_id is mounted (known to the master). */
bool store_client_known(struct store *s, uint64_t client_id);
/* The worker reported a task done: forget it, unless it is a dynamic copy
 * whose lease still lives (the lease's end or expiry forgets it). */
void store_task_reported(struct store *s, struct task *t);
/* Forget a task (completed or failed). */
void store_finish_task(struct store *s, struct task *t);
/* Queue a task for client_id; the task takes copies of the strings. NULL
 * when the client is unknown or memory is short. */
struct task *store_add_task(struct store *s, uint64_t client_id,
			    const McreplRpc__Task *msg, uint64_t now_ms,
			    uint64_t lease_expires_at_ms);
/* Most replicas an object may have in this master. */
#define MASTER_MAX_REPLICAS 64

/* ---- dynamic replication (store_dyn.c) ---- */
/* Process up to max queued triggers; returns how many were processed. */
size_t dyn_admit_batch(struct store *s, size_t max, uint64_t now_ms);
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
			  const char *tenant, const char *key, uint64_t now_ms,
			  const char **reason);
McreplRpc__Code dyn_copy_revoke(struct store *s, const mcrepl_fence *f,
			     const char *tenant, const char *key,
			     uint64_t now_ms, const char **reason);
/* Warm `domain` with the hottest objects it lacks (domain-aware only):
 * queues at most max_copies copies of at most max_bytes in total; returns
 * how many were queued. */
uint32_t dyn_warmup(struct store *s, const char *domain, uint32_t max_copies,
		    uint64_t max_bytes, uint64_t now_ms);
/* True when no mounted segment is in `domain`. */
bool store_domain_is_new(struct store *s, const char *domain);
/* Fail the task of a lease cleared before it ran (Remove, sweep). */
void store_fail_lease_task(struct store *s, const mcrepl_lease *l);
/* Expire leases, fail their tasks, free their targets. */
size_t dyn_sweep(struct store *s, uint64_t now_ms);

/* ---- eviction (store_evict.c) ---- */
/* Free eviction_ratio of a segment's capacity; returns bytes freed. */
uint64_t store_evict_segment(struct store *s, struct segment *seg,
			     uint64_t now_ms);
/* Evict on every segment above the high watermark. */
void store_evict_all(struct store *s, uint64_t now_ms);

#endif
