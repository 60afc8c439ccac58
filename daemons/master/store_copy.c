/* Ordinary (client-driven) copies: CopyStart reserves a PROCESSING replica
 * on the target, CopyEnd makes it readable, CopyRevoke frees it. One copy
 * per object at a time, never beside a pending dynamic copy. */
#include <stdio.h>

#include "store_priv.h"

static size_t replica_on(const struct object *o, uint64_t seg_id,
			 enum replica_status st)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (o->replicas[i].segment_id == seg_id &&
		    o->replicas[i].status == st)
			return i;
	return SIZE_MAX;
}

/* A PROCESSING replica of o on dst, pinning o; NO_SPACE when none fits.
 * The ordinary copy's reservation, with its owner and deadline
 * (store_life.c reclaims it). */
static McreplRpc__Code reserve_copy(struct store *s, struct object *o,
				    struct segment *dst, uint64_t owner,
				    uint64_t now_ms, struct replica *dst_out)
{
	struct replica *r =
	    store__place_replica(s, o, dst, REPLICA_PROCESSING, false);

	if (!r)
		return MCREPL_RPC__CODE__NO_SPACE;
	/* its WRITE grant ends at the copy's deadline */
	r->grant_until_ms = now_ms + s->opts.copy_release_ms;
	*dst_out = *r;
	o->copies++;
	o->copy_target = dst->id;
	o->copy_owner = owner;
	o->copy_deadline_ms = now_ms + s->opts.copy_release_ms;
	store__resv_track(s, o);
	return MCREPL_RPC__CODE__OK;
}

McreplRpc__Code store_copy_start(struct store *s, uint64_t caller,
				 const char *tenant, const char *key,
				 uint64_t src_seg, uint64_t dst_seg,
				 uint64_t now_ms, struct replica *src_out,
				 struct replica *dst_out, char *err,
				 size_t errlen)
{
	struct object *o = store__lookup(s, tenant, key);
	struct segment *dst = store_segment(s, dst_seg);
	size_t si;

	if (!o || !o->complete)
		return MCREPL_RPC__CODE__NOT_FOUND;
	si = replica_on(o, src_seg, REPLICA_COMPLETE);
	if (si == SIZE_MAX || !store_segment(s, src_seg) || !dst ||
	    !store__placeable(dst) || store__on_segment(o, dst_seg)) {
		snprintf(err, errlen,
			 "source must hold a readable replica and "
			 "the target none");
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	if (o->copy_target || dyn_key_is_pending(s, tenant, key, now_ms)) {
		snprintf(err, errlen, "another copy of the object is pending");
		return MCREPL_RPC__CODE__BUSY;
	}
	*src_out = o->replicas[si];
	return reserve_copy(s, o, dst, caller, now_ms, dst_out);
}

McreplRpc__Code store_copy_finish(struct store *s, uint64_t caller,
				  const char *tenant, const char *key,
				  bool success, uint64_t now_ms)
{
	struct object *o = store__lookup(s, tenant, key);
	size_t i;

	if (!o || !o->copy_target)
		return MCREPL_RPC__CODE__NOT_FOUND;
	if (caller != o->copy_owner) /* only the copy's owner ends it */
		return MCREPL_RPC__CODE__PERMISSION_DENIED;
	i = replica_on(o, o->copy_target, REPLICA_PROCESSING);
	o->copy_target = 0;
	o->copy_owner = 0;
	o->copies--;
	if (i == SIZE_MAX)
		return MCREPL_RPC__CODE__NOT_FOUND;
	if (success) {
		o->replicas[i].status = REPLICA_COMPLETE;
		store__journal_commit(s, o, &o->replicas[i]);
	} else
		store_drop_replica(s, o, i, now_ms);
	return MCREPL_RPC__CODE__OK;
}
