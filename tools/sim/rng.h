/*
 * mcrepl-sim random numbers: splitmix64 (util/hash.h) for seeding,
 * xoshiro256** (Blackman and Vigna, ACM TOMS 2021; rng.c) for streams.
 * The simulator never calls rand(): every stream is derived from --seed,
 * so a run is a pure function of its flags.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

typedef struct sim_rng {
	uint64_t s[4];
} sim_rng;

/* Seed a stream from (seed, stream id): distinct ids give independent
 * streams, so drawing more from one never shifts another. */
void sim_rng_seed(sim_rng *r, uint64_t seed, uint64_t stream);

uint64_t sim_rng_next(sim_rng *r);

/* Uniform double in [0, 1) with 53 random bits. */
double sim_rng_double(sim_rng *r);

/* The same for a sim_rng passed as void * (zipf_uniform_fn). */
double sim_rng_uniform(void *r);

/* Uniform integer in [0, n), n >= 1 (Lemire's multiply-shift, unbiased;
 * ACM TOMACS 2019). */
uint64_t sim_rng_below(sim_rng *r, uint64_t n);

#endif
