/*
 * libmcrepl host calls: the glue every master that embeds the engine would
 * otherwise write itself, in one place (since 0.6.5).
 *
 * This header is the contract: what is not declared here is private.
 *
 * A master such as Mooncake's names segments by string, clients, leases,
 * tasks and proposals by 128-bit UUIDs, answers in its own error codes,
 * keeps per-object state beside its object lock and runs a background
 * admission loop. These calls take those forms directly:
 *
 *   ids       mcrepl_segment_id_of() (a name -> the engine's id, stable),
 *             mcrepl_client_of_wire(), the engine's lease wire ids with an
 *             incarnation (mcrepl_engine_opts.incarnation): a lease id from
 *             another incarnation of the engine is refused as unknown
 *   reads     mcrepl_engine_on_read() over a mcrepl_object_state the host
 *             embeds in its object (heat cell + routed-replica cache); it
 *             reads the engine's threshold itself, counts the read on the
 *             replica readers take first and queues a trigger on a crossing
 *   triggers  mcrepl_engine_triggers_pop() for the admission loop
 *   propose   mcrepl_engine_propose_named(): by segment names, with a
 *             mcrepl_copy_task carrying what a copy payload needs
 *   copies    mcrepl_engine_bind_task(), _abort(), _copy_start(),
 *             _copy_end(), _copy_committed(), _copy_revoke(),
 *             _copy_failed(), fenced by wire ids and segment names
 *   objects   mcrepl_engine_object_removed(), mcrepl_engine_key_pending()
 *   sweep     mcrepl_engine_sweep() with a callback per expired lease
 *   replicas  mcrepl_engine_replica_added_named() and the others by name
 *
 * Every answer carries an mcrepl_outcome (mcrepl/error.h), so a host maps
 * outcomes, not reasons, to its error codes with one plain table.
 *
 * COUNTERS. With mcrepl_engine_opts.stats the engine counts, besides what
 * engine.h lists: heat crossings, triggers queued and dropped (the queue
 * full), would-proposes (observe mode), rejections by reason, and a copy
 * ended with no readable replica (failed, mcrepl_engine_copy_committed()).
 *
 * THREAD-SAFETY. mcrepl_engine_on_read() and mcrepl_engine_object_heat()
 * are lock-free in the engine (object_heat may be called from the
 * retirement probe, which runs under the engine's mutex); the host calls
 * them under its own lock of the object whose state they touch (the state
 * is not synchronised). Every
 * other call takes the engine's mutex, or the lease table's, or the
 * trigger queue's, and may come from any thread; the sweep's callback runs
 * with no engine lock held (it may call the engine).
 * TIME. Every time is an argument (now_ms, the engine's clock).
 */
#ifndef MCREPL_HOST_H
#define MCREPL_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/engine.h"
#include "mcrepl/error.h"
#include "mcrepl/heat.h"
#include "mcrepl/queue.h"
#include "mcrepl/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ids ------------------------------------------------------------ */

/* A 128-bit id as a host's RPC carries it (a UUID's two halves). */
typedef struct mcrepl_wire_id {
	uint64_t hi, lo;
} mcrepl_wire_id;

/* Longest segment name the engine keeps (bytes, without the NUL). */
#define MCREPL_SEGMENT_NAME_MAX 255

/* The engine's id of segment `name`: a 64-bit hash of the name, never 0,
 * the same in every process and release (the placement tie-break uses
 * it). NULL or "" give {0}. Pure. A segment set with id 0 and a name gets
 * this id (mcrepl_engine_segment_set(), _segments_sync()); two names with
 * one id are refused there (MCREPL_ECONFLICT), never merged. */
MCREPL_API mcrepl_segment_id mcrepl_segment_id_of(const char *name);

/* The engine's id of a 128-bit client id: a mix of both halves, never 0
 * for a non-zero id ({0} for {0, 0}). Pure. */
MCREPL_API mcrepl_client_id mcrepl_client_of_wire(mcrepl_wire_id w);

/* A lease's wire id: {incarnation, lease id}. */
MCREPL_API mcrepl_wire_id mcrepl_engine_lease_wire(const mcrepl_engine *e,
						   mcrepl_lease_id id);
/* The lease id a wire id names, {0} when its high half is not this
 * engine's incarnation (the lease table then refuses it: UNKNOWN_LEASE). */
MCREPL_API mcrepl_lease_id mcrepl_engine_lease_of_wire(const mcrepl_engine *e,
						       mcrepl_wire_id w);

/* ---- the read path -------------------------------------------------- */

/* What a host keeps per object, beside its own lock (40 bytes; zero it
 * when the object is created: {0} is a cold object). Dies with the
 * object, so a removed key comes back cold. */
typedef struct mcrepl_object_state {
	mcrepl_heat_cell heat;
	/* the host's id of the replica last routed first, and its segment */
	uint64_t routed_replica;
	mcrepl_segment_id routed_segment;
} mcrepl_object_state;

/* One replica a read may return: the readable MEMORY replicas, in the
 * host's order. */
