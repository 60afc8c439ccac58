/* Per-phase figures of a shifting run (see phases.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "phases.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double steady_median(const double *v, size_t n)
{
	double *tmp = malloc((n + 1) * sizeof(*tmp));
	size_t k = 0;
	double med = NAN;

	if (!tmp)
		return NAN;
	for (size_t i = n / 2; i < n; i++)
		if (!isnan(v[i]))
			tmp[k++] = v[i];
	if (k) {
		qsort(tmp, k, sizeof(*tmp), cmp_dbl);
		med = k % 2 ? tmp[k / 2] : (tmp[k / 2 - 1] + tmp[k / 2]) / 2;
	}
	free(tmp);
	return med;
}

int phases_compute(struct phases *p, size_t n_phases, const double *max_mean,
		   const uint64_t *dyn, size_t n_rows, double row_s,
		   double period_s, double noise_floor)
{
	size_t first = 0;

	memset(p, 0, sizeof(*p));
	p->worst = NAN;
	if (!n_phases)
		return 0;
	p->max_mean = calloc(n_phases, sizeof(*p->max_mean));
	p->dyn = calloc(n_phases, sizeof(*p->dyn));
	if (!p->max_mean || !p->dyn) {
		phases_free(p);
		return -1;
	}
	p->n = n_phases;
	for (size_t k = 0; k < n_phases; k++) {
		size_t end = first;

		while (end < n_rows &&
		       (size_t)floor((double)end * row_s / period_s + 1e-9) <=
			   k)
			end++;
		p->max_mean[k] = steady_median(max_mean + first, end - first);
		p->dyn[k] = end > first ? dyn[end - 1] : 0;
		if (!isnan(p->max_mean[k])) {
			if (isnan(p->worst) || p->max_mean[k] > p->worst)
				p->worst = p->max_mean[k];
			if (p->max_mean[k] <= PHASE_RELIEF * noise_floor)
				p->relieved++;
		}
		first = end;
	}
	return 0;
}

void phases_free(struct phases *p)
{
	free(p->max_mean);
	free(p->dyn);
	p->max_mean = NULL;
	p->dyn = NULL;
	p->n = 0;
}

void phases_json(FILE *f, const struct phases *p)
{
	fprintf(f, ",\"shift_phases\":%zu,\"phase_max_mean\":[", p->n);
	for (size_t k = 0; k < p->n; k++)
		fprintf(f, k ? ",%.4f" : "%.4f",
			isnan(p->max_mean[k]) ? 0 : p->max_mean[k]);
	fprintf(f, "],\"phase_dynamic_replicas\":[");
	for (size_t k = 0; k < p->n; k++)
		fprintf(f, k ? ",%" PRIu64 : "%" PRIu64, p->dyn[k]);
	fprintf(f,
		"],\"worst_phase_max_mean\":%.4f,\"phases_relieved\":%" PRIu64,
		isnan(p->worst) ? 0 : p->worst, p->relieved);
}
