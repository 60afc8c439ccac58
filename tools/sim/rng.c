/*
 * mcrepl-sim random numbers (see rng.h). The generator is xoshiro256**,
 * written from D. Blackman and S. Vigna, "Scrambled linear pseudorandom
 * number generators", ACM TOMS 47(4), 2021: the xoshiro256 linear engine
 * (xor/shift/rotate of four 64-bit words, shift a = 17, rotation b = 45)
 * with the ** scrambler (S = 5, R = 7, T = 9) read from the second word.
 * Streams are seeded by splitmix64 (util/hash.h), the seeding its
 * authors suggest. tests/sim/random_test.c pins the outputs.
 */
#include "util/hash.h"
#include "rng.h"

#define ENGINE_SHIFT 17 /* a */
#define ENGINE_ROT 45	/* b */
#define SCRAMBLE_MUL1 5 /* S */
#define SCRAMBLE_ROT 7	/* R */
#define SCRAMBLE_MUL2 9 /* T */

void sim_rng_seed(sim_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ mcu_splitmix64_mix(stream + 0x5157ULL);

	for (int i = 0; i < 4; i++)
		r->s[i] = mcu_splitmix64(&x);
}

static inline uint64_t rotl64(uint64_t x, unsigned k)
{
	return x << k | x >> (64 - k);
}

/* The ** scrambler: a multiply, a rotation, a multiply. */
static inline uint64_t starstar(uint64_t w)
{
	return rotl64(w * SCRAMBLE_MUL1, SCRAMBLE_ROT) * SCRAMBLE_MUL2;
}

/* One step of the xoshiro256 linear engine on the state s[0..3]. */
static inline void xoshiro256_step(uint64_t *s)
{
	const uint64_t shifted = s[1] << ENGINE_SHIFT;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= shifted;
	s[3] = rotl64(s[3], ENGINE_ROT);
}

uint64_t sim_rng_next(sim_rng *r)
{
	const uint64_t out = starstar(r->s[1]);

	xoshiro256_step(r->s);
	return out;
}

/* The top 53 bits as a multiple of 2^-53. */
double sim_rng_double(sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

double sim_rng_uniform(void *r)
{
	return sim_rng_double(r);
}

/*
 * D. Lemire, "Fast random integer generation in an interval", ACM TOMACS
 * 29(1), 2019: the high word of x * n is uniform over [0, n) once the
 * draws whose low word falls below 2^64 mod n are thrown away; that test
 * is needed only when the low word is below n.
 */
uint64_t sim_rng_below(sim_rng *r, uint64_t n)
{
	unsigned __int128 prod = (unsigned __int128)sim_rng_next(r) * n;

	if ((uint64_t)prod < n) {
		const uint64_t reject_below = -n % n; /* 2^64 mod n */

		while ((uint64_t)prod < reject_below)
			prod = (unsigned __int128)sim_rng_next(r) * n;
	}
	return (uint64_t)(prod >> 64);
}
