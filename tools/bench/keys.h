/*
 * mcrepl-bench's Zipf key stream: Zipf(theta) ranks from the sampler shared
 * with mcrepl-sim (tools/common/zipf.h), and a seeded permutation from
 * rank to key id, so the hottest ranks land on keys spread over the put
 * order (and so over the workers). Also the bench's small generator.
 * Shifting, rehot, flash: a reader's own copy of the popularity generator
 * (../common/popgen.h, mcrepl-sim's too) maps a rank to the object whose
 * key it reads.
 */
#ifndef MBENCH_KEYS_H
#define MBENCH_KEYS_H

#include <stdint.h>

#include "../common/popgen.h"
#include "../common/zipf.h"

struct zipf_keys {
	struct zipf rank;
	uint32_t *perm; /* rank - 1 -> key id */
};

/* n keys, the Zipf ranks over the first `ranks` (<= n) of them. 0, or -1
 * when memory is short or the arguments are out of range. */
int zipf_keys_init(struct zipf_keys *k, uint64_t n, uint64_t ranks,
		   double theta, uint64_t seed);
void zipf_keys_free(struct zipf_keys *k);

/* The next key id, drawing a rank from the caller's generator *rng
 * (splitmix64 state): the key of the object the popularity generator g
 * names for that rank. Thread-safe for distinct rng (the table is read
 * only). */
uint32_t zipf_keys_next_pop(const struct zipf_keys *k, const struct popgen *g,
			    uint64_t *rng);

/* The key of object (rank index) obj. */
uint32_t zipf_keys_of(const struct zipf_keys *k, uint64_t obj);

/* Uniform double in [0, 1) from a splitmix64 state (mcu_splitmix64). */
double bench_rand01(uint64_t *state);

#endif
