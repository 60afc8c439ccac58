/*
 * libmcrepl thresholds: every hit count the policy compares a key's heat
 * with is derived here, from the config, the cluster view (NULL: none),
 * the key's readable replicas and, domain-aware, whether the key has a
 * replica in the reader's domain (readable 0: none there). Admission
 * (mcrepl_admit()), the read path's trigger (mcrepl_heat_params_init(),
 * the engine's tick), the replica count a key may reach and retirement
 * all call these functions; none of them calls admission or the balance
 * gate (lib/policy.c), so the layers run one way: threshold.c, then
 * policy.c, then admit.c (make check-budgets checks it).
 *
 * Private to the library; the unit tests include this header. Pure: no
 * allocation, no globals, no clock; thread-safe.
 */
#ifndef MCREPL_LIB_THRESHOLD_H
#define MCREPL_LIB_THRESHOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "mcrepl/config.h"
#include "mcrepl/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when the auto rules apply: policy auto and cl->nodes >= 1. */
bool mcr_policy_is_auto(const mcrepl_config *cfg,
			const mcrepl_cluster_view *cl);

/*
 * One replica's worth of heat: ceil(hot_share * window_reads / nodes),
 * at least 1, saturated at MCREPL_HEAT_MAX_THRESHOLD. 0 when auto does not
 * apply. A node's fair share is window_reads / nodes.
 */
uint32_t mcr_policy_share_count(const mcrepl_config *cfg,
				const mcrepl_cluster_view *cl);

/*
 * THE threshold: the hit count a key with `readable` readable MEMORY
 * replicas needs to gain one more. With T = mcrepl_config_threshold(cfg):
 *   readable 0 (domain-aware: none in the reader's domain):
 *     mcrepl_config_cross_domain_threshold(cfg) (T when not domain-aware);
 *   auto (mcr_policy_is_auto()): max(T, ceil((1 + sqrt(1 + S r))^2)),
 *     S = mcr_policy_share_count(), r = readable: the least count c with
 *     c - 2 sqrt(c) >= S r, i.e. the key's rate reaches r shares with two
 *     standard deviations of a Poisson count to spare (a chance burst
 *     does not admit a copy), saturated at MCREPL_HEAT_MAX_THRESHOLD; T
 *     stays a floor, so a key read T times in the window on a small
 *     cluster still qualifies;
 *   otherwise (the RFC's rule): T, times readable when
 *     cfg->scale_threshold_by_replicas and readable > 1, saturated at
 *     UINT32_MAX.
 */
uint32_t mcr_threshold(const mcrepl_config *cfg, const mcrepl_cluster_view *cl,
		       uint32_t readable);

/*
 * The count at which the read path reports CROSSED: the lowest count any
 * admission can accept, mcr_threshold(cfg, cl, 1) and, domain-aware (only
 * there may a key have no replica in the reader's domain), the lower of
 * that and mcr_threshold(cfg, cl, 0). cl NULL: what mcrepl_heat_params_init() gives, the lower of T
 * and the cross-domain count; the engine derives it again from its
 * cluster view at every tick (mcrepl_engine_heat_params()).
 */
uint32_t mcr_threshold_trigger(const mcrepl_config *cfg,
			       const mcrepl_cluster_view *cl);

/*
 * The heat a key's replicas but one stand for, which retirement compares
 * half of with the key's count (mcr_policy_should_retire()): readable >= 2:
 * max(T, S (readable - 1)); readable 0 or 1 (the domain's only copy):
 * mcrepl_config_cross_domain_threshold(cfg), the count that admitted it.
 */
double mcr_threshold_keep(const mcrepl_config *cfg,
			  const mcrepl_cluster_view *cl, uint32_t readable);

#ifdef __cplusplus
}
#endif
#endif
