/*
 * libmcrepl admission (RFC "Admission Policy", "Proposal Contract").
 *
 * This header is the contract: what is not declared here is private.
 *
 * mcrepl_admit() is a pure function of its input: the config, the proposal,
 * the host's view of the object, the master's own heat count, the key's
 * pending/cooldown state and now_ms. The proposal carries no hit count or
 * QPS: only the master's window admits. Thread-safe.
 */
#ifndef MCREPL_ADMIT_H
#define MCREPL_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "mcrepl/config.h"
#include "mcrepl/error.h"
#include "mcrepl/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a proposal exists. HOT proposals must clear the heat threshold;
 * WARMUP proposals are master-initiated copies of globally hot objects into
 * a newly joined domain (domain-aware only) and skip the threshold. */
typedef enum mcrepl_proposal_kind {
	MCREPL_PROPOSAL_HOT = 0,
	MCREPL_PROPOSAL_WARMUP = 1
} mcrepl_proposal_kind;

/* A replica action proposal. Strings are borrowed for the call only. */
typedef struct mcrepl_proposal {
	mcrepl_action action;	      /* MCREPL_ACTION_ADD */
	const char *proposal_id;      /* idempotency id, 1..PROPOSAL_ID_MAX */
	const char *tenant;	      /* NULL = "" */
	const char *key;	      /* required */
	const char *requester_domain; /* stage 1: must be NULL or "" */
	const char *target_domain;    /* stage 1: must be NULL or "" */
	uint64_t observed_version;    /* object version the proposer saw */
	uint64_t expected_size;	      /* object size the proposer saw */
	mcrepl_segment_id preferred_target; /* 0 = none */
	uint64_t expires_at_ms;		    /* proposal deadline (same clock) */
	mcrepl_proposal_kind kind;	    /* HOT (0) unless set */
} mcrepl_proposal;

/* The host's view of the object the proposal names. */
typedef struct mcrepl_object_view {
	bool exists;
	uint64_t version;
	uint64_t size;
	/* COMPLETE MEMORY replicas: all of them in the first stage; in
	 * domain-aware mode mcrepl_leases_propose() counts only those in the
	 * target domain, so each domain may hold up to the limit. */
	uint32_t readable_memory_replicas;
	bool busy; /* another (non-dynamic) replication or exclusive op runs */
} mcrepl_object_view;

/* Pending and cooldown state of one admission key (lease table output). */
typedef struct mcrepl_key_state {
	bool pending;			   /* unexpired pending dynamic lease */
	uint64_t action_cooldown_until_ms; /* 0 = none */
	uint64_t recreate_after_ms;	   /* 0 = none */
	/* auto: when a proposal of the key was last refused BALANCED, while
	 * that is under one heat window ago (0 = none): the balance gate then
	 * asks for more (mcrepl_balance.held) */
	uint64_t balanced_at_ms;
	/* auto: when the key's run of BALANCED refusals began (each under a
	 * heat window after the one before), while balanced_at_ms is set
	 * (0 = none): mcrepl_balance.settled */
	uint64_t balanced_since_ms;
} mcrepl_key_state;

/* Heat windows of BALANCED refusals running after which the gate holds a
 * key (mcrepl_balance.held): a window for the counts to absorb a move of
 * the key's load, one more of refusals on counts that show it. */
#define MCREPL_POLICY_HOLD_WINDOWS 2

/* Heat windows of BALANCED refusals running after which a key's balance
 * is settled (mcrepl_balance.settled). */
#define MCREPL_POLICY_SETTLE_WINDOWS 3

