/* Zipf sampler and rank permutation (see zipf.h). */
#include <math.h>
#include <stdlib.h>

#include "zipf.h"

uint64_t bench_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double bench_rand01(uint64_t *state)
{
	return (double)(bench_rand(state) >> 11) / 9007199254740992.0;
}

int zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t seed)
{
	double h = 0;
	uint64_t rng = seed ^ 0x5a17f00dULL;

	z->n = n;
	z->cdf = malloc(n * sizeof(*z->cdf));
	z->perm = malloc(n * sizeof(*z->perm));
	if (!z->cdf || !z->perm) {
		zipf_free(z);
		return -1;
	}
	for (uint64_t r = 0; r < n; r++)
		z->cdf[r] = (h += pow((double)(r + 1), -theta));
	for (uint64_t r = 0; r < n; r++) {
		z->cdf[r] /= h;
		z->perm[r] = (uint32_t)r;
	}
	z->cdf[n - 1] = 1.0;
	for (uint64_t r = n - 1; r > 0; r--) { /* Fisher-Yates */
		uint64_t j = bench_rand(&rng) % (r + 1);
		uint32_t t = z->perm[r];

		z->perm[r] = z->perm[j];
		z->perm[j] = t;
	}
	return 0;
}

void zipf_free(struct zipf *z)
{
	free(z->cdf);
	free(z->perm);
	z->cdf = NULL;
	z->perm = NULL;
}

uint32_t zipf_key(const struct zipf *z, double u)
{
	uint64_t lo = 0, hi = z->n - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (z->cdf[mid] <= u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return z->perm[lo];
}
