/* The run loop: ticks, intervals, the final summary (see sim.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "master.h"
#include "report.h"
#include "sim.h"
#include "workload.h"

#define RANKING_TOP 64 /* ranks in the ranking digest */

struct run {
	const struct sim_opts *o;
	struct sim_cluster c;
	struct sim_master m;
	struct sim_gen g;
	struct sim_result *r;
	FILE *out;
	uint64_t *loads, *scratch;
	uint64_t *flash_loads; /* flash: node loads over its window's rows */
	uint64_t interval_ms;
	uint64_t last_copy_bytes, last_reads, last_cross, last_floor;
	size_t cap_iv, half_iv;
	uint64_t last_half_reads;
	bool joined;
};

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Default node memory: twice the node's share of the primaries. */
static uint64_t node_capacity(const struct sim_opts *o, uint64_t n_objs)
{
	uint64_t per_node;

	if (o->node_memory)
		return o->node_memory;
	per_node = (n_objs + o->nodes - 1) / o->nodes * o->object_size;
	return 2 *
	       (per_node > 2 * o->object_size ? per_node : 2 * o->object_size);
}

static int grow(double **v, size_t cap)
{
	double *p = realloc(*v, cap * sizeof(*p));

	if (!p)
		return -1;
	*v = p;
	return 0;
}

static int push_iv(struct run *u, const struct sim_row *row)
{
	struct sim_result *r = u->r;

	if (r->n_iv == u->cap_iv) {
		size_t cap = u->cap_iv ? 2 * u->cap_iv : 256;

		if (grow(&r->iv_max, cap) || grow(&r->iv_p99, cap) ||
		    grow(&r->iv_xdom, cap) || grow(&r->iv_floor, cap))
			return -1;
		uint64_t *d = realloc(r->iv_dyn, cap * sizeof(*d));

		if (!d)
			return -1;
		r->iv_dyn = d;
		u->cap_iv = cap;
	}
	if (r->n_iv >= u->half_iv)
		u->last_half_reads += row->reads;
	r->iv_max[r->n_iv] = row->max_mean;
	r->iv_p99[r->n_iv] = row->p99_mean;
	r->iv_floor[r->n_iv] = row->floor;
	r->iv_dyn[r->n_iv] = row->dyn_replicas;
	r->iv_xdom[r->n_iv++] = row->xdom;
	return 0;
}

/* Flash: add the loads of the row ending at end_ms when it overlaps the
 * flash window [flash_at, flash_at + flash_seconds). */
static void add_flash(struct run *u, uint64_t end_ms)
{
	const struct sim_opts *o = u->o;
	double from = (double)(end_ms - u->interval_ms);
	double at = o->flash_at * 1000.0;

	if (!u->flash_loads || (double)end_ms <= at ||
	    from >= at + o->flash_seconds * 1000.0)
		return;
	for (uint32_t i = 0; i < u->c.n_nodes; i++)
		u->flash_loads[i] += u->loads[i];
}

/* Close an interval: reduce node loads, report, hand loads to placement. */
static int end_interval(struct run *u, uint64_t end_ms)
{
	struct sim_cluster *c = &u->c;
	struct sim_row row = {0};

	for (uint32_t i = 0; i < c->n_nodes; i++)
		u->loads[i] = c->nodes[i].load;
	sim_report_loads(u->loads, u->scratch, c->n_nodes, &row.max_mean,
			 &row.p99_mean);
	row.t_s = (double)end_ms / 1000.0;
	row.reads = u->m.reads - u->last_reads;
	row.dyn_replicas = c->dyn_readable;
	row.replicated_keys = c->replicated_keys;
	row.extra_mem = c->primary_bytes
			    ? (double)c->dyn_bytes / (double)c->primary_bytes
			    : 0;
	row.copy_bytes = u->m.copy_bytes - u->last_copy_bytes;
	row.inflight = u->m.live_copies;
	row.xdom = row.reads ? (double)(u->m.cross_reads - u->last_cross) /
				   (double)row.reads
			     : NAN;
	row.floor = row.reads ? (double)(u->m.floor_reads - u->last_floor) /
				    (double)row.reads
			      : NAN;
	u->last_cross = u->m.cross_reads;
	u->last_floor = u->m.floor_reads;
	u->last_reads = u->m.reads;
	u->last_copy_bytes = u->m.copy_bytes;
	if (!u->o->quiet)
		sim_report_row(u->out, &row);
	add_flash(u, end_ms);
	for (uint32_t i = 0; i < c->n_nodes; i++)
		c->nodes[i].load = 0;
	if (sim_relief_close(&u->m.relief, c, row.reads))
		return -1;
	return push_iv(u, &row);
}

