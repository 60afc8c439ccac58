/*
 * mcrepl-sim Zipf sampler: rejection-inversion sampling (W. Hormann and
 * G. Derflinger, "Rejection-inversion to generate variates from monotone
 * discrete distributions", ACM TOMACS 6(3), 1996), as in Apache Commons
 * RNG. O(1) expected time and O(1) memory per sample for any n (10 M keys
 * cost nothing to set up), exact distribution P(k) ~ k^-theta, k in 1..n.
 */
#ifndef SIM_ZIPF_H
#define SIM_ZIPF_H

#include <stdint.h>

#include "rng.h"

typedef struct sim_zipf {
	uint64_t n;
	double theta;
	double h_x1, h_n, s;
} sim_zipf;

/* n >= 1, theta >= 0 (0 = uniform). Returns 0, or -1 on a bad argument. */
int sim_zipf_init(sim_zipf *z, uint64_t n, double theta);

/* A rank in 1..n; rank 1 is the most popular. */
uint64_t sim_zipf_sample(const sim_zipf *z, sim_rng *r);

/* Generalised harmonic number H(n, theta) = sum k^-theta, exactly summed
 * (n pow() calls): the normaliser of the rank probabilities. */
double sim_zipf_norm(uint64_t n, double theta);

#endif
