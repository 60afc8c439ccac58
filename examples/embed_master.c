/*
 * embed_master: libmcrepl embedded the way a host master uses it.
 *
 * A tiny in-memory "master" with three MEMORY segments on three hosts and
 * one object. Readers hammer the object; the read path records heat in the
 * object's embedded window cell and queues one deduplicated trigger when the
 * key crosses the threshold; the "background worker" pops the trigger,
 * proposes, receives a lease, creates a REPLICA_COPY task; the "source
 * worker" starts and ends the fenced copy; the replica becomes readable.
 * Time is simulated: the library never reads a clock.
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
	uint64_t version, size;
	mcrepl_heat_cell heat; /* lives and dies with the object */
	mcrepl_replica_view replicas[MAX_REPLICAS];
	size_t n_replicas;
};

static mcrepl_segment_view segments[N_SEG] = {
    {{1}, {101}, "host-a", "", 1 << 30, 100 << 20, true, 0},
    {{2}, {102}, "host-b", "", 1 << 30, 300 << 20, true, 0},
    {{3}, {103}, "host-c", "", 1 << 30, 200 << 20, true, 0},
};

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

/* Read path: record heat, queue at most one trigger per window. */
static void read_object(struct object *o, const mcrepl_heat_params *hp,
			mcrepl_triggers *q, mcrepl_stats *st, uint64_t now)
{
	uint32_t count = 0;

	if (mcrepl_heat_cell_record(&o->heat, hp, now, &count) !=
	    MCREPL_HEAT_CROSSED)
		return;
	mcrepl_stats_add(st, MCREPL_STAT_OBSERVED_HOT, 1);
	printf("t=%5" PRIu64 " ms  read #%u of %s crossed the threshold (%u)"
	       " -> trigger queued\n",
	       now, count, o->key, hp->threshold);
	if (mcrepl_triggers_push(q, o->tenant, o->key, "", now) == MCREPL_OK)
		mcrepl_stats_add(st, MCREPL_STAT_TRIGGERS_QUEUED, 1);
}

/* Background worker: propose for one trigger; returns the lease id. */
static mcrepl_status admit_one(struct object *o, mcrepl_leases *lt,
			       const mcrepl_heat_params *hp, mcrepl_stats *st,
			       uint64_t now, mcrepl_lease *lease)
{
	char pid[64];
	mcrepl_proposal p = {
	    MCREPL_ACTION_ADD, pid,	o->tenant, o->key,     NULL, NULL,
	    o->version,	       o->size, {0},	   now + 30000};
	mcrepl_object_view ov = {true, o->version, o->size, readable(o), false};
	mcrepl_propose_input in = {
	    &p, &ov, 0, o->replicas, o->n_replicas, segments, N_SEG, now};
	mcrepl_propose_result res;
	mcrepl_status s;

	snprintf(pid, sizeof(pid), "auto-%s-%" PRIu64 "-%" PRIu64, o->key,
		 o->version, now);
	in.heat_count = mcrepl_heat_cell_count(&o->heat, hp, now);
	s = mcrepl_leases_propose(lt, &in, &res);
	if (s != MCREPL_OK) {
		mcrepl_stats_reject(st, res.reason);
		printf("t=%5" PRIu64 " ms  admission of %s: rejected (%s)\n",
		       now, o->key, mcrepl_reason_name(res.reason));
		return s;
	}
	mcrepl_stats_add(st, MCREPL_STAT_ACCEPTED, 1);
	*lease = res.lease;
	printf("t=%5" PRIu64 " ms  admitted %s: lease %" PRIu64
	       ", copy segment %" PRIu64 " -> segment %" PRIu64
	       " (%s), expires t=%" PRIu64 "\n",
	       now, o->key, lease->id.v, lease->source.v, lease->target.v,
	       segments[lease->target.v - 1].host, lease->expires_at_ms);
	return MCREPL_OK;
}

