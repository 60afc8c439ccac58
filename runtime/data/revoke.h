/*
 * A segment's revoked WRITE grants, kept by the worker's data port
 * (data_server_revoke_write). The master revokes a WRITE grant when it
 * frees the region the grant names while the grant still runs (Remove,
 * eviction, a put reclaimed, a copy dropped): from then on a WRITE under
 * that grant is refused as any grant that does not verify is (DENIED, no
 * oracle), and the master may give the region to another object before the
 * grant's expiry.
 *
 * An entry names exactly what the grant's tag binds (grant.h): the region
 * [offset, +length) and the object id, and the expiry of the revoked
 * grant, until_ms. It refuses every WRITE grant naming that object at that
 * offset (a tag binds its whole region, so one grant region starts there)
 * that expires at or before until_ms. The next object's
 * grant on the same region names another object id (versions are never
 * reused under one master incarnation), so it still writes.
 *
 * Bounded: an entry is dropped once until_ms has passed on the master's
 * clock (the grant it revokes would be refused EXPIRED anyway), and a set
 * holds at most max entries (the segment's region count: one per region
 * the master can have freed while its grant ran); past that, add fails and
 * the master keeps the region quarantined until the grant's expiry.
 *
 * Thread-safety: none; the data server's loop owns it.
 */
#ifndef MCREPL_DAEMON_REVOKE_H
#define MCREPL_DAEMON_REVOKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/map.h"

struct revoke_entry {
	struct mcu_map_node node;   /* keyed by offset */
	struct revoke_entry *newer; /* insertion order: pruning */
	uint64_t offset, length, object_id, until_ms;
};

struct revoke_set {
	struct mcu_map by_offset;
	struct revoke_entry *oldest, *newest;
	size_t max;
};

/* An empty set of at most max entries (0 = none allowed). 0, or -1 when
 * out of memory. */
int revoke_set_init(struct revoke_set *rs, size_t max);
/* Frees every entry; the set is empty (and usable) again. */
void revoke_set_clear(struct revoke_set *rs);
void revoke_set_fini(struct revoke_set *rs);
size_t revoke_set_size(const struct revoke_set *rs);

/* Drops the entries whose until_ms <= master_now_ms. */
void revoke_set_prune(struct revoke_set *rs, int64_t master_now_ms);

/* Records a revocation (after pruning at master_now_ms); an equal entry
 * already there is kept. 0, or -1 when full or out of memory. */
int revoke_set_add(struct revoke_set *rs, uint64_t offset, uint64_t length,
		   uint64_t object_id, uint64_t until_ms,
		   int64_t master_now_ms);

/* True when a WRITE grant naming object_id on [offset, +length) expiring
 * at expires_ms is revoked. */
bool revoke_set_covers(const struct revoke_set *rs, uint64_t offset,
		       uint64_t length, uint64_t object_id,
		       uint64_t expires_ms);

#endif