/* The median of the largest of n Poisson(lam) counts, over lam: the
 * max/mean an even spread of the same reads shows from sampling alone. */
static double noise_floor(double lam, uint32_t n)
{
	double p = pow(0.5, 1.0 / n), cdf = 0, logpmf;

	if (!(lam > 0) || n < 2)
		return 1.0;
	if (lam > 1e5) { /* normal: z with Phi(z) = p, by bisection */
		double lo = 0, hi = 10;

		for (int i = 0; i < 60; i++) {
			double z = (lo + hi) / 2;

			if (0.5 * erfc(-z / sqrt(2.0)) < p)
				lo = z;
			else
				hi = z;
		}
		return 1.0 + lo / sqrt(lam);
	}
	logpmf = -lam;
	for (uint64_t x = 0;; x++) {
		if (x)
			logpmf += log(lam) - log((double)x);
		cdf += exp(logpmf);
		if (cdf >= p || x > 20 * lam + 100)
			return (double)x / lam;
	}
}

static uint64_t run_ms(const struct sim_opts *o, const struct trace *t,
		       uint64_t interval_ms)
{
	double ms = o->duration * 1000.0;
	uint64_t n;

	if (o->duration <= 0)
		ms = t ? sim_gen_trace_ms(o, t) + 1 : 30000.0;
	n = (uint64_t)ceil(ms / (double)interval_ms);
	return (n ? n : 1) * interval_ms;
}

/*
 * The master's load report for read-load-aware placement: a segment's
 * read_load = the reads its node served over the last load period, scaled
 * to one interval (the unit of the projection in admission.c).
 */
static void report_loads(struct run *u, uint64_t period_ms,
			 uint64_t interval_ms)
{
	struct sim_cluster *c = &u->c;

	for (uint32_t s = 0; s < c->n_segs && !u->m.eng.on; s++)
		c->segs[s].read_load = c->nodes[sim_node_of(c, s)].recent *
				       interval_ms / period_ms;
	for (uint32_t i = 0; i < c->n_nodes; i++)
		c->nodes[i].recent = 0;
}

static int loop(struct run *u, uint64_t total_ms, uint64_t interval_ms)
{
	uint64_t tick = u->o->tick_ms;
	uint64_t period =
	    u->o->load_period_ms ? u->o->load_period_ms : interval_ms;

	period += (tick - period % tick) % tick;

	for (uint64_t now = 0; now < total_ms; now += tick) {
		uint64_t end = now + tick;

		if (!u->joined && u->m.join_dom != SIM_NONE &&
		    now >= u->m.join_from_ms) {
			/* the late domain mounts its segments (warmup) */
			u->joined = true;
			sim_cluster_join(&u->c, u->m.join_dom);
			sim_engine_sync(&u->m);
			if (u->o->warmup)
				sim_master_warmup(&u->m, u->m.join_dom, now);
		}
		sim_gen_tick(&u->g, &u->m, now, end);
		sim_master_events(&u->m, now);
		if (now >= u->m.late_from_ms && !u->m.heat_at_late)
			sim_master_snapshot_late(&u->m, now);
		sim_engine_tick(&u->m, now);
		sim_master_admit(&u->m, now);
		sim_master_sweep(&u->m, now);
		sim_master_evict(&u->m, now);
		if (end % period == 0)
			report_loads(u, period, interval_ms);
		if (end % interval_ms == 0 && end_interval(u, end))
			return -1;
	}
	return 0;
}

/* The room-constrained floor, with bounded node memory only. */
static void room_floor(struct run *u, const struct trace *t,
		       struct sim_result *r)
{
	r->room_floor.max_mean = NAN;
	if (u->o->node_memory &&
	    sim_ideal_room(&u->c, u->o, t ? t->counts : NULL, &r->room_floor))
		r->room_floor.max_mean = NAN;
}

