/*
 * mcrepl-sim workloads: who reads what, when. Zipf (rank r is object r-1,
 * primaries put as the master daemon puts them, see write_all), uniform,
 * or a trace replay (each request reads its blocks; a block is written the
 * first time it is seen, to the least-used segment, as the master daemon's
 * put_target does). Shifting is Zipf whose ranking is redrawn every
 * shift_period seconds (../common/shift.h, shared with mcrepl-bench): at
 * each boundary the shared generator's own stream (../common/popgen.h,
 * so mcrepl-bench redraws alike from the same seed) re-permutes all ranks
 * (shift_fraction 1) or a random subset of round(shift_fraction x keys)
 * ranks among themselves. Rehot alternates the first ranking and one
 * redraw every shift_period (hot, cold, hot again); flash sends
 * flash_share of the reads in [flash_at, flash_at + flash_seconds) to the
 * last rank, which the other reads never draw. Independent random streams
 * (keys, readers, placement) keep the read sequence identical whatever
 * the policy does, so configurations compare on the same reads.
 */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include <stdint.h>

#include "master.h"
#include "rng.h"
#include "../common/popgen.h"
#include "../common/trace.h"
#include "../common/zipf.h"

struct sim_gen {
	const struct sim_opts *o;
	const struct trace *trace;
	struct zipf zipf;
	sim_rng keys, readers, place;
	struct popgen pop;	/* which object a rank names, when */
	uint64_t flash_seen;	/* flash: reads in its window so far */
	uint64_t flash_reads;	/* flash: of them, the flash key's */
	uint64_t total, issued; /* synthetic: reads in the run */
	size_t next_req;	/* trace: next request */
};

/* Set up; synthetic workloads write every primary now. 0 or -1. */
int sim_gen_init(struct sim_gen *g, const struct sim_opts *o,
		 const struct trace *trace, struct sim_cluster *c,
		 uint64_t duration_ms);

/* Release what init allocated. */
void sim_gen_free(struct sim_gen *g);

/* Issue the reads that arrive in [now_ms, end_ms). */
void sim_gen_tick(struct sim_gen *g, struct sim_master *m, uint64_t now_ms,
		  uint64_t end_ms);

/* Trace length in ms at the speed-up (last arrival). */
double sim_gen_trace_ms(const struct sim_opts *o, const struct trace *trace);

#endif
