/* Per-phase figures of a shifting run (see phases.h). */
#include <math.h>
#include <stdlib.h>

#include "phases.h"

int sim_phases(struct sim_result *r, double interval_s, double period_s)
{
	size_t n = r->shift_phases, first = 0;

	r->worst_phase = NAN;
	r->phases_relieved = 0;
	if (!n)
		return 0;
	r->phase_max = calloc(n, sizeof(*r->phase_max));
	r->phase_dyn = calloc(n, sizeof(*r->phase_dyn));
	if (!r->phase_max || !r->phase_dyn)
		return -1;
	for (size_t p = 0; p < n; p++) {
		size_t end = first;

		/* interval i starts at i x interval_s */
		while (end < r->n_iv &&
		       (size_t)floor((double)end * interval_s / period_s +
				     1e-9) <= p)
			end++;
		r->phase_max[p] = sim_steady(r->iv_max + first, end - first);
		r->phase_dyn[p] = end > first ? r->iv_dyn[end - 1] : 0;
		if (!isnan(r->phase_max[p])) {
			if (isnan(r->worst_phase) ||
			    r->phase_max[p] > r->worst_phase)
				r->worst_phase = r->phase_max[p];
			if (r->phase_max[p] <=
			    SIM_PHASE_RELIEF * r->noise_floor)
				r->phases_relieved++;
		}
		first = end;
	}
	return 0;
}
