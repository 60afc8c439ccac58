/*
 * libmcrepl status and reason codes.
 *
 * This header is the contract: what is not declared here is private.
 *
 * Every fallible call returns an mcrepl_status. Policy decisions that say
 * "no" also carry an mcrepl_reason; each reason maps 1:1 to the metric label
 * used by mcrepl_stats (the name returned by mcrepl_reason_name()).
 * Both enums and their name tables are generated from the X-macros below so
 * they cannot drift apart.
 */
#ifndef MCREPL_ERROR_H
#define MCREPL_ERROR_H

#include <stdbool.h>

#include "mcrepl/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, "human readable text") */
#define MCREPL_STATUS_MAP(X)                                                   \
	X(OK, "success")                                                       \
	X(EINVAL, "invalid argument")                                          \
	X(ENOMEM, "out of memory")                                             \
	X(ENOENT, "not found")                                                 \
	X(EEXIST, "already exists")                                            \
	X(ECONFLICT, "conflicting reuse of an id")                             \
	X(EREJECTED, "rejected by policy (see the reason)")                    \
	X(EFULL, "table or queue is full")                                     \
	X(ESTALE, "stale lease or version")                                    \
	X(EEXPIRED, "expired")                                                 \
	X(EPERM, "caller is not permitted")                                    \
	X(ERANGE, "value out of range")                                        \
	X(EPARSE, "cannot parse value")                                        \
	X(EBUSY, "busy")                                                       \
	X(ENOSPC, "buffer too small")

typedef enum mcrepl_status {
#define MCREPL__STATUS_ENUM(name, text) MCREPL_##name,
	MCREPL_STATUS_MAP(MCREPL__STATUS_ENUM)
#undef MCREPL__STATUS_ENUM
	    MCREPL_STATUS_COUNT
} mcrepl_status;

/*
 * Rejection and suppression reasons. X(NAME, "metric_label").
 * MCREPL_REASON_NONE means "accepted". The label is stable: dashboards use it.
 */
#define MCREPL_REASON_MAP(X)                                                   \
	X(NONE, "none")                                                        \
	X(MODE_OFF, "mode_off")                                                \
	X(MODE_OBSERVE, "mode_observe")                                        \
	X(EXPIRED, "expired")                                                  \
	X(DOMAIN_HINT_UNSUPPORTED, "domain_hint_unsupported")                  \
	X(BELOW_THRESHOLD, "below_threshold")                                  \
	X(VERSION_MISMATCH, "version_mismatch")                                \
	X(SIZE_MISMATCH, "size_mismatch")                                      \
	X(IN_FLIGHT, "in_flight")                                              \
	X(REPLICA_LIMIT, "replica_limit")                                      \
	X(ACTION_COOLDOWN, "action_cooldown")                                  \
	X(RECREATE_COOLDOWN, "recreate_cooldown")                              \
	X(NO_SOURCE, "no_source")                                              \
	X(NO_TARGET, "no_target")                                              \
	X(NO_TARGET_IN_DOMAIN, "no_target_in_domain")                          \
	X(TARGET_DOMAIN_HAS_REPLICA, "target_domain_has_replica")              \
	X(PROPOSAL_CONFLICT, "proposal_conflict")                              \
	X(UNKNOWN_OBJECT, "unknown_object")                                    \
	X(UNKNOWN_LEASE, "unknown_lease")                                      \
	X(STALE_LEASE, "stale_lease")                                          \
	X(LEASE_EXPIRED, "lease_expired")                                      \
	X(NOT_SOURCE, "not_source")                                            \
	X(WRONG_TARGET, "wrong_target")                                        \
	X(QUEUE_FULL, "queue_full")                                            \
	X(INVALID_PROPOSAL, "invalid_proposal")                                \
	X(NO_CAPABLE_SOURCE, "no_capable_source")                              \
	X(BALANCED, "balanced")

typedef enum mcrepl_reason {
#define MCREPL__REASON_ENUM(name, label) MCREPL_REASON_##name,
	MCREPL_REASON_MAP(MCREPL__REASON_ENUM)
#undef MCREPL__REASON_ENUM
	    MCREPL_REASON_COUNT
} mcrepl_reason;

/* Human-readable text of a status; never NULL ("unknown status" if out of
 * range). Thread-safe; returns a static string. */
MCREPL_API const char *mcrepl_strerror(mcrepl_status st);

/* Symbolic name of a status without prefix, e.g. "EINVAL". Never NULL. */
MCREPL_API const char *mcrepl_status_name(mcrepl_status st);

/* Metric label of a reason, e.g. "below_threshold". Never NULL
 * ("unknown" if out of range). Thread-safe; returns a static string. */
MCREPL_API const char *mcrepl_reason_name(mcrepl_reason r);

/*
 * What a refusal means to the caller, in the few classes a host's RPC
 * answers with (one mapping from class to the host's own error codes
 * instead of one per reason and call). Since 0.6.0.
 */
typedef enum mcrepl_outcome {
	MCREPL_OUTCOME_OK = 0,	   /* NONE: accepted */
	MCREPL_OUTCOME_INVALID,	   /* the request is wrong and will stay so:
				  * INVALID_PROPOSAL, EXPIRED, SIZE_MISMATCH,
				  * DOMAIN_HINT_UNSUPPORTED, PROPOSAL_CONFLICT,
				  * BELOW_THRESHOLD (not hot enough to ask) */
	MCREPL_OUTCOME_NOT_FOUND,  /* UNKNOWN_OBJECT at a proposal */
	MCREPL_OUTCOME_STALE,	   /* a version or lease that is not the current
				   * one: VERSION_MISMATCH, STALE_LEASE,
				   * UNKNOWN_LEASE, and UNKNOWN_OBJECT at a
				   * fence (the lease's object went) */
	MCREPL_OUTCOME_BUSY,	   /* another copy of the key is in flight:
				   * IN_FLIGHT, WRONG_TARGET */
	MCREPL_OUTCOME_DENIED,	   /* NOT_SOURCE: the caller may not */
	MCREPL_OUTCOME_EXPIRED,	   /* LEASE_EXPIRED */
	MCREPL_OUTCOME_UNAVAILABLE /* not now, ask again later: mode, replica
				    * limit, cooldowns, no source or target,
				    * balanced, queue full, and unknown reasons */
} mcrepl_outcome;

/* The class of reason r; fence: the reason came from a copy fence
 * (mcrepl_leases_copy_start/_end/_revoke), else from a proposal.
 * Thread-safe, pure. */
MCREPL_API mcrepl_outcome mcrepl_reason_outcome(mcrepl_reason r, bool fence);

#ifdef __cplusplus
}
#endif
#endif