typedef struct mcrepl_read_replica {
	uint64_t id;	     /* the host's replica id; 0: not cached */
	const char *segment; /* its segment's name */
} mcrepl_read_replica;

typedef struct mcrepl_read_result {
	size_t first;	/* index of the replica readers should take first */
	uint32_t count; /* the key's heat over the window, this read included */
	bool crossed;	/* the heat crossed the threshold with this read */
	bool queued;	/* a trigger was queued for the admission loop */
} mcrepl_read_result;

/*
 * One read of (tenant, key) that returns replicas[0..n): records it in
 * st's heat cell with the engine's heat parameters and threshold as of the
 * last tick, orders the replicas (mcrepl_engine_pick(); n <= 1: 0), counts
 * the read on the first's segment (mcrepl_engine_read()), and on a
 * crossing queues a trigger (enforce; observe counts a would-propose
 * instead). The segment of the replica routed first is cached in st by
 * replica id, so a read whose first replica did not change hashes no name
 * for it. Only the first 16 replicas are ordered (a read returns a
 * handful). Triggers carry no requester domain (the first stage's
 * admission). n may be 0 (the heat is still recorded). Lock-free in the
 * engine; the caller holds its object's lock. Mode off: nothing is
 * recorded and out->first is 0. MCREPL_EINVAL (NULL e, st, key or out; n
 * > 0 and NULL replicas).
 */
MCREPL_API mcrepl_status mcrepl_engine_on_read(
    mcrepl_engine *e, mcrepl_object_state *st, const char *tenant,
    const char *key, const mcrepl_read_replica *replicas, size_t n,
    uint64_t salt, uint64_t now_ms, mcrepl_read_result *out);

/* The key's heat over the window at now_ms, and (recent, may be NULL) its
 * reads in the last complete bucket: what a proposal is judged on. Under
 * the object's lock. */
MCREPL_API uint32_t mcrepl_engine_object_heat(mcrepl_engine *e,
					      const mcrepl_object_state *st,
					      uint64_t now_ms,
					      uint32_t *recent);

/* Up to cap queued triggers, oldest first (mcrepl_triggers_pop(); release
 * each with mcrepl_trigger_release()). */
MCREPL_API size_t mcrepl_engine_triggers_pop(mcrepl_engine *e,
					     mcrepl_trigger *out, size_t cap);

/* ---- proposals and copies -------------------------------------------- */

/* What a copy task's payload needs, and what a host answers a proposal
 * with. */
typedef struct mcrepl_copy_task {
	mcrepl_wire_id lease;
	mcrepl_wire_id task; /* {0, 0} until mcrepl_engine_bind_task() */
	char source[MCREPL_SEGMENT_NAME_MAX + 1];
	char target[MCREPL_SEGMENT_NAME_MAX + 1];
	char target_domain[MCREPL_DOMAIN_MAX + 1];
	uint64_t version; /* the object version the copy is fenced to */
	uint64_t size;
	uint64_t expires_at_ms;
	bool started;
} mcrepl_copy_task;

/* Every host call's answer. */
typedef struct mcrepl_host_result {
	mcrepl_outcome outcome; /* map this to the host's error code */
	mcrepl_reason reason;	/* why, for logs and metrics */
	bool repeated;		/* propose: the same proposal again */
	mcrepl_copy_task task;	/* when the call names or makes a lease */
} mcrepl_host_result;

/* One replica of the proposed object, by segment name. */
typedef struct mcrepl_named_replica {
	const char *segment;
	bool readable, memory, dynamic;
} mcrepl_named_replica;

typedef struct mcrepl_named_proposal {
	mcrepl_wire_id id; /* the proposal's id (idempotency) */
	const char *tenant, *key;
	const char *requester_domain, *target_domain; /* NULL/"" none */
	const char *preferred_target;		      /* a segment name */
	uint64_t observed_version; /* 0: the object's (unchecked) */
	uint64_t expected_size;	   /* 0: the object's (unchecked) */
	uint64_t expires_at_ms;	   /* 0: now + the config's lease TTL */
	mcrepl_object_view object;
	uint32_t heat_count, heat_recent; /* mcrepl_engine_object_heat() */
	const mcrepl_named_replica *replicas;
	size_t n_replicas;
	uint64_t now_ms;
} mcrepl_named_proposal;

/*
 * mcrepl_engine_propose() for a proposal by names: the engine completes
 * the replicas from its segments and answers with out->task (names, lease
 * wire id, version, expiry). MCREPL_OK, outcome OK and a new lease: create
 * the copy task, then mcrepl_engine_bind_task() (or _abort() when it
 * could not be made). A repeated proposal answers its lease again
 * (repeated): outcome OK while that lease lives with its task bound, else
 * UNAVAILABLE. A refusal: its status and reason, counted (with stats).
 */
MCREPL_API mcrepl_status mcrepl_engine_propose_named(
    mcrepl_engine *e, const mcrepl_named_proposal *p, mcrepl_host_result *out);

