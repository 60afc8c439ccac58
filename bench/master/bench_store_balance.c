/*
 * bench_store_balance: read balance of our master's store in-process, the
 * workload the adapter's Mooncake-shaped test host runs (bench/adapter/)
 * on our store, so the two hosts compare on one workload:
 * SEGMENTS hosts of one segment each, KEYS 1 KiB objects, one replica,
 * key i on segment i % SEGMENTS (the store places a put on the least used
 * segment, the first mounted on ties; Mooncake's driver names it as the
 * preferred segment), Zipf 0.99 reads at RATE reads/s for SECONDS from the
 * one sequence both drivers draw (bench_zipf_sequence(), seed 42: the same
 * keys in the same order bit for bit, so mode off gives both hosts the same
 * figure), on a simulated clock (reads i at i * 1000 / RATE ms; nothing
 * sleeps).
 *
 *   bench_store_balance [--segments N] [--keys K] [--rate R]
 *                       [--seconds S] [--tick_ms T] [--modes off,rfc,auto]
 *
 * Per read: store_get as the GetReplicaList handler runs it; the reader
 * reads the first replica of the reader order and the read is counted on
 * its segment, in the interval of its place in the schedule (one second:
 * RATE reads). Every millisecond the admission worker's batch
 * (dyn_admit_batch, 256); every 10 ms each worker fetches its tasks and
 * runs every dynamic REPLICA_COPY at once (DynamicReplicaCopyStart, End,
 * MarkTaskToComplete); every T ms (default 50, the master's
 * sweep_interval_ms) the master's timer (store_tick: the engine's tick)
 * and a heartbeat per worker. Modes: off; rfc (enforce, policy rfc); auto
 * (enforce, policy auto: the defaults).
 * One line per mode:
 *   balance mode=<m> segments=<n> keys=<k> rate=<r> seconds=<s>
 *   steady_max_mean=<x> copies=<c> copy_failures=<f>
 * steady_max_mean: the median over the last half of the intervals of the
 * busiest segment's reads over the mean (as mcrepl-sim reports it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_flags.h"
#include "bench_store_load.h"
#include "log.h"

#define SEGMENTS_MAX 1024

struct run {
	struct store *s;
	uint64_t seg_id[SEGMENTS_MAX];
	uint64_t copies, copy_failures;
};

/* Worker `client` runs its fetched tasks as mcrepl-worker does. */
static void run_tasks(struct run *r, uint64_t client, uint64_t now)
{
	struct task *t[64];
	size_t n = store_fetch_tasks(r->s, client, t, 64, now);

	for (size_t i = 0; i < n; i++) {
		const McreplRpc__Task *m = &t[i]->msg;
		char tenant[MCREPL_TENANT_MAX + 1], key[MCREPL_KEY_MAX + 1];
		mcrepl_fence f = {
		    .lease = {m->lease_id},
		    .version = m->version,
		    .caller = {client},
		    .source = {m->source_segment_id},
		    .target = {m->target_segment_id},
		};
		struct replica src, dst;
		const char *reason = NULL;
		uint64_t id = m->task_id;
		bool ok = m->type == MCREPL_RPC__TASK_TYPE__REPLICA_COPY &&
			  m->dynamic;

		/* the copy's end closes the task: nothing of t[i] is used
		 * past the start */
		snprintf(tenant, sizeof(tenant), "%s", m->tenant);
		snprintf(key, sizeof(key), "%s", m->key);
		ok =
		    ok && dyn_copy_start(r->s, &f, tenant, key, id, now, &src,
					 &dst, &reason) == MCREPL_RPC__CODE__OK;
		ok = ok && dyn_copy_end(r->s, &f, tenant, key, now, &reason) ==
			       MCREPL_RPC__CODE__OK;
		if (ok)
			r->copies++;
		else
			r->copy_failures++;
		(void)store_task_report(r->s, client, id);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median over the last half of the intervals of max/mean per segment. */
static double steady(const uint64_t *counts, size_t segs, size_t intervals)
{
	double *v = malloc((intervals + 1) * sizeof(*v)), med;
	size_t k = 0;

	if (!v)
		return 0;

	for (size_t i = intervals / 2; i < intervals; i++) {
		uint64_t sum = 0, max = 0;

		for (size_t j = 0; j < segs; j++) {
			sum += counts[i * segs + j];
			if (counts[i * segs + j] > max)
				max = counts[i * segs + j];
		}
		if (sum)
			v[k++] = (double)max * (double)segs / (double)sum;
	}
	qsort(v, k, sizeof(double), cmp_double);
	med = !k ? 0 : k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	free(v);
	return med;
}

/* The run's shape (the command line). */
struct shape {
	uint64_t segs, n, secs, m; /* m: the sequence's length */
	uint64_t rate, tick_ms;
	const char *modes;
};

/* One mode's run; 0 or -1. */
static int run_mode(const char *mode, const struct shape *a, char **keys,
		    const uint32_t *seq)
{
	const size_t segs = a->segs, n = a->n, secs = a->secs, m = a->m;
	const uint64_t rate = a->rate, tick_ms = a->tick_ms;
	const uint64_t t0 = 1000000, total = (uint64_t)secs * rate;
	uint64_t *counts = calloc(secs * segs, sizeof(*counts));
	uint64_t last_ms = t0, last_evict = t0, misses = 0;
	struct run r = {0};
	int rc = -1;
	const struct bench_load l = {
	    .mode = strcmp(mode, "off") ? MCREPL_MODE_ENFORCE : MCREPL_MODE_OFF,
	    .policy = strcmp(mode, "off") ? mode : NULL,
	    .hosts = segs,
	    .capacity = 256ull << 20,
	    .object_size = 1024,
	    .now_ms = t0,
	};

	r.s = counts ? bench_store_load(&l, keys, n, r.seg_id) : NULL;
	if (!r.s)
		goto out;
	for (uint64_t i = 0; i < total; i++) {
		const uint64_t now = t0 + i * 1000 / rate;
		size_t order[8], n_out = 0;
		struct object *o;

		for (; last_ms < now; last_ms++) { /* each ms passed */
			const uint64_t ms = last_ms + 1;

			(void)dyn_admit_batch(r.s, 256, ms);
			store_lock(r.s);
			if (ms % 10 == 0)
				for (size_t h = 0; h < segs; h++)
					run_tasks(&r, BENCH_CLIENT0 + h, ms);
			if (ms % tick_ms == 0) {
				for (size_t h = 0; h < segs; h++)
					store_heartbeat(r.s, BENCH_CLIENT0 + h,
							NULL, NULL, 0, ms);
				store_tick(r.s, ms, &last_evict);
			}
			store_unlock(r.s);
		}
		store_lock(r.s);
		store_read_begin(r.s);
		if (store_get(r.s, "t", keys[seq[i % m]], "", now, &o, order, 8,
			      &n_out) == MCREPL_RPC__CODE__OK &&
		    n_out > 0) {
			uint64_t id = o->replicas[order[0]].segment_id;
			size_t h = 0;

			while (h < segs && r.seg_id[h] != id)
				h++;
			if (h < segs)
				counts[(i / rate) * segs + h]++;
			else
				misses++;
		} else {
			misses++;
		}
		store_unlock(r.s);
	}
	if (misses) {
		fprintf(stderr, "bench_store_balance: %llu reads missed\n",
			(unsigned long long)misses);
		goto out;
	}
	printf("balance mode=%s segments=%zu keys=%zu rate=%llu seconds=%zu "
	       "steady_max_mean=%.4f copies=%llu copy_failures=%llu\n",
	       mode, segs, n, (unsigned long long)rate, secs,
	       steady(counts, segs, secs), (unsigned long long)r.copies,
	       (unsigned long long)r.copy_failures);
	fflush(stdout);
	rc = 0;
out:
	if (r.s)
		store_destroy(r.s);
	free(counts);
	return rc;
}

/* --modes: a comma list of off, rfc and auto. */
static bool valid_modes(const char *v)
{
	size_t len;

	for (const char *p = v; *p; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		if (!((len == 3 && !strncmp(p, "off", 3)) ||
		      (len == 3 && !strncmp(p, "rfc", 3)) ||
		      (len == 4 && !strncmp(p, "auto", 4))))
			return false;
	}
	return strlen(v) < 64;
}

#define O(f) FLAG_AT(struct shape, f)
static const struct flag balance_flags[] = {
    {.name = "segments",
     .type = FLAG_U64,
     .off = O(segs),
     .def = "8",
     .help = "segments, one host each",
     .min = 1,
     .max = SEGMENTS_MAX},
    {.name = "keys",
     .type = FLAG_U64,
     .off = O(n),
     .def = "100000",
     .help = "objects, at least --segments",
     .min = 1,
     .max = 100000000},
    {.name = "rate",
     .type = FLAG_U64,
     .off = O(rate),
     .def = "100000",
     .help = "reads per simulated second",
     .min = 1,
     .max = 100000000},
    {.name = "seconds",
     .type = FLAG_U64,
     .off = O(secs),
     .def = "30",
     .help = "simulated seconds",
     .min = 2,
     .max = 3600},
    {.name = "tick_ms",
     .type = FLAG_U64,
     .off = O(tick_ms),
     .def = "50",
     .help = "ms between the store's ticks",
     .min = 1,
     .max = 60000},
    {.name = "modes",
     .type = FLAG_STRP,
     .off = O(modes),
     .def = "off,rfc,auto",
     .help = "the modes run, in order",
     .min = 1,
     .valid = valid_modes,
     .rule = "a comma list of off, rfc and auto, under 64 characters"},
};
#undef O

static const struct flag_set balance_set = {
    .prog = "bench_store_balance",
    .intro = "read balance of the master's store under Zipf reads",
    .title = "bench_store_balance flags",
    .width = 8,
    .flags = balance_flags,
    .n = sizeof(balance_flags) / sizeof(balance_flags[0]),
};

int main(int argc, char **argv)
{
	struct shape a = {.m = (uint64_t)1 << 22};
	char list[64], *save = NULL, **keys = NULL;
	uint32_t *seq = NULL;
	int rc = bench_flags(&balance_set, &a, argc, argv);

	if (rc >= 0)
		return rc;
	rc = 1;
	if (a.n < a.segs) {
		fprintf(stderr,
			"bench_store_balance: --keys %llu is fewer "
			"than --segments %llu\n",
			(unsigned long long)a.n, (unsigned long long)a.segs);
		return 2;
	}
	log_init("bench_store_balance", "warn");
	keys = bench_key_names(a.n);
	seq = calloc(a.m, sizeof(*seq));
	if (!keys || !seq || bench_zipf_sequence(seq, a.m, a.n, 0.99, 42))
		goto out;
	snprintf(list, sizeof(list), "%s", a.modes);
	rc = 0;
	for (char *mode = strtok_r(list, ",", &save); mode && !rc;
	     mode = strtok_r(NULL, ",", &save))
		if (run_mode(mode, &a, keys, seq))
			rc = 1;
out:
	bench_key_names_free(keys, a.n);
	free(seq);
	return rc;
}
