/* The reservation lifecycle: every region the master reserves has an owner
 * and a deadline, and is given back when either goes.
 *
 *   put            owner: PutStartRequest.client_id (0: none given);
 *                  deadline: PutStart + put_release_ms; and the RPC
 *                  connection that started it: when that closes and no
 *                  live client id vouches for the writer, the put is
 *                  released at once (store_conns_gone, reason
 *                  client_gone)
 *   ordinary copy  owner: the CopyStart caller; deadline: CopyStart +
 *                  copy_release_ms (store_copy.c checks the owner at
 *                  CopyEnd/CopyRevoke)
 *   dynamic copy   owner: the lease (libmcrepl); when the source or the
 *                  target worker expires the lease is retired at once
 *                  (dyn_on_client_gone)
 *
 * Objects holding a put or an ordinary-copy reservation sit on one list
 * per kind, appended as the reservation starts: a deadline is its start
 * plus a fixed timeout, so each list is in deadline order and the tick
 * looks only at the due ones at its head (plus one), not at every open
 * reservation. PutEnd takes an object off at once; an ended copy leaves
 * when it reaches the head. */
#include <stdio.h>
#include <stdlib.h>

#include "store_priv.h"

void store__resv_untrack(struct store *s, struct object *o)
{
	struct resv_list *l;

	if (!o->in_resv)
		return;
	l = &s->resv[o->in_resv];
	if (o->resv_prev)
		o->resv_prev->resv_next = o->resv_next;
	else
		l->head = o->resv_next;
	if (o->resv_next)
		o->resv_next->resv_prev = o->resv_prev;
	else
		l->tail = o->resv_prev;
	o->resv_prev = o->resv_next = NULL;
	o->in_resv = 0;
}

void store__resv_track(struct store *s, struct object *o)
{
	uint8_t kind = o->complete ? STORE_RESV_COPIES : STORE_RESV_PUTS;
	struct resv_list *l = &s->resv[kind];

	store__resv_untrack(s, o);
	o->resv_next = NULL;
	o->resv_prev = l->tail;
	if (l->tail)
		l->tail->resv_next = o;
	else
		l->head = o;
	l->tail = o;
	o->in_resv = kind;
}

void store_put_owner(struct store *s, struct object *o, uint64_t client_id)
{
	(void)s;
	o->put_owner = client_id;
}

void store_put_conn(struct store *s, struct object *o, uint64_t conn_id)
{
	(void)s;
	o->put_conn = conn_id;
}

/* The PROCESSING replica of o's ordinary copy, SIZE_MAX when none. */
static size_t copy_replica(const struct object *o)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == o->copy_target &&
		    o->replicas[i].status == REPLICA_PROCESSING &&
		    !o->replicas[i].dynamic)
			return i;
	return SIZE_MAX;
}

/* Give back o's ordinary copy reservation: the target region is freed and
 * the object unpinned. False when o went with it (its source was lost
 * meanwhile: nothing else held it). */
static bool reclaim_copy(struct store *s, struct object *o, uint64_t now_ms)
{
	size_t i = copy_replica(o);

	if (i != SIZE_MAX)
		store_drop_replica(s, o, i, now_ms);
	o->copy_target = 0;
	o->copy_owner = 0;
	if (o->copies > 0)
		o->copies--;
	if (o->n_replicas == 0 && o->copies == 0) {
		store_delete_object(s, o);
		return false;
	}
	return true;
}

/* Give back an unfinished put: its regions are freed, the object goes
 * (unless a copy still pins it, which an incomplete object cannot have). */
static void reclaim_put(struct store *s, struct object *o, uint64_t now_ms)
{
	store__free_replicas(s, o, now_ms);
	if (o->copies == 0)
		store_delete_object(s, o);
}

size_t store_reclaim_reservations(struct store *s, uint64_t now_ms)
{
	struct object *o;
	size_t n = 0;

	while ((o = s->resv[STORE_RESV_COPIES].head) &&
	       (!o->copy_target || now_ms >= o->copy_deadline_ms)) {
		store__resv_untrack(s, o);
		if (!o->copy_target)
			continue; /* ended */
		s->ctr.reclaimed.copy_deadline++;
		n++;
		reclaim_copy(s, o, now_ms); /* o may be gone */
	}
	while ((o = s->resv[STORE_RESV_PUTS].head) &&
	       (o->complete || now_ms >= o->put_deadline_ms)) {
		store__resv_untrack(s, o);
		if (o->complete)
			continue;
		s->ctr.reclaimed.put_deadline++;
		n++;
		reclaim_put(s, o, now_ms); /* o may be gone */
	}
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whose put is released when its connection closes. A writer that named
 * no client id, or one no live client holds (nothing else will ever end
 * or vouch for the put: no session of it can come back), is gone with its
 * connection: its reservations are released at once, not at the put
 * release timeout (600 s by default), so a tenant that disconnects cannot
 * keep other tenants' space. A writer that named a live client id (a
 * heartbeating session, which may reconnect after a network blip and end
 * the put from another connection) keeps the put until its PutEnd, its
 * deadline or the expiry of that id (--client_ttl; owner_expired), as an
 * operator would expect from a session. */
static bool put_orphaned(struct store *s, const struct object *o)
{
	return o->put_owner == 0 || !store__find_client(s, o->put_owner);
}

size_t store_conns_gone(struct store *s, uint64_t *conn_ids, size_t n,
			uint64_t now_ms)
{
	struct object *o, *next;
	size_t released = 0;

	if (n == 0 || !s->resv[STORE_RESV_PUTS].head)
		return 0;
	qsort(conn_ids, n, sizeof(*conn_ids), cmp_u64);
	/* the puts list holds the unfinished puts only (PutEnd takes an
	 * object off): the puts in flight, not every object */
	for (o = s->resv[STORE_RESV_PUTS].head; o; o = next) {
		next = o->resv_next;
		if (o->complete || !o->put_conn ||
		    !bsearch(&o->put_conn, conn_ids, n, sizeof(*conn_ids),
			     cmp_u64) ||
		    !put_orphaned(s, o))
			continue;
		s->ctr.reclaimed.put_conn++;
		released++;
		store__resv_untrack(s, o);
		reclaim_put(s, o, now_ms); /* o may be gone */
	}
	return released;
}

void store__reclaim_client(struct store *s, uint64_t client_id, uint64_t now_ms)
{
	struct object *o, *next;

	dyn_on_client_gone(s, client_id, now_ms);
	if (client_id == 0)
		return;
	for (o = s->resv[STORE_RESV_COPIES].head; o; o = next) {
		next = o->resv_next;
		if (!o->copy_target || o->copy_owner != client_id)
			continue;
		s->ctr.reclaimed.copy_owner++;
		store__resv_untrack(s, o);
		reclaim_copy(s, o, now_ms);
	}
	for (o = s->resv[STORE_RESV_PUTS].head; o; o = next) {
		next = o->resv_next;
		if (o->complete || o->put_owner != client_id)
			continue;
		s->ctr.reclaimed.put_owner++;
		reclaim_put(s, o, now_ms);
	}
}
