/* Drain (see store.h): before a worker stops, the objects whose
 * every readable replica lies on its segments get a plain REPLICA_COPY
 * task to another worker's segment; the worker copies, its CopyEnd makes
 * the new replica readable (store_copy.c), and its unmount then loses
 * nothing. Called again, the same pass queues what is still missing (a
 * copy that failed) and counts progress; a copy already queued or running
 * is not queued twice. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "store_priv.h"

static bool in_drain(const struct segment *seg, uint64_t client_id,
		     const char *host)
{
	return client_id ? seg->client_id == client_id
			 : strcmp(seg->host, host) == 0;
}

/* o has a readable replica on a mounted segment outside the drain. */
static bool served_elsewhere(struct store *s, const struct object *o,
			     uint64_t client_id, const char *host)
{
	for (size_t i = 0; i < o->n_replicas; i++) {
		struct segment *seg =
		    store_segment(s, o->replicas[i].segment_id);

		if (o->replicas[i].status == REPLICA_COMPLETE && seg &&
		    !in_drain(seg, client_id, host))
			return true;
	}
	return false;
}

/* The segment o moves to: mounted, outside the drain, not held, without
 * a replica of o, room for size; a host holding none of o first, then the
 * most free bytes. NULL when none. */
static struct segment *target_for(struct store *s, const struct object *o,
				  uint64_t size, uint64_t client_id,
				  const char *host)
{
	struct segment *best = NULL;
	uint64_t best_free = 0;
	bool best_apart = false;

	for (size_t i = 0; i < s->n_segs; i++) {
		struct segment *seg = s->segs[i];
		uint64_t room = seg_alloc_largest_free(seg->alloc);
		bool apart;

		if (in_drain(seg, client_id, host) || !store__placeable(seg) ||
		    room < size || store__on_segment(o, seg->id))
			continue;
		apart = !store__host_used(s, o, seg->host);
		if (!best || (apart && !best_apart) ||
		    (apart == best_apart && room > best_free)) {
			best = seg;
			best_free = room;
			best_apart = apart;
		}
	}
	return best;
}

static uint64_t key_hash(const char *tenant, const char *key)
{
	uint64_t h = 1469598103934665603ULL;

	for (const char *p = tenant; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;
	for (const char *p = key; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The keys (hashed, sorted) of the plain copy tasks queued now; *n of
 * them. NULL when there are none or memory is short. */
static uint64_t *queued_copies(struct store *s, size_t *n)
{
	size_t cap = 0;
	uint64_t *h;

	*n = 0;
	for (size_t i = 0; i < s->n_clients; i++)
		cap += s->clients[i]->n_tasks;
	h = cap ? malloc(cap * sizeof(*h)) : NULL;
	for (size_t i = 0; h && i < s->n_clients; i++)
		for (struct task *t = s->clients[i]->head; t && *n < cap;
		     t = t->next)
			if (!t->msg.dynamic && !t->done &&
			    t->msg.type == MCREPL_RPC__TASK_TYPE__REPLICA_COPY)
				h[(*n)++] = key_hash(t->msg.tenant, t->msg.key);
	if (h)
		qsort(h, *n, sizeof(*h), cmp_u64);
	return h;
}

static bool queued(const uint64_t *h, size_t n, uint64_t k)
{
	return h && bsearch(&k, h, n, sizeof(*h), cmp_u64) != NULL;
}

/* One object of a draining segment: counted, and queued when nothing
 * serves it elsewhere and no copy of it is queued or running. */
static void drain_object(struct store *s, struct object *o,
			 const struct segment *seg, const uint64_t *q,
			 size_t nq, uint64_t client_id, const char *host,
			 uint64_t now_ms, struct store_drain_figures *f)
{
	size_t i;
	struct segment *dst;
	McreplRpc__Task t;

	if (!o->complete || served_elsewhere(s, o, client_id, host))
		return;
	for (i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg->id &&
		    o->replicas[i].status == REPLICA_COMPLETE)
			break;
	if (i == o->n_replicas) /* its readable replica is elsewhere here */
		return;
	f->objects_left++;
	if (o->copy_target || queued(q, nq, key_hash(o->tenant, o->key))) {
		f->copies_pending++;
		return;
	}
	dst = target_for(s, o, o->replicas[i].size, client_id, host);
	if (!dst) {
		f->no_target++;
		return;
	}
	mcrepl_rpc__task__init(&t);
	t.type = MCREPL_RPC__TASK_TYPE__REPLICA_COPY;
	t.tenant = o->tenant;
	t.key = o->key;
	t.version = o->version;
	t.size = o->size;
	t.source_segment_id = seg->id;
	t.target_segment_id = dst->id;
	if (store_add_task(s, seg->client_id, &t, now_ms,
			   now_ms + s->opts.copy_release_ms)) {
		f->copies_queued++;
		f->copies_pending++;
		s->ctr.drain_copies_queued++;
	}
}

McreplRpc__Code store_drain_worker(struct store *s, uint64_t client_id,
				   const char *host, uint64_t now_ms,
				   struct store_drain_figures *f)
{
	size_t nq;
	uint64_t *q;

	memset(f, 0, sizeof(*f));
	if (!client_id && (!host || !host[0]))
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	q = queued_copies(s, &nq);
	for (size_t k = 0; k < s->n_segs; k++) {
		struct segment *seg = s->segs[k];

		if (!in_drain(seg, client_id, host))
			continue;
		seg->draining = true; /* nothing new is placed here */
		f->segments++;
		for (size_t j = 0; j < seg->n_ix; j++)
			drain_object(s, seg->ix[j], seg, q, nq, client_id, host,
				     now_ms, f);
	}
	free(q);
	if (f->segments)
		s->ctr.drains++;
	return f->segments ? MCREPL_RPC__CODE__OK : MCREPL_RPC__CODE__NOT_FOUND;
}
