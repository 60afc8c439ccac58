/*
 * Zipf(theta) ranks over n keys by inversion of the exact CDF, and a
 * seeded permutation from rank to key id, so the hottest ranks land on
 * keys spread over the put order (and so over the workers).
 */
#ifndef MBENCH_ZIPF_H
#define MBENCH_ZIPF_H

#include <stdint.h>

struct zipf {
	uint64_t n;
	double *cdf;	/* cdf[r] = P(rank <= r) */
	uint32_t *perm; /* rank -> key id */
};

/* 0, or -1 when memory is short. */
int zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t seed);
void zipf_free(struct zipf *z);

/* The key id for a uniform u in [0, 1). Thread-safe (read only). */
uint32_t zipf_key(const struct zipf *z, double u);

/* splitmix64: a small per-thread generator. */
uint64_t bench_rand(uint64_t *state);
/* Uniform double in [0, 1). */
double bench_rand01(uint64_t *state);

#endif
