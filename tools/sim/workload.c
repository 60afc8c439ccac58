/* Read generators: zipf, uniform, trace replay (see workload.h). */
#include <math.h>
#include <stdlib.h>

#include "util/hash.h"
#include "workload.h"

enum { STREAM_KEYS = 1, STREAM_READERS = 2, STREAM_PLACE = 3 };

/*
 * Write every object once, as mcrepl-bench loads a cluster before its
 * reads: popularity rank r is key perm[r] (mcrepl-bench's seeded
 * permutation, the same for the same --seed and key count), keys are put
 * in id order, and the master daemon places each put on the segment with
 * the lowest utilization (daemons/master/store.c put_target), which for
 * equal objects in an empty cluster is round robin: key k lands on
 * segment k mod segments. So both tools hold the same ranks on the same
 * nodes. Objects are named as mcrepl-bench names its keys, "zipf-<key>",
 * so the rendezvous tie-breaks of placement agree too. The shuffle is
 * mcrepl-bench's (tools/bench/keys.c): splitmix64 from the same seed.
 */
static int write_all(struct sim_cluster *c, uint64_t seed)
{
	uint64_t n = c->n_objs, rng = seed ^ 0x5a17f00dULL;
	uint32_t *perm = malloc((n ? n : 1) * sizeof(*perm));
	uint32_t *inv = malloc((n ? n : 1) * sizeof(*inv));

	if (!perm || !inv) {
		free(perm);
		free(inv);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (uint64_t r = n ? n - 1 : 0; r > 0; r--) { /* Fisher-Yates */
		uint64_t j = mcu_splitmix64(&rng) % (r + 1);
		uint32_t t = perm[r];

		perm[r] = perm[j];
		perm[j] = t;
	}
	for (uint64_t o = 0; o < n; o++) {
		inv[perm[o]] = (uint32_t)o;
		sim_cluster_write(c, o, sim_cluster_put_nth(c, perm[o]));
	}
	c->key_id = perm;
	c->obj_of = inv;
	return 0;
}

static enum popgen_kind pop_kind(enum sim_workload w)
{
	return w == SIM_SHIFTING ? POPGEN_SHIFTING
	       : w == SIM_REHOT	 ? POPGEN_REHOT
	       : w == SIM_FLASH	 ? POPGEN_FLASH
				 : POPGEN_STILL;
}

int sim_gen_init(struct sim_gen *g, const struct sim_opts *o,
		 const struct trace *trace, struct sim_cluster *c,
		 uint64_t duration_ms)
{
	g->o = o;
	g->trace = trace;
	g->issued = 0;
	g->next_req = 0;
	g->flash_seen = g->flash_reads = 0;
	g->pop.shift.rank_obj = g->pop.shift.pick = NULL;
	sim_rng_seed(&g->keys, o->seed, STREAM_KEYS);
	sim_rng_seed(&g->readers, o->seed, STREAM_READERS);
	sim_rng_seed(&g->place, o->seed, STREAM_PLACE);
	if (trace)
		return 0;
	if (popgen_init(
		&g->pop,
		&(struct popgen_opts){.kind = pop_kind(o->workload),
				      .n = c->n_objs,
				      .period_ms = o->shift_period * 1000.0,
				      .fraction = o->shift_fraction,
				      .flash_at_ms = o->flash_at * 1000.0,
				      .flash_ms = o->flash_seconds * 1000.0,
				      .flash_share = o->flash_share,
				      .seed = o->seed}) ||
	    zipf_init(&g->zipf, popgen_ranks(&g->pop.o),
		      o->workload == SIM_UNIFORM ? 0 : o->theta))
		return -1;
	g->total = (uint64_t)floor(o->rate * (double)duration_ms / 1000.0);
	return write_all(c, o->seed);
}

void sim_gen_free(struct sim_gen *g)
{
	popgen_free(&g->pop);
}

double sim_gen_trace_ms(const struct sim_opts *o, const struct trace *trace)
{
	return trace->ts_ms[trace->n_req - 1] / o->speedup;
}

/* The next read's object (the key stream; flash: the flash object). */
static uint64_t next_object(struct sim_gen *g, const struct sim_cluster *c,
			    uint64_t now)
{
	if (popgen_flash(&g->pop.o, (double)now, &g->flash_seen)) {
		g->flash_reads++;
		return popgen_flash_object(&g->pop.o);
	}
	if (g->o->workload != SIM_UNIFORM)
		return popgen_object(
		    &g->pop,
		    zipf_sample(&g->zipf, sim_rng_uniform, &g->keys) - 1);
	return sim_rng_below(&g->keys, c->n_objs);
}

/* Reads drawn this far ahead of the one served: their objects are
 * fetched into the cache meanwhile (one miss a read otherwise, 10 M
 * objects being far larger than the cache). The key and reader streams
 * are drawn in the same order as one read at a time. */
#define LOOKAHEAD 8

static uint64_t ahead(struct sim_gen *g, const struct sim_cluster *c,
		      uint64_t now)
{
	uint64_t o = next_object(g, c, now);

	__builtin_prefetch(&c->objs[o]);
	__builtin_prefetch((const char *)&c->objs[o + 1] - 1);
	return o;
}

static void tick_synthetic(struct sim_gen *g, struct sim_master *m,
			   uint64_t now, uint64_t end)
{
	uint64_t due = (uint64_t)floor(g->o->rate * (double)end / 1000.0);
	uint64_t ring[LOOKAHEAD], n;

	if (due > g->total)
		due = g->total;
	popgen_advance(&g->pop, (double)now);
	n = due > g->issued ? due - g->issued : 0;
	for (uint64_t i = 0; i < n && i < LOOKAHEAD; i++)
		ring[i] = ahead(g, m->c, now);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t o = ring[i % LOOKAHEAD];

		if (i + LOOKAHEAD < n)
			ring[i % LOOKAHEAD] = ahead(g, m->c, now);
		sim_master_read(
		    m, o, sim_cluster_pick_reader(m->c, &g->readers), now);
	}
	g->issued += n;
}

/* Where a new trace block goes: the least-used segment (this project's
 * master), or with --random_puts a uniformly random active one (Mooncake's
 * allocator), drawn from the placement stream. */
static uint32_t put_block(struct sim_gen *g, const struct sim_cluster *c)
{
	if (!g->o->random_puts)
		return sim_cluster_put_segment(c);
	return sim_cluster_put_nth(
	    c, sim_rng_below(&g->place,
			     (uint64_t)c->n_active * c->hosts_per_node));
}

static void tick_trace(struct sim_gen *g, struct sim_master *m, uint64_t now,
		       uint64_t end)
{
	const struct trace *t = g->trace;
	struct sim_cluster *c = m->c;

	while (g->next_req < t->n_req &&
	       t->ts_ms[g->next_req] / g->o->speedup < (double)end) {
		size_t r = g->next_req++;
		uint32_t reader = sim_cluster_pick_reader(c, &g->readers);

		for (size_t i = t->first[r]; i < t->first[r + 1]; i++) {
			uint32_t o = t->blocks[i];

			uint32_t seg;

			if (c->objs[o].primary == SIM_NONE &&
			    (seg = put_block(g, c)) != SIM_NONE)
				sim_cluster_write(c, o, seg);
			sim_master_read(m, o, reader, now);
		}
	}
}

void sim_gen_tick(struct sim_gen *g, struct sim_master *m, uint64_t now,
		  uint64_t end)
{
	if (g->trace)
		tick_trace(g, m, now, end);
	else
		tick_synthetic(g, m, now, end);
}
