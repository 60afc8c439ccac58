/* The admission decision: a pure function of its input. */
#include "internal.h"
#include "policy.h"
#include "mcrepl/admit.h"

static bool nonempty(const char *s)
{
	return s && s[0] != '\0';
}

uint32_t mcrepl_admit_threshold(const mcrepl_config *cfg,
				uint32_t readable_replicas)
{
	return mcr_threshold(cfg, NULL, readable_replicas);
}

/* Proposal shape and freshness: the checks that need no object. */
static mcrepl_reason check_proposal(const mcrepl_admit_input *in)
{
	const mcrepl_proposal *p = in->proposal;

	if (!p || !nonempty(p->key) || !nonempty(p->proposal_id) ||
	    p->action != MCREPL_ACTION_ADD ||
	    (p->kind != MCREPL_PROPOSAL_HOT &&
	     (p->kind != MCREPL_PROPOSAL_WARMUP || !in->cfg->domain_aware)))
		return MCREPL_REASON_INVALID_PROPOSAL;
	if (p->expires_at_ms <= in->now_ms)
		return MCREPL_REASON_EXPIRED;
	if (!in->cfg->domain_aware &&
	    (nonempty(p->requester_domain) || nonempty(p->target_domain)))
		return MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED;
	return MCREPL_REASON_NONE;
}

/* The object as the proposer saw it versus as the master sees it. */
static mcrepl_reason check_object(const mcrepl_admit_input *in)
{
	const mcrepl_object_view *o = in->object;

	if (!o || !o->exists)
		return MCREPL_REASON_UNKNOWN_OBJECT;
	if (o->version != in->proposal->observed_version)
		return MCREPL_REASON_VERSION_MISMATCH;
	if (o->size != in->proposal->expected_size)
		return MCREPL_REASON_SIZE_MISMATCH;
	return MCREPL_REASON_NONE;
}

/* The balance gate judges this proposal (auto assumed): a HOT proposal
 * for a key that holds a readable replica, with the gate on. */
static bool gated(const mcrepl_admit_input *in, uint32_t r)
{
	return in->proposal->kind == MCREPL_PROPOSAL_HOT && r > 0 &&
	       in->cfg->balance_tolerance > 0;
}

/* The key's run of BALANCED refusals began `windows` heat windows ago or
 * more. */
static bool run_for(const mcrepl_key_state *ks, uint64_t now, uint32_t windows,
		    uint64_t window_ms)
{
	return ks->balanced_since_ms && now >= ks->balanced_since_ms &&
	       now - ks->balanced_since_ms >= (uint64_t)windows * window_ms;
}

/* Heat, single flight, replica limit and cooldowns. */
static mcrepl_reason check_state(const mcrepl_admit_input *in)
{
	const mcrepl_object_view *o = in->object;
	const mcrepl_key_state *ks = &in->key_state;
	const mcrepl_cluster_view *cl = in->cluster;
	bool is_auto = mcr_policy_is_auto(in->cfg, cl);
	uint32_t r = o->readable_memory_replicas;
	mcrepl_balance b = in->balance;

	if (in->proposal->kind == MCREPL_PROPOSAL_WARMUP) {
		if (r > 0)
			return MCREPL_REASON_TARGET_DOMAIN_HAS_REPLICA;
	} else if (in->heat_count < mcr_threshold(in->cfg, cl, r)) {
		return MCREPL_REASON_BELOW_THRESHOLD;
	}
	if (ks->pending || o->busy)
		return MCREPL_REASON_IN_FLIGHT;
	if (r >= mcr_policy_replica_cap(in->cfg, cl))
		return MCREPL_REASON_REPLICA_LIMIT;
	/* refused BALANCED within the last window, in a run of refusals
	 * MCREPL_POLICY_HOLD_WINDOWS old or more: hysteresis. A younger run
	 * is a key whose load just moved (it turned hot, or the counts are
	 * still catching up with its copies): the band alone judges it */
	b.held |= ks->balanced_at_ms && in->now_ms >= ks->balanced_at_ms &&
		  in->now_ms - ks->balanced_at_ms < in->cfg->heat_window_ms &&
		  run_for(ks, in->now_ms, MCREPL_POLICY_HOLD_WINDOWS,
			  in->cfg->heat_window_ms);
	/* refused BALANCED for several windows running */
	b.settled |=
	    b.held && run_for(ks, in->now_ms, MCREPL_POLICY_SETTLE_WINDOWS,
			      in->cfg->heat_window_ms);
	if (is_auto && gated(in, r) &&
	    !mcr_policy_helps(in->cfg, cl, &b, in->heat_count, r))
		return MCREPL_REASON_BALANCED;
	if (!is_auto && in->now_ms < ks->action_cooldown_until_ms)
		return MCREPL_REASON_ACTION_COOLDOWN;
	/* auto, with the balance gate on: a key that passed it is judged by
	 * its load, not held back by the fixed cooldown after a replica of it
	 * went (retirement asks for under half the heat admission does, so
	 * the two cannot flap); the cooldown still holds a key the gate has
	 * nothing to say about (its first replica in a domain) */
	if (in->now_ms < ks->recreate_after_ms && !(is_auto && gated(in, r)))
		return MCREPL_REASON_RECREATE_COOLDOWN;
	return MCREPL_REASON_NONE;
}

mcrepl_reason mcrepl_admit(const mcrepl_admit_input *in)
{
	mcrepl_reason r;

	if (!in || !in->cfg)
		return MCREPL_REASON_INVALID_PROPOSAL;
	if (in->cfg->mode == MCREPL_MODE_OFF)
		return MCREPL_REASON_MODE_OFF;
	r = check_proposal(in);
	if (r == MCREPL_REASON_NONE)
		r = check_object(in);
	if (r == MCREPL_REASON_NONE)
		r = check_state(in);
	if (r == MCREPL_REASON_NONE && in->cfg->mode == MCREPL_MODE_OBSERVE)
		r = MCREPL_REASON_MODE_OBSERVE;
	return r;
}
