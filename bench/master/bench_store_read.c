/*
 * bench_store_read: our master's read path in-process, as a GetReplicaList
 * handler runs it (clock read, store lock, store_read_begin, store_get,
 * unlock) with store_tick and the admission worker's batch (dyn_admit_batch)
 * every 10 ms, for modes off / observe / enforce measured in alternation in
 * one process (one store per mode, loaded alike): the shape of a Mooncake
 * master's read handler.
 *
 *   bench_store_read [--keys N] [--hot H] [--reads M] [--runs R]
 *                    [--policy rfc|auto] [--only off|observe|enforce]
 * Reads are uniform over N keys, or (--hot H) uniform over H of them.
 * --only runs one mode (for a profiler); the ratios then read 0.
 * Per mode: the median over R runs of ns per read (this thread's CPU time);
 * each run is M reads.
 * Last line: off_ns=<x> observe_ns=<y> enforce_ns=<z> observe_off=<r>
 * enforce_off=<r> (ratios of throughput, i.e. off_ns / mode_ns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_store_load.h"

#define MODES 3
#define HOSTS 8
#define RUNS_MAX 64

static const mcrepl_mode mode_of[MODES] = {MCREPL_MODE_OFF, MCREPL_MODE_OBSERVE,
					   MCREPL_MODE_ENFORCE};
static const char *const mode_name[MODES] = {"off", "observe", "enforce"};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Runs are timed in this thread's CPU time: on a shared machine it does
 * not count the time other processes take the CPU from the driver. */
static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static struct store *load_store(mcrepl_mode mode, const char *policy,
				char **keys, size_t n)
{
	const struct bench_load l = {
	    .mode = mode,
	    .policy = policy,
	    .hosts = HOSTS,
	    .capacity = 1ull << 30,
	    .object_size = 4096,
	    .now_ms = now_ns() / 1000000,
	};

	return bench_store_load(&l, keys, n, NULL);
}

/* One run of m reads of keys[seq[i]]; returns ns per read. */
static double run(struct store *s, char **keys, const uint32_t *seq, size_t m,
		  uint64_t *last_tick, uint64_t *last_evict)
{
	size_t order[8], n_out, misses = 0;
	struct object *o;
	uint64_t t0 = cpu_ns(), now_ms;

	for (size_t i = 0; i < m; i++) {
		now_ms = now_ns() / 1000000;
		store_lock(s);
		store_read_begin(s);
		misses += store_get(s, "t", keys[seq[i]], "", now_ms, &o, order,
				    8, &n_out) != MCREPL_RPC__CODE__OK;
		if (now_ms - *last_tick >= 10) {
			for (int h = 0; h < HOSTS; h++) /* the workers live */
				store_heartbeat(s, BENCH_CLIENT0 + (uint64_t)h,
						NULL, NULL, 0, now_ms);
			store_tick(s, now_ms, last_evict);
			*last_tick = now_ms;
			store_unlock(s);
			dyn_admit_batch(s, 64, now_ms);
			continue;
		}
		store_unlock(s);
	}
	if (misses)
		fprintf(stderr, "bench_store_read: %zu reads missed\n", misses);
	return (double)(cpu_ns() - t0) / (double)m;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = 100000, hot = 0, m = 4000000, runs = 5;
	const char *policy = "auto", *only = NULL;
	struct store *s[MODES] = {0};
	uint64_t last_tick[MODES], last_evict[MODES];
	double ns[MODES][RUNS_MAX], med[MODES];
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint32_t *seq = NULL;
	char **keys = NULL;
	int rc = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--keys"))
			n = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--hot"))
			hot = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--reads"))
			m = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--runs"))
			runs = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--policy"))
			policy = argv[i + 1];
		else if (!strcmp(argv[i], "--only"))
			only = argv[i + 1];
	}
	if (!n || !m || !runs || runs > RUNS_MAX || hot > n) {
		fprintf(stderr, "usage: bench_store_read [--keys N] [--hot H] "
				"[--reads M] [--runs R<=64] [--policy P]\n");
		return 2;
	}
	keys = bench_key_names(n);
	seq = calloc(m, sizeof(*seq));
	if (!keys || !seq)
		goto out;
	for (size_t i = 0; i < m; i++) { /* xorshift64 */
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		seq[i] = (uint32_t)(rng % (hot ? hot : n));
	}
	for (int k = 0; k < MODES; k++) {
		if (only && strcmp(only, mode_name[k]) != 0)
			continue;
		s[k] = load_store(mode_of[k], policy, keys, n);
		if (!s[k])
			goto out;
		last_tick[k] = last_evict[k] = now_ns() / 1000000;
	}
	for (size_t r = 0; r < runs; r++)
		for (int k = 0; k < MODES; k++) /* alternating */
			ns[k][r] = !s[k] ? 0
					 : run(s[k], keys, seq, m,
					       &last_tick[k], &last_evict[k]);
	for (int k = 0; k < MODES; k++) {
		qsort(ns[k], runs, sizeof(double), cmp_double);
		med[k] = runs % 2 ? ns[k][runs / 2]
				  : (ns[k][runs / 2 - 1] + ns[k][runs / 2]) / 2;
		printf("mode=%s keys=%zu hot=%zu policy=%s ns_per_read=%.1f "
		       "(runs %.1f..%.1f)\n",
		       mode_name[k], n, hot, policy, med[k], ns[k][0],
		       ns[k][runs - 1]);
	}
	printf("off_ns=%.1f observe_ns=%.1f enforce_ns=%.1f observe_off=%.3f "
	       "enforce_off=%.3f\n",
	       med[0], med[1], med[2], med[1] > 0 ? med[0] / med[1] : 0,
	       med[2] > 0 ? med[0] / med[2] : 0);
	rc = 0;
out:
	for (int k = 0; k < MODES; k++)
		if (s[k])
			store_destroy(s[k]);
	bench_key_names_free(keys, n);
	free(seq);
	return rc;
}
