/*
 * mcrepl-sim run loop: a fixed-tick simulated clock (--tick_ms) driving
 * the readers, the worker events, the admission worker, the lease sweep
 * and eviction, with one report row per --interval.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ideal.h"
#include "opts.h"
#include "relief.h"
#include "../common/phases.h"
#include "../common/trace.h"

struct sim_result {
	char label[256]; /* the library knobs that differ from defaults */
	const char *workload;
	const char *read_order; /* "salted" or "load" (--read_load_order) */
	uint32_t nodes;
	uint64_t keys, reads, served;
	double steady_max_mean, steady_p99_mean; /* medians, last half */
	struct sim_ideal ideal;
	struct sim_frontier oracle; /* at this run's memory and max/mean */
	/* with --node_memory only (room_floor.max_mean NAN otherwise) */
	struct sim_room_floor room_floor;
	uint64_t replicated_keys, dyn_replicas;
	double dyn_share; /* dynamic bytes / primary bytes, at the end */
	uint64_t copy_bytes, copies, copies_failed, leases_expired, evicted;
	uint64_t copies_dyn_src; /* copies whose source was a dynamic replica */
	/* full clusters: cold primaries evicted to make room for hot copies,
	 * and later reads of them (misses, written back) */
	uint64_t room_evicted, evicted_reads;
	uint64_t room_dropped; /* dynamic replicas dropped for room (no miss) */
	uint64_t room_headroom; /* hot copies under room_fill_limit */
	/* flash: the flash key's reads, and the max/mean of the node loads
	 * summed over the rows its window overlaps (NAN: none) */
	uint64_t flash_reads;
	double flash_max_mean;
	/* not trace: the last tick's ranking's top 64 keys
	 * (../common/popgen.h), as mcrepl-bench prints it for the seed */
	uint64_t ranking_digest;
	uint64_t late_copies; /* completed in the last third of the run */
	/* of those, copies of keys below the trigger threshold when the last
	 * third began (their popularity moved) */
	uint64_t late_new_copies;
	double noise_floor;    /* max/mean of an even spread, sampling only */
	uint64_t shift_phases; /* shifting: rankings the run read; else 0 */
	uint64_t retired;      /* dynamic replicas retired as cold (auto) */
	uint64_t observed_hot, accepted, would_propose, triggers_dropped;
	uint64_t cross_read_bytes;
	double cross_share;	   /* reads served from another domain */
	double steady_cross_share; /* median over the last half */
	double floor_share, steady_floor_share; /* reactive floor of both */
	uint64_t join_reads, join_remote; /* the late domain's first window */
	uint64_t warmup_chosen, warmup_accepted;
	size_t malformed;
	double sim_seconds, wall_seconds;
	size_t n_iv;
	double *iv_max, *iv_p99; /* per interval; NAN when it had no read */
	double *iv_xdom;	 /* cross-domain share of the reads */
	double *iv_floor;	 /* the reactive floor of that share */
	uint64_t *iv_dyn;	 /* readable dynamic replicas at its end */
	struct phases phases;	 /* shifting: shift_phases of them */
	struct sim_relief_stats relief; /* per-key time to relief */
};

/* One simulation with options o. Rows go to out unless o->quiet. 0, or -1
 * (reported on stderr). */
int sim_run(const struct sim_opts *o, const struct trace *trace, FILE *out,
	    struct sim_result *r);
void sim_result_free(struct sim_result *r);

#endif
