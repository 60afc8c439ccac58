/* xoshiro256** (Blackman & Vigna, public domain), seeded by splitmix64. */
#include "hash.h"
#include "rng.h"

void sim_rng_seed(sim_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ mcu_splitmix64_mix(stream + 0x5157ULL);

	for (int i = 0; i < 4; i++)
		r->s[i] = mcu_splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sim_rng_next(sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double sim_rng_double(sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

double sim_rng_uniform(void *r)
{
	return sim_rng_double(r);
}

uint64_t sim_rng_below(sim_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)sim_rng_next(r) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t t = -n % n;

		while (lo < t) {
			m = (unsigned __int128)sim_rng_next(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}
