/*
 * Per-phase figures of a shifting run, shared by mcrepl-sim and
 * mcrepl-bench: from the rows of a run (row i covers [i x row_s,
 * (i + 1) x row_s)), each phase's steady max/mean, the dynamic replicas
 * at its end, the worst phase and how many phases were relieved; and the
 * steady median both tools use for a run's figures.
 */
#ifndef MCREPL_TOOLS_PHASES_H
#define MCREPL_TOOLS_PHASES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A phase is relieved when its steady max/mean is at most this times the
 * run's noise floor (the target set for shifting hot sets). */
#define PHASE_RELIEF 1.05

struct phases {
	size_t n;	   /* phases */
	double *max_mean;  /* per phase: steady max/mean; NAN: no read */
	uint64_t *dyn;	   /* per phase: dynamic replicas at its end */
	double worst;	   /* the largest max_mean; NAN: none */
	uint64_t relieved; /* phases within PHASE_RELIEF x the floor */
};

/* The median of the defined values among the last half of v[0..n) (NANs
 * skipped); NAN if none. */
double steady_median(const double *v, size_t n);

/*
 * Fill p for n_phases phases of period_s seconds from n_rows rows of
 * row_s seconds: max_mean[i] (NAN: no read, or a row not to count) and
 * dyn[i] (the dynamic replicas at the row's end). Phase k holds the rows
 * that start in [k x period_s, (k + 1) x period_s); its steady max/mean is
 * the steady_median of them. Rows past the last phase are ignored. 0, or
 * -1 when memory is short.
 */
int phases_compute(struct phases *p, size_t n_phases, const double *max_mean,
		   const uint64_t *dyn, size_t n_rows, double row_s,
		   double period_s, double noise_floor);
void phases_free(struct phases *p);

/* The phases as summary JSON fields, each after a comma:
 * "shift_phases", "phase_max_mean", "phase_dynamic_replicas",
 * "worst_phase_max_mean", "phases_relieved" (NAN printed as 0). */
void phases_json(FILE *f, const struct phases *p);

#endif