/* Source worker: fenced start, transfer, fenced end. */
static mcrepl_status copy(struct object *o, mcrepl_leases *lt,
			  const mcrepl_lease *l, mcrepl_stats *st, uint64_t now)
{
	mcrepl_fence f = {l->id,     l->version, l->source_client,
			  l->source, l->target,	 o->version};
	mcrepl_reason why = MCREPL_REASON_NONE;
	mcrepl_status s;

	s = mcrepl_leases_copy_start(lt, &f, now, NULL, &why);
	if (s != MCREPL_OK)
		return fail("copy_start", s, why);
	o->replicas[o->n_replicas] =
	    (mcrepl_replica_view){l->target,
				  l->target_client,
				  segments[l->target.v - 1].host,
				  "",
				  false,
				  true,
				  true,
				  true,
				  0};
	s = mcrepl_leases_copy_end(lt, &f, now + 40, NULL, &why);
	if (s != MCREPL_OK)
		return fail("copy_end", s, why);
	o->replicas[o->n_replicas++].readable = true;
	mcrepl_stats_add(st, MCREPL_STAT_TASKS_COMPLETED, 1);
	mcrepl_stats_add(st, MCREPL_STAT_REPLICAS, 1);
	printf("t=%5" PRIu64 " ms  copy done: %s now has %u readable "
	       "replicas\n",
	       now + 40, o->key, readable(o));
	return MCREPL_OK;
}

/* The non-zero samples of a Prometheus text page. */
static void print_nonzero(char *text)
{
	printf("\nmetrics (non-zero):\n");
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		const char *v = strrchr(line, ' ');

		if (line[0] != '#' && v && strcmp(v, " 0") != 0)
			printf("  %s\n", line);
	}
}

static int run(mcrepl_leases *lt, mcrepl_triggers *q, mcrepl_stats *st,
	       const mcrepl_heat_params *hp)
{
	struct object obj = {
	    "tenant-1",
	    "prefix-block-42",
	    7,
	    4 << 20,
	    MCREPL_HEAT_CELL_INIT,
	    {{{2}, {102}, "host-b", "", true, true, false, true, 0}},
	    1};
	mcrepl_trigger trig;
	mcrepl_lease lease;
	uint64_t task = 1;

	/* 4 reads/s for 30 s against a 0.8 QPS x 10 s threshold. */
	for (uint64_t now = 0; now < 30000; now += 250) {
		read_object(&obj, hp, q, st, now);
		if (mcrepl_triggers_pop(q, &trig, 1) == 0)
			continue;
		mcrepl_trigger_release(&trig);
		if (admit_one(&obj, lt, hp, st, now, &lease) != MCREPL_OK)
			continue;
		mcrepl_leases_bind_task(lt, lease.id, (mcrepl_task_id){task++});
		mcrepl_stats_add(st, MCREPL_STAT_TASKS_CREATED, 1);
		if (copy(&obj, lt, &lease, st, now + 5) != 0)
			return 1;
	}
	return readable(&obj) == 2 ? 0 : 1;
}

int main(void)
{
	mcrepl_config cfg;
	mcrepl_heat_params hp;
	mcrepl_leases *lt = NULL;
	mcrepl_triggers *q = NULL;
	mcrepl_stats *st = NULL;
	char metrics[8192];
	int rc = 1;

	mcrepl_config_init(&cfg);
	cfg.mode = MCREPL_MODE_ENFORCE;
	cfg.action_cooldown_ms = 5000;
	mcrepl_heat_params_init(&hp, &cfg);
	printf("libmcrepl %s: mode=%s window=%" PRIu64 " ms threshold=%u "
	       "reads, max replicas=%u\n",
	       mcrepl_version(), mcrepl_mode_name(cfg.mode), cfg.heat_window_ms,
	       hp.threshold, cfg.max_memory_replicas);
	if (mcrepl_leases_create(&cfg, &lt) != MCREPL_OK ||
	    mcrepl_triggers_create(cfg.admission_queue_limit, &q) !=
		MCREPL_OK ||
	    mcrepl_stats_create(&st) != MCREPL_OK)
		goto out;
	rc = run(lt, q, st, &hp);
	if (mcrepl_stats_render(st, metrics, sizeof(metrics), NULL) ==
	    MCREPL_OK)
		print_nonzero(metrics);
	printf("\n%s\n", rc == 0 ? "OK: hot key admitted, placed on another "
				   "host, copied and readable"
				 : "FAILED");
out:
	mcrepl_stats_destroy(st);
	mcrepl_triggers_destroy(q);
	mcrepl_leases_destroy(lt);
	return rc;
}