static void finish(struct run *u, const struct trace *t, double t0)
{
	struct sim_result *r = u->r;
	const mcrepl_stats *st = u->m.stats;
	mcrepl_leases_stats ls;

	r->reads = u->m.reads;
	for (uint32_t i = 0; i < u->c.n_nodes; i++)
		r->served += u->c.nodes[i].served;
	r->steady_max_mean = steady_median(r->iv_max, r->n_iv);
	r->shift_phases = popgen_phases(&u->g.pop);
	r->steady_p99_mean = steady_median(r->iv_p99, r->n_iv);
	r->replicated_keys = u->c.replicated_keys;
	r->dyn_replicas = u->c.dyn_readable;
	r->dyn_share = u->c.primary_bytes
			   ? (double)u->c.dyn_bytes / (double)u->c.primary_bytes
			   : 0;
	r->copy_bytes = u->m.copy_bytes;
	r->copies = u->m.copies_done;
	r->copies_failed = u->m.copies_failed;
	r->late_copies = u->m.late_copies;
	r->late_new_copies = u->m.late_new_copies;

	r->retired = u->m.retired;
	r->copies_dyn_src = u->m.copies_dyn_src;
	r->room_evicted = u->m.room_evicted;
	r->room_dropped = u->m.room_dropped;
	r->room_headroom = u->m.room_headroom;
	r->evicted_reads = u->m.refetched;
	r->flash_reads = u->g.flash_reads;
	r->ranking_digest =
	    t ? 0 : popgen_digest(&u->g.pop, u->c.key_id, RANKING_TOP);
	r->flash_max_mean = NAN;
	if (u->flash_loads) {
		double p99;

		sim_report_loads(u->flash_loads, u->scratch, u->c.n_nodes,
				 &r->flash_max_mean, &p99);
	}
	sim_relief_stats(&u->m.relief, &r->relief);
	r->evicted = u->m.evicted;
	r->cross_read_bytes = u->m.cross_read_bytes;
	r->cross_share =
	    r->reads ? (double)u->m.cross_reads / (double)r->reads : 0;
	r->steady_cross_share = steady_median(r->iv_xdom, r->n_iv);
	r->floor_share =
	    r->reads ? (double)u->m.floor_reads / (double)r->reads : 0;
	r->steady_floor_share = steady_median(r->iv_floor, r->n_iv);
	r->join_reads = u->m.join_reads;
	r->join_remote = u->m.join_remote;
	r->warmup_chosen = u->m.warmup_chosen;
	r->warmup_accepted = u->m.warmup_accepted;
	mcrepl_leases_get_stats(u->m.leases, &ls);
	r->leases_expired = ls.expired_total;
	r->observed_hot =
	    (uint64_t)mcrepl_stats_get(st, MCREPL_STAT_OBSERVED_HOT);
	r->accepted = (uint64_t)mcrepl_stats_get(st, MCREPL_STAT_ACCEPTED);
	r->would_propose =
	    (uint64_t)mcrepl_stats_get(st, MCREPL_STAT_WOULD_PROPOSE);
	r->triggers_dropped =
	    (uint64_t)mcrepl_stats_get(st, MCREPL_STAT_TRIGGERS_DROPPED);
	r->malformed = t ? t->malformed : 0;
	if (sim_ideal_compute(&u->c, u->o, t ? t->counts : NULL,
			      r->replicated_keys, &r->ideal))
		r->ideal.max_mean = NAN;
	r->noise_floor = r->n_iv && u->c.n_active
			     ? noise_floor((double)u->last_half_reads /
					       (double)(r->n_iv - r->n_iv / 2) /
					       (double)u->c.n_active,
					   u->c.n_active)
			     : 1.0;
	/* the oracle has no sampling noise: compare it with this run's
	 * max/mean net of the noise an even spread would show */
	if (sim_ideal_frontier(
		&u->c, u->o, t ? t->counts : NULL, r->dyn_replicas,
		fmax(1.0, r->steady_max_mean / r->noise_floor), &r->oracle))
		r->oracle.at_mem = NAN;
	room_floor(u, t, r);
	r->wall_seconds = wall_now() - t0;
}

static int check_opts(const struct sim_opts *o)
{
	const char *field = NULL;

	if (!o->nodes || o->nodes > 100000 || !o->hosts_per_node ||
	    (uint64_t)o->nodes * o->hosts_per_node > 1000000 || !o->domains ||
	    !o->tick_ms || !o->admission_batch || !o->object_size ||
	    (!o->keys && o->workload != SIM_TRACE) || o->keys > 100000000 ||
	    !(o->rate >= 0) || !(o->speedup > 0) || !(o->nic_gbps > 0) ||
	    !(o->copy_share > 0 && o->copy_share <= 1) ||
	    !(o->interval * 1000 >= o->tick_ms) || !(o->duration >= 0) ||
	    !(o->join_at >= 0) || !(o->join_window > 0) ||
	    !(o->shift_period * 1000 >= o->tick_ms) ||
	    !(o->shift_fraction >= 0 && o->shift_fraction <= 1) ||
	    !(o->flash_at >= 0) || !(o->flash_seconds >= 0) ||
	    !(o->flash_share >= 0 && o->flash_share <= 1) ||
	    (o->workload == SIM_FLASH && o->keys < 2)) {
		fprintf(stderr, "mcrepl-sim: an option is out of range "
				"(see --help)\n");
		return -1;
	}
	if (o->join_at > 0 && o->domains < 2) {
		fprintf(stderr, "mcrepl-sim: --join_at needs --domains >= 2 "
				"(the last domain joins)\n");
		return -1;
	}
	if (o->warmup && !o->cfg.domain_aware) {
		fprintf(stderr, "mcrepl-sim: --warmup needs "
				"--dynamic_replication_domain_aware 1\n");
		return -1;
	}
	if (mcrepl_config_validate(&o->cfg, &field) != MCREPL_OK) {
		fprintf(stderr, "mcrepl-sim: invalid library config: %s\n",
			field ? field : "?");
		return -1;
	}
	return 0;
}

