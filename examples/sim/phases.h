/* mcrepl-sim: per-phase figures of a shifting run (workload.h), from the
 * interval rows: each phase's steady max/mean and the dynamic replicas at
 * its end. */
#ifndef SIM_PHASES_H
#define SIM_PHASES_H

#include <stddef.h>

#include "sim.h"

/* A phase is relieved when its steady max/mean is at most this times the
 * run's noise floor (issue 29's target). */
#define SIM_PHASE_RELIEF 1.05

/* Fill r->phase_max, r->phase_dyn, r->worst_phase and r->phases_relieved
 * from r->iv_max and r->iv_dyn: phase p holds the intervals that start in
 * [p x period, (p + 1) x period); its steady max/mean is the median of the
 * last half of them (as the run's). Needs r->shift_phases and
 * r->noise_floor. 0, or -1 when out of memory. */
int sim_phases(struct sim_result *r, double interval_s, double period_s);

#endif
