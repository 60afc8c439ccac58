/*
 * Zipf sampler shared by mcrepl-sim and mcrepl-bench: rejection-inversion
 * sampling (W. Hormann and G. Derflinger, "Rejection-inversion to generate
 * variates from monotone discrete distributions", ACM TOMACS 6(3), 1996),
 * written from the paper (zipf.c). O(1) expected time and O(1) memory per
 * sample for any n (10 M keys cost nothing to set up), exact distribution
 * P(k) ~ k^-theta, k in 1..n. The caller brings the random numbers, so
 * each program keeps its own generator. tests/sim/random_test.c checks the
 * distribution (chi-square) and pins the first draws of a seed.
 */
#ifndef MCREPL_TOOLS_ZIPF_H
#define MCREPL_TOOLS_ZIPF_H

#include <stdint.h>

/* Filled by zipf_init(); read-only afterwards. */
struct zipf {
	uint64_t n;
	double theta;
	double area_first; /* F(3/2) - f(1): where rank 1's strip starts */
	double area_last;  /* F(n + 1/2): where rank n's strip ends */
	double squeeze;	   /* k - x at most this: k is kept at once */
};

/* A uniform double in [0, 1) from the caller's generator state. */
typedef double zipf_uniform_fn(void *rng);

/* n >= 1, theta >= 0 (0 = uniform). Returns 0, or -1 on a bad argument. */
int zipf_init(struct zipf *z, uint64_t n, double theta);

/* A rank in 1..n; rank 1 is the most popular. Draws one or more uniforms
 * (usually one) from uniform(rng). Thread-safe for distinct rng. */
uint64_t zipf_sample(const struct zipf *z, zipf_uniform_fn *uniform, void *rng);

#endif
