/* The self-tuning policy (see mcrepl/policy.h). Pure: no allocation, no
 * globals, no clock. */
#include <math.h>

#include "internal.h"
#include "mcrepl/admit.h"
#include "mcrepl/heat.h"
#include "mcrepl/policy.h"

bool mcrepl_policy_is_auto(const mcrepl_config *cfg,
			   const mcrepl_cluster_view *cl)
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

uint32_t mcrepl_policy_share_count(const mcrepl_config *cfg,
				   const mcrepl_cluster_view *cl)
{
	double x;

	if (!mcrepl_policy_is_auto(cfg, cl))
		return 0;
	x = cfg->hot_share * (double)cl->window_reads / (double)cl->nodes;
	/* 0.01 * 800 / 1 must be 8, not 9: snap rounding noise */
	if (fabs(x - nearbyint(x)) <= 1e-9 * (x > 1.0 ? x : 1.0))
		x = nearbyint(x);
	return saturate(ceil(x));
}

uint32_t mcrepl_policy_admit_threshold(const mcrepl_config *cfg,
				       const mcrepl_cluster_view *cl,
				       uint32_t readable)
{
	uint64_t floor_count, share;

	if (!mcrepl_policy_is_auto(cfg, cl))
		return mcrepl_admit_threshold(cfg, readable);
	if (readable == 0)
		return mcrepl_config_cross_domain_threshold(cfg);
	floor_count = mcrepl_config_threshold(cfg);
	share = (uint64_t)mcrepl_policy_share_count(cfg, cl) * readable;
	if (share < floor_count)
		share = floor_count;
	return share > MCREPL_HEAT_MAX_THRESHOLD ? MCREPL_HEAT_MAX_THRESHOLD
						 : (uint32_t)share;
}

uint32_t mcrepl_policy_trigger_threshold(const mcrepl_config *cfg,
					 const mcrepl_cluster_view *cl)
{
	uint32_t t, x;

	if (!mcrepl_policy_is_auto(cfg, cl)) {
		mcrepl_heat_params p;

		mcrepl_heat_params_init(&p, cfg);
		return p.threshold;
	}
	t = mcrepl_policy_admit_threshold(cfg, cl, 1);
	x = mcrepl_config_cross_domain_threshold(cfg);
	return cfg->domain_aware && x < t ? x : t;
}

uint32_t mcrepl_policy_replica_cap(const mcrepl_config *cfg,
				   const mcrepl_cluster_view *cl)
{
	if (!mcrepl_policy_is_auto(cfg, cl))
		return cfg->max_memory_replicas;
	return cfg->auto_max_replicas ? cfg->auto_max_replicas : cl->nodes;
}

uint32_t mcrepl_policy_want_replicas(const mcrepl_config *cfg,
				     const mcrepl_cluster_view *cl,
				     uint32_t count)
{
	uint32_t cap = mcrepl_policy_replica_cap(cfg, cl);
	uint32_t share, floor_count = mcrepl_config_threshold(cfg);
	uint64_t r;

	if (count < floor_count || cap <= 1)
		return 1;
	if (!mcrepl_policy_is_auto(cfg, cl))
		return cap;
	/* admit_threshold(r - 1) = max(floor, share * (r - 1)) <= count */
	share = mcrepl_policy_share_count(cfg, cl);
	r = (uint64_t)count / share + 1;
	return r > cap ? cap : (uint32_t)r;
}

static const mcrepl_segment_view *find_segment(const mcrepl_segment_view *s,
					       size_t n, mcrepl_segment_id id)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].id.v == id.v)
			return &s[i];
	return NULL;
}

void mcrepl_policy_balance(const mcrepl_segment_view *segments,
			   size_t n_segments,
			   const mcrepl_replica_view *replicas,
			   size_t n_replicas, mcrepl_balance *out)
{
	bool found = false;

	if (!out)
		return;
	out->key_load = out->load_sum = 0;
	out->segments = 0;
	if (!segments)
		n_segments = 0;
	for (size_t i = 0; i < n_segments; i++) {
		if (!segments[i].id.v || !segments[i].capacity)
			continue;
		out->load_sum += segments[i].read_load;
		out->segments++;
	}
	for (size_t i = 0; replicas && i < n_replicas; i++) {
		const mcrepl_segment_view *s;

		if (!replicas[i].readable)
			continue;
		s = find_segment(segments, n_segments, replicas[i].segment);
		if (s && (!found || s->read_load < out->key_load))
			out->key_load = s->read_load;
		found |= s != NULL;
	}
}

bool mcrepl_policy_judgeable(const mcrepl_config *cfg, const mcrepl_balance *b)
{
	double t = cfg ? cfg->balance_tolerance : 0;

	if (!b || !b->segments || !b->load_sum || !(t > 0))
		return false;
	return (double)b->load_sum / (double)b->segments * t * t >= 4.0;
}

bool mcrepl_policy_overloaded(const mcrepl_config *cfg, const mcrepl_balance *b)
{
	double mean;

	if (!mcrepl_policy_judgeable(cfg, b))
		return false;
	mean = (double)b->load_sum / (double)b->segments;
	return (double)b->key_load > mean * (1.0 + cfg->balance_tolerance);
}

bool mcrepl_policy_helps(const mcrepl_config *cfg,
			 const mcrepl_cluster_view *cl, const mcrepl_balance *b,
			 uint32_t count, uint32_t readable)
{
	uint64_t fair;

	if (!cfg || !(cfg->balance_tolerance > 0) || !cl || !cl->nodes)
		return true;
	if (mcrepl_policy_judgeable(cfg, b))
		return mcrepl_policy_overloaded(cfg, b);
	fair = (cl->window_reads + cl->nodes - 1) / cl->nodes;
	return (uint64_t)count >= (uint64_t)(readable ? readable : 1) * fair;
}

bool mcrepl_policy_should_retire(const mcrepl_config *cfg,
				 const mcrepl_cluster_view *cl, uint32_t count,
				 uint32_t readable)
{
	if (!mcrepl_policy_is_auto(cfg, cl) || readable < 2)
		return false;
	return 2ull * count <
	       mcrepl_policy_admit_threshold(cfg, cl, readable - 1);
}

mcrepl_status mcrepl_policy_retire_pick(const char *tenant, const char *key,
					const mcrepl_replica_view *replicas,
					const uint64_t *load, size_t n,
					size_t *pick)
{
	bool found = false;
	uint64_t best_load = 0, best_score = 0;

	if (!pick || (n && !replicas))
		return MCREPL_EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint64_t l = load ? load[i] : 0, sc;

		if (!replicas[i].readable || !replicas[i].dynamic)
			continue;
		sc = mcrepl_rendezvous(tenant, key, replicas[i].segment.v, 0);
		if (!found || l > best_load ||
		    (l == best_load && sc < best_score)) {
			found = true;
			best_load = l;
			best_score = sc;
			*pick = i;
		}
	}
	return found ? MCREPL_OK : MCREPL_ENOENT;
}

void mcrepl_policy_project(uint64_t key_load, uint32_t readable,
			   mcrepl_projection *out)
{
	uint64_t r = readable ? readable : 1;

	if (!out)
		return;
	out->to_target = key_load / (r + 1);
	out->from_each = key_load / (r * (r + 1));
}
