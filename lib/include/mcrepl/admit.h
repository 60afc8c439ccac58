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
#include "mcrepl/policy.h"
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

typedef struct mcrepl_admit_input {
	const mcrepl_config *cfg;
	const mcrepl_proposal *proposal;
	const mcrepl_object_view *object;
	uint32_t heat_count; /* the master's windowed count for this key */
	mcrepl_key_state key_state;
	uint64_t now_ms;
	/* The auto policy's inputs (mcrepl/policy.h). cluster NULL: the
	 * RFC's rules, whatever cfg->policy says. balance all zero: unknown
	 * (see mcrepl_policy_helps()). */
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
 * AUTO (mcrepl_policy_is_auto(cfg, in->cluster)): the same order, with
 * three rules replaced for HOT proposals: the threshold is
 * mcrepl_policy_admit_threshold(cfg, cluster, readable); the replica limit
 * is mcrepl_policy_replica_cap(cfg, cluster); and in place of the action
 * cooldown (an upstream constant, not an RFC rule: auto paces fan-out by
 * load instead) a key holding a readable replica is rejected with BALANCED
 * unless mcrepl_policy_helps(cfg, cluster, &in->balance, heat_count,
 * readable). The recreate
 * cooldown still applies.
 */
MCREPL_API mcrepl_reason mcrepl_admit(const mcrepl_admit_input *in);

/* The effective threshold mcrepl_admit() applies for this replica count. */
MCREPL_API uint32_t mcrepl_admit_threshold(const mcrepl_config *cfg,
					   uint32_t readable_replicas);

#ifdef __cplusplus
}
#endif
#endif
