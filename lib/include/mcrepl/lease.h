/*
 * libmcrepl lease table (RFC "Lease And Version Fence", "Proposal
 * Contract", "Shrink And Eviction Interaction").
 *
 * This header is the contract: what is not declared here is private.
 *
 * The table owns, per admission key (tenant + key, plus the target domain
 * when the config is domain-aware): the pending dynamic lease (single
 * flight), the action cooldown, the recreate cooldown and (policy auto)
 * the time of its last BALANCED refusal, kept one heat window (the balance
 * gate's hysteresis, mcrepl_key_state.balanced_at_ms); per proposal id: an
 * idempotency record; per lease: the binding of proposal id, lease id,
 * tenant, key, source, target, target domain, version, expiry and task id.
 *
 * LIFECYCLE (the host is the master; the copy runs on the source worker):
 *   propose -> [host creates REPLICA_COPY task] -> bind_task
 *            \-> (task creation failed) -> abort
 *   copy_start (fenced) -> [host reserves target] -> copy_end | copy_revoke
 *                        \-> (reservation failed) -> copy_start_failed
 *   sweep: expired leases -> the host fails their tasks / frees targets;
 *          the key enters recreate cooldown.
 *   replica_removed: a dynamic replica went (eviction, remove) ->
 *          recreate cooldown.  object_removed: Remove of the object.
 *
 * THREAD-SAFETY. Every function takes the table's internal mutex; calls may
 * come from any thread. All time is the now_ms argument. The table copies
 * every string it keeps; borrowed strings are read only during a call.
 * BOUNDS. Work per call is O(1) expected, except sweep, which does at most
 * `cap` expiries plus a bounded amount (64) of record cleanup per call.
 */
#ifndef MCREPL_LEASE_H
#define MCREPL_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/admit.h"
#include "mcrepl/config.h"
#include "mcrepl/error.h"
#include "mcrepl/place.h"
#include "mcrepl/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcrepl_leases mcrepl_leases;

/* A lease as returned to the host (a copy; no pointers into the table). */
typedef struct mcrepl_lease {
	mcrepl_lease_id id;
	mcrepl_segment_id source;
	mcrepl_segment_id target;
	mcrepl_client_id source_client;
	mcrepl_client_id target_client;
	mcrepl_task_id task; /* 0 until bind_task (see task_hi) */
	uint64_t version;    /* object version the copy is fenced to */
	uint64_t size;
	uint64_t granted_at_ms;
	uint64_t expires_at_ms; /* min(now + lease_ttl, proposal deadline) */
	bool started;		/* copy_start succeeded */
	/* domain-aware: the admission domain; else the target's domain */
	char target_domain[MCREPL_DOMAIN_MAX + 1];
	/* The high half of a 128-bit host task id bound with
	 * mcrepl_leases_bind_task128() (task holds the low half); 0 for a
	 * 64-bit one. The lease is bound when task or task_hi is not 0.
	 * Since 0.6.0. */
	uint64_t task_hi;
} mcrepl_lease;

/* Create / destroy. The table copies cfg. destroy accepts NULL. */
MCREPL_API mcrepl_status mcrepl_leases_create(const mcrepl_config *cfg,
					      mcrepl_leases **out);
MCREPL_API void mcrepl_leases_destroy(mcrepl_leases *t);

/* Everything a proposal is judged on; arrays borrowed for the call. */
typedef struct mcrepl_propose_input {
	const mcrepl_proposal *proposal;
	const mcrepl_object_view *object;
	uint32_t heat_count; /* the master's own window count for the key */
	const mcrepl_replica_view *replicas; /* the object's replicas */
	size_t n_replicas;
	const mcrepl_segment_view *segments; /* candidate targets */
	size_t n_segments;
	uint64_t now_ms;
	/* NULL: the RFC's rules. Otherwise, under policy auto, admission
	 * uses the cluster view and the balance of the key's replicas over
	 * segments[].read_load (docs/POLICY.md), and the target is
	 * chosen as with read_load_aware_placement. */
	const mcrepl_cluster_view *cluster;
	/* The key's reads in the last complete heat bucket
	 * (mcrepl_heat_cell_recent()); 0: unknown. Under policy auto the
	 * engine judges a key whose rate just rose by that rate
	 * (docs/POLICY.md, "Counts that just rose"). Since 0.5.0. */
	uint32_t heat_recent;
	/* mcrepl_engine_propose() only: replicas[] carry only segment,
	 * readable, memory and dynamic; the engine completes each from its
	 * segment of that id (client, host, domain, can_copy) and leaves out
	 * the replicas on segments it does not know, so a host keeps no
	 * segment table of its own. Since 0.6.0. */
	bool replicas_from_engine;
} mcrepl_propose_input;

