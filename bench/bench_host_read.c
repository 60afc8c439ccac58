/*
 * bench_host_read: what a Mooncake master's read hook costs through
 * mcrepl_engine_on_read() (mcrepl/host.h, the adapter's OnRead), beside a
 * baseline in the same run: the same work written by hand against the
 * engine, as the former patch did it (the heat cell under the object's
 * lock with a copy of the heat parameters, the first replica's segment id
 * cached in the object, the others hashed from their names, the reader
 * order by mcrepl_engine_pick(), the read counted by mcrepl_engine_read()).
 *
 *   bench_host_read [--quick]   (or MCREPL_BENCH_QUICK=1): fewer reads
 *
 * Cases: an object with one replica and one with two (on two nodes), one
 * thread, 1,000 objects read round robin under enforce (rfc policy, a
 * threshold no read reaches, so no trigger is queued). Figures: the median
 * of RUNS runs, ns per read. The last line is machine-readable: the ratio
 * on_read / by hand per case.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcrepl/host.h"

#include "bench_flags.h"

#define RUNS 5
#define OBJECTS 1000

static uint64_t reads = 20000000;

struct object {
	mcrepl_object_state st; /* on_read */
	/* by hand: the cell, and the first replica's cached segment */
	mcrepl_heat_cell cell;
	uint64_t routed_replica, routed_segment;
	char key[16];
};

static const char *names[2] = {"segment_0", "segment_1"};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The former patch's read routine, by hand. */
static size_t by_hand(mcrepl_engine *e, const mcrepl_heat_params *hp,
		      struct object *o, size_t n, uint64_t salt, uint64_t now)
{
	mcrepl_replica_view v[2];
	uint32_t count;
	size_t pick = 0;

	memset(v, 0, sizeof(v));
	if (o->routed_replica != 1) {
		o->routed_segment = mcrepl_segment_id_of(names[0]).v;
		o->routed_replica = 1;
	}
	v[0].segment.v = o->routed_segment;
	for (size_t i = 1; i < n; i++)
		v[i].segment = mcrepl_segment_id_of(names[i]);
	for (size_t i = 0; i < n; i++)
		v[i].readable = v[i].memory = true;
	(void)mcrepl_heat_cell_record(&o->cell, hp, now, &count);
	if (n > 1 &&
	    mcrepl_engine_pick(e, "", o->key, v, n, salt, &pick) != MCREPL_OK)
		pick = 0;
	mcrepl_engine_read(e, v[pick].segment);
	return pick;
}

static double once(mcrepl_engine *e, struct object *objs, size_t n, bool hand)
{
	mcrepl_read_replica r[2] = {{.id = 1, .segment = "segment_0"},
				    {.id = 2, .segment = "segment_1"}};
	mcrepl_heat_params hp;
	mcrepl_read_result res;
	size_t sink = 0;
	uint64_t t0, now = 1000000;

	mcrepl_engine_heat_params(e, &hp);
	t0 = now_ns();
	for (uint64_t i = 0; i < reads; i++) {
		struct object *o = &objs[i % OBJECTS];

		if (i % 4096 == 0)
			now++;
		if (hand) {
			sink += by_hand(e, &hp, o, n, i, now);
		} else {
			(void)mcrepl_engine_on_read(e, &o->st, "", o->key, r, n,
						    i, now, &res);
			sink += res.first;
		}
	}
	if (sink == UINT64_MAX)
		puts("");
	return (double)(now_ns() - t0) / (double)reads;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(mcrepl_engine *e, struct object *objs, size_t n, bool hand)
{
	double v[RUNS];

	for (int i = 0; i < RUNS; i++)
		v[i] = once(e, objs, n, hand);
	qsort(v, RUNS, sizeof(v[0]), cmp);
	return v[RUNS / 2];
}

static mcrepl_engine *engine(void)
{
	mcrepl_engine_segment s = {.capacity = 1u << 30, .allocatable = true};
	mcrepl_engine *e = NULL;
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	c.policy = MCREPL_POLICY_RFC;
	c.admission_qps_threshold = 1e4; /* 100 k a window: no read crosses */
	if (mcrepl_engine_create(&c, NULL, &e) != MCREPL_OK)
		return NULL;
	for (int i = 0; i < 2; i++) {
		s.name = names[i];
		s.host = names[i];
		if (mcrepl_engine_segment_set(e, &s) != MCREPL_OK) {
			mcrepl_engine_destroy(e);
			return NULL;
		}
	}
	mcrepl_engine_tick(e, 1000000, NULL);
	return e;
}

int main(int argc, char **argv)
{
	struct object *objs;
	mcrepl_engine *e;
	double ratio[2];
	bool quick = false;
	int st = bench_quick_flags(
	    "bench_host_read",
	    "mcrepl_engine_on_read() ns per read vs the same work by hand",
	    "a tenth of the reads", &quick, argc, argv);

	if (st >= 0)
		return st;
	if (quick)
		reads /= 10;
	objs = calloc(OBJECTS, sizeof(*objs));
	e = engine();
	if (!objs || !e) {
		fprintf(stderr, "bench_host_read: out of memory\n");
		return 1;
	}
	for (int i = 0; i < OBJECTS; i++)
		snprintf(objs[i].key, sizeof(objs[i].key), "key%d", i);
	printf("bench_host_read: %llu reads per run, %d objects, median of "
	       "%d runs, ns per read\n",
	       (unsigned long long)reads, OBJECTS, RUNS);
	for (size_t n = 1; n <= 2; n++) {
		double hand = median(e, objs, n, true);
		double host = median(e, objs, n, false);

		ratio[n - 1] = host / hand;
		printf("  %zu replica%s: on_read %.1f ns, by hand %.1f ns "
		       "(ratio %.3f)\n",
		       n, n > 1 ? "s" : "", host, hand, ratio[n - 1]);
	}
	printf("host_read_ratio one=%.3f two=%.3f\n", ratio[0], ratio[1]);
	mcrepl_engine_destroy(e);
	free(objs);
	return 0;
}