/* The copy task made for a lease (mcrepl_leases_bind_task128()).
 * MCREPL_ENOENT when the lease is gone (fail the task), MCREPL_EINVAL. */
MCREPL_API mcrepl_status mcrepl_engine_bind_task(mcrepl_engine *e,
						 mcrepl_wire_id lease,
						 mcrepl_wire_id task);
/* The task could not be made: the lease goes, no cooldown. */
MCREPL_API mcrepl_status mcrepl_engine_abort(mcrepl_engine *e,
					     mcrepl_wire_id lease);

/* What a copy call presents. */
typedef struct mcrepl_named_fence {
	const char *tenant, *key; /* the object the copy is of */
	mcrepl_wire_id lease;
	mcrepl_wire_id caller; /* the client making the call */
	uint64_t version;      /* carried by the task */
	const char *source;    /* NULL: unchecked */
	/* the targets the call names (n_targets 0: unchecked); a dynamic
	 * copy has exactly one, the lease's */
	const char *const *targets;
	size_t n_targets;
	uint64_t object_version; /* the object's now; 0: it is gone */
} mcrepl_named_fence;

/*
 * The copy fences (mcrepl_leases_copy_start/_end/_revoke()). Start: a
 * lease that expired, or an unknown lease of a key with none pending (a
 * stale task), answers UNAVAILABLE (the work is gone, not wrong). Revoke:
 * a lease that expired or is unknown answers outcome OK with status
 * MCREPL_EREJECTED and its reason (nothing left to revoke: free the
 * targets). Every other refusal: the reason's class. A lease that expired
 * is retired by the refusal itself (LEASE_EXPIRED at start, end or
 * revoke), so the sweep never reports it: the host frees a started copy's
 * targets there. out->task names the lease whenever the table returned
 * one. The copy task carries no tenant and key: a host finds them from its
 * own task (Mooncake's copy payload names the key).
 */
MCREPL_API mcrepl_status mcrepl_engine_copy_start(mcrepl_engine *e,
						  const mcrepl_named_fence *f,
						  uint64_t now_ms,
						  mcrepl_host_result *out);
MCREPL_API mcrepl_status mcrepl_engine_copy_end(mcrepl_engine *e,
						const mcrepl_named_fence *f,
						uint64_t now_ms,
						mcrepl_host_result *out);
MCREPL_API mcrepl_status mcrepl_engine_copy_revoke(mcrepl_engine *e,
						   const mcrepl_named_fence *f,
						   uint64_t now_ms,
						   mcrepl_host_result *out);

/* After copy_end: the host committed the copy's target readable
 * (committed: the dynamic replica is tracked and a completed copy counted,
 * mcrepl_engine_replica_added()) or could not (a failed copy counted). */
MCREPL_API mcrepl_status mcrepl_engine_copy_committed(
    mcrepl_engine *e, const mcrepl_copy_task *task, const char *tenant,
    const char *key, bool committed);

/* A started copy failed or its task went (mcrepl_leases_copy_start_failed
 * ()): the lease goes and the key may be copied again. MCREPL_ENOENT. */
MCREPL_API mcrepl_status mcrepl_engine_copy_failed(mcrepl_engine *e,
						   mcrepl_wire_id lease,
						   uint64_t now_ms);

/* True when (tenant, key) has a live dynamic lease: an ordinary copy of
 * the object waits. */
MCREPL_API bool mcrepl_engine_key_pending(mcrepl_engine *e, const char *tenant,
					  const char *key, uint64_t now_ms);

/* The object is being removed (mcrepl_leases_object_removed()):
 * MCREPL_EBUSY while a copy of it has started (refuse the remove);
 * otherwise its unstarted leases are cleared (their tasks will fail their
 * fence). */
MCREPL_API mcrepl_status mcrepl_engine_object_removed(mcrepl_engine *e,
						      const char *tenant,
						      const char *key);

/* Called once per lease the sweep retired: fail its task when it had not
 * started, free its target when it had. */
typedef void (*mcrepl_expired_fn)(void *ctx, const mcrepl_copy_task *task);

/* Retire every lease expired at now_ms (mcrepl_leases_sweep(), in batches,
 * fn outside the engine's locks). Returns how many were retired. */
MCREPL_API size_t mcrepl_engine_sweep(mcrepl_engine *e, uint64_t now_ms,
				      mcrepl_expired_fn fn, void *ctx);

/* ---- dynamic replicas by segment name --------------------------------- */

MCREPL_API mcrepl_status mcrepl_engine_replica_added_named(mcrepl_engine *e,
							   const char *tenant,
							   const char *key,
							   const char *segment);
MCREPL_API mcrepl_status mcrepl_engine_replica_recovered_named(
    mcrepl_engine *e, const char *tenant, const char *key, const char *segment);
MCREPL_API mcrepl_status mcrepl_engine_replica_dropped_named(
    mcrepl_engine *e, const char *tenant, const char *key, const char *segment,
    bool cooldown, uint64_t now_ms);

#ifdef __cplusplus
}
#endif
#endif
