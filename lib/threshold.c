/* Every threshold of the policy, derived in one place (see threshold.h).
 * Pure: no allocation, no globals, no clock. */
#include <math.h>

#include "mcrepl/heat.h"
#include "threshold.h"

bool mcr_policy_is_auto(const mcrepl_config *cfg, const mcrepl_cluster_view *cl)
{
	return cfg && cl && cfg->policy == MCREPL_POLICY_AUTO && cl->nodes > 0;
}

static uint32_t saturate(double x)
{
	if (!(x >= 1.0))
		return 1;
	if (x >= (double)MCREPL_HEAT_MAX_THRESHOLD)
		return MCREPL_HEAT_MAX_THRESHOLD;
	return (uint32_t)x;
}

uint32_t mcr_policy_share_count(const mcrepl_config *cfg,
				const mcrepl_cluster_view *cl)
{
	double x;

	if (!mcr_policy_is_auto(cfg, cl))
		return 0;
	x = cfg->hot_share * (double)cl->window_reads / (double)cl->nodes;
	/* 0.01 * 800 / 1 must be 8, not 9: snap rounding noise */
	if (fabs(x - nearbyint(x)) <= 1e-9 * (x > 1.0 ? x : 1.0))
		x = nearbyint(x);
	return saturate(ceil(x));
}

/* max(T, ceil((1 + sqrt(1 + S r))^2)) for r >= 1, saturated. */
static uint32_t share_threshold(const mcrepl_config *cfg, uint32_t share,
				uint32_t r)
{
	double x = (double)share * r, a;
	uint32_t floor_count = mcrepl_config_threshold(cfg);

	/* the least count c with c - 2 sqrt(c) >= S r: the key's rate is at
	 * least r shares with two standard deviations of a Poisson count to
	 * spare */
	a = 1.0 + sqrt(1.0 + x);
	a = ceil(a * a - 1e-9);
	if (a < (double)floor_count)
		return floor_count;
	return saturate(a);
}

/* The RFC's rule: T, times the readable replicas when scaled. */
static uint32_t rfc_threshold(const mcrepl_config *cfg, uint32_t readable)
{
	uint64_t t = mcrepl_config_threshold(cfg);

	if (cfg->scale_threshold_by_replicas && readable > 1)
		t *= readable;
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

uint32_t mcr_threshold(const mcrepl_config *cfg, const mcrepl_cluster_view *cl,
		       uint32_t readable)
{
	if (readable == 0) /* domain-aware: none in the domain */
		return mcrepl_config_cross_domain_threshold(cfg);
	if (!mcr_policy_is_auto(cfg, cl))
		return rfc_threshold(cfg, readable);
	return share_threshold(cfg, mcr_policy_share_count(cfg, cl), readable);
}

uint32_t mcr_threshold_trigger(const mcrepl_config *cfg,
			       const mcrepl_cluster_view *cl)
{
	uint32_t t = mcr_threshold(cfg, cl, 1), x;

	if (!cfg->domain_aware) /* no key is without a replica in its domain */
		return t;
	/* fire at the lowest count any admission can accept */
	x = mcr_threshold(cfg, cl, 0);
	return x < t ? x : t;
}

double mcr_threshold_keep(const mcrepl_config *cfg,
			  const mcrepl_cluster_view *cl, uint32_t readable)
{
	double keep, floor_count = (double)mcrepl_config_threshold(cfg);

	if (readable <= 1) /* the domain's only copy */
		return (double)mcrepl_config_cross_domain_threshold(cfg);
	/* the heat the last replica's share stands for, RFC count floor */
	keep = (double)mcr_policy_share_count(cfg, cl) * (readable - 1);
	return keep < floor_count ? floor_count : keep;
}
