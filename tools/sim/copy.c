/* Dynamic copies on the source worker: fenced start, the transfer over
 * both NIC queues, fenced end; and the master's lease sweep. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "master.h"

#define SLOT_BITS 32

struct sim_copy *sim_copy_new(struct sim_master *m)
{
	uint32_t i = m->copy_free;
	uint64_t gen;

	if (i != SIM_NONE) {
		m->copy_free = m->copies[i].next_free;
	} else {
		if (m->n_copies == m->cap_copies) {
			uint32_t cap = m->cap_copies ? 2 * m->cap_copies : 256;
			struct sim_copy *p =
			    realloc(m->copies, cap * sizeof(*p));

			if (!p)
				return NULL;
			m->copies = p;
			m->cap_copies = cap;
		}
		i = m->n_copies++;
		m->copies[i].task = 0;
	}
	/* The generation makes every task id unique over the run. */
	gen = (m->copies[i].task >> SLOT_BITS) + 1;
	memset(&m->copies[i], 0, sizeof(m->copies[i]));
	m->copies[i].task = gen << SLOT_BITS | ((uint64_t)i + 1);
	m->live_copies++;
	return &m->copies[i];
}

static struct sim_copy *copy_find(struct sim_master *m, uint64_t task)
{
	uint64_t slot = (task & ((1ULL << SLOT_BITS) - 1)) - 1;

	if (slot >= m->n_copies || m->copies[slot].task != task ||
	    m->copies[slot].state == COPY_FREE)
		return NULL;
	return &m->copies[slot];
}

void sim_copy_release(struct sim_master *m, struct sim_copy *x)
{
	uint32_t i = (uint32_t)(x - m->copies);

	x->state = COPY_FREE;
	x->next_free = m->copy_free;
	m->copy_free = i;
	m->live_copies--;
}

void sim_copy_incoming(struct sim_master *m, struct sim_copy *x, bool on)
{
	mcrepl_segment_view *t = &m->c->segs[x->lease.target.v - 1];

	if (x->incoming == on)
		return;
	x->incoming = on;
	if (on)
		t->used += x->lease.size;
	else
		t->used -= x->lease.size;
	m->c->segs_gen++;
}

/* The copy is over for the master (done, failed or expired). */
static void copy_over(struct sim_master *m, struct sim_copy *x, bool ok)
{
	sim_copy_incoming(m, x, false);
	m->c->seg_inflight[x->lease.source.v - 1]--;
	mcrepl_stats_add(m->stats, MCREPL_STAT_INFLIGHT, -1);
	if (!ok) {
		m->copies_failed++;
		mcrepl_stats_add(m->stats, MCREPL_STAT_TASKS_FAILED, 1);
	}
}

static mcrepl_fence fence_of(const struct sim_copy *x)
{
	mcrepl_fence f = {.lease = x->lease.id,
			  .version = x->lease.version,
			  .caller = x->lease.source_client,
			  .source = x->lease.source,
			  .target = x->lease.target,
			  .object_version = 1};

	return f;
}

/* Reserve the transfer on the source's TX and the target's RX queues;
 * returns when it ends. Copies on one NIC run one after another, so
 * concurrent copies share its bandwidth. */
static uint64_t schedule_transfer(struct sim_master *m,
				  const struct sim_copy *x, uint64_t now)
{
	struct sim_cluster *c = m->c;
	struct sim_node *src = &c->nodes[sim_node_of(c, x->lease.source.v - 1)];
	struct sim_node *dst = &c->nodes[sim_node_of(c, x->lease.target.v - 1)];
	double start = (double)now, end;

	if (src->tx_free_ms > start)
		start = src->tx_free_ms;
	if (dst->rx_free_ms > start)
		start = dst->rx_free_ms;
	end = start + m->copy_ms;
	src->tx_free_ms = dst->rx_free_ms = end;
	return (uint64_t)ceil(end + m->o->latency_ms);
}