typedef struct mcrepl_propose_result {
	mcrepl_reason reason; /* NONE when a lease is returned */
	bool repeated;	      /* same proposal id + content: same lease */
	mcrepl_lease lease;   /* valid when the status is MCREPL_OK */
	/* MCREPL_OK: the lease is live (pending or started); false for a
	 * repeated proposal whose lease has ended (lease is then the lease
	 * as it ended), so a host answers a repeat from the lease alone.
	 * Since 0.6.0. */
	bool live;
} mcrepl_propose_result;

/*
 * Judge a proposal and, if admitted and placeable, install a pending lease
 * for its key, atomically (concurrent proposals for one key are
 * single-flight). Steps: idempotency (a known proposal id with the same
 * content returns MCREPL_OK, repeated = true and the same lease while that
 * lease or its record lives; different content returns MCREPL_ECONFLICT,
 * reason PROPOSAL_CONFLICT); mcrepl_admit(); mcrepl_place_source();
 * mcrepl_place_target(); then, in observe mode, MCREPL_EREJECTED with reason
 * MODE_OBSERVE (a would-propose: nothing installed); else the lease.
 * Rejections return MCREPL_EREJECTED with the reason; a malformed input
 * MCREPL_EINVAL (reason INVALID_PROPOSAL); allocation failure MCREPL_ENOMEM
 * with the table unchanged.
 * Idempotency records (proposal id -> 64-bit digest of every content field
 * but the deadline, and the lease; a retry whose deadline moved, as a
 * relative deadline over RPC does, is the same proposal and gets the same
 * lease with its first deadline): at most cfg->proposal_retention_limit, the oldest
 * forgotten first; each kept at least lease_ttl after its lease ends (then
 * forgotten by sweep). abort forgets the id at once.
 */
MCREPL_API mcrepl_status mcrepl_leases_propose(mcrepl_leases *t,
					       const mcrepl_propose_input *in,
					       mcrepl_propose_result *res);

/* Record the REPLICA_COPY task created for a lease (task_hi 0). MCREPL_ENOENT if the
 * lease is gone (it expired or was aborted meanwhile: fail the task);
 * MCREPL_EINVAL for task id 0. */
MCREPL_API mcrepl_status mcrepl_leases_bind_task(mcrepl_leases *t,
						 mcrepl_lease_id id,
						 mcrepl_task_id task);

/* As mcrepl_leases_bind_task() for a host whose task ids are 128 bits
 * wide (a UUID: hi, lo): the lease keeps both halves (lease.task = lo,
 * lease.task_hi = hi), and every copy of it (propose's repeat, sweep,
 * copy_*, object_removed, get) returns them, so the host needs no map
 * from lease to task. MCREPL_EINVAL when both halves are 0; MCREPL_ENOENT
 * if the lease is gone (fail the task). Takes the table's mutex. Since
 * 0.6.0. */
MCREPL_API mcrepl_status mcrepl_leases_bind_task128(mcrepl_leases *t,
						    mcrepl_lease_id id,
						    uint64_t hi, uint64_t lo);

/* Task creation failed: roll the lease back (pending cleared, no cooldown,
 * the proposal id forgotten). MCREPL_ENOENT if unknown; MCREPL_EBUSY if
 * the copy has started (revoke it instead). */
MCREPL_API mcrepl_status mcrepl_leases_abort(mcrepl_leases *t,
					     mcrepl_lease_id id);

/* What a dynamic copy RPC presents. */
typedef struct mcrepl_fence {
	mcrepl_lease_id lease;
	uint64_t version;	  /* version carried by the task */
	mcrepl_client_id caller;  /* the client making the call */
	mcrepl_segment_id source; /* as carried by the task (0 = unchecked) */
	mcrepl_segment_id target; /* as carried by the task (0 = unchecked) */
	uint64_t object_version;  /* the object's current version; 0 = gone */
} mcrepl_fence;

/*
 * DynamicReplicaCopyStart. Checks, in order: lease known (UNKNOWN_LEASE:
 * a stale task without pending state), caller is the source client
 * (NOT_SOURCE, nothing cleared), source/target match (WRONG_TARGET),
 * fence version equals the lease's (STALE_LEASE, nothing cleared), lease
 * unexpired (LEASE_EXPIRED: the lease is retired as by sweep), object still
 * at the lease's version (VERSION_MISMATCH or UNKNOWN_OBJECT: the lease is
 * dead, pending cleared), not already started (STALE_LEASE). On MCREPL_OK
 * the lease is marked started and copied to *out (may be NULL). Rejections
 * return MCREPL_EREJECTED and *why (may be NULL). A rejection that retires
 * the lease (LEASE_EXPIRED, VERSION_MISMATCH, UNKNOWN_OBJECT) copies the
 * retired lease to *out too. A stale start never touches a newer pending
 * lease of the same key.
 */
MCREPL_API mcrepl_status mcrepl_leases_copy_start(mcrepl_leases *t,
						  const mcrepl_fence *f,
						  uint64_t now_ms,
						  mcrepl_lease *out,
						  mcrepl_reason *why);

