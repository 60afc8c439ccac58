/* Ranking redraws of a shifting workload (see shift.h). */
#include <math.h>
#include <stdlib.h>

#include "shift.h"

int shift_init(struct shift *s, uint64_t n, double fraction)
{
	s->n = n;
	s->phase = 0;
	s->fraction = fraction;
	s->rank_obj = malloc((n ? n : 1) * sizeof(*s->rank_obj));
	s->pick = malloc((n ? n : 1) * sizeof(*s->pick));
	if (!s->rank_obj || !s->pick) {
		shift_free(s);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		s->rank_obj[i] = (uint32_t)i;
	return 0;
}

void shift_free(struct shift *s)
{
	free(s->rank_obj);
	free(s->pick);
	s->rank_obj = s->pick = NULL;
}

/* One redraw: a partial Fisher-Yates picks k ranks (all of them, or a
 * seeded sample of fraction x n), then a Fisher-Yates over those ranks
 * permutes their objects, so the other ranks keep theirs. */
static void redraw(struct shift *s, shift_below_fn *below, void *rng)
{
	uint64_t n = s->n, k = (uint64_t)llround(s->fraction * (double)n);

	for (uint64_t i = 0; i < n; i++)
		s->pick[i] = (uint32_t)i;
	for (uint64_t i = 0; i < k && i + 1 < n; i++) { /* sample k ranks */
		uint64_t j = i + below(rng, n - i);
		uint32_t t = s->pick[i];

		s->pick[i] = s->pick[j];
		s->pick[j] = t;
	}
	for (uint64_t i = k; i > 1; i--) { /* permute their objects */
		uint64_t j = below(rng, i);
		uint32_t t = s->rank_obj[s->pick[i - 1]];

		s->rank_obj[s->pick[i - 1]] = s->rank_obj[s->pick[j]];
		s->rank_obj[s->pick[j]] = t;
	}
}

void shift_advance(struct shift *s, uint64_t phase, shift_below_fn *below,
		   void *rng)
{
	for (; s->phase < phase; s->phase++)
		redraw(s, below, rng);
}

uint64_t shift_phase_of(double t, double period)
{
	return t > 0 ? (uint64_t)(t / period) : 0;
}
