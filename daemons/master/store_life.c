/* The reservation lifecycle: every region the master reserves has an owner
 * and a deadline, and is given back when either goes.
 *
 *   put            owner: PutStartRequest.client_id (0: none given);
 *                  deadline: PutStart + put_release_ms
 *   ordinary copy  owner: the CopyStart caller; deadline: CopyStart +
 *                  copy_release_ms (store_copy.c checks the owner at
 *                  CopyEnd/CopyRevoke)
 *   dynamic copy   owner: the lease (libmcrepl); when the source or the
 *                  target worker expires the lease is retired at once
 *                  (dyn_on_client_gone)
 *
 * Objects that may hold a put or ordinary-copy reservation sit on one list
 * (s->resv_head); the tick walks only that list and drops from it the
 * objects that hold nothing any more, so its work follows the open
 * reservations, not the number of objects. */
#include <stdio.h>

#include "store_priv.h"

void store__resv_track(struct store *s, struct object *o)
{
	if (o->in_resv)
		return;
	o->resv_prev = NULL;
	o->resv_next = s->resv_head;
	if (s->resv_head)
		s->resv_head->resv_prev = o;
	s->resv_head = o;
	o->in_resv = true;
}

void store__resv_untrack(struct store *s, struct object *o)
{
	if (!o->in_resv)
		return;
	if (o->resv_prev)
		o->resv_prev->resv_next = o->resv_next;
	else
		s->resv_head = o->resv_next;
	if (o->resv_next)
		o->resv_next->resv_prev = o->resv_prev;
	o->resv_prev = o->resv_next = NULL;
	o->in_resv = false;
}

void store_put_owner(struct store *s, struct object *o, uint64_t client_id)
{
	(void)s;
	o->put_owner = client_id;
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
	struct object *o = s->resv_head;
	size_t n = 0;

	while (o) {
		struct object *next = o->resv_next;

		if (o->copy_target && now_ms >= o->copy_deadline_ms) {
			s->ctr.reclaimed.copy_deadline++;
			n++;
			if (!reclaim_copy(s, o, now_ms)) {
				o = next;
				continue;
			}
		}
		if (!o->complete && now_ms >= o->put_deadline_ms) {
			s->ctr.reclaimed.put_deadline++;
			n++;
			reclaim_put(s, o, now_ms); /* o may be gone */
		} else if (o->complete && !o->copy_target) {
			store__resv_untrack(s, o);
		}
		o = next;
	}
	return n;
}

void store__reclaim_client(struct store *s, uint64_t client_id, uint64_t now_ms)
{
	struct object *o = s->resv_head;

	dyn_on_client_gone(s, client_id, now_ms);
	if (client_id == 0)
		return;
	while (o) {
		struct object *next = o->resv_next;

		if (o->copy_target && o->copy_owner == client_id) {
			s->ctr.reclaimed.copy_owner++;
			if (!reclaim_copy(s, o, now_ms)) {
				o = next;
				continue;
			}
		}
		if (!o->complete && o->put_owner == client_id) {
			s->ctr.reclaimed.put_owner++;
			reclaim_put(s, o, now_ms);
		}
		o = next;
	}
}