static void on_fetch(struct sim_master *m, struct sim_copy *x, uint64_t now)
{
	mcrepl_fence f = fence_of(x);
	mcrepl_reason why;

	if (x->state == COPY_DEAD) { /* the master failed the task */
		sim_copy_release(m, x);
		return;
	}
	if (mcrepl_leases_copy_start(m->leases, &f, now, NULL, &why) !=
	    MCREPL_OK) {
		copy_over(m, x, false);
		sim_copy_release(m, x);
		return;
	}
	sim_copy_incoming(m, x, false); /* the real reservation follows */
	x->dyn = sim_dyn_add(m->c, x->obj, (uint32_t)x->lease.target.v - 1);
	if (x->dyn == SIM_NONE ||
	    sim_events_push(&m->ev, schedule_transfer(m, x, now), SIM_EV_END,
			    x->task)) {
		/* Quota reservation failed: clear the pending state. */
		if (x->dyn != SIM_NONE)
			sim_dyn_remove(m->c, x->dyn);
		mcrepl_leases_copy_start_failed(m->leases, x->lease.id, now);
		copy_over(m, x, false);
		sim_copy_release(m, x);
		return;
	}
	x->state = COPY_RUNNING;
}

static void count_domains(struct sim_master *m, const struct sim_copy *x)
{
	const struct sim_cluster *c = m->c;
	uint32_t a = sim_node_of(c, x->lease.source.v - 1);
	uint32_t b = sim_node_of(c, x->lease.target.v - 1);
	bool same = c->nodes[a].domain == c->nodes[b].domain;

	mcrepl_stats_add(m->stats,
			 same ? MCREPL_STAT_SAME_DOMAIN_COPIES
			      : MCREPL_STAT_CROSS_DOMAIN_COPIES,
			 1);
	mcrepl_stats_add(m->stats,
			 same ? MCREPL_STAT_SAME_DOMAIN_BYTES
			      : MCREPL_STAT_CROSS_DOMAIN_BYTES,
			 (int64_t)x->lease.size);
}

static void on_end(struct sim_master *m, struct sim_copy *x, uint64_t now)
{
	mcrepl_fence f = fence_of(x);
	mcrepl_reason why;
	mcrepl_status st;
	char key[48];

	/* A swept lease: the worker's CopyEnd is refused (UNKNOWN_LEASE). */
	st = mcrepl_leases_copy_end(m->leases, &f, now, NULL, &why);
	if (x->state == COPY_DEAD) {
		sim_copy_release(m, x);
		return;
	}
	if (st == MCREPL_OK) {
		sim_dyn_ready(m->c, x->dyn);
		sim_master_key(m, x->obj, key, sizeof(key));
		mcrepl_engine_replica_added(m->eng.e, NULL, key,
					    x->lease.target);
		m->copies_done++;
		m->copies_dyn_src +=
		    x->lease.source.v - 1 != m->c->objs[x->obj].primary;
		m->copy_bytes += x->lease.size;
		mcrepl_stats_add(m->stats, MCREPL_STAT_TASKS_COMPLETED, 1);
		mcrepl_stats_add(m->stats, MCREPL_STAT_REPLICAS, 1);
		count_domains(m, x);
		if (now >= m->late_from_ms) {
			m->late_copies++;
			if (m->heat_at_late &&
			    m->heat_at_late[x->obj] < m->thr_at_late)
				m->late_new_copies++;
		}
		if (m->eng.on && !m->cfg->domain_aware) /* fan on at once */
			sim_master_retrigger(m, x->obj, now);
	} else {
		sim_dyn_remove(m->c, x->dyn);
	}
	copy_over(m, x, st == MCREPL_OK);
	sim_copy_release(m, x);
}

void sim_master_events(struct sim_master *m, uint64_t now)
{
	struct sim_event e;

	while (sim_events_pop_due(&m->ev, now, &e)) {
		struct sim_copy *x = copy_find(m, e.task);

		if (!x)
			continue;
		if (e.kind == SIM_EV_FETCH)
			on_fetch(m, x, now);
		else
			on_end(m, x, now);
	}
}

static void expire(struct sim_master *m, const mcrepl_lease *l)
{
	struct sim_copy *x = copy_find(m, l->task.v);

	if (!x || x->state == COPY_DEAD)
		return;
	/* Unstarted: the task is failed. Started: free the PROCESSING
	 * target. Either way the pending event finds the copy dead. */
	if (x->state == COPY_RUNNING)
		sim_dyn_remove(m->c, x->dyn);
	copy_over(m, x, false);
	x->state = COPY_DEAD;
}

void sim_master_sweep(struct sim_master *m, uint64_t now)
{
	size_t n;

	do {
		n = mcrepl_leases_sweep(m->leases, now, m->swept, 64);
		for (size_t i = 0; i < n; i++)
			expire(m, &m->swept[i]);
	} while (n == 64);
}
