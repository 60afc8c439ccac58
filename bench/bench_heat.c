/*
 * bench_heat: heat record() cost beside a baseline built like upstream
 * Mooncake's (one global mutex, a chained hash map of heap nodes holding a
 * copied key, a tumbling window per key, a FIFO of keys for cleanup).
 *
 *   bench_heat [--quick]     (or MCREPL_BENCH_QUICK=1): skips 10M keys
 *
 * Streams of "block-<n>" keys (Zipf 0.99 or uniform) are generated before
 * the timed loops; the synthetic clock advances 1 ms per 10k reads. Both
 * tables are sized for the key count and first see every key once. Every
 * figure is the median of RUNS runs: ns/op is wall time per read of the
 * slowest thread, cpu_ns/op the threads' CPU time per read (it leaves out
 * time a thread spent descheduled, which wall time on a shared machine does
 * not). The baseline stands for libstdc++'s std::unordered_map<std::string>:
 * a prime bucket count and a 64-bit string hash of about std::hash's cost
 * (xxHash's XXH64, from Debian's libxxhash); its bytes/key are the sizes
 * it asked malloc for (allocator overhead not counted). The cell
 * rows model a host that embeds the cell in 1M objects of its own. The
 * last line is machine-readable.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcrepl/config.h"
#include "mcrepl/heat.h"

/* The library's functions inline, from its header: nothing to link. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench_flags.h"
#include "util/hash.h"
#include "zipf.h"

#define RUNS 5
#define OPS (2u << 20)	  /* reads per thread per run */
#define OPS_PER_MS 10000u /* synthetic clock: 1 ms per 10k reads */
#define KEY_CAP 16	  /* "block-9999999" fits */
#define WINDOW_MS 10000u  /* RFC default window */
#define THRESHOLD 8u	  /* RFC default 0.8 QPS x 10 s */
#define CELL_OBJECTS (1u << 20)
#define PREFETCH_AHEAD 32
#define ZIPF_THETA 0.99

typedef char bench_key[KEY_CAP];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "bench_heat: out of memory\n");
		exit(1);
	}
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- key streams ------------------------------------------------------- */

