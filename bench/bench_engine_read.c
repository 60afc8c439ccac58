/*
 * bench_engine_read: the cost of mcrepl_engine_read(), the call a master
 * makes on every routed read, beside a baseline in the same run: the same
 * two relaxed atomic adds on one counter line per node, as the engine kept
 * them before 0.6.4 (the node's bucket and reader-order count on one cache
 * line that every reader thread writes).
 *
 *   bench_engine_read [--quick]   (or MCREPL_BENCH_QUICK=1): fewer reads
 *
 * Cases: one thread; two threads reading one node (a 2-thread master whose
 * reads land on one NIC); two threads on a node each; and a hot key's read
 * with two threads: the reader order over its two replicas (on two nodes)
 * picks one, the read is counted there (mcrepl_engine_pick() + _read();
 * the baseline: mcrepl_pick_replica() with the one-line counts as loads).
 * Every figure is the median of RUNS runs, wall ns per read of the slower
 * thread. The last line is machine-readable: the ratios engine/baseline
 * per case.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcrepl/config.h"
#include "mcrepl/engine.h"
#include "mcrepl/place.h"

#include "bench_flags.h"

#define RUNS 5
#define THREADS 2

static uint64_t reads_per_thread = 20000000;

/* The baseline: a node's counters as one line (bucket[8], now). */
struct line_node {
	_Alignas(64) _Atomic uint32_t bucket[8];
	_Atomic uint32_t now_reads;
};
static struct line_node line_nodes[THREADS];

struct job {
	mcrepl_engine *e; /* NULL: the baseline */
	uint32_t node;	  /* UINT32_MAX: pick between nodes 0 and 1 */
	pthread_barrier_t *go;
	uint64_t ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void line_read(struct line_node *n, uint64_t i)
{
	atomic_fetch_add_explicit(&n->bucket[i >> 30 & 7], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&n->now_reads, 1, memory_order_relaxed);
}

/* The hot key's reads: pick a replica by load, count the read there. */
static void picks(struct job *j)
{
	mcrepl_replica_view v[2] = {{.segment = {1}, .readable = true},
				    {.segment = {2}, .readable = true}};
	size_t pick;

	for (uint64_t i = 0; i < reads_per_thread; i++) {
		if (j->e) {
			if (mcrepl_engine_pick(j->e, "t", "hot", v, 2, i,
					       &pick) != MCREPL_OK)
				pick = 0;
			mcrepl_engine_read(j->e, v[pick].segment);
		} else {
			uint64_t load[2] = {
			    atomic_load_explicit(&line_nodes[0].now_reads,
						 memory_order_relaxed),
			    atomic_load_explicit(&line_nodes[1].now_reads,
						 memory_order_relaxed)};

			if (mcrepl_pick_replica("t", "hot", v, load, 2, i,
						&pick) != MCREPL_OK)
				pick = 0;
			line_read(&line_nodes[pick], i);
		}
	}
}

static void *run(void *arg)
{
	struct job *j = arg;
	mcrepl_segment_id id = {.v = j->node + 1};
	struct line_node *n = &line_nodes[j->node % THREADS];
	uint64_t t0;

	pthread_barrier_wait(j->go);
	t0 = now_ns();
	if (j->node == UINT32_MAX)
		picks(j);
	else if (j->e)
		for (uint64_t i = 0; i < reads_per_thread; i++)
			mcrepl_engine_read(j->e, id);
	else
		for (uint64_t i = 0; i < reads_per_thread; i++)
			line_read(n, i);
	j->ns = now_ns() - t0;
	return NULL;
}

/* ns per read of the slowest of `threads` threads; `spread`: each on its
 * own node; `pick`: the hot key's reads instead. */
static double once(mcrepl_engine *e, int threads, bool spread, bool pick)
{
	pthread_t th[THREADS];
	struct job j[THREADS];
	pthread_barrier_t go;
	uint64_t worst = 0;

	pthread_barrier_init(&go, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		j[i] = (struct job){.e = e,
				    .node = pick     ? UINT32_MAX
					    : spread ? (uint32_t)i
						     : 0,
				    .go = &go};
		if (pthread_create(&th[i], NULL, run, &j[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		worst = j[i].ns > worst ? j[i].ns : worst;
	}
	pthread_barrier_destroy(&go);
	return (double)worst / (double)reads_per_thread;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(mcrepl_engine *e, int threads, bool spread, bool pick)
{
	double v[RUNS];

	for (int r = 0; r < RUNS; r++)
		v[r] = once(e, threads, spread, pick);
	qsort(v, RUNS, sizeof(v[0]), cmp);
	return v[RUNS / 2];
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int threads;
		bool spread, pick;
	} cases[] = {
	    {.name = "one_thread", .threads = 1},
	    {.name = "two_threads_one_node", .threads = 2},
	    {.name = "two_threads_own_nodes", .threads = 2, .spread = true},
	    {.name = "hot_key_two_threads", .threads = 2, .pick = true},
	};
	mcrepl_config c;
	mcrepl_engine *e = NULL;
	double ratio[4];
	bool quick = false;
	int st = bench_quick_flags(
	    "bench_engine_read",
	    "mcrepl_engine_read() ns per read vs the counters on one line",
	    "a tenth of the reads", &quick, argc, argv);

	if (st >= 0)
		return st;
	if (quick)
		reads_per_thread /= 10;
	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	if (mcrepl_engine_create(&c, NULL, &e) != MCREPL_OK) {
		fprintf(stderr, "bench_engine_read: engine create failed\n");
		return 1;
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		char host[8];
		mcrepl_engine_segment s = {.id = {i + 1},
					   .client = {i + 1},
					   .host = host,
					   .capacity = 1u << 30,
					   .allocatable = true,
					   .can_copy = true};

		snprintf(host, sizeof(host), "h%u", i);
		(void)mcrepl_engine_segment_set(e, &s);
	}
	mcrepl_engine_tick(e, 1000000, NULL);
	printf("mcrepl_engine_read, %llu reads per thread, median of %d "
	       "(ns per read, slowest thread)\n",
	       (unsigned long long)reads_per_thread, RUNS);
	printf("%-24s %10s %10s %8s\n", "case", "engine", "baseline", "ratio");
	for (int i = 0; i < 4; i++) {
		double x =
		    median(e, cases[i].threads, cases[i].spread, cases[i].pick);
		double b = median(NULL, cases[i].threads, cases[i].spread,
				  cases[i].pick);

		ratio[i] = x / b;
		printf("%-24s %10.2f %10.2f %8.3f\n", cases[i].name, x, b,
		       ratio[i]);
	}
	printf("engine_read one_thread=%.3f two_threads_one_node=%.3f "
	       "two_threads_own_nodes=%.3f hot_key_two_threads=%.3f\n",
	       ratio[0], ratio[1], ratio[2], ratio[3]);
	mcrepl_engine_destroy(e);
	return 0;
}