/* The balance signal of one key. */
typedef struct mcrepl_balance {
	/* the lowest read_load among the segments holding a readable
	 * replica of the key: readers spread by load reach no better, so
	 * when even that segment is overloaded, only a new replica helps */
	uint64_t key_load;
	uint64_t load_sum; /* read_load summed over the serving segments */
	uint32_t segments; /* serving segments: non-zero id and capacity */
	/* the key was refused BALANCED within the last heat window, in a
	 * run of refusals MCREPL_POLICY_HOLD_WINDOWS windows old or more
	 * (the lease table remembers both: mcrepl_key_state.balanced_at_ms,
	 * balanced_since_ms): the band grows by z deviations, see the
	 * balance gate. mcrepl_admit() sets it from the key state; a
	 * younger run is a key whose load just moved, judged by the band
	 * alone */
	bool held;
	/* the key has been refused BALANCED for MCREPL_POLICY_SETTLE_WINDOWS
	 * heat windows running (the lease table remembers when the run of
	 * refusals began: mcrepl_key_state.balanced_since_ms): the share
	 * rule then asks for more, the share rule */
	bool settled;
} mcrepl_balance;

typedef struct mcrepl_admit_input {
	const mcrepl_config *cfg;
	const mcrepl_proposal *proposal;
	const mcrepl_object_view *object;
	uint32_t heat_count; /* the master's windowed count for this key */
	mcrepl_key_state key_state;
	uint64_t now_ms;
	/* The auto policy's inputs (docs/POLICY.md; the engine fills them,
	 * mcrepl/engine.h). cluster NULL: the RFC's rules, whatever
	 * cfg->policy says. balance all zero: unknown. */
	const mcrepl_cluster_view *cluster;
	mcrepl_balance balance;
} mcrepl_admit_input;

/*
 * Decide admission. Returns MCREPL_REASON_NONE to admit, or the first
 * failing rule, checked in this order:
 *   MODE_OFF; INVALID_PROPOSAL (NULL/empty key or id, unknown action);
 *   EXPIRED (expires_at_ms <= now); DOMAIN_HINT_UNSUPPORTED (stage 1 and a
 *   non-empty requester/target domain); UNKNOWN_OBJECT; VERSION_MISMATCH;
 *   SIZE_MISMATCH; INVALID_PROPOSAL (a WARMUP proposal when not
 *   domain-aware); BELOW_THRESHOLD (heat_count < the effective threshold;
 *   not for WARMUP); TARGET_DOMAIN_HAS_REPLICA (WARMUP into a domain that
 *   already holds a readable replica);
 *   IN_FLIGHT (pending lease or busy object); REPLICA_LIMIT
 *   (readable_memory_replicas >= max_memory_replicas); ACTION_COOLDOWN;
 *   RECREATE_COOLDOWN; MODE_OBSERVE (everything passed in observe mode:
 *   the caller counts a would-propose).
 * The effective threshold is mcrepl_config_threshold(cfg), multiplied by
 * max(1, readable replicas) when cfg->scale_threshold_by_replicas is set;
 * with no readable replica (domain-aware: none in the target domain) it is
 * mcrepl_config_cross_domain_threshold(cfg).
 *
 * AUTO (cfg->policy auto and a cluster view with nodes >= 1): the same
 * order, with three rules replaced for HOT proposals (docs/POLICY.md
 * section 2): the threshold grows with the replicas a key holds and the
 * cluster's reads per node; the replica limit is auto_max_replicas (0: one
 * per node); and in place of the action cooldown (an upstream constant,
 * not an RFC rule: auto paces fan-out by load instead) a key holding a
 * readable replica is rejected with BALANCED unless one more replica helps
 * the balance (its best replica segment is overloaded beyond noise and the
 * copy moves enough reads, or the key alone fills a node's fair share per
 * replica). The recreate
 * cooldown still applies.
 */
MCREPL_API mcrepl_reason mcrepl_admit(const mcrepl_admit_input *in);

/* The effective threshold mcrepl_admit() applies for this replica count
 * without a cluster view (the RFC's rule above; under auto the count grows
 * with the cluster's reads, docs/POLICY.md). */
MCREPL_API uint32_t mcrepl_admit_threshold(const mcrepl_config *cfg,
					   uint32_t readable_replicas);

#ifdef __cplusplus
}
#endif
#endif
