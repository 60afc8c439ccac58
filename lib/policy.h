/*
 * libmcrepl self-tuning policy ("auto"): when a key is hot, how many
 * replicas it may hold, whether its fan-out helps the cluster's balance,
 * when a dynamic replica has gone cold, and how much read load a granted
 * copy moves. docs/POLICY.md gives the reasoning and the memory bound.
 *
 * Private to the library since 0.4.0: hosts get the policy through the
 * engine (mcrepl/engine.h), which owns the bookkeeping these rules need;
 * the unit tests include this header. Every function is pure: it reads its arguments, allocates nothing, keeps
 * nothing and is thread-safe.
 *
 * WHEN AUTO APPLIES. cfg->policy == MCREPL_POLICY_AUTO (the default) and
 * the host passes a cluster view with nodes >= 1. Otherwise every function
 * here answers with the RFC's rule (absolute threshold, fixed cap
 * max_memory_replicas, no balance gate, no retirement), so a host that has
 * not been wired keeps the RFC's behaviour, and "policy = rfc" restores it
 * everywhere.
 *
 * UNITS. Hit counts are over the heat window (heat_window_seconds), as
 * mcrepl_heat_cell_count() returns them. window_reads is the reads the
 * whole cluster served over the same window. A segment's read_load
 * (mcrepl_segment_view) is a count of reads routed to it over the host's
 * load period plus the reads expected from copies granted to it and not
 * yet reflected in those counts (mcr_policy_project()); with a load
 * period equal to the heat window, a key's hit count and a segment's load
 * are in the same unit.
 */
#ifndef MCREPL_LIB_POLICY_H
#define MCREPL_LIB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/config.h"
#include "mcrepl/error.h"
#include "mcrepl/admit.h"
#include "mcrepl/place.h"
#include "threshold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most readable MEMORY replicas per object. Not auto: max_memory_replicas.
 * Auto: auto_max_replicas, or cl->nodes when that is 0. */
uint32_t mcr_policy_replica_cap(const mcrepl_config *cfg,
				const mcrepl_cluster_view *cl);

/* The replica count a key with `count` hits is allowed to reach (auto):
 * the largest r <= cap with count >= mcr_threshold(r - 1), at least 1.
 * Not auto: max_memory_replicas when count reaches the RFC threshold,
 * else 1. */
uint32_t mcr_policy_want_replicas(const mcrepl_config *cfg,
				  const mcrepl_cluster_view *cl,
				  uint32_t count);

/* Fill *out from the host's segment and replica views (replicas match
 * segments by id; unreadable replicas and unknown segments are skipped;
 * held and settled are false).
 * O(n_segments + n_replicas * n_segments). */
void mcr_policy_balance(const mcrepl_segment_view *segments, size_t n_segments,
			const mcrepl_replica_view *replicas, size_t n_replicas,
			mcrepl_balance *out);

/*
 * Counts that just rose. count: reads over the last `span` buckets (a
 * window's count right after a bucket boundary covers its B - 1 complete
 * buckets and a sliver of the open one, so span = B - 1 + the open
 * bucket's elapsed fraction); recent: reads in the last recent_buckets
 * complete buckets. The recent rate scaled to the same span, est = recent
 * x span / recent_buckets, has the Poisson deviation sd = sqrt(est x span
 * / recent_buckets); returns max(count, est - z sd): the count, or a lower
 * bound on the current rate over the same span where the recent buckets
 * show it clearly above (a key that turned hot within the window is judged
 * by its rate, not by the quiet past its window still holds). A count
 * steady over the window stays itself: the bound passes it only when the
 * recent buckets ran z deviations high. recent_buckets 0 or more than
 * span: count.
 */
/*
 * The lower bound of mcr_policy_rising() alone: est - z sd over the
 * span, at least 0; 0 when recent_buckets is 0 or more than span. The
 * engine keeps a node that copies are projected to relieve at or above it
 * (the node still served that many reads lately).
 */
double mcr_policy_recent_low(uint32_t recent, uint32_t recent_buckets,
			     double span, double z);
uint32_t mcr_policy_rising(uint32_t count, uint32_t recent,
			   uint32_t recent_buckets, double span, double z);

/* The deviations the engine asks of a key's last bucket, and of a node's
 * last MCREPL_POLICY_RISING_NODE_BUCKETS buckets (docs/POLICY.md). */
#define MCREPL_POLICY_RISING_KEY_Z 2.0
#define MCREPL_POLICY_RISING_NODE_Z 2.0
#define MCREPL_POLICY_RISING_NODE_BUCKETS 2

