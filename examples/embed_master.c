/*
 * embed_master: libmcrepl embedded the way a host master uses it, on the
 * policy engine (mcrepl/engine.h).
 *
 * A tiny in-memory "master" with three MEMORY segments on three hosts and
 * one object. Readers hammer the object: the read path records heat in the
 * object's embedded window cell, asks the engine which replica a reader
 * should take and tells it where the read went; a crossing queues one
 * deduplicated trigger; the "background worker" pops it and proposes
 * through the engine (admission, balance gate, placement with projected
 * loads), receives a lease and creates a REPLICA_COPY task; the "source
 * worker" starts and ends the fenced copy; the replica becomes readable and
 * takes its share of the reads. When the readers stop, the engine's
 * once-a-window retirement pass names the cold dynamic replica and the
 * master drops it. Time is simulated: the library never reads a clock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcrepl/mcrepl.h>

#define N_SEG 3
#define MAX_REPLICAS 4

struct object {
	const char *tenant, *key;
	uint64_t version, size, reads;
	mcrepl_heat_cell heat; /* lives and dies with the object */
	mcrepl_replica_view replicas[MAX_REPLICAS];
	size_t n_replicas;
};

static const char *const hosts[N_SEG] = {"host-a", "host-b", "host-c"};
static uint64_t served[N_SEG + 1]; /* reads per segment id */

static int fail(const char *what, mcrepl_status st, mcrepl_reason why)
{
	fprintf(stderr, "embed_master: %s: %s (%s)\n", what,
		mcrepl_strerror(st), mcrepl_reason_name(why));
	return 1;
}

static uint32_t readable(const struct object *o)
{
	uint32_t n = 0;

	for (size_t i = 0; i < o->n_replicas; i++)
		n += o->replicas[i].readable;
	return n;
}

/* Segments join: the engine keeps their use and their loads. */
static mcrepl_status mount(mcrepl_engine *e)
{
	for (uint64_t i = 0; i < N_SEG; i++) {
		mcrepl_engine_segment s = {
		    .id = {i + 1},
		    .client = {101 + i},
		    .host = hosts[i],
		    .capacity = 1 << 30,
		    .used = (100 + 100 * i) << 20,
		    .allocatable = true,
		    .can_copy = true,
		};
		mcrepl_status st = mcrepl_engine_segment_set(e, &s);

		if (st != MCREPL_OK)
			return st;
	}
	return MCREPL_OK;
}

/* Read path: record heat (a crossing queues one trigger), route the read
 * to the replica the engine orders first, and count it there. */
static void read_object(struct object *o, mcrepl_engine *e,
			const mcrepl_heat_params *hp, mcrepl_triggers *q,
			mcrepl_stats *st, uint64_t now)
{
	uint32_t count = 0;
	size_t pick = 0;

	if (mcrepl_engine_pick(e, o->tenant, o->key, o->replicas, o->n_replicas,
			       o->reads++, &pick) == MCREPL_OK) {
		mcrepl_engine_read(e, o->replicas[pick].segment);
		served[o->replicas[pick].segment.v]++;
	}
	if (mcrepl_heat_cell_record(&o->heat, hp, now, &count) !=
	    MCREPL_HEAT_CROSSED)
		return;
	mcrepl_stats_add(st, MCREPL_STAT_OBSERVED_HOT, 1);
	if (count == hp->threshold) /* its first crossing */
		printf("t=%5" PRIu64 " ms  read #%u of %s crossed the "
		       "threshold -> trigger queued\n",
		       now, count, o->key);
	if (mcrepl_triggers_push(q, o->tenant, o->key, "", now) == MCREPL_OK)
		mcrepl_stats_add(st, MCREPL_STAT_TRIGGERS_QUEUED, 1);
}

