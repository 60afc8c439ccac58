/* Zipf key stream and rank permutation (see keys.h). */
#include <stdlib.h>

#include "util/hash.h"
#include "keys.h"

double bench_rand01(uint64_t *state)
{
	return (double)(mcu_splitmix64(state) >> 11) / 9007199254740992.0;
}

static double uniform(void *state)
{
	return bench_rand01(state);
}

int zipf_keys_init(struct zipf_keys *k, uint64_t n, uint64_t ranks,
		   double theta, uint64_t seed)
{
	uint64_t rng = seed ^ 0x5a17f00dULL;

	k->perm = NULL;
	if (ranks > n || zipf_init(&k->rank, ranks, theta))
		return -1;
	k->perm = malloc(n * sizeof(*k->perm));
	if (!k->perm)
		return -1;
	for (uint64_t r = 0; r < n; r++)
		k->perm[r] = (uint32_t)r;
	for (uint64_t r = n - 1; r > 0; r--) { /* Fisher-Yates */
		uint64_t j = mcu_splitmix64(&rng) % (r + 1);
		uint32_t t = k->perm[r];

		k->perm[r] = k->perm[j];
		k->perm[j] = t;
	}
	return 0;
}

void zipf_keys_free(struct zipf_keys *k)
{
	free(k->perm);
	k->perm = NULL;
}

uint32_t zipf_keys_next_pop(const struct zipf_keys *k, const struct popgen *g,
			    uint64_t *rng)
{
	return k
	    ->perm[popgen_object(g, zipf_sample(&k->rank, uniform, rng) - 1)];
}

uint32_t zipf_keys_of(const struct zipf_keys *k, uint64_t obj)
{
	return k->perm[obj];
}