/*
 * How many standard deviations of a Poisson read count the largest of
 * `segments` counts may show by chance: z = sqrt(2 ln(100 n)), n =
 * segments (0 reads as 1), so that n phi(z) / z, a bound on the chance
 * that any of n normal counts passes z deviations, stays below 0.1 % per
 * look (3.03 at 1 segment, 3.46 at 4, 3.66 at 8, 4.80 at 1,024). The gate
 * is looked at once per hot key and bucket, so a smaller z (the median of
 * the largest count, sqrt(2 ln n)) copied keys on nodes loaded by chance
 * for as long as a run lasts.
 */
double mcr_policy_noise_z(uint32_t segments);

/*
 * Is the key's least-loaded replica segment overloaded? With n = segments,
 * mean = load_sum / n, t = balance_tolerance and excess = key_load - mean:
 * excess > band = max(t * mean, z * sqrt(mean)), z =
 * mcr_policy_noise_z(n): beyond the tolerance and beyond what sampling
 * noise explains. When b->held (the key was refused as balanced within the
 * last window, in a run of refusals MCREPL_POLICY_HOLD_WINDOWS old or
 * more) the band is
 * band + z * sqrt(mean): hysteresis; when
 * b->settled too (refused for MCREPL_POLICY_SETTLE_WINDOWS windows
 * running), band + 2 z sqrt(mean): the chance of a noise pass grows with
 * the number of looks, and a settled key has had many. A key's
 * fan-out stops where its best segment sits just inside the band, and a
 * segment held there crosses it again by noise alone now and then; the
 * second threshold lies beyond that noise, so a refused key is copied
 * again only when its segment's load has really moved (no late, chance
 * copies in steady state). False when nothing is known (segments or
 * load_sum 0).
 */
bool mcr_policy_overloaded(const mcrepl_config *cfg, const mcrepl_balance *b);

/*
 * Is one more replica of a key with `count` hits and `readable` readable
 * replicas worth its memory? True when the reads it takes over, c /
 * (readable + 1) with c = count - 2 sqrt(count) (two standard deviations
 * of a Poisson count to spare; readable 0 reads as 1), are at least half
 * the band of mcr_policy_overloaded(): 2 c >= (readable + 1) * band. A
 * copy
 * that moves less cannot by itself bring an overloaded node back, and a
 * run of such copies spends several replicas where one copy of the hotter
 * key would do. False when nothing is known.
 */
bool mcr_policy_worth(const mcrepl_config *cfg, const mcrepl_balance *b,
		      uint32_t count, uint32_t readable);

/*
 * By how many standard deviations does a key with `count` hits and
 * `readable` readable replicas fill more than a node's fair share per
 * replica? With c = count, W = window_reads (W < c reads as c), q =
 * readable / nodes (readable 0 reads as 1): the excess d = c - q W over
 * its variance when the key's count and the rest are Poisson, Var d =
 * c (1 - q)^2 + (W - c) q^2: d / sqrt(Var d); 0 when d <= 0 or cl is NULL
 * or has no nodes.
 */
double mcr_policy_share_excess(const mcrepl_cluster_view *cl, uint32_t count,
			       uint32_t readable);

/*
 * How many deviations of mcr_policy_share_excess() admit a key at one
 * look: max(2, sqrt(2 ln nodes)), about the largest of `nodes` keys' noise
 * (2 up to 7 nodes, 2.04 at 8, 3.72 at 1,024).
 */
double mcr_policy_share_z(uint32_t nodes);

/*
 * The balance the gate of mcr_policy_helps() judges: b with its mean
 * (load_sum / segments) no higher than the reads the cluster served per
 * node, window_reads / nodes, where the loads sum to at most
 * MCREPL_POLICY_MEAN_SLACK times that (farther off, the host's loads are in
 * another unit and b is returned as it is; so too without a view; b NULL:
 * all zero). A node's load is judged by its recent rate where that rose
 * (mcr_policy_rising()): after a flash crowd every holder of the key rose
 * while the node that served the burst alone still held it in its window,
 * the loads summed 10-15 % over the reads served, and the key's holders,
 * 1.4 x the mean each second, looked under it for 3-6 s.
 */
#define MCREPL_POLICY_MEAN_SLACK 1.25
mcrepl_balance mcr_policy_capped_mean(const mcrepl_cluster_view *cl,
				      const mcrepl_balance *b);