/* Background worker: propose for one trigger through the engine. */
static mcrepl_status admit_one(struct object *o, mcrepl_engine *e,
			       const mcrepl_heat_params *hp, mcrepl_stats *st,
			       uint64_t now, mcrepl_lease *lease)
{
	static mcrepl_reason last = MCREPL_REASON_NONE;
	char pid[64];
	mcrepl_proposal p = {
	    .action = MCREPL_ACTION_ADD,
	    .proposal_id = pid,
	    .tenant = o->tenant,
	    .key = o->key,
	    .observed_version = o->version,
	    .expected_size = o->size,
	    .expires_at_ms = now + 30000,
	};
	mcrepl_object_view ov = {
	    .exists = true,
	    .version = o->version,
	    .size = o->size,
	    .readable_memory_replicas = readable(o),
	};
	mcrepl_propose_input in = {
	    .proposal = &p,
	    .object = &ov,
	    .heat_count = mcrepl_heat_cell_count(&o->heat, hp, now),
	    .heat_recent = mcrepl_heat_cell_recent(&o->heat, hp, now),
	    .replicas = o->replicas,
	    .n_replicas = o->n_replicas,
	    .now_ms = now,
	};
	mcrepl_propose_result res;
	mcrepl_status s;

	snprintf(pid, sizeof(pid), "auto-%s-%" PRIu64 "-%" PRIu64, o->key,
		 o->version, now);
	s = mcrepl_engine_propose(e, &in, &res);
	if (s != MCREPL_OK) {
		mcrepl_stats_reject(st, res.reason);
		if (res.reason != last) /* the key stays hot: once per reason */
			printf("t=%5" PRIu64 " ms  admission of %s: rejected "
			       "(%s), and again while it stays hot\n",
			       now, o->key, mcrepl_reason_name(res.reason));
		last = res.reason;
		return s;
	}
	*lease = res.lease;
	printf("t=%5" PRIu64 " ms  admitted %s: lease %" PRIu64
	       ", copy segment %" PRIu64 " -> segment %" PRIu64
	       " (%s), expires t=%" PRIu64 "\n",
	       now, o->key, lease->id.v, lease->source.v, lease->target.v,
	       hosts[lease->target.v - 1], lease->expires_at_ms);
	return MCREPL_OK;
}

/* Source worker: fenced start, transfer, fenced end; the master marks the
 * replica readable and tells the engine. */
static mcrepl_status copy(struct object *o, mcrepl_engine *e,
			  const mcrepl_lease *l, mcrepl_stats *st, uint64_t now)
{
	mcrepl_leases *lt = mcrepl_engine_leases(e);
	mcrepl_fence f = {
	    .lease = l->id,
	    .version = l->version,
	    .caller = l->source_client,
	    .source = l->source,
	    .target = l->target,
	    .object_version = o->version,
	};
	mcrepl_reason why = MCREPL_REASON_NONE;
	mcrepl_status s;

	s = mcrepl_leases_copy_start(lt, &f, now, NULL, &why);
	if (s != MCREPL_OK)
		return fail("copy_start", s, why);
	o->replicas[o->n_replicas] = (mcrepl_replica_view){
	    .segment = l->target,
	    .client = l->target_client,
	    .host = hosts[l->target.v - 1],
	    .memory = true,
	    .dynamic = true,
	    .can_copy = true,
	};
	s = mcrepl_leases_copy_end(lt, &f, now + 40, NULL, &why);
	if (s != MCREPL_OK)
		return fail("copy_end", s, why);
	o->replicas[o->n_replicas++].readable = true;
	mcrepl_engine_replica_added(e, o->tenant, o->key,
				    l->target); /* counted */
	mcrepl_stats_add(st, MCREPL_STAT_REPLICAS, 1);
	printf("t=%5" PRIu64 " ms  copy done: %s now has %u readable "
	       "replicas\n",
	       now + 40, o->key, readable(o));
	return MCREPL_OK;
}

struct probe_ctx {
	struct object *o;
	const mcrepl_heat_params *hp;
	uint64_t now;
};

/* What the engine asks at retirement: the key's heat and replicas. */
static void probe(void *ctx, const char *tenant, const char *key,
		  const char *domain, mcrepl_retire_probe *out)
{
	const struct probe_ctx *c = ctx;

	(void)tenant;
	(void)domain;
	if (strcmp(key, c->o->key) != 0) {
		out->gone = true;
		return;
	}
	out->count = mcrepl_heat_cell_count(&c->o->heat, c->hp, c->now);
	out->readable = readable(c->o);
}

/* The tick: the threshold, and once a window the retirement pass. */
static void tick(struct object *o, mcrepl_engine *e, mcrepl_heat_params *hp,
		 mcrepl_stats *st, uint64_t now)
{
	struct probe_ctx c = {.o = o, .hp = hp, .now = now};
	mcrepl_engine_tick_result t;
	mcrepl_retirement out[4];
	size_t n;

	mcrepl_engine_tick(e, now, &t);
	mcrepl_engine_heat_params(e, hp); /* the engine owns the threshold */
	if (!t.retire_due)
		return;
	while (mcrepl_engine_retire(e, now, probe, &c, out, 4, &n))
		for (size_t i = 0; i < n; i++) {
			size_t k = 0;

			while (o->replicas[k].segment.v != out[i].segment.v)
				k++;
			printf("t=%5" PRIu64 " ms  %s went cold: its replica "
			       "on %s is retired\n",
			       now, o->key, hosts[out[i].segment.v - 1]);
			mcrepl_engine_replica_dropped(
			    e, o->tenant, o->key, out[i].segment, true, now);
			o->replicas[k] = o->replicas[--o->n_replicas];
			mcrepl_stats_add(st, MCREPL_STAT_REPLICAS, -1);
		}
}

