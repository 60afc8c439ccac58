/*
 * libmcrepl statistics: aggregated counters for every RFC observability
 * item, rendered as Prometheus text. No per-key labels, ever.
 *
 * This header is the contract: what is not declared here is private.
 * Counters are atomics: every function is thread-safe.
 */
#ifndef MCREPL_STATS_H
#define MCREPL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "mcrepl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, "metric name", "counter"|"gauge", "help") */
#define MCREPL_STAT_MAP(X)                                                     \
	X(OBSERVED_HOT, "mcrepl_dynamic_observed_hot_total", "counter",        \
	  "Hot-read observations: heat window crossings on the read path")     \
	X(TRIGGERS_QUEUED, "mcrepl_dynamic_triggers_queued_total", "counter",  \
	  "Admission triggers queued for the background worker")               \
	X(TRIGGERS_DROPPED, "mcrepl_dynamic_triggers_dropped_total",           \
	  "counter", "Admission triggers dropped because the queue was full")  \
	X(WOULD_PROPOSE, "mcrepl_dynamic_would_propose_total", "counter",      \
	  "Proposals observe mode would have made")                            \
	X(ACCEPTED, "mcrepl_dynamic_admission_accepted_total", "counter",      \
	  "Admissions accepted (a lease was granted)")                         \
	X(TASKS_CREATED, "mcrepl_dynamic_copy_tasks_created_total", "counter", \
	  "Dynamic REPLICA_COPY tasks created")                                \
	X(TASKS_COMPLETED, "mcrepl_dynamic_copy_tasks_completed_total",        \
	  "counter", "Dynamic copies completed (replica readable)")            \
	X(TASKS_FAILED, "mcrepl_dynamic_copy_tasks_failed_total", "counter",   \
	  "Dynamic copy tasks failed (start refused, expired, lost)")          \
	X(TASKS_REVOKED, "mcrepl_dynamic_copy_tasks_revoked_total", "counter", \
	  "Dynamic copies revoked by the source worker")                       \
	X(RECREATE_COOLDOWN_HITS,                                              \
	  "mcrepl_dynamic_recreate_cooldown_hits_total", "counter",            \
	  "Admissions refused by the recreate cooldown")                       \
	X(REPLICAS, "mcrepl_dynamic_replicas", "gauge",                        \
	  "Dynamic replicas currently readable")                               \
	X(INFLIGHT, "mcrepl_dynamic_copies_inflight", "gauge",                 \
	  "Dynamic copies with a live lease")                                  \
	X(SAME_DOMAIN_COPIES, "mcrepl_dynamic_same_domain_copies_total",       \
	  "counter", "Completed dynamic copies within one domain")             \
	X(CROSS_DOMAIN_COPIES, "mcrepl_dynamic_cross_domain_copies_total",     \
	  "counter", "Completed dynamic copies across domains")                \
	X(SAME_DOMAIN_BYTES, "mcrepl_dynamic_same_domain_copy_bytes_total",    \
	  "counter", "Bytes of completed dynamic copies within one domain")    \
	X(CROSS_DOMAIN_BYTES, "mcrepl_dynamic_cross_domain_copy_bytes_total",  \
	  "counter", "Bytes of completed dynamic copies across domains")       \
	X(CROSS_DOMAIN_INFLIGHT, "mcrepl_dynamic_cross_domain_inflight",       \
	  "gauge", "Cross-domain dynamic copies in flight")

typedef enum mcrepl_stat {
#define MCREPL__STAT_ENUM(name, metric, type, help) MCREPL_STAT_##name,
	MCREPL_STAT_MAP(MCREPL__STAT_ENUM)
#undef MCREPL__STAT_ENUM
	    MCREPL_STAT_COUNT
} mcrepl_stat;

typedef struct mcrepl_stats mcrepl_stats;

/* Create zeroed stats (MCREPL_ENOMEM on failure); destroy accepts NULL. */
MCREPL_API mcrepl_status mcrepl_stats_create(mcrepl_stats **out);
MCREPL_API void mcrepl_stats_destroy(mcrepl_stats *s);

/* Add delta to a counter or gauge (gauges may go down: pass a negative). */
MCREPL_API void mcrepl_stats_add(mcrepl_stats *s, mcrepl_stat which,
				 int64_t delta);
MCREPL_API void mcrepl_stats_set(mcrepl_stats *s, mcrepl_stat which,
				 int64_t value);
MCREPL_API int64_t mcrepl_stats_get(const mcrepl_stats *s, mcrepl_stat which);

/* Count one admission rejection (mcrepl_dynamic_admission_rejected_total
 * {reason="<label>"}); REASON_RECREATE_COOLDOWN also counts a cooldown hit.
 * MODE_OBSERVE counts a would-propose instead of a rejection. */
MCREPL_API void mcrepl_stats_reject(mcrepl_stats *s, mcrepl_reason why);
MCREPL_API uint64_t mcrepl_stats_rejected(const mcrepl_stats *s,
					  mcrepl_reason why);

/* Count one proposal by (requester domain, target domain) pair for the
 * domain-aware labels. Up to 64 distinct pairs are kept; later pairs are
 * counted under ("other", "other"). Strings are copied. */
MCREPL_API void mcrepl_stats_domain_proposal(mcrepl_stats *s,
					     const char *requester_domain,
					     const char *target_domain);

/* Copy every counter, rejection and domain pair of src into dst (both
 * from mcrepl_stats_create), replacing dst's: a snapshot to render later,
 * taken where the caller's own figures are consistent with src (under
 * the lock its updates run under). MCREPL_EINVAL when either is NULL or
 * they are the same. Allocates nothing. Since 0.6.6. */
MCREPL_API mcrepl_status mcrepl_stats_copy(mcrepl_stats *dst,
					   const mcrepl_stats *src);

/*
 * Render every counter as Prometheus text exposition (HELP, TYPE, value;
 * rejections with one {reason} label per reason, domain pairs with
 * {requester_domain,target_domain}). Writes at most cap bytes including the
 * NUL; *len_out (may be NULL) receives the full length without the NUL.
 * Returns MCREPL_ENOSPC when cap was too small (call again with len+1).
 */
MCREPL_API mcrepl_status mcrepl_stats_render(const mcrepl_stats *s, char *buf,
					     size_t cap, size_t *len_out);

#ifdef __cplusplus
}
#endif
#endif
