/*
 * mcrepl-sim analytic reference: the max/mean node load of the ideal
 * fluid placement for the same workload and the same primaries.
 *
 * Every object's expected read share w (Zipf: r^-theta; uniform: 1; trace:
 * its read count) sits on its primary's node. The top k objects are then
 * lifted off their primaries, split into R equal parts and placed greedily,
 * hottest first, each part on the least-loaded node not yet holding that
 * object (LPT). ideal(k, R) is the resulting max/mean; the reference is the
 * minimum over k in {0, 1, 2, 4, ..., min(objects, 16 x nodes)} plus the k
 * the real run replicated, and over R in {M, M/2, M/4, ..., 2} where M =
 * max replicas (at most the node count): a policy allowed M copies may use
 * fewer, and R = M = nodes would spread every top key uniformly and leave
 * the tail's imbalance alone. at_k is the same minimum over R for the k
 * the real run replicated (the same number of keys, ideally placed). It has
 * no sampling noise and no time: it bounds what any placement of R copies
 * can reach, not what a finite interval of reads shows.
 *
 * nocap is the same minimum with no per-key copy cap: R also takes
 * nodes, nodes/2, ... down to M (what the auto policy, which has no fixed
 * cap, can aim at); it is never above max_mean.
 */
#ifndef SIM_IDEAL_H
#define SIM_IDEAL_H

#include <stdint.h>

#include "cluster.h"
#include "opts.h"

struct sim_ideal {
	double max_mean; /* the reference */
	uint64_t k;	 /* top objects replicated to reach it */
	uint32_t r;	 /* copies per replicated object there */
	double base;	 /* ideal(0): expected max/mean with no replica */
	double at_k;	 /* ideal(k) for the k the real run replicated */
	double nocap;	 /* the reference with R up to the node count */
	uint64_t nocap_k;
	uint32_t nocap_r;
};

/* counts: trace read counts per object (NULL for zipf / uniform). 0, or
 * -1 on ENOMEM. */
int sim_ideal_compute(const struct sim_cluster *c, const struct sim_opts *o,
		      const uint64_t *counts, uint64_t extra_k,
		      struct sim_ideal *out);

/*
 * The memory frontier of the oracle: ideal placements of two families,
 * every object in proportion to its weight (min(nodes, ceil(w / g)) equal
 * parts for g = a node's fair share / 2^j, j = 0..16) and the top k in R
 * parts (R = 2, 4, ..., nodes; k = 1, 2, 4, ...), each costing its extra
 * replicas, up to 64 x nodes of them; plus no replica at all.
 */
struct sim_frontier {
	double at_mem;	  /* best max/mean with at most `copies` replicas */
	uint64_t mem_for; /* fewest replicas reaching `target`; UINT64_MAX */
	double best;	  /* the best max/mean of all, and its replicas */
	uint64_t best_mem;
};

int sim_ideal_frontier(const struct sim_cluster *c, const struct sim_opts *o,
		       const uint64_t *counts, uint64_t copies, double target,
		       struct sim_frontier *f);

/*
 * The room-constrained floor (only with --node_memory): the least max/mean
 * any placement reaches when its copies go only where there is room, a
 * node's bytes under the line (room_fill_limit x node memory when that is
 * above the target watermark, else the watermark) less its use, plus its
 * dynamic replicas' bytes (copies it may give back), in whole objects, and
 * no object's only copy is evicted. Reads of a key may split in any
 * proportion over its replicas (load-aware reads). A lower bound, found by
 * bisection on the max load t, of two conditions every such placement
 * meets (sim_ideal_room() in ideal_room.c): the load above t fits the
 * spare load of the nodes with room, and the copies that load needs (its
 * node's heaviest keys first, each copy taking at most the largest spare)
 * fit the slots. No sampling noise, no time.
 */
struct sim_room_floor {
	double max_mean; /* the floor */
	uint64_t slots;	 /* copies the room holds, all nodes */
};

int sim_ideal_room(const struct sim_cluster *c, const struct sim_opts *o,
		   const uint64_t *counts, struct sim_room_floor *out);

#endif
