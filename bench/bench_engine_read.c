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
 * reads land on one NIC); two threads on a node each. Every figure is the
 * median of RUNS runs, wall ns per read of the slower thread. The last
 * line is machine-readable: the ratios engine/baseline per case.
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
	uint32_t node;
	pthread_barrier_t *go;
	uint64_t ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
	struct job *j = arg;
	mcrepl_segment_id id = {j->node + 1};
	struct line_node *n = &line_nodes[j->node];
	uint64_t t0;

	pthread_barrier_wait(j->go);
	t0 = now_ns();
	if (j->e)
		for (uint64_t i = 0; i < reads_per_thread; i++)
			mcrepl_engine_read(j->e, id);
	else
		for (uint64_t i = 0; i < reads_per_thread; i++) {
			atomic_fetch_add_explicit(&n->bucket[i >> 30 & 7], 1,
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&n->now_reads, 1,
						  memory_order_relaxed);
		}
	j->ns = now_ns() - t0;
	return NULL;
}

/* ns per read of the slowest of `threads` threads; `spread`: each on its
 * own node. */
static double once(mcrepl_engine *e, int threads, bool spread)
{
	pthread_t th[THREADS];
	struct job j[THREADS];
	pthread_barrier_t go;
	uint64_t worst = 0;

	pthread_barrier_init(&go, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		j[i] = (struct job){e, spread ? (uint32_t)i : 0, &go, 0};
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

static double median(mcrepl_engine *e, int threads, bool spread)
{
	double v[RUNS];

	for (int r = 0; r < RUNS; r++)
		v[r] = once(e, threads, spread);
	qsort(v, RUNS, sizeof(v[0]), cmp);
	return v[RUNS / 2];
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int threads;
		bool spread;
	} cases[] = {{"one_thread", 1, false},
		     {"two_threads_one_node", 2, false},
		     {"two_threads_own_nodes", 2, true}};
	mcrepl_config c;
	mcrepl_engine *e = NULL;
	double ratio[3];
	const char *q = getenv("MCREPL_BENCH_QUICK");

	if ((argc > 1 && strcmp(argv[1], "--quick") == 0) || (q && *q == '1'))
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
	for (int i = 0; i < 3; i++) {
		double x = median(e, cases[i].threads, cases[i].spread);
		double b = median(NULL, cases[i].threads, cases[i].spread);

		ratio[i] = x / b;
		printf("%-24s %10.2f %10.2f %8.3f\n", cases[i].name, x, b,
		       ratio[i]);
	}
	printf("engine_read one_thread=%.3f two_threads_one_node=%.3f "
	       "two_threads_own_nodes=%.3f\n",
	       ratio[0], ratio[1], ratio[2]);
	mcrepl_engine_destroy(e);
	return 0;
}