/*
 * Does one more replica of a key with `count` hits and `readable` readable
 * replicas help? balance_tolerance 0 or no cluster view: always (no gate).
 * Otherwise when mcr_policy_overloaded() and mcr_policy_worth() (on
 * mcr_policy_capped_mean() of b for a key that carries at least half a
 * fair share on each replica, 2 count nodes >= r window_reads: its
 * holders' load is mostly its own, and so is the rise that lifted the
 * loads' sum; capped for every key, each node a flash crowd's key lifted
 * looked overloaded to every key on it), or
 * when the key alone fills a node's fair share per replica: its
 * mcr_policy_share_excess() reaches two deviations, or, once the key
 * is settled (b->settled), mcr_policy_share_z(nodes). That rule decides
 * when loads are unknown or too few, e.g. while the window fills or on a
 * small cluster: a single key read `threshold` = 8 times on a 2-node
 * cluster (d = 4, 2.83 deviations) gets its copy; a key read 16 times out
 * of 8 nodes' first 100 reads (d = 3.5, 0.95 deviations) does not.
 * Settled: a key refused for MCREPL_POLICY_SETTLE_WINDOWS windows running
 * has been looked at once per bucket all that time, and on a large
 * cluster many keys sit near their share (at 1,024 nodes and 5 k reads/s
 * a node's share is 43 reads a window); each look at each of them passed
 * two deviations by chance about 2 % of the time, so over a run every one
 * of them got a late copy. A key that really fills its share passes two
 * deviations at most looks and is copied before it settles; after that,
 * the deviations the largest of `nodes` keys' noise reaches. At up to 7
 * nodes this is still two. b->held does not change this rule: it decides
 * where loads say little (a cluster starting, or serving a few reads per
 * node), and there a key that needs copies must not wait for a chance
 * burst to get them.
 */
bool mcr_policy_helps(const mcrepl_config *cfg, const mcrepl_cluster_view *cl,
		      const mcrepl_balance *b, uint32_t count,
		      uint32_t readable);

/*
 * EVIDENCE OVER A RUN OF REFUSALS (few reads per node). Where a node serves
 * few reads a window, one window's noise band (z sqrt(mean)) is most of
 * the mean and a persistent hot spot passes as noise: the Mooncake
 * conversation trace at real speed puts ~50 reads a window on each of 16
 * nodes, and the block every request reads adds ~34 to its node, under
 * what one window can tell from chance. The lease table sums the gate's
 * inputs over a key's run of BALANCED refusals, one sample a heat window,
 * the latest MCREPL_POLICY_EVIDENCE_WINDOWS of them (older ones fade), and
 * judges the sums: over w windows an excess grows as w and the noise as
 * sqrt(w), and over the key's r replicas (readers spread by load level
 * them) as r and sqrt(r). A key that loads all its replicas is found in a
 * few windows; a node over the mean by its other keys (one replica) needs
 * an excess the window count can show.
 */
/* The evidence judges where one window's band is over this many times the
 * tolerance (t m): there noise, not the tolerance, sets it. */
#define MCREPL_POLICY_EVIDENCE_NOISE 1
/* Samples (heat windows) the evidence weighs in full. */
#define MCREPL_POLICY_EVIDENCE_WINDOWS 16
/* The least the evidence finds worth a copy: the least loaded replica's
 * segment this share of the mean over the mean. */
#define MCREPL_POLICY_EVIDENCE_EXCESS 0.10
/* After a full horizon of refusals, the factor on every threshold. */
#define MCREPL_POLICY_EVIDENCE_HOLD 1.5

typedef struct mcrepl_evidence {
	double low;	/* the least loaded replica's segment (key_load) over
			* the mean, summed */
	double mean;	/* the mean segment load, summed */
	double count;	/* the key's hit count, summed */
	double n;	/* samples: heat windows (faded) */
	uint64_t at_ms; /* the latest sample; 0: none */
} mcrepl_evidence;

/* Add the gate's inputs of a BALANCED refusal at now_ms: one sample a heat
 * window (a refusal within window_ms of the latest sample adds nothing; a
 * sample two windows after the latest starts afresh); past
 * MCREPL_POLICY_EVIDENCE_WINDOWS samples each older one keeps (W - 1) / W
 * of its weight. */
void mcr_policy_evidence_add(mcrepl_evidence *ev, const mcrepl_balance *b,
			     uint32_t count, uint64_t now_ms,
			     uint64_t window_ms);

/* A copy of the key was granted at `readable` readable replicas: the
 * evidence is kept, each sample's least loaded replica lowered by what the
 * copy takes from it, count / (r (r + 1)) (readers spread by load level
 * the key's replicas), so a key that needs several copies gets them one
 * after another, not one per fresh run of evidence. */
void mcr_policy_evidence_granted(mcrepl_evidence *ev, uint32_t readable);

