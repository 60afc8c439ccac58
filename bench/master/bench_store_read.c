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

#include "bench_flags.h"
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

struct read_opts {
	uint64_t keys, hot, reads, runs;
	const char *policy, *only;
};

#define O(f) FLAG_AT(struct read_opts, f)
static const struct flag read_flags[] = {
    {.name = "keys",
     .type = FLAG_U64,
     .off = O(keys),
     .def = "100000",
     .help = "objects in each store",
     .min = 1,
     .max = 100000000},
    {.name = "hot",
     .type = FLAG_U64,
     .off = O(hot),
     .def = "0",
     .help = "reads drawn from the first H keys only, at most --keys "
	     "(0 = from all)"},
    {.name = "reads",
     .type = FLAG_U64,
     .off = O(reads),
     .def = "4000000",
     .help = "reads per run",
     .min = 1,
     .max = 1000000000},
    {.name = "runs",
     .type = FLAG_U64,
     .off = O(runs),
     .def = "5",
     .help = "runs per mode, alternating",
     .min = 1,
     .max = RUNS_MAX},
    {.name = "policy",
     .type = FLAG_STRP,
     .off = O(policy),
     .def = "auto",
     .help = "the replica policy of the observe and enforce stores",
     .min = 1},
    {.name = "only",
     .type = FLAG_STRP,
     .off = O(only),
     .help = "run one mode only (all when not given)",
     .choices = "off|observe|enforce"},
};
#undef O

static const struct flag_set read_set = {
    .prog = "bench_store_read",
    .intro = "store_get under the store lock, mode off vs observe vs enforce",
    .title = "bench_store_read flags",
    .width = 8,
    .flags = read_flags,
    .n = sizeof(read_flags) / sizeof(read_flags[0]),
};

/* m reads of keys [0, hot or n), xorshift64: the same in every run. */
static uint32_t *read_sequence(size_t m, size_t n, size_t hot)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint32_t *seq = calloc(m, sizeof(*seq));

	for (size_t i = 0; seq && i < m; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		seq[i] = (uint32_t)(rng % (hot ? hot : n));
	}
	return seq;
}

int main(int argc, char **argv)
{
	size_t n, hot, m, runs;
	const char *policy, *only;
	struct store *s[MODES] = {0};
	uint64_t last_tick[MODES], last_evict[MODES];
	double ns[MODES][RUNS_MAX], med[MODES];
	uint32_t *seq = NULL;
	char **keys = NULL;
	struct read_opts o = {0};
	int rc = bench_flags(&read_set, &o, argc, argv);

	if (rc >= 0)
		return rc;
	rc = 1;
	n = o.keys;
	hot = o.hot;
	m = o.reads;
	runs = o.runs;
	policy = o.policy;
	only = o.only;
	if (hot > n) {
		fprintf(stderr,
			"bench_store_read: --hot %zu is more than "
			"--keys %zu\n",
			hot, n);
		return 2;
	}
	keys = bench_key_names(n);
	seq = read_sequence(m, n, hot);
	if (!keys || !seq)
		goto out;
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