static double rng_unit(uint64_t *s)
{
	return (double)(mcu_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static double rng_uniform(void *s)
{
	return rng_unit(s);
}

/* A Zipf rank from 0 (the most popular), by the tools' sampler
 * (tools/common/zipf.h). */
static uint64_t zipf_next(const struct zipf *z, uint64_t *s)
{
	return zipf_sample(z, rng_uniform, s) - 1;
}

/* Spread ranks over ids so popular keys are not neighbours. */
static uint64_t rank_to_id(uint64_t rank, uint64_t n)
{
	return (rank * 2654435761u) % n;
}

static void key_format(bench_key k, uint64_t id)
{
	char digits[24];
	int nd = 0;

	memcpy(k, "block-", 6);
	do {
		digits[nd++] = (char)('0' + id % 10);
		id /= 10;
	} while (id);
	for (int i = 0; i < nd; i++)
		k[6 + i] = digits[nd - 1 - i];
	k[6 + nd] = '\0';
}

/* ids of OPS reads: Zipf when z is given, else uniform over n */
static uint32_t *ids_make(uint64_t n, const struct zipf *z, uint64_t seed)
{
	uint32_t *ids = xcalloc(OPS, sizeof(*ids));

	for (uint32_t i = 0; i < OPS; i++) {
		uint64_t r =
		    z ? zipf_next(z, &seed) : mcu_splitmix64(&seed) % n;

		ids[i] = (uint32_t)rank_to_id(r, n);
	}
	return ids;
}

static bench_key *stream_make(uint64_t n, const struct zipf *z, uint64_t seed)
{
	uint32_t *ids = ids_make(n, z, seed);
	bench_key *keys = xcalloc(OPS, sizeof(*keys));

	for (uint32_t i = 0; i < OPS; i++)
		key_format(keys[i], ids[i]);
	free(ids);
	return keys;
}

/* ---- the baseline: upstream's shape ------------------------------------ */

/* The baseline's string hash, standing for std::hash<std::string>:
 * XXH64 costs about what libstdc++'s MurmurHash-based one does (5.7 vs
 * 5.4 ns for these keys here). */
static uint64_t baseline_hash(const char *key)
{
	return XXH64(key, strlen(key), 0);
}

static bool is_prime(uint64_t n)
{
	if (n < 2)
		return false;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

struct bnode {
	struct bnode *next;
	uint64_t hash;
	char *key; /* strdup'd */
	uint64_t window_start_ms;
	uint32_t hits;
};

struct baseline {
	pthread_mutex_t mu;
	struct bnode **buckets;
	uint64_t nbuckets; /* prime, like libstdc++ */
	char **fifo;	   /* ring of strdup'd keys, oldest first */
	uint64_t fifo_head, size, max;
	uint64_t bytes; /* sum of the sizes malloc was asked for */
};

static struct baseline *baseline_create(uint64_t max)
{
	struct baseline *b = xcalloc(1, sizeof(*b));
	uint64_t nb = max;

	while (!is_prime(nb))
		nb++;
	pthread_mutex_init(&b->mu, NULL);
	b->buckets = xcalloc(nb, sizeof(*b->buckets));
	b->nbuckets = nb;
	b->fifo = xcalloc(max, sizeof(*b->fifo));
	b->max = max;
	b->bytes =
	    sizeof(*b) + nb * sizeof(*b->buckets) + max * sizeof(*b->fifo);
	return b;
}

static char *baseline_dup(struct baseline *b, const char *key)
{
	size_t n = strlen(key) + 1;
	char *d = malloc(n);

	if (!d)
		exit(1);
	memcpy(d, key, n);
	b->bytes += n;
	return d;
}

static struct bnode **baseline_find(struct baseline *b, const char *key,
				    uint64_t h)
{
	struct bnode **pp = &b->buckets[h % b->nbuckets];

	while (*pp && ((*pp)->hash != h || strcmp((*pp)->key, key) != 0))
		pp = &(*pp)->next;
	return pp;
}

static void baseline_evict_oldest(struct baseline *b)
{
	char *key = b->fifo[b->fifo_head];
	struct bnode **pp = baseline_find(b, key, baseline_hash(key));
	struct bnode *n = *pp;

	if (!n)
		abort(); /* every key in the FIFO is in the map */
	*pp = n->next;
	b->bytes -= sizeof(*n) + 2 * (strlen(key) + 1);
	free(n->key);
	free(n);
	free(key);
	b->fifo_head = (b->fifo_head + 1) % b->max;
	b->size--;
}

static struct bnode *baseline_insert(struct baseline *b, struct bnode **pp,
				     const char *key, uint64_t h, uint64_t now)
{
	struct bnode *n;

	if (b->size == b->max) {
		baseline_evict_oldest(b);
		pp = baseline_find(b, key, h);
	}
	n = malloc(sizeof(*n));
	if (!n)
		exit(1);
	*n = (struct bnode){
	    .hash = h, .key = baseline_dup(b, key), .window_start_ms = now};
	b->bytes += sizeof(*n);
	*pp = n;
	b->fifo[(b->fifo_head + b->size++) % b->max] = baseline_dup(b, key);
	return n;
}

static bool baseline_record(struct baseline *b, const char *key, uint64_t now)
{
	uint64_t h = baseline_hash(key);
	struct bnode **pp, *n;
	bool hot;

	pthread_mutex_lock(&b->mu);
	pp = baseline_find(b, key, h);
	n = *pp ? *pp : baseline_insert(b, pp, key, h, now);
	if (now - n->window_start_ms >= WINDOW_MS) {
		n->window_start_ms = now;
		n->hits = 0;
	}
	hot = ++n->hits >= THRESHOLD;
	pthread_mutex_unlock(&b->mu);
	return hot;
}

static void baseline_destroy(struct baseline *b)
{
	for (uint64_t i = 0; i < b->nbuckets; i++) {
		for (struct bnode *n = b->buckets[i], *next; n; n = next) {
			next = n->next;
			free(n->key);
			free(n);
		}
	}
	for (uint64_t i = 0; i < b->size; i++)
		free(b->fifo[(b->fifo_head + i) % b->max]);
	free(b->fifo);
	free(b->buckets);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* ---- timed runs ---------------------------------------------------------- */

enum impl { IMPL_HEAT, IMPL_BASELINE };

struct job {
	enum impl impl;
	mcrepl_heat *heat;
	struct baseline *base;
	const bench_key *keys;
	uint64_t t0_ms;
	unsigned nthreads;
	pthread_barrier_t *start;
	uint64_t elapsed_ns, cpu_ns;
	uint64_t hot; /* keeps the results alive */
};

static void *job_run(void *arg)
{
	struct job *j = arg;
	unsigned tick = OPS_PER_MS / j->nthreads, c = 0;
	uint64_t now = j->t0_ms, hot = 0, t, cpu;

	pthread_barrier_wait(j->start);
	t = now_ns();
	cpu = thread_cpu_ns();
	for (uint32_t i = 0; i < OPS; i++) {
		if (j->impl == IMPL_HEAT)
			hot += mcrepl_heat_record(j->heat, NULL, j->keys[i],
						  NULL, now, NULL) != 0;
		else
			hot += baseline_record(j->base, j->keys[i], now);
		if (++c == tick) {
			c = 0;
			now++;
		}
	}
	j->elapsed_ns = now_ns() - t;
	j->cpu_ns = thread_cpu_ns() - cpu;
	j->hot = hot;
	return NULL;
}

struct target {
	mcrepl_heat *heat;
	struct baseline *base;
	uint64_t now_ms; /* synthetic clock, shared by both for fairness */
};

struct result {
	double ns, mops, cpu_ns;
};

/* One run: Mops/s over all threads, wall ns per read of the slowest
 * thread, and CPU ns per read (threads averaged: no descheduled time). */
static struct result run_once(struct target *tg, enum impl impl,
			      bench_key *const streams[2], unsigned nthreads)
{
	struct result r = {0};
	pthread_barrier_t start;
	pthread_t tid[2];
	struct job jobs[2];
	uint64_t worst = 0;

	pthread_barrier_init(&start, NULL, nthreads);
	for (unsigned i = 0; i < nthreads; i++) {
		jobs[i] = (struct job){.impl = impl,
				       .heat = tg->heat,
				       .base = tg->base,
				       .keys = streams[i],
				       .t0_ms = tg->now_ms,
				       .nthreads = nthreads,
				       .start = &start};
		pthread_create(&tid[i], NULL, job_run, &jobs[i]);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(tid[i], NULL);
		if (jobs[i].elapsed_ns > worst)
			worst = jobs[i].elapsed_ns;
		r.cpu_ns += (double)jobs[i].cpu_ns / OPS / nthreads;
	}
	pthread_barrier_destroy(&start);
	tg->now_ms += OPS / OPS_PER_MS + 1;
	r.ns = (double)worst / OPS;
	r.mops = (double)OPS * nthreads * 1000.0 / (double)worst;
	return r;
}

static struct result run_median(struct target *tg, enum impl impl,
				bench_key *const streams[2], unsigned nthreads)
{
	double ns[RUNS], mops[RUNS], cpu[RUNS];
	struct result r;

	for (int i = 0; i < RUNS; i++) {
		r = run_once(tg, impl, streams, nthreads);
		ns[i] = r.ns;
		mops[i] = r.mops;
		cpu[i] = r.cpu_ns;
	}
	r.ns = median(ns, RUNS);
	r.mops = median(mops, RUNS);
	r.cpu_ns = median(cpu, RUNS);
	return r;
}

/* ---- one key count --------------------------------------------------------- */

struct summary {
	double heat_ns, base_ns, heat_mops_1t, heat_mops_2t, bytes_per_key;
	double cell_ns, cell_cold_ns;
	struct result heat_1t, heat_2t; /* 1M keys, Zipf */
};

static mcrepl_heat *heat_make(uint64_t max)
{
	mcrepl_config cfg;
	mcrepl_heat *h;

	mcrepl_config_init(&cfg);
	cfg.heat_max_entries = max;
	if (mcrepl_heat_create(&cfg, &h) != MCREPL_OK) {
		fprintf(stderr, "bench_heat: mcrepl_heat_create failed\n");
		exit(1);
	}
	return h;
}

static void prefill(struct target *tg, uint64_t n)
{
	bench_key k;

	for (uint64_t id = 0; id < n; id++) {
		key_format(k, id);
		mcrepl_heat_record(tg->heat, NULL, k, NULL, tg->now_ms, NULL);
		baseline_record(tg->base, k, tg->now_ms);
	}
	tg->now_ms += 1;
}

static const char *count_name(uint64_t n)
{
	return n >= 10000000 ? "10M" : n >= 1000000 ? "1M" : "10k";
}

static void print_row(const char *impl, uint64_t n, const char *dist,
		      unsigned thr, struct result r, double bpk)
{
	printf("%-9s %5s %-8s %3u %10.1f %10.2f %10.1f %10.1f\n", impl,
	       count_name(n), dist, thr, r.ns, r.mops, r.cpu_ns, bpk);
}

static void bench_dist(struct target *tg, uint64_t n, const struct zipf *z,
		       double bpk[2], struct summary *sum)
{
	const char *dist = z ? "zipf" : "uniform";
	bench_key *streams[2] = {stream_make(n, z, 11), stream_make(n, z, 23)};

	for (unsigned thr = 1; thr <= 2; thr++) {
		struct result rh = run_median(tg, IMPL_HEAT, streams, thr);
		struct result rb = run_median(tg, IMPL_BASELINE, streams, thr);

		print_row("heat", n, dist, thr, rh, bpk[0]);
		print_row("baseline", n, dist, thr, rb, bpk[1]);
		if (n == 1000000 && z && thr == 1) {
			sum->heat_ns = rh.ns;
			sum->base_ns = rb.ns;
			sum->heat_mops_1t = rh.mops;
			sum->heat_1t = rh;
		}
		if (n == 1000000 && z && thr == 2) {
			sum->heat_mops_2t = rh.mops;
			sum->heat_2t = rh;
		}
	}
	free(streams[0]);
	free(streams[1]);
}

static void bench_keys(uint64_t n, struct summary *sum)
{
	struct target tg = {.heat = heat_make(n),
			    .base = baseline_create(n),
			    .now_ms = 1000000};
	mcrepl_heat_stats st;
	struct zipf z;
	double bpk[2];

	prefill(&tg, n);
	mcrepl_heat_get_stats(tg.heat, &st);
	bpk[0] = (double)st.bytes / (double)st.max_entries;
	bpk[1] = (double)tg.base->bytes / (double)n;
	printf("# %s keys: table resident after one pass %.2f%%\n",
	       count_name(n), 100.0 * (double)st.entries / (double)n);
	if (n == 1000000)
		sum->bytes_per_key = bpk[0];
	zipf_init(&z, n, ZIPF_THETA);
	bench_dist(&tg, n, &z, bpk, sum);
	bench_dist(&tg, n, NULL, bpk, sum);
	mcrepl_heat_destroy(tg.heat);
	baseline_destroy(tg.base);
}

/* ---- the embeddable cell ---------------------------------------------- */

/* A host's per-object metadata with the cell inside, one line per object. */
struct object {
	uint64_t id, size, version;
	uint32_t nreplicas, flags;
	mcrepl_heat_cell heat;
	uint64_t pad;
};

enum cell_mode {
	CELL_LOOKUP = 1, /* the host's lookup touches the object first */
	CELL_RECORD = 2, /* then records the read in its cell */
};

/* The host's lookup is modelled by a prefetch PREFETCH_AHEAD reads early
 * and a load of the object's id; without CELL_LOOKUP the record itself
 * meets the object cold. Returns wall and CPU ns per read. */
static struct result cell_run(struct object *const *stream, int mode,
			      const mcrepl_heat_params *p, uint64_t *now)
{
	uint64_t t = now_ns(), cpu = thread_cpu_ns(), hot = 0, c = 0, id = 0;
	struct result r;

	for (uint32_t i = 0; i < OPS; i++) {
		struct object *o = stream[i];

		if (mode & CELL_LOOKUP) {
			__builtin_prefetch(stream[(i + PREFETCH_AHEAD) % OPS],
					   1);
			id ^= o->id;
		}
		if (mode & CELL_RECORD)
			hot += mcrepl_heat_cell_record(&o->heat, p, *now,
						       NULL) != 0;
		if (++c == OPS_PER_MS) {
			c = 0;
			(*now)++;
		}
	}
	r.ns = (double)(now_ns() - t) / OPS;
	r.cpu_ns = (double)(thread_cpu_ns() - cpu) / OPS;
	r.mops = 1000.0 / r.ns;
	if (hot + id == 1)
		printf("#\n");
	return r;
}

static void cell_row(const char *what, double ns, double cpu_ns)
{
	printf("%-9s %5s %-8s %3u %10.1f %10.2f %10.1f %10zu  %s\n", "cell",
	       "1M", "zipf", 1u, ns, 1000.0 / ns, cpu_ns,
	       sizeof(mcrepl_heat_cell), what);
}

static struct object **cell_stream(struct object *objs)
{
	struct object **stream = xcalloc(OPS, sizeof(*stream));
	struct zipf z;
	uint32_t *ids;

	zipf_init(&z, CELL_OBJECTS, ZIPF_THETA);
	ids = ids_make(CELL_OBJECTS, &z, 37);
	for (uint32_t i = 0; i < CELL_OBJECTS; i++)
		objs[i].id = i;
	for (uint32_t i = 0; i < OPS; i++)
		stream[i] = &objs[ids[i]];
	free(ids);
	return stream;
}

enum { CELL_WARM, CELL_LOOKUP_ONLY, CELL_COLD, CELL_RUNS };

static void bench_cell(struct summary *sum)
{
	static const int modes[CELL_RUNS] = {CELL_LOOKUP | CELL_RECORD,
					     CELL_LOOKUP, CELL_RECORD};
	struct object *objs = xcalloc(CELL_OBJECTS, sizeof(*objs));
	struct object **stream = cell_stream(objs);
	double ns[CELL_RUNS][RUNS], cpu[CELL_RUNS][RUNS];
	double m[CELL_RUNS], c[CELL_RUNS];
	mcrepl_heat_params p;
	mcrepl_config cfg;
	uint64_t now = 1000000;

	mcrepl_config_init(&cfg);
	mcrepl_heat_params_init(&p, &cfg);
	for (int r = 0; r < RUNS; r++) {
		for (int k = 0; k < CELL_RUNS; k++) {
			struct result x = cell_run(stream, modes[k], &p, &now);

			ns[k][r] = x.ns;
			cpu[k][r] = x.cpu_ns;
		}
	}
	for (int k = 0; k < CELL_RUNS; k++) {
		m[k] = median(ns[k], RUNS);
		c[k] = median(cpu[k], RUNS);
	}
	sum->cell_ns = m[CELL_WARM];
	sum->cell_cold_ns = m[CELL_COLD];
	cell_row("host lookup + record (object line warm)", m[CELL_WARM],
		 c[CELL_WARM]);
	cell_row("host lookup alone", m[CELL_LOOKUP_ONLY], c[CELL_LOOKUP_ONLY]);
	cell_row("=> the record's own cost", m[CELL_WARM] - m[CELL_LOOKUP_ONLY],
		 c[CELL_WARM] - c[CELL_LOOKUP_ONLY]);
	cell_row("record alone (object line cold)", m[CELL_COLD], c[CELL_COLD]);
	free(stream);
	free(objs);
}

static void print_load(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	char line[128];

	if (f && fgets(line, sizeof(line), f))
		printf("# load average: %s", line);
	if (f)
		fclose(f);
}

/* On a shared machine the two threads may not run at once; CPU time shows
 * what the table itself costs when they do. */
static void print_scaling(const struct summary *sum)
{
	const struct result *a = &sum->heat_1t, *b = &sum->heat_2t;

	printf("# 1M zipf, 2 threads: wall scaling %.2f; per-read CPU time "
	       "%.1f -> %.1f ns (CPU-time scaling %.2f); threads on a CPU "
	       "%.0f%% of the wall time\n",
	       sum->heat_mops_2t / sum->heat_mops_1t, a->cpu_ns, b->cpu_ns,
	       2.0 * a->cpu_ns / b->cpu_ns, 100.0 * b->cpu_ns / b->ns);
}

int main(int argc, char **argv)
{
	static const uint64_t counts[] = {10000, 1000000, 10000000};
	bool quick = false;
	struct summary sum = {0};
	int st = bench_quick_flags(
	    "bench_heat", "the heat window's record() vs a mutex and hash map",
	    "skip the 10 M keys", &quick, argc, argv);

	if (st >= 0)
		return st;
	printf("# heat record(): median of %d runs of %u reads per thread; "
	       "window %u ms, threshold %u, clock +1 ms per %u reads\n",
	       RUNS, OPS, WINDOW_MS, THRESHOLD, OPS_PER_MS);
	printf("%-9s %5s %-8s %3s %10s %10s %10s %10s\n", "impl", "keys",
	       "dist", "thr", "ns/op", "Mops/s", "cpu_ns/op", "bytes/key");
	print_load();
	for (size_t i = 0; i < (quick ? 2u : 3u); i++)
		bench_keys(counts[i], &sum);
	bench_cell(&sum);
	print_load();
	print_scaling(&sum);
	printf("heat_1m_ns=%.0f baseline_1m_ns=%.0f speedup=%.2f "
	       "bytes_per_key=%.0f scaling_2t=%.2f cell_1m_ns=%.1f\n",
	       sum.heat_ns, sum.base_ns, sum.base_ns / sum.heat_ns,
	       sum.bytes_per_key, sum.heat_mops_2t / sum.heat_mops_1t,
	       sum.cell_ns);
	return 0;
}