static const char *workload_name(enum sim_workload w)
{
	return w == SIM_ZIPF	   ? "zipf"
	       : w == SIM_UNIFORM  ? "uniform"
	       : w == SIM_SHIFTING ? "shifting"
	       : w == SIM_FLASH	   ? "flash"
	       : w == SIM_REHOT	   ? "rehot"
				   : "trace";
}

int sim_run(const struct sim_opts *o, const struct trace *trace, FILE *out,
	    struct sim_result *r)
{
	uint64_t interval_ms = (uint64_t)llround(o->interval * 1000.0);
	uint64_t n_objs = trace ? trace->n_blocks : o->keys, total_ms;
	struct run u = {.o = o};
	double t0 = wall_now();
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (check_opts(o))
		return -1;
	interval_ms -= interval_ms % o->tick_ms;
	u.interval_ms = interval_ms;
	total_ms = run_ms(o, trace, interval_ms);
	u.half_iv = (size_t)(total_ms / interval_ms / 2);
	sim_opts_label(o, r->label, sizeof(r->label));
	r->workload = workload_name(o->workload);
	r->read_order =
	    o->read_load_order || (o->cfg.policy == MCREPL_POLICY_AUTO &&
				   o->cfg.mode != MCREPL_MODE_OFF)
		? "load"
		: "salted";
	r->nodes = o->nodes;
	r->keys = n_objs;
	r->sim_seconds = (double)total_ms / 1000.0;
	u.r = r;
	u.out = out;
	u.loads = calloc(o->nodes, sizeof(*u.loads));
	u.scratch = calloc(o->nodes, sizeof(*u.scratch));
	if (o->workload == SIM_FLASH)
		u.flash_loads = calloc(o->nodes, sizeof(*u.flash_loads));
	if (!u.loads || !u.scratch ||
	    (o->workload == SIM_FLASH && !u.flash_loads) ||
	    sim_cluster_init(&u.c, o->nodes, o->hosts_per_node, o->domains,
			     n_objs, o->object_size,
			     node_capacity(o, n_objs)) ||
	    sim_master_init(&u.m, o, &u.c, trace)) {
		fprintf(stderr, "mcrepl-sim: out of memory\n");
		goto out;
	}
	if (o->join_at > 0) {
		u.m.join_dom = o->domains - 1;
		u.m.join_from_ms = (uint64_t)llround(o->join_at * 1000.0);
		u.m.join_until_ms = u.m.join_from_ms +
				    (uint64_t)llround(o->join_window * 1000.0);
		sim_cluster_hold(&u.c, u.m.join_dom);
		sim_engine_sync(&u.m);
	}
	u.m.late_from_ms = total_ms - total_ms / 3;
	if (sim_gen_init(&u.g, o, trace, &u.c, total_ms)) {
		fprintf(stderr, "mcrepl-sim: out of memory\n");
		goto out;
	}
	if (!o->quiet)
		sim_report_header(out, r->label);
	if (loop(&u, total_ms, interval_ms))
		goto out;
	finish(&u, trace, t0);
	if (phases_compute(&r->phases, r->shift_phases, r->iv_max, r->iv_dyn,
			   r->n_iv, (double)interval_ms / 1000.0,
			   o->shift_period, r->noise_floor)) {
		fprintf(stderr, "mcrepl-sim: out of memory\n");
		goto out;
	}
	rc = 0;
out:
	sim_gen_free(&u.g);
	sim_master_free(&u.m);
	sim_cluster_free(&u.c);
	free(u.loads);
	free(u.scratch);
	free(u.flash_loads);
	return rc;
}

void sim_result_free(struct sim_result *r)
{
	free(r->iv_max);
	free(r->iv_p99);
	free(r->iv_xdom);
	free(r->iv_floor);
	free(r->iv_dyn);
	phases_free(&r->phases);
	r->iv_max = r->iv_p99 = r->iv_xdom = r->iv_floor = NULL;
	r->iv_dyn = NULL;
}