/*
 * Does the evidence admit a copy the one-window gate refused? Two samples
 * or more, where one window's band is noise (z sqrt(m) above
 * MCREPL_POLICY_EVIDENCE_NOISE x the tolerance t m, m the mean per
 * sample), and on the sums, with z for segments x
 * MCREPL_POLICY_EVIDENCE_WINDOWS looks, r = max(1, readable) and h = 1, or
 * MCREPL_POLICY_EVIDENCE_HOLD once the sums weigh a full horizon (a key
 * refused that long sits near the line: without the hold it crosses it by
 * chance, late, again and again):
 *   the least loaded replica's segment over the mean by L >= h x
 *   MCREPL_POLICY_EVIDENCE_EXCESS x M (M the mean, summed);
 *   every replica's segment over by L: r L > h max(t r M, z sqrt(r M));
 *   the copy worth it: 2 (C - 2 sqrt(C)) >= (r + 1) h max(t M, z sqrt(M))
 *   (C the key's count, summed).
 */
bool mcr_policy_evidence_helps(const mcrepl_config *cfg,
			       const mcrepl_evidence *ev, uint32_t segments,
			       uint32_t readable);

/*
 * Should one dynamic replica of a key with `count` hits and `readable`
 * readable replicas be retired? Auto and readable >= 2: true when
 * 2 * (count + 2 * sqrt(count)) < max(mcrepl_config_threshold(cfg),
 * share_count * (readable - 1)) (mcr_threshold_keep()): the key's rate is, with two standard
 * deviations of a Poisson count to spare, under half of what its replicas
 * but one stand for (admission asked for the full share with two
 * deviations to spare, so a retired replica comes back only once the
 * key's heat has more than doubled, and sampling noise alone neither
 * admits nor retires one: no copy/retire oscillation in steady state).
 * A host evaluates it at most once per heat window per key, so that the
 * counts it judges are independent. Never otherwise: under the RFC,
 * replica reduction is left to eviction.
 */
bool mcr_policy_should_retire(const mcrepl_config *cfg,
			      const mcrepl_cluster_view *cl, uint32_t count,
			      uint32_t readable);

/*
 * Domain-aware: should one dynamic replica of a key be retired from a
 * reader domain where the key had `count` hits (its heat in that domain,
 * not the cluster's) and has `readable` readable replicas? readable >= 2:
 * mcr_policy_should_retire(). readable == 1, the domain's only copy:
 * true when 2 * (count + 2 * sqrt(count)) <
 * mcrepl_config_cross_domain_threshold(cfg): the domain reads the key at
 * under half the rate that admitted its first copy, with two standard
 * deviations to spare, so its readers may go back to reading across
 * domains. False unless auto and domain-aware, and for readable == 0. The
 * host never retires an object's last readable replica and judges a key at
 * most once per heat window.
 */
bool mcr_policy_should_retire_in_domain(const mcrepl_config *cfg,
					const mcrepl_cluster_view *cl,
					uint32_t count, uint32_t readable);

/*
 * Which dynamic replica to retire: among readable dynamic replicas, the
 * one with the highest load[i] (NULL = all equal), ties broken by the
 * lowest rendezvous score of (tenant, key, segment, 0) (the replica the
 * placement tie-break would have chosen last). MCREPL_OK and *pick, or
 * MCREPL_ENOENT when there is none; MCREPL_EINVAL if pick is NULL or
 * n > 0 and replicas is NULL.
 */
mcrepl_status mcr_policy_retire_pick(const char *tenant, const char *key,
				     const mcrepl_replica_view *replicas,
				     const uint64_t *load, size_t n,
				     size_t *pick);

/* The read load a granted copy moves once readers spread over r + 1
 * replicas: the target gains key_load / (r + 1), each of the r readable
 * replicas gives up key_load / (r * (r + 1)) (integer division; r 0 reads
 * as 1). key_load is the key's reads in the unit of read_load. */
typedef struct mcrepl_projection {
	uint64_t to_target;
	uint64_t from_each;
} mcrepl_projection;

void mcr_policy_project(uint64_t key_load, uint32_t readable,
			mcrepl_projection *out);

/*
 * The same when readers spread by load (auto: mcrepl_order_replicas() with
 * loads): they read the least-loaded of the key's segments first, so a
 * copy fills its target up towards the level of the key's replicas rather
 * than by an even share. level = the lowest read_load among the segments
 * of the key's readable replicas (mcrepl_balance.key_load), target_load =
 * the target segment's read_load before the copy. With gap = level -
 * target_load (0 when the target is not below the level), the new level is
 * (r level + target_load) / (r + 1): to_target = min(key_load, r gap /
 * (r + 1)), from_each = to_target / r (r 0 reads as 1). An even share
 * instead put a hot key's copy on an idle segment at c / (r + 1), far past
 * the level its readers would bring it to, and that segment's other keys
 * were then copied away from a load that never came.
 */
void mcr_policy_project_level(uint64_t key_load, uint32_t readable,
			      uint64_t level, uint64_t target_load,
			      mcrepl_projection *out);

#ifdef __cplusplus
}
#endif
#endif