/* The host could not reserve the target after a successful copy_start:
 * clear the pending state (only if this lease is the key's pending one) so
 * the key is not stuck and an ordinary Copy may proceed. The lease is
 * retired, with no cooldown. MCREPL_ENOENT if unknown. */
MCREPL_API mcrepl_status mcrepl_leases_copy_start_failed(mcrepl_leases *t,
							 mcrepl_lease_id id,
							 uint64_t now_ms);

/*
 * DynamicReplicaCopyEnd / DynamicReplicaCopyRevoke. The fence must come
 * from the lease's source client (NOT_SOURCE otherwise) and name the
 * recorded lease id and version (UNKNOWN_LEASE / STALE_LEASE otherwise; in
 * every refusal nothing changes) of a started lease (STALE_LEASE if not
 * started). An
 * expired lease is refused with LEASE_EXPIRED and retired as by sweep
 * (*out gets the retired lease).
 * End: pending cleared, the key enters the action cooldown, *out gets the
 * lease (the host marks the target replica readable). Revoke: pending
 * cleared, action cooldown, *out gets the lease (the host frees the target).
 */
MCREPL_API mcrepl_status mcrepl_leases_copy_end(mcrepl_leases *t,
						const mcrepl_fence *f,
						uint64_t now_ms,
						mcrepl_lease *out,
						mcrepl_reason *why);
MCREPL_API mcrepl_status mcrepl_leases_copy_revoke(mcrepl_leases *t,
						   const mcrepl_fence *f,
						   uint64_t now_ms,
						   mcrepl_lease *out,
						   mcrepl_reason *why);

/*
 * Expire leases whose expires_at_ms <= now_ms, at most cap of them; each
 * retired lease is copied to out[] (the host fails its task when it was not
 * started, frees its PROCESSING target when it was) and its key enters the
 * recreate cooldown. Also forgets at most 64 idempotency/cooldown records
 * that are past their retention. Returns how many leases were written.
 */
MCREPL_API size_t mcrepl_leases_sweep(mcrepl_leases *t, uint64_t now_ms,
				      mcrepl_lease *out, size_t cap);

/* A dynamic replica of (tenant, key) in `domain` was removed (eviction,
 * reclaim): the key (its domain when domain-aware) enters the recreate
 * cooldown until now + recreate_cooldown. */
MCREPL_API mcrepl_status mcrepl_leases_replica_removed(mcrepl_leases *t,
						       const char *tenant,
						       const char *key,
						       const char *domain,
						       uint64_t now_ms);

/*
 * The object (tenant, key) is being removed. If a dynamic copy of it has
 * started, returns MCREPL_EBUSY (the host refuses the Remove). Otherwise
 * clears any unstarted pending lease of the key (in every domain), copies it
 * to *cleared when not NULL and sets *n_cleared (0 or more; at most cap),
 * and returns MCREPL_OK: the cleared lease's task will fail its fence.
 * Leases beyond cap are cleared too, only not copied. No cooldown is set.
 */
MCREPL_API mcrepl_status mcrepl_leases_object_removed(
    mcrepl_leases *t, const char *tenant, const char *key,
    mcrepl_lease *cleared, size_t cap, size_t *n_cleared);

/* Pending/cooldown state of an admission key at now_ms, as propose judges
 * it. An expired pending lease reports pending = false (it never blocks an
 * ordinary Copy); until the sweep retires it, recreate_after_ms reads as if
 * it had been retired at now_ms. Cooldowns already over read as 0. */
MCREPL_API void mcrepl_leases_key_state(mcrepl_leases *t, const char *tenant,
					const char *key, const char *domain,
					uint64_t now_ms, mcrepl_key_state *out);

/* True when (tenant, key) has an unexpired pending dynamic lease in any
 * domain: an ordinary Copy of the object should wait. */
MCREPL_API bool mcrepl_leases_key_is_pending(mcrepl_leases *t,
					     const char *tenant,
					     const char *key, uint64_t now_ms);

/* Copy a lease by id. MCREPL_ENOENT if unknown. */
MCREPL_API mcrepl_status mcrepl_leases_get(mcrepl_leases *t, mcrepl_lease_id id,
					   mcrepl_lease *out);

typedef struct mcrepl_leases_stats {
	uint64_t leases;	/* live leases (pending + started) */
	uint64_t started;	/* of which copy_start succeeded */
	uint64_t proposals;	/* idempotency records kept */
	uint64_t key_records;	/* keys with pending, cooldown or a remembered
				 * BALANCED refusal (auto) */
	uint64_t expired_total; /* leases retired by expiry */
} mcrepl_leases_stats;

MCREPL_API void mcrepl_leases_get_stats(mcrepl_leases *t,
					mcrepl_leases_stats *out);

#ifdef __cplusplus
}
#endif
#endif
