/* The background admission worker: triggers queued by the read path
 * (dyn_on_read) become internal proposals judged from the master's own
 * view, in batches, on a thread of their own so admission never delays
 * reads. */
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <time.h>

#include "store_dyn.h"

struct dyn_admitter {
	struct store *store;
	size_t batch;
	uint64_t (*now_ms)(void);
	pthread_t thread;
	atomic_bool stop;
};

/* One trigger: an internal proposal judged from the master's own view. */
static void admit_trigger(struct store *s, const mcrepl_trigger *t,
			  uint64_t now_ms)
{
	struct object *o = store_find(s, t->tenant, t->key);
	bool da = s->opts.cfg.domain_aware;
	mcrepl_propose_result res;
	mcrepl_proposal p;
	char id[48];

	if (!o) {
		mcrepl_stats_reject(s->stats, MCREPL_REASON_UNKNOWN_OBJECT);
		return;
	}
	snprintf(id, sizeof(id), "auto-%llu",
		 (unsigned long long)++s->next_proposal);
	p = (mcrepl_proposal){
	    .action = MCREPL_ACTION_ADD,
	    .proposal_id = id,
	    .tenant = o->tenant,
	    .key = o->key,
	    .requester_domain = da ? t->domain : NULL,
	    .target_domain = da ? t->domain : NULL,
	    .observed_version = o->version,
	    .expected_size = o->size,
	    .expires_at_ms = now_ms + s->opts.cfg.lease_ttl_ms,
	};
	dyn_propose(s, &p, now_ms, &res);
}

size_t dyn_admit_batch(struct store *s, size_t max, uint64_t now_ms)
{
	mcrepl_trigger batch[64];
	size_t n, done = 0;

	while (done < max) {
		n = mcrepl_triggers_pop(s->triggers, batch,
					max - done < 64 ? max - done : 64);
		if (n == 0)
			break;
		store_lock(s);
		for (size_t i = 0; i < n; i++)
			admit_trigger(s, &batch[i], now_ms);
		store_unlock(s);
		for (size_t i = 0; i < n; i++)
			mcrepl_trigger_release(&batch[i]);
		done += n;
	}
	return done;
}

static void *admitter_main(void *arg)
{
	struct dyn_admitter *a = arg;
	const struct timespec idle = {.tv_sec = 0, .tv_nsec = 2 * 1000 * 1000};

	while (!atomic_load(&a->stop)) {
		if (dyn_admit_batch(a->store, a->batch, a->now_ms()) == 0)
			nanosleep(&idle, NULL);
	}
	return NULL;
}

int dyn_admitter_start(struct store *s, size_t batch, uint64_t (*now_ms)(void),
		       struct dyn_admitter **out)
{
	struct dyn_admitter *a = calloc(1, sizeof(*a));

	if (!a)
		return -1;
	a->store = s;
	a->batch = batch;
	a->now_ms = now_ms;
	atomic_init(&a->stop, false);
	if (pthread_create(&a->thread, NULL, admitter_main, a) != 0) {
		free(a);
		return -1;
	}
	*out = a;
	return 0;
}

void dyn_admitter_stop(struct dyn_admitter *a)
{
	if (!a)
		return;
	atomic_store(&a->stop, true);
	pthread_join(a->thread, NULL);
	free(a);
}
