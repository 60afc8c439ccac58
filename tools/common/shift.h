/*
 * Shifting popularity, shared by mcrepl-sim and mcrepl-bench: a Zipf
 * ranking whose rank -> object map is redrawn at every phase boundary
 * (every --shift_period seconds). A redraw re-permutes all ranks
 * (fraction 1) or a random subset of round(fraction x n) ranks among
 * themselves, the other ranks keeping their objects. The caller brings
 * the random numbers (as for zipf.h), so each tool keeps its own
 * generator and a redraw is a pure function of the generator's state.
 */
#ifndef MCREPL_TOOLS_SHIFT_H
#define MCREPL_TOOLS_SHIFT_H

#include <stdint.h>

/* A uniform integer in [0, n), n >= 1, from the caller's generator. */
typedef uint64_t shift_below_fn(void *rng, uint64_t n);

struct shift {
	uint32_t *rank_obj; /* rank - 1 -> object */
	uint32_t *pick;	    /* scratch: the ranks a redraw moves */
	uint64_t n;	    /* objects (ranks) */
	uint64_t phase;	    /* redraws done */
	double fraction;    /* share of the ranking each redraw moves */
};

/* The identity ranking over n objects (phase 0). 0, or -1 when memory
 * is short. */
int shift_init(struct shift *s, uint64_t n, double fraction);
void shift_free(struct shift *s);

/* Redraw until phase redraws are done (no-op when already there). */
void shift_advance(struct shift *s, uint64_t phase, shift_below_fn *below,
		   void *rng);

/* The phase a time t (in any unit) falls in, with period in the same
 * unit: floor(t / period). */
uint64_t shift_phase_of(double t, double period);

#endif