static void print_nonzero(char *text)
{
	printf("\nmetrics (non-zero):\n");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		const char *v = strrchr(line, ' ');

		if (line[0] != '#' && v && strcmp(v, " 0") != 0)
			printf("  %s\n", line);
	}
}

static int run(mcrepl_engine *e, mcrepl_triggers *q, mcrepl_stats *st,
	       mcrepl_heat_params *hp)
{
	struct object obj = {
	    .tenant = "tenant-1",
	    .key = "prefix-block-42",
	    .version = 7,
	    .size = 4 << 20,
	    .heat = MCREPL_HEAT_CELL_INIT,
	    .replicas = {{
		.segment = {2},
		.client = {102},
		.host = "host-b",
		.readable = true,
		.memory = true,
		.can_copy = true,
	    }},
	    .n_replicas = 1,
	};
	mcrepl_trigger trig;
	mcrepl_lease lease;
	uint64_t task = 1, now;
	bool copied = false;

	/* 8 reads/s for 30 s, then 40 s of silence. */
	for (now = 0; now < 70000; now += 125) {
		tick(&obj, e, hp, st, now);
		if (now < 30000)
			read_object(&obj, e, hp, q, st, now);
		if (mcrepl_triggers_pop(q, &trig, 1) == 0)
			continue;
		mcrepl_trigger_release(&trig);
		if (admit_one(&obj, e, hp, st, now, &lease) != MCREPL_OK)
			continue;
		/* accepted, task created: the engine counts both */
		mcrepl_leases_bind_task(mcrepl_engine_leases(e), lease.id,
					(mcrepl_task_id){.v = task++});
		if (copy(&obj, e, &lease, st, now + 5) != 0)
			return 1;
		copied = true;
	}
	printf("reads served: host-a %" PRIu64 ", host-b %" PRIu64
	       ", host-c %" PRIu64 "\n",
	       served[1], served[2], served[3]);
	/* copied, the copy took reads, and it was retired once cold */
	return copied && served[1] + served[3] > 0 && readable(&obj) == 1 ? 0
									  : 1;
}

int main(void)
{
	mcrepl_config cfg;
	mcrepl_heat_params hp;
	mcrepl_engine *e = NULL;
	mcrepl_triggers *q = NULL;
	mcrepl_stats *st = NULL;
	mcrepl_engine_opts eo = {.struct_size = sizeof(eo)};
	char metrics[8192];
	int rc = 1;

	mcrepl_config_init(&cfg);
	cfg.mode = MCREPL_MODE_ENFORCE;
	if (mcrepl_stats_create(&st) != MCREPL_OK)
		goto out;
	eo.stats = st; /* the engine counts leases and completed copies */
	if (mcrepl_engine_create(&cfg, &eo, &e) != MCREPL_OK ||
	    mount(e) != MCREPL_OK ||
	    mcrepl_triggers_create(cfg.admission_queue_limit, &q) != MCREPL_OK)
		goto out;
	mcrepl_engine_heat_params(e, &hp);
	printf("libmcrepl %s: mode=%s policy=%s window=%" PRIu64
	       " ms threshold=%u reads\n",
	       mcrepl_version(), mcrepl_mode_name(cfg.mode),
	       mcrepl_policy_name(cfg.policy), cfg.heat_window_ms,
	       hp.threshold);
	rc = run(e, q, st, &hp);
	if (mcrepl_stats_render(st, metrics, sizeof(metrics), NULL) ==
	    MCREPL_OK)
		print_nonzero(metrics);
	printf("\n%s\n", rc == 0 ? "OK: hot key admitted, placed on another "
				   "host, copied, read, and retired once cold"
				 : "FAILED");
out:
	mcrepl_triggers_destroy(q);
	mcrepl_engine_destroy(e);
	mcrepl_stats_destroy(st); /* after the engine that counts into it */
	return rc;
}
