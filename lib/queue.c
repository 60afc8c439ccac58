/* Bounded, deduplicating trigger queue: a ring of triggers plus an
 * open-addressing index (linear probing, backward-shift deletion) of the
 * queued (tenant, key, domain) triples. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mcrepl/queue.h"

#define EMPTY SIZE_MAX

struct mcrepl_triggers {
	pthread_mutex_t lock;
	size_t limit, head, len;
	mcrepl_trigger *ring; /* limit slots */
	uint64_t *hash;	      /* per ring slot */
	size_t *index;	      /* nidx slots of ring positions or EMPTY */
	size_t nidx;	      /* power of two >= 2 * limit */
};

static uint64_t trig_hash(const char *t, const char *k, const char *d)
{
	uint64_t h = mcu_hash_str(t, 0x7451);

	h = mcu_hash_str(k, h);
	return mcu_hash_str(d, h);
}

mcrepl_status mcrepl_triggers_create(size_t limit, mcrepl_triggers **out)
{
	mcrepl_triggers *q;

	if (!out || limit == 0 || limit > SIZE_MAX / 4)
		return MCREPL_EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return MCREPL_ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	q->limit = limit;
	for (q->nidx = 2; q->nidx < 2 * limit; q->nidx *= 2)
		;
	q->ring = calloc(limit, sizeof(*q->ring));
	q->hash = calloc(limit, sizeof(*q->hash));
	q->index = malloc(q->nidx * sizeof(*q->index));
	if (!q->ring || !q->hash || !q->index) {
		mcrepl_triggers_destroy(q);
		return MCREPL_ENOMEM;
	}
	for (size_t i = 0; i < q->nidx; i++)
		q->index[i] = EMPTY;
	*out = q;
	return MCREPL_OK;
}

void mcrepl_trigger_release(mcrepl_trigger *t)
{
	if (!t)
		return;
	free(t->tenant);
	free(t->key);
	free(t->domain);
	t->tenant = t->key = t->domain = NULL;
}

void mcrepl_triggers_destroy(mcrepl_triggers *q)
{
	if (!q)
		return;
	for (size_t i = 0; q->ring && i < q->len; i++)
		mcrepl_trigger_release(&q->ring[(q->head + i) % q->limit]);
	pthread_mutex_destroy(&q->lock);
	free(q->ring);
	free(q->hash);
	free(q->index);
	free(q);
}

static bool same(const mcrepl_trigger *t, const char *tenant, const char *key,
		 const char *domain)
{
	return strcmp(t->tenant, tenant) == 0 && strcmp(t->key, key) == 0 &&
	       strcmp(t->domain, domain) == 0;
}

/* Index slot holding ring position `pos`, or of the first EMPTY for h. */
static size_t probe(const mcrepl_triggers *q, uint64_t h, const char *tenant,
		    const char *key, const char *domain)
{
	size_t mask = q->nidx - 1;
	size_t i = (size_t)h & mask;

	while (q->index[i] != EMPTY) {
		size_t pos = q->index[i];

		if (q->hash[pos] == h &&
		    same(&q->ring[pos], tenant, key, domain))
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

mcrepl_status mcrepl_triggers_push(mcrepl_triggers *q, const char *tenant,
				   const char *key, const char *domain,
				   uint64_t now_ms)
{
	mcrepl_trigger t = {0};
	mcrepl_status st = MCREPL_OK;
	uint64_t h;
	size_t slot, pos;

	if (!q || !key)
		return MCREPL_EINVAL;
	tenant = mcu_nz(tenant);
	domain = mcu_nz(domain);
	h = trig_hash(tenant, key, domain);
	pthread_mutex_lock(&q->lock);
	slot = probe(q, h, tenant, key, domain);
	if (q->index[slot] != EMPTY) {
		st = MCREPL_EEXIST;
		goto out_unlock;
	}
	if (q->len == q->limit) {
		st = MCREPL_EFULL;
		goto out_unlock;
	}
	t.tenant = mcu_strdup(tenant);
	t.key = mcu_strdup(key);
	t.domain = mcu_strdup(domain);
	t.queued_at_ms = now_ms;
	if (!t.tenant || !t.key || !t.domain) {
		mcrepl_trigger_release(&t);
		st = MCREPL_ENOMEM;
		goto out_unlock;
	}
	pos = (q->head + q->len++) % q->limit;
	q->ring[pos] = t;
	q->hash[pos] = h;
	q->index[slot] = pos;
out_unlock:
	pthread_mutex_unlock(&q->lock);
	return st;
}

/* Remove index slot i, shifting later entries of its cluster back. */
static void index_delete(mcrepl_triggers *q, size_t i)
{
	size_t mask = q->nidx - 1;
	size_t j = i;

	for (;;) {
		size_t home;

		q->index[i] = EMPTY;
		for (;;) {
			j = (j + 1) & mask;
			if (q->index[j] == EMPTY)
				return;
			home = (size_t)q->hash[q->index[j]] & mask;
			/* j may move to i iff home is not in (i, j]. */
			if (i <= j ? (home <= i || home > j)
				   : (home <= i && home > j))
				break;
		}
		q->index[i] = q->index[j];
		i = j;
	}
}

size_t mcrepl_triggers_pop(mcrepl_triggers *q, mcrepl_trigger *out, size_t cap)
{
	size_t n = 0;

	if (!q || !out)
		return 0;
	pthread_mutex_lock(&q->lock);
	while (n < cap && q->len > 0) {
		mcrepl_trigger *t = &q->ring[q->head];
		size_t slot =
		    probe(q, q->hash[q->head], t->tenant, t->key, t->domain);

		index_delete(q, slot);
		out[n++] = *t;
		memset(t, 0, sizeof(*t));
		q->head = (q->head + 1) % q->limit;
		q->len--;
	}
	pthread_mutex_unlock(&q->lock);
	return n;
}

size_t mcrepl_triggers_len(mcrepl_triggers *q)
{
	size_t n;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	n = q->len;
	pthread_mutex_unlock(&q->lock);
	return n;
}
