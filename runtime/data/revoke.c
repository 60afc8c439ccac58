/* A segment's revoked WRITE grants (revoke.h). */
#include "revoke.h"

#include <stdlib.h>

#include "util/hash.h"

struct rkey {
	uint64_t offset, object_id;
};

static uint64_t rhash(uint64_t offset, uint64_t object_id)
{
	return mcu_mix64(offset ^ mcu_mix64(object_id));
}

static bool req(const struct mcu_map_node *n, const void *key)
{
	const struct revoke_entry *e = (const struct revoke_entry *)n;
	const struct rkey *k = key;

	return e->offset == k->offset && e->object_id == k->object_id;
}

static struct revoke_entry *find(const struct revoke_set *rs, uint64_t offset,
				 uint64_t object_id)
{
	struct rkey k = {.offset = offset, .object_id = object_id};

	return (struct revoke_entry *)mcu_map_find(
	    &rs->by_offset, rhash(offset, object_id), req, &k);
}

int revoke_set_init(struct revoke_set *rs, size_t max)
{
	rs->oldest = rs->newest = NULL;
	rs->max = max;
	return mcu_map_init(&rs->by_offset, 16);
}

void revoke_set_clear(struct revoke_set *rs)
{
	while (rs->oldest) {
		struct revoke_entry *e = rs->oldest;

		rs->oldest = e->newer;
		mcu_map_remove(&rs->by_offset, &e->node);
		free(e);
	}
	rs->newest = NULL;
}

void revoke_set_fini(struct revoke_set *rs)
{
	revoke_set_clear(rs);
	mcu_map_fini(&rs->by_offset);
}

size_t revoke_set_size(const struct revoke_set *rs)
{
	return mcu_map_size(&rs->by_offset);
}

/* Entries are pruned in insertion order: one whose until_ms is later than
 * a newer one's waits for it (the set stays bounded by max either way);
 * when full, the whole set is swept. */
void revoke_set_prune(struct revoke_set *rs, int64_t master_now_ms)
{
	struct revoke_entry **pp = &rs->oldest, *prev = NULL;
	bool sweep = revoke_set_size(rs) >= rs->max;

	while (*pp) {
		struct revoke_entry *e = *pp;

		if (master_now_ms >= 0 &&
		    e->until_ms <= (uint64_t)master_now_ms) {
			*pp = e->newer;
			mcu_map_remove(&rs->by_offset, &e->node);
			free(e);
			continue;
		}
		if (!sweep)
			break;
		prev = e;
		pp = &e->newer;
	}
	if (!sweep) {
		if (!rs->oldest)
			rs->newest = NULL;
		return;
	}
	rs->newest = prev;
}

int revoke_set_add(struct revoke_set *rs, uint64_t offset, uint64_t length,
		   uint64_t object_id, uint64_t until_ms, int64_t master_now_ms)
{
	struct revoke_entry *e;

	revoke_set_prune(rs, master_now_ms);
	e = find(rs, offset, object_id);
	if (e) {
		if (until_ms > e->until_ms)
			e->until_ms = until_ms;
		if (length > e->length)
			e->length = length;
		return 0;
	}
	if (revoke_set_size(rs) >= rs->max)
		return -1;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -1;
	*e = (struct revoke_entry){
	    .offset = offset,
	    .length = length,
	    .object_id = object_id,
	    .until_ms = until_ms,
	};
	mcu_map_insert(&rs->by_offset, &e->node, rhash(offset, object_id));
	if (rs->newest)
		rs->newest->newer = e;
	else
		rs->oldest = e;
	rs->newest = e;
	return 0;
}

bool revoke_set_covers(const struct revoke_set *rs, uint64_t offset,
		       uint64_t length, uint64_t object_id, uint64_t expires_ms)
{
	const struct revoke_entry *e = find(rs, offset, object_id);

	(void)length; /* the grant's tag binds it: one region per offset */
	return e && expires_ms <= e->until_ms;
}
