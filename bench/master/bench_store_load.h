/*
 * The store the in-process benches of our master read (bench_store_read.c,
 * bench_store_balance.c): `hosts` hosts of one segment each (host-<i>,
 * client BENCH_CLIENT0 + i, dynamic copies on), then n objects of
 * object_size bytes, one replica each, placed by the store.
 */
#ifndef BENCH_STORE_LOAD_H
#define BENCH_STORE_LOAD_H

#include "store.h"

#define BENCH_CLIENT0 100

struct bench_load {
	mcrepl_mode mode;
	const char *policy; /* mcrepl_config_set "policy"; NULL: default */
	size_t hosts;
	uint64_t capacity;    /* bytes per segment */
	uint64_t object_size; /* bytes */
	uint64_t now_ms;
};

/* The loaded store (unlocked), segment ids into seg_ids[hosts] (may be
 * NULL); NULL with a line on stderr when a mount or put failed. */
struct store *bench_store_load(const struct bench_load *l, char **keys,
			       size_t n, uint64_t *seg_ids);

/*
 * The read sequence every host's balance bench reads (this one and the
 * adapter's test host, bench/adapter/, the same arithmetic, so both give
 * the same m indexes into n keys bit for bit): splitmix64
 * from `seed`; the n ranks scattered over the keys by a Fisher-Yates
 * shuffle (j = next % (i + 1)); then m Zipf(theta) draws by inverse CDF
 * (u = (next >> 11) 2^-53 times the sum of 1 / pow(i + 1, theta), summed
 * in rank order; the first rank whose cumulative sum is >= u). 0, or -1
 * when memory is short.
 */
int bench_zipf_sequence(uint32_t *seq, size_t m, size_t n, double theta,
			uint64_t seed);

/* n names bench-key-<i> (NULL when memory is short); freed with
 * bench_key_names_free(keys, n). */
char **bench_key_names(size_t n);
void bench_key_names_free(char **keys, size_t n);

#endif
